// What one search call carries: the queries, each its text and optionally its vector encoded elsewhere
// (`tartan retrieve --query-vectors`: row i of the file is record i's), and the search options of that
// call. Every retriever takes both with each call, so a query's vector stays with its record through
// pools, fusions and worker threads, and options reach every thread (nothing is set by mutation).

import type { FeedbackSpec } from "./feedback/params.js";

/** One query: its text, and optionally its vector (dense indexes search the vector; text retrievers the text). */
export interface Query {
  text: string;
  /** The query's vector, as the index's vectors were made (a dense index checks its size). */
  vector?: Float32Array;
  /** The query's sparse vector, term → weight (`tartan retrieve --query-terms`): impact indexes search it instead of the text. */
  terms?: Readonly<Record<string, number>>;
}

/** What a search takes for one query: its text alone, or a {@link Query}. */
export type QueryInput = string | Query;

/** Search options of one call; each kind reads the ones it has (unset: the index's own). */
export interface SearchOptions {
  /** Compressed dense indexes: coarse lists probed per query. */
  nprobe?: number;
  /** Compressed dense indexes: candidates refined (rescored with the int8 vectors, FAISS's refine step; at least k). `tartan retrieve --refine`. */
  refine?: number;
  /**
   * @deprecated The old name of {@link SearchOptions.refine} (the rescoring depth), read when `refine` is
   * unset; `rerank` now names rerankers (`--reranker`). Will be removed.
   */
  rerank?: number;
  /** Compressed dense indexes: top centroids whose sub-lists are considered (default: enough for nprobe). */
  topProbe?: number;
  /** Binary codes: candidates taken by Hamming distance per candidate refined; default 4 (this was `refine` before `refine` named the depth). */
  refineFactor?: number;
  /** BM25 indexes: k1 and b for this call (unset: the index's); rankings equal an index built with them. */
  bm25?: { k1?: number; b?: number };
  /** BM25 indexes: pseudo-relevance feedback (RM3 or Rocchio, Anserini's) for this call: the query expanded from the first stage's best units, then searched. */
  feedback?: FeedbackSpec;
}

/** The query's text. */
export function queryText(q: QueryInput): string {
  return typeof q === "string" ? q : q.text;
}

/** The query's vector, if it came with one. */
export function queryVector(q: QueryInput): Float32Array | undefined {
  return typeof q === "string" ? undefined : q.vector;
}

/** The same query with another text (its vector kept). */
export function withText(q: QueryInput, text: string): QueryInput {
  return typeof q === "string" ? text : { ...q, text };
}

/** `over`'s set fields over `base`'s (the index's defaults under one call's options). */
export function mergeSearchOptions(base: SearchOptions, over: SearchOptions | undefined): SearchOptions {
  const out: SearchOptions = { ...base };
  if (base.refine === undefined && base.rerank !== undefined) out.refine = base.rerank;
  delete out.rerank;
  if (over?.nprobe !== undefined) out.nprobe = over.nprobe;
  const refine = refineDepth(over);
  if (refine !== undefined) out.refine = refine;
  if (over?.topProbe !== undefined) out.topProbe = over.topProbe;
  if (over?.refineFactor !== undefined) out.refineFactor = over.refineFactor;
  if (over?.bm25 !== undefined) out.bm25 = over.bm25;
  if (over?.feedback !== undefined) out.feedback = over.feedback;
  return out;
}

/** Whether any option of compressed dense indexes is set (`bm25` is BM25's: see {@link hasBm25Options}). */
export function hasSearchOptions(o: SearchOptions | undefined): boolean {
  return o !== undefined && (o.nprobe !== undefined || refineDepth(o) !== undefined || o.topProbe !== undefined || o.refineFactor !== undefined);
}

/** The rescoring depth the options set: `refine`, else the deprecated `rerank`. */
export function refineDepth(o: SearchOptions | undefined): number | undefined {
  return o?.refine ?? o?.rerank;
}

/** Whether BM25's k1 or b is set for the call. */
export function hasBm25Options(o: SearchOptions | undefined): boolean {
  return o?.bm25 !== undefined && (o.bm25.k1 !== undefined || o.bm25.b !== undefined);
}
