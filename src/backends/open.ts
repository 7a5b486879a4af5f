// Opening what a location names, through its backend (./registry.ts picks it once from the scheme: a
// `clickhouse://` URL is ClickHouse's, a plain path the embedded backend's directory). Every command and
// the server open knowledge sources, indexes and runs databases here and work with the interfaces
// (KnowledgeSourceReader, Retriever, RunsStore) without knowing which backend they have.

import type { KnowledgeSourceReader } from "../knowledge/source.js";
import type { KiltPage } from "../records/types.js";
import type { ParallelOptions, SearchPool } from "../retrieval/pool.js";
import type { IndexManifest, Retriever } from "../retrieval/types.js";
import type { IndexBuildOptions, IndexBuildResult } from "../retrieval/build.js";
import { defaultRunsLocation } from "../runs/open.js";
import type { RunsStore } from "../runs/types.js";
import { capability, type Backend, type BackendIngestOptions, type BackendOpenOptions, type IngestReport, type KnowledgeSourceStats } from "./backend.js";
import { embeddedBackend } from "./embedded/backend.js";
import { BACKENDS, backendFor, isRemote, remoteUrlText, schemeOf } from "./registry.js";

/** The runs database at `location`: a directory (default .tartan/runs or $TARTAN_RUNS), or a URL of a backend that holds runs. */
export async function openRuns(location: string = defaultRunsLocation()): Promise<RunsStore> {
  return capability(backendFor(location), "openRuns", location)(location);
}

/** The knowledge source at `location`: an embedded store directory or a backend's URL. */
export async function openKnowledgeSource(location: string): Promise<KnowledgeSourceReader> {
  return capability(backendFor(location), "openKnowledgeSource", location)(location);
}

/** The pages of the knowledge source at `location`, in input order (closed at the end). */
export async function* pagesOf(location: string): AsyncGenerator<KiltPage> {
  const ks = await openKnowledgeSource(location);
  try {
    yield* ks.pages();
  } finally {
    await ks.close();
  }
}

/** Ingests `file` (KILT pages JSONL) into the knowledge source at `location`: a store directory (resumable, `knowledge/ingest.ts`) or a backend's URL. */
export async function ingestAt(file: string, location: string, options: BackendIngestOptions = {}): Promise<IngestReport> {
  return capability(backendFor(location), "ingest", location)(file, location, options);
}

/** The pages, checkpoint and size of the knowledge source at `location` (`tartan ks stats`). */
export async function knowledgeSourceStats(location: string): Promise<KnowledgeSourceStats> {
  return capability(backendFor(location), "knowledgeSourceStats", location)(location);
}

/** The backend that opens `locations` together: theirs when they share one; else one that is not the embedded backend (and refuses the mix). */
function ownerOf(locations: readonly string[]): Backend {
  const backends = [...new Set(locations.map(backendFor))];
  if (backends.length === 0) return embeddedBackend;
  return backends.length === 1 ? backends[0] : (backends.find((b) => b !== embeddedBackend) ?? backends[0]);
}

/** The retriever at `location`: index directories (several: their fusion) or a backend's index URL. */
export async function openRetriever(location: string | readonly string[], options: BackendOpenOptions = {}): Promise<Retriever> {
  const all = typeof location === "string" ? [location] : [...location];
  if (all.length === 0) throw new Error("no index given");
  return capability(ownerOf(all), "openRetriever", all[0])(all, options);
}

/**
 * The {@link SearchPool} that spreads batches of queries to `retriever`, opened from `locations`, as their
 * backend does it: over the cores for index directories (`options.threads`, default every core, or one
 * thread when a kind spreads each search over the cores itself, as dense does), on this thread for a
 * ClickHouse index (spread over its shards, a whole batch per statement).
 */
export function searchPoolFor(retriever: Retriever, locations: readonly string[], options: ParallelOptions = {}): SearchPool {
  return capability(ownerOf(locations), "searchPool", locations[0] ?? "index")(retriever, locations, options);
}

/** The manifest of the index at `location` (its manifest.json, or what a backend's index says of itself). */
export async function describeIndex(location: string): Promise<IndexManifest> {
  return capability(backendFor(location), "describeIndex", location)(location);
}

/** A location as its backend keeps it: a directory as an absolute path, a URL as given. */
export function canonicalLocation(location: string): string {
  return backendFor(location).canonical(location);
}

/** The name the index at `location` is served under: a directory's base name; for a ClickHouse URL, the index name in its path (`…/db/name`), else the database's. */
export function servedIndexName(location: string): string {
  return backendFor(location).indexName(location);
}

/** What {@link buildIndexAt} builds: {@link IndexBuildOptions}, with `out` a directory or a backend's URL. */
export interface IndexBuildAtOptions extends IndexBuildOptions {
  /** The database to build in (`clickhouse://host:port/db[/name]?cluster=C`): the same as a URL given as `out`. */
  backend?: string;
  /** The prebuilt index directory to copy in, where the backend copies indexes (ClickHouse: a compressed dense index, binary codes). */
  fromIndex?: string;
}

/**
 * Builds an index where `out` (or `backend`) says: a directory builds any kind with the atomic swap
 * (src/retrieval/build.ts); a backend's URL builds there (ClickHouse: BM25 into sharded tables, or a
 * dense index copied in). A knowledge source (`ks`) given as a URL is read through its backend either way.
 */
export async function buildIndexAt(o: IndexBuildAtOptions, log: (s: string) => void): Promise<IndexBuildResult> {
  if (o.backend !== undefined && o.out !== undefined) throw new Error("give the index's place once: --out DIR or URL (--backend URL is the same as --out URL)");
  if (o.backend !== undefined && !isRemote(o.backend)) throw new Error(`--backend takes ${remoteUrlText()}, got ${o.backend} (for a directory use --out)`);
  const target = o.backend ?? o.out;
  if (target !== undefined && schemeOf(target) !== undefined && !isRemote(target)) throw new Error(`${target}: an index goes into a directory or ${remoteUrlText()}`);
  const backend = target === undefined ? embeddedBackend : backendFor(target);
  if (o.fromIndex !== undefined && backend.copiesIndexes === undefined) {
    const copier = BACKENDS.all().find((b) => b.copiesIndexes !== undefined);
    throw new Error(copier?.copiesIndexes ?? "--from-index DIR: no backend copies indexes in");
  }
  const input: IndexBuildAtOptions = { ...o, ...(target !== undefined ? { out: target } : {}) };
  if (o.ks !== undefined) {
    const ks = o.ks;
    input.openKs = () => openKnowledgeSource(ks);
    if (isRemote(ks)) input.pageStream = () => pagesOf(ks);
  }
  delete input.backend;
  if (input.fromIndex === undefined) delete input.fromIndex;
  return capability(backend, "buildIndex", target ?? "the index")(input, log);
}
