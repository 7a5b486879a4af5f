// A retriever searched with pseudo-relevance feedback: every call reaches the wrapped retriever with the
// `feedback` search option set (RM3 or Rocchio, ./params.ts) unless the call sets its own; the embedded
// BM25 index does the expansion (../bm25/feedback.ts), the other members of a fusion ignore it. Its kind
// and manifest stay the wrapped retriever's; the `rm3` and `rocchio` stages (../stages/feedback.ts) build it.

import type { QueryInput, SearchOptions } from "../query.js";
import type { Hit, Retriever, RetrieverKind } from "../types.js";
import type { FeedbackSpec } from "./params.js";

/** A retriever whose BM25 searches expand their queries by feedback; see the module comment. */
export class FeedbackRetriever implements Retriever {
  /** The wrapped retriever's kind. */
  readonly kind: RetrieverKind;
  /** The wrapped retriever's units. */
  readonly units: Retriever["units"];
  /** The wrapped retriever's manifest. */
  readonly manifest: Retriever["manifest"];

  constructor(
    /** The retriever searched with feedback. */
    readonly inner: Retriever,
    /** The feedback every call gets unless it brings its own. */
    readonly feedback: FeedbackSpec,
  ) {
    this.kind = inner.kind;
    this.units = inner.units;
    this.manifest = inner.manifest;
  }

  private options(o: SearchOptions | undefined): SearchOptions {
    return o?.feedback !== undefined ? o : { ...o, feedback: this.feedback };
  }

  /** The wrapped retriever's search with the feedback option. */
  search(query: QueryInput, k: number, options?: SearchOptions): Promise<Hit[]> {
    return this.inner.search(query, k, this.options(options));
  }

  /** The wrapped retriever's batch with the feedback option. */
  async searchBatch(queries: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]> {
    const o = this.options(options);
    if (this.inner.searchBatch) return this.inner.searchBatch(queries, k, o);
    const out: Hit[][] = [];
    for (const q of queries) out.push(await this.inner.search(q, k, o));
    return out;
  }

  /** Closes the wrapped retriever. */
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Whether `r` is (or wraps, or fuses) an embedded BM25 index, the retriever that expands queries by feedback. */
export function expandsQueries(r: Retriever): boolean {
  const x = r as Retriever & { inner?: Retriever; members?: readonly Retriever[]; expansion?: unknown };
  if (x.kind === "bm25" && typeof x.expansion === "function") return true;
  if (x.inner !== undefined && expandsQueries(x.inner)) return true;
  return x.members !== undefined && x.members.some(expandsQueries);
}
