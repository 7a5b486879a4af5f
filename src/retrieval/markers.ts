// KILT's entity markers (`[START_ENT]`, `[END_ENT]`) in query inputs: text retrievers get inputs with them
// removed, as KILT's connectors do; the entity retriever reads the marked mention.

import { pyStrip } from "../records/python-str.js";
import type { Hit, Retriever, RetrieverKind } from "./types.js";

/** KILT's start-of-mention marker in entity-linking inputs. */
export const ENT_START = "[START_ENT]";
/** KILT's end-of-mention marker in entity-linking inputs. */
export const ENT_END = "[END_ENT]";

/** KILT's connectors: `query.replace(ENT_END, "").replace(ENT_START, "").strip()` (every occurrence). */
export function stripEntityMarkers(input: string): string {
  return pyStrip(input.split(ENT_END).join("").split(ENT_START).join(""));
}

/** A text retriever that receives KILT inputs: entity markers are removed before searching. */
export class MarkerStripping implements Retriever {
  readonly kind: RetrieverKind;
  readonly units;
  readonly manifest;
  constructor(readonly inner: Retriever) {
    this.kind = inner.kind;
    this.units = inner.units;
    this.manifest = inner.manifest;
  }
  search(query: string, k: number): Promise<Hit[]> {
    return this.inner.search(stripEntityMarkers(query), k);
  }
  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    const stripped = queries.map(stripEntityMarkers);
    if (this.inner.searchBatch) return this.inner.searchBatch(stripped, k);
    const out: Hit[][] = [];
    for (const q of stripped) out.push(await this.inner.search(q, k));
    return out;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
