// What a backend is to the rest of tartan (LanceDB's `connect(uri)` model): one interface for the
// knowledge source, the indexes and the runs database a location names, implemented by the embedded
// backend (directories: ./embedded/) and by ClickHouse (clickhouse:// URLs: ./clickhouse/backend.ts),
// registered in ./registry.ts and picked once from the location's scheme. A backend may hold only some of
// the three (a runs-only backend leaves the others out); asking it for one it lacks is an error naming it.

import type { KnowledgeSourceReader } from "../knowledge/source.js";
import type { IngestOptions } from "../knowledge/ingest.js";
import type { HybridOptions } from "../retrieval/hybrid.js";
import type { OpenOptions } from "../retrieval/kinds/kind.js";
import type { StageOptions } from "../retrieval/stages/stage.js";
import type { ParallelOptions, SearchPool } from "../retrieval/pool.js";
import type { IndexManifest, Retriever } from "../retrieval/types.js";
import type { IndexBuildOptions, IndexBuildResult } from "../retrieval/build.js";
import type { RunsStore } from "../runs/types.js";
import type { Descriptor } from "../util/registry.js";

/** How {@link Backend.ingest} ingests: the embedded store's options; a backend reads those it knows. */
export type BackendIngestOptions = Omit<IngestOptions, "out">;

/** What an ingest did, in the same shape for every backend. */
export interface IngestReport {
  /** The backend's name (`embedded`, `clickhouse`, …). */
  backend: string;
  /** The knowledge source ingested into. */
  location: string;
  /** Pages it holds for this input, over every run of the ingest. */
  pages: number;
  /** It already held the whole input: nothing was done. */
  alreadyComplete: boolean;
  /** The line `tartan ks ingest` prints. */
  summary: string;
  /** The backend's own result (`IngestResult` for the embedded store, `ClickHouseIngestResult` for ClickHouse). */
  detail: object;
}

/** What a knowledge source holds (`tartan ks stats`), in the same shape for every backend. */
export interface KnowledgeSourceStats {
  /** The backend's name. */
  backend: string;
  /** The knowledge source. */
  location: string;
  /** Label and value, one row each, as `tartan ks stats` prints them. */
  rows: [string, string][];
  /** The backend's own record of it, as `tartan ks stats --json` prints it (`StoreInfo`, `ClickHouseKsInfo`). */
  detail: object;
}

/** How indexes are opened through a backend. */
export type BackendOpenOptions = HybridOptions & OpenOptions & StageOptions & { batch?: number };

/** What {@link Backend.buildIndex} builds: {@link IndexBuildOptions}, with `out` the backend's location. */
export interface BackendBuildOptions extends IndexBuildOptions {
  /** Copy this prebuilt index directory in instead of building from units (a backend that says {@link Backend.copiesIndexes}). */
  fromIndex?: string;
}

/** One backend: where knowledge sources, indexes and runs databases live. */
export interface Backend extends Descriptor {
  /** The URL schemes it answers (`clickhouse` for `clickhouse://…`); none: the backend of plain paths (directories). */
  readonly schemes: readonly string[];
  /** Whether an index built elsewhere can be copied in (`index build --from-index DIR`); what it takes, for messages. */
  readonly copiesIndexes?: string;
  /** The location as this backend keeps it: a directory as an absolute path, a URL as given. */
  canonical(location: string): string;
  /** The name an index at `location` is served under (`tartan serve`). */
  indexName(location: string): string;

  /** The knowledge source at `location`. */
  openKnowledgeSource?(location: string): Promise<KnowledgeSourceReader>;
  /** Ingests `file` (KILT pages JSONL) into the knowledge source at `location`. */
  ingest?(file: string, location: string, options: BackendIngestOptions): Promise<IngestReport>;
  /** What the knowledge source at `location` holds. */
  knowledgeSourceStats?(location: string): Promise<KnowledgeSourceStats>;

  /** The retriever over the indexes at `locations` (several: their fusion, where the backend fuses). */
  openRetriever?(locations: readonly string[], options: BackendOpenOptions): Promise<Retriever>;
  /** The manifest of the index at `location`. */
  describeIndex?(location: string): Promise<IndexManifest>;
  /** The pool that spreads batches of queries to `retriever` (opened from `locations`). */
  searchPool?(retriever: Retriever, locations: readonly string[], options: ParallelOptions): SearchPool;
  /** Builds an index at `options.out`. */
  buildIndex?(options: BackendBuildOptions, log: (s: string) => void): Promise<IndexBuildResult>;

  /** The runs database at `location`. */
  openRuns?(location: string): Promise<RunsStore>;
}

/** The capabilities a backend may lack, by method name. */
export type BackendCapability = "openKnowledgeSource" | "ingest" | "knowledgeSourceStats" | "openRetriever" | "describeIndex" | "searchPool" | "buildIndex" | "openRuns";

const WHAT: Record<BackendCapability, string> = {
  openKnowledgeSource: "knowledge sources",
  ingest: "knowledge sources",
  knowledgeSourceStats: "knowledge sources",
  openRetriever: "indexes",
  describeIndex: "indexes",
  searchPool: "indexes",
  buildIndex: "indexes",
  openRuns: "runs databases",
};

/** `backend`'s method `name`, bound; throws naming the location and the backend when it has none. */
export function capability<K extends BackendCapability>(backend: Backend, name: K, location: string): NonNullable<Backend[K]> {
  const f = backend[name];
  if (typeof f !== "function") throw new Error(`${location}: the ${backend.name} backend holds no ${WHAT[name]}`);
  return (f as (...a: unknown[]) => unknown).bind(backend) as NonNullable<Backend[K]>;
}

/**
 * Whether `e` says a backend's server did not answer (a ClickHouse shard down, refused, timed out)
 * rather than that the request is wrong: worth trying again later (the server answers 503).
 */
export function isUnavailable(e: unknown): boolean {
  return e instanceof Error && (e as { unavailable?: unknown }).unavailable === true;
}
