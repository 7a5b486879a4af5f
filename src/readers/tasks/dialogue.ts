// The dialogue reader (Wizard of Wikipedia): the reply is the passage sentence that best supports the
// conversation's last turn (IDF-weighted stem overlap; earlier turns count a quarter), and its
// provenance is the passage that sentence came from. Meta gives the sentence's code-point offsets.

import type { KiltRecord } from "../../records/types.js";
import { citedProvenance } from "../extractive/cite.js";
import type { Reader, ReaderAnswer, ReaderDescriptor, ReaderPassage } from "../types.js";
import { rankSentences } from "./overlap.js";

/** Options of the {@link DialogueReader}. */
export interface DialogueOptions {
  /** Weight of the earlier turns against the last one (default 0.25). */
  historyWeight?: number;
}

/** The turns of a KILT dialogue input (one per line, last = the turn to answer). */
export function dialogueTurns(input: string): string[] {
  return input.split("\n").filter((t) => t.trim() !== "");
}

/** The dialogue reader (Wizard of Wikipedia): the passage sentence that best matches the last turn and, less, the earlier ones. */
export class DialogueReader implements Reader {
  readonly name = "dialogue";
  constructor(readonly options: DialogueOptions = {}) {}

  async read(record: KiltRecord, passages: readonly ReaderPassage[]): Promise<ReaderAnswer> {
    const turns = dialogueTurns(record.input ?? "");
    const last = turns[turns.length - 1] ?? "";
    const history = turns.slice(0, -1).join("\n");
    const extra = history === "" ? [] : [{ text: history, weight: this.options.historyWeight ?? 0.25 }];
    const [best] = rankSentences(last, passages, extra);
    if (best === undefined) return { answer: "", provenance: [], score: 0, meta: { sentences: 0 } };
    return {
      answer: best.text,
      provenance: [citedProvenance(passages[best.passage])],
      score: best.score,
      meta: { passage: best.passage, sentence: best.sentence, start: best.start, end: best.end },
    };
  }
}

/** `--reader dialogue`: the passage sentence that best continues the conversation. */
export const dialogueReaderKind: ReaderDescriptor = {
  name: "dialogue",
  version: 1,
  summary: "the passage sentence that best matches the last turn",
  open: () => new DialogueReader(),
};
