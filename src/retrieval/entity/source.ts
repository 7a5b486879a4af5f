// The pages an entity index is built from, with how far reading them has got, for a progress line with
// a rate and an ETA: the byte offset in a pages JSONL file (and its size; none for .gz, whose size is
// compressed), or the pages read from a knowledge-source store (and its page count).

import { statSync } from "node:fs";
import { KnowledgeSource } from "../../knowledge/store.js";
import { readJsonl } from "../../records/jsonl.js";
import type { KiltPage } from "../../records/types.js";

/** Pages to build from (a pages file or a knowledge-source store), with the bytes read for progress. */
export interface PageFeed {
  /** The pages, in order. */
  pages: AsyncIterable<KiltPage> | Iterable<KiltPage>;
  /** Bytes of the pages file read so far (pages file only). */
  bytes(): number;
  /** Size of the pages file when it is known. */
  totalBytes?: number;
  /** Pages in the store (store only). */
  totalPages?: number;
}

/** Pages of a pages JSONL file (`pages`) or of a knowledge-source store directory (`ks`), with their position. */
export function pageFeed(source: { pages?: string; ks?: string }): PageFeed {
  if (!source.pages === !source.ks) throw new Error("give the pages with --pages FILE or a knowledge source with --ks DIR");
  if (source.pages !== undefined) {
    const file = source.pages;
    let at = 0;
    return {
      pages: (async function* () {
        for await (const { value, endByte } of readJsonl<KiltPage>(file)) {
          at = endByte;
          yield value;
        }
      })(),
      bytes: () => at,
      totalBytes: file.endsWith(".gz") ? undefined : statSync(file).size,
    };
  }
  const ks = KnowledgeSource.open(source.ks!);
  return {
    pages: (function* () {
      try {
        yield* ks.pages();
      } finally {
        ks.close();
      }
    })(),
    bytes: () => 0,
    totalPages: ks.count(),
  };
}
