// The entity-linking reader, KILT's convention for seq2seq entity linking: the answer is the title of
// the top page an entity retriever returned (highest score; passages given best first, ties keep the
// first). With no passages it falls back to the marked mention itself
// ("… [START_ENT] mention [END_ENT] …"), the only guess left.

import type { KiltRecord, Provenance } from "../../records/types.js";
import type { Reader, ReaderAnswer, ReaderDescriptor, ReaderPassage } from "../types.js";

/** The mention between [START_ENT] and [END_ENT] in an entity-linking input, or "" when unmarked. */
export function markedMention(input: string): string {
  const m = /\[START_ENT\]([\s\S]*?)\[END_ENT\]/.exec(input);
  return m ? m[1].trim() : "";
}

/** The entity-linking reader: the title of the best retrieved page is the answer. */
export class EntityLinkingReader implements Reader {
  readonly name = "entity-linking";

  async read(record: KiltRecord, passages: readonly ReaderPassage[]): Promise<ReaderAnswer> {
    let best = -1;
    for (let i = 0; i < passages.length; i++) {
      const title = passages[i].provenance.title;
      if (typeof title !== "string" || title.trim() === "") continue;
      if (best < 0) best = i;
      else if ((passages[i].score ?? -Infinity) > (passages[best].score ?? -Infinity)) best = i;
    }
    if (best < 0) {
      const mention = markedMention(record.input ?? "");
      return { answer: mention, provenance: [], score: 0, meta: { fallback: "mention" } };
    }
    const p = passages[best];
    const provenance: Provenance = { wikipedia_id: p.provenance.wikipedia_id, title: p.provenance.title };
    return { answer: String(p.provenance.title).trim(), provenance: [provenance], score: p.score, meta: { passage: best } };
  }
}

/** `--reader entity-linking`: the best-scored page title, else the marked mention. */
export const entityLinkingReaderKind: ReaderDescriptor = {
  name: "entity-linking",
  version: 1,
  summary: "the highest-scored page title, else the marked mention",
  open: () => new EntityLinkingReader(),
};
