// KILT's entity markers (`[START_ENT]`, `[END_ENT]`) in query inputs: text retrievers get inputs with them
// removed, as KILT's connectors do; the entity retriever reads the marked mention.

import { pyStrip } from "../records/python-str.js";
import type { Hit, Retriever, RetrieverKind } from "./types.js";
import { queryText, withText, type QueryInput, type SearchOptions } from "./query.js";

/** KILT's start-of-mention marker in entity-linking inputs. */
export const ENT_START = "[START_ENT]";
/** KILT's end-of-mention marker in entity-linking inputs. */
export const ENT_END = "[END_ENT]";

/** KILT's connectors: `query.replace(ENT_END, "").replace(ENT_START, "").strip()` (every occurrence). */
export function stripEntityMarkers(input: string): string {
  return pyStrip(input.split(ENT_END).join("").split(ENT_START).join(""));
}

/** The query with its text's markers removed (its vector, if any, kept). */
function strip(q: QueryInput): QueryInput {
  return withText(q, stripEntityMarkers(queryText(q)));
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
  search(query: QueryInput, k: number, options?: SearchOptions): Promise<Hit[]> {
    return this.inner.search(strip(query), k, options);
  }
  async searchBatch(queries: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]> {
    const stripped = queries.map(strip);
    if (this.inner.searchBatch) return this.inner.searchBatch(stripped, k, options);
    const out: Hit[][] = [];
    for (const q of stripped) out.push(await this.inner.search(q, k, options));
    return out;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
