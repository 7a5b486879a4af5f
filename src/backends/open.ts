// The one place where a location picks the backend: a `clickhouse://` URL opens the ClickHouse
// adapter, anything else is a directory of the embedded store, index or runs database. Every command
// and the server open knowledge sources, indexes and runs databases here (openKnowledgeSource,
// openRetriever, openRuns) and work with the interfaces (KnowledgeSourceReader, Retriever, RunsStore)
// without knowing which backend they have.

import { KnowledgeSource } from "../knowledge/store.js";
import type { KnowledgeSourceReader } from "../knowledge/source.js";
import type { KiltPage } from "../records/types.js";
import { defaultSearchThreads, openIndexes } from "../retrieval/open.js";
import { SearchPool, type ParallelOptions } from "../retrieval/pool.js";
import { readManifest } from "../retrieval/manifest.js";
import type { HybridOptions } from "../retrieval/hybrid.js";
import type { OpenOptions } from "../retrieval/kinds/kind.js";
import type { IndexManifest, Retriever } from "../retrieval/types.js";
import type { IndexBuildOptions, IndexBuildResult } from "../retrieval/build.js";
import type { Bm25BuildParams } from "../retrieval/bm25/build.js";
import type { IngestOptions, IngestResult } from "../knowledge/ingest.js";
import { readStoreInfo, type StoreInfo } from "../knowledge/store.js";
import { formatCount as fmt, ProgressLine } from "../util/progress.js";
import type { ClickHouseIngestOptions, ClickHouseIngestResult, ClickHouseKsInfo } from "./clickhouse/knowledge.js";
import { openRunsStore, registerRunsBackend } from "../runs/open.js";
import type { RunsStore } from "../runs/types.js";
import { isClickHouseUrl } from "./clickhouse/client.js";

export { isClickHouseUrl };

// `--runs clickhouse://…`: the runs database in ClickHouse (src/runs chooses backends by URL scheme;
// registered here too, so `openRunsStore` knows it once this module is loaded).
registerRunsBackend("clickhouse", async (url) => (await import("./clickhouse/runs.js")).ClickHouseRunsStore.open(url.href));

/** The runs database at `location`: a ClickHouse URL, a directory (default .tartan/runs or $TARTAN_RUNS) or a URL of another registered backend. */
export async function openRuns(location?: string): Promise<RunsStore> {
  if (location !== undefined && isClickHouseUrl(location)) return (await import("./clickhouse/runs.js")).ClickHouseRunsStore.open(location);
  return openRunsStore(location);
}

/** The knowledge source at `location`: a ClickHouse URL or an embedded store directory. */
export async function openKnowledgeSource(location: string): Promise<KnowledgeSourceReader> {
  if (isClickHouseUrl(location)) return (await import("./clickhouse/knowledge.js")).ClickHouseKnowledgeSource.open(location);
  return KnowledgeSource.open(location);
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

/** The retriever at `location`: a ClickHouse BM25 index URL, or index directories (several: their fusion). */
export async function openRetriever(location: string | readonly string[], options: HybridOptions & OpenOptions & { batch?: number } = {}): Promise<Retriever> {
  const all = typeof location === "string" ? [location] : [...location];
  const remote = all.filter(isClickHouseUrl);
  if (remote.length === 0) return openIndexes(all, options);
  if (all.length > 1) throw new Error(`${remote[0]}: a ClickHouse index cannot be fused with other indexes yet; give it alone`);
  const { MarkerStripping } = await import("../retrieval/markers.js");
  if ((await clickHouseIndexKind(remote[0])) === "dense") return new MarkerStripping(await (await import("./clickhouse/dense.js")).openClickHouseDense(remote[0], { batch: options.batch }));
  const { openClickHouseBm25 } = await import("./clickhouse/bm25.js");
  return new MarkerStripping(await openClickHouseBm25(remote[0], { batch: options.batch }));
}

/**
 * The {@link SearchPool} that spreads batches of queries to `retriever`, opened from `locations`: over
 * the cores for index directories (`options.threads`, default every core, or one thread when a kind
 * spreads each search over the cores itself, as dense does), on this thread for a ClickHouse index
 * (spread over its shards, a whole batch per statement).
 */
export function searchPoolFor(retriever: Retriever, locations: readonly string[], options: ParallelOptions = {}): SearchPool {
  if (locations.some(isClickHouseUrl)) return new SearchPool(retriever, locations, { ...options, threads: 1, chunk: 1000 });
  return new SearchPool(retriever, locations, { ...options, threads: options.threads ?? defaultSearchThreads(retriever) });
}

/** The kind of the ClickHouse index a URL names (its meta table's `kind`; a URL naming no index: bm25, its default). */
async function clickHouseIndexKind(url: string): Promise<string> {
  const { ClickHouseDatabase } = await import("./clickhouse/client.js");
  const { readMeta } = await import("./clickhouse/schema.js");
  const db = await ClickHouseDatabase.connect(url);
  try {
    return db.u.name === null ? "bm25" : ((await readMeta(db, db.u.name))?.kind ?? "bm25");
  } finally {
    await db.close();
  }
}

/** The manifest of the index at `location` (its manifest.json, or what a ClickHouse index's meta says). */
export async function describeIndex(location: string): Promise<IndexManifest> {
  if (!isClickHouseUrl(location)) return readManifest(location);
  if ((await clickHouseIndexKind(location)) === "dense") {
    const r = await (await import("./clickhouse/dense.js")).openClickHouseDense(location);
    try {
      return r.manifest;
    } finally {
      await r.close();
    }
  }
  const { ClickHouseBm25Retriever } = await import("./clickhouse/bm25.js");
  const r = await ClickHouseBm25Retriever.open(location);
  try {
    return r.manifest;
  } finally {
    await r.close();
  }
}

/** What {@link buildIndexAt} builds: {@link IndexBuildOptions}, with `out` a directory or a clickhouse:// URL. */
export interface IndexBuildAtOptions extends IndexBuildOptions {
  /** The ClickHouse database to build in (`clickhouse://host:port/db[/name]?cluster=C`): the same as a URL given as `out`. */
  backend?: string;
  /** dense into ClickHouse: the compressed dense index directory (binary codes) to copy in. */
  fromIndex?: string;
}

/**
 * Builds an index where `out` (or `backend`) says: a clickhouse:// URL puts a BM25 index into
 * ClickHouse's sharded tables, a directory builds any kind with the atomic swap (src/retrieval/build.ts).
 * A clickhouse:// knowledge source (`ks`) is read through its backend either way.
 */
export async function buildIndexAt(o: IndexBuildAtOptions, log: (s: string) => void): Promise<IndexBuildResult> {
  if (o.backend !== undefined && o.out !== undefined) throw new Error("give the index's place once: --out DIR or URL (--backend URL is the same as --out URL)");
  if (o.backend !== undefined && !isClickHouseUrl(o.backend)) throw new Error(`--backend takes a clickhouse:// URL, got ${o.backend} (for a directory use --out)`);
  const target = o.backend ?? o.out;
  if (target !== undefined && /^[a-z][a-z0-9+.-]*:\/\//iu.test(target) && !isClickHouseUrl(target)) throw new Error(`${target}: an index goes into a directory or a clickhouse:// URL`);
  const { buildIndex, resolveSource, sourceUnits } = await import("../retrieval/build.js");
  const remoteKs = o.ks !== undefined && isClickHouseUrl(o.ks);
  const input: IndexBuildOptions = { ...o, ...(o.ks !== undefined ? { openKs: () => openKnowledgeSource(o.ks!) } : {}), ...(remoteKs ? { pageStream: () => pagesOf(o.ks!) } : {}) };
  delete (input as IndexBuildAtOptions).backend;
  delete (input as IndexBuildAtOptions).fromIndex;
  if (o.fromIndex !== undefined && (o.kind !== "dense" || target === undefined || !isClickHouseUrl(target))) throw new Error("--from-index DIR copies a compressed dense index into ClickHouse: give it with --kind dense and --backend URL");
  if (target === undefined || !isClickHouseUrl(target)) return buildIndex(input, log);
  if (o.kind === "dense") return buildDenseAt(o.fromIndex, target, log);
  if (o.kind !== "bm25") throw new Error(`${target}: only bm25 and dense indexes are built in ClickHouse (--kind bm25, or --kind dense --from-index DIR); a ${o.kind} index needs a directory`);
  const { unit, source } = resolveSource(o);
  if (o.units !== undefined) throw new Error(`${target}: a ClickHouse index is built from pages: give --pages FILE or --ks DIR|URL`);
  const { buildBm25ClickHouse } = await import("./clickhouse/bm25.js");
  const progress = new ProgressLine("index bm25");
  const t0 = performance.now();
  let s;
  try {
    s = await buildBm25ClickHouse(sourceUnits(input, { unit, words: o.words }), target, { ...(o.params as Bm25BuildParams), unit, source }, (n) => progress.update(() => `${fmt(n)} ${unit} units`));
  } finally {
    progress.done();
  }
  const seconds = (performance.now() - t0) / 1000;
  const resumed = s.resumedUnits > 0 ? `; went on after ${fmt(s.resumedUnits)} units a killed build had stored` : "";
  const detail = `${fmt(s.terms)} terms, ${fmt(s.postings)} postings on ${s.shards} shard${s.shards === 1 ? "" : "s"}, ${(s.bytes / 1e6).toFixed(1)} MB${resumed}`;
  log(`bm25 index of ${fmt(s.units)} ${unit} units (${detail}) from ${source} → ${target} in ${seconds.toFixed(1)} s`);
  return { out: target, unit, units: s.units, seconds, detail };
}

/** A compressed dense index directory copied into ClickHouse (`index build --kind dense --from-index DIR --backend URL`). */
async function buildDenseAt(fromIndex: string | undefined, target: string, log: (s: string) => void): Promise<IndexBuildResult> {
  if (fromIndex === undefined) throw new Error(`${target}: a dense index in ClickHouse is copied from a compressed dense index: give --from-index DIR (built with --vectors and --quantize binary)`);
  const { buildDenseClickHouse } = await import("./clickhouse/dense.js");
  const progress = new ProgressLine("index dense");
  const t0 = performance.now();
  let s;
  try {
    s = await buildDenseClickHouse(fromIndex, target, (n) => progress.update(() => `${fmt(n)} vectors`));
  } finally {
    progress.done();
  }
  const seconds = (performance.now() - t0) / 1000;
  const detail = `${fmt(s.lists)} lists on ${s.shards} shard${s.shards === 1 ? "" : "s"}, ${(s.bytes / 1e6).toFixed(1)} MB`;
  log(`dense index of ${fmt(s.units)} vectors (${detail}) from ${fromIndex} → ${target} in ${seconds.toFixed(1)} s`);
  const unit = (await import("../retrieval/manifest.js")).readManifest(fromIndex).unit;
  return { out: target, unit, units: s.units, seconds, detail };
}

/** What {@link ingestAt} did: the embedded store's result, or ClickHouse's. */
export type IngestAtResult = { backend: "embedded"; result: IngestResult } | { backend: "clickhouse"; result: ClickHouseIngestResult };

/** Ingests `file` (KILT pages JSONL) into the knowledge source at `location`: a store directory (resumable, `knowledge/ingest.ts`) or a clickhouse:// URL. */
export async function ingestAt(file: string, location: string, o: Omit<IngestOptions, "out"> & ClickHouseIngestOptions = {}): Promise<IngestAtResult> {
  if (!isClickHouseUrl(location)) return { backend: "embedded", result: await (await import("../knowledge/ingest.js")).ingest(file, { ...o, out: location }) };
  const { ingestClickHouse } = await import("./clickhouse/knowledge.js");
  return { backend: "clickhouse", result: await ingestClickHouse(file, location, { strict: o.strict, force: o.force, commitBytes: o.commitBytes, onProblem: o.onProblem }) };
}

/** What a knowledge source holds (`tartan ks stats`): the embedded store's info, or ClickHouse's. */
export type KnowledgeSourceInfo = { backend: "embedded"; info: StoreInfo } | { backend: "clickhouse"; info: ClickHouseKsInfo };

/** The pages, checkpoint and size of the knowledge source at `location`. */
export async function knowledgeSourceInfo(location: string): Promise<KnowledgeSourceInfo> {
  if (!isClickHouseUrl(location)) return { backend: "embedded", info: readStoreInfo(location) };
  return { backend: "clickhouse", info: await (await import("./clickhouse/knowledge.js")).clickHouseKsInfo(location) };
}
