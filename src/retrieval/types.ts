// The retrieval interface every retriever implements (BM25, TF-IDF, dense, entity, hybrid), and the
// manifest every on-disk index carries so `openIndex` can load any of them.

import type { UnitSource } from "./units/unit.js";
import type { QueryInput, SearchOptions } from "./query.js";

export type { Query, QueryInput, SearchOptions } from "./query.js";

/** One retrieved unit: its number in the index's unit store, and its score (higher is better). */
export interface Hit {
  unit: number;
  score: number;
}

/** What can be retrieved over: KILT-style passages (chunks), whole paragraphs, or whole pages. */
export type UnitKind = "passage" | "paragraph" | "page";

/** The kind of a retriever: the name of a registered index kind (`KINDS` in src/retrieval/kinds/: bm25, tfidf, dense, entity, …) or of a stage that combines retrievers (`hybrid`). */
export type RetrieverKind = string;

/** A retriever: the best units for a query, whatever the index behind it. */
export interface Retriever {
  readonly kind: RetrieverKind;
  /** The units hits point into (their provenance and text). */
  readonly units: UnitSource;
  /** What the index is (kind, unit, unit count, parameters, source), read once when it was opened; a fusion describes itself. */
  readonly manifest: IndexManifest;
  /** The best `k` units for a query (its text, or text and vector), best first; ties broken by lower unit number. `options` hold for this call only. */
  search(query: QueryInput, k: number, options?: SearchOptions): Promise<Hit[]>;
  /** Many queries at once, in order; `options` hold for this call only. Default: one by one. */
  searchBatch?(queries: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]>;
  /** Releases the index (files, threads, connections). */
  close(): Promise<void>;
}

/** `manifest.json` of an index directory. */
export interface IndexManifest {
  kind: RetrieverKind;
  unit: UnitKind;
  /** Number of units. */
  units: number;
  /** Kind-specific parameters (k1, b, analyzer, encoder, …), enough to rebuild the index. */
  params: Record<string, unknown>;
  /** Where the units came from (knowledge-source directory or pages file). */
  source: string;
  created: string;
  tartanVersion: string;
  /** Bumped when a kind's file layout changes. */
  formatVersion: number;
  /** Every file of the index directory but the manifest, with its size and CRC-32 (written at the end of a build). */
  files?: IndexFile[];
}

/** One file of an index directory as its manifest records it. */
export interface IndexFile {
  name: string;
  bytes: number;
  /** CRC-32 of the whole file, 8 hex digits. */
  crc32: string;
}
