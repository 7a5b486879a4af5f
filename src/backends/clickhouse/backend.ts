// The ClickHouse backend: knowledge sources, BM25 and dense indexes and runs databases in a ClickHouse
// database (`clickhouse://host:port/db[/name]?cluster=C`), sharded over a cluster's nodes. Its modules load
// only when a clickhouse:// location is opened.

import type { Retriever } from "../../retrieval/types.js";
import type { Bm25BuildParams } from "../../retrieval/bm25/build.js";
import type { IndexBuildResult } from "../../retrieval/build.js";
import { SearchPool } from "../../retrieval/pool.js";
import { formatBytes, formatCount as fmt, type OnProgress } from "../../util/progress.js";
import type { Backend, BackendBuildOptions, IngestReport, KnowledgeSourceStats } from "../backend.js";
import type { ClickHouseIngestResult, ClickHouseKsInfo } from "./knowledge.js";

/** The kind of the ClickHouse index a URL names (its meta table's `kind`; a URL naming no index: bm25, its default). */
async function indexKind(url: string): Promise<string> {
  const { ClickHouseDatabase } = await import("./client.js");
  const { readMeta } = await import("./schema.js");
  const db = await ClickHouseDatabase.connect(url);
  try {
    return db.u.name === null ? "bm25" : ((await readMeta(db, db.u.name))?.kind ?? "bm25");
  } finally {
    await db.close();
  }
}

/** The ClickHouse index at `url`, unwrapped (BM25 or dense, by its meta table). */
async function openIndex(url: string, batch?: number): Promise<Retriever> {
  if ((await indexKind(url)) === "dense") return (await import("./dense.js")).openClickHouseDense(url, { batch });
  return (await import("./bm25.js")).openClickHouseBm25(url, { batch });
}

/** The line `tartan ks ingest` prints for a ClickHouse knowledge source. */
export function clickHouseIngestSummary(r: ClickHouseIngestResult, file: string, location: string): string {
  if (r.alreadyComplete) return `${location} already holds all ${fmt(r.pages)} pages of ${file}: nothing to do (--force rebuilds it)`;
  const skipped = r.badLines + r.duplicates > 0 ? ` (skipped ${fmt(r.badLines)} malformed, ${fmt(r.duplicates)} duplicate)` : "";
  const resumed = r.resumedAt ? `; resumed after line ${fmt(r.resumedAt.line)}` : "";
  return `${fmt(r.pages)} pages from ${file} in ${location} (${r.shards} shard${r.shards === 1 ? "" : "s"})${skipped}${resumed}; ${r.seconds.toFixed(1)}s; ${formatBytes(r.storeBytes)} on disk`;
}

/** The rows `tartan ks stats` prints for a ClickHouse knowledge source. */
export function clickHouseKsRows(i: ClickHouseKsInfo): [string, string][] {
  const m = i.meta;
  return [
    ["store", `${i.url} (${i.shards} shard${i.shards === 1 ? "" : "s"}, ${formatBytes(i.bytes)})`],
    ["status", m.complete === "1" ? "complete" : `incomplete: stopped after line ${fmt(Number(m.checkpoint_line))}; re-run \`tartan ks ingest\` to resume`],
    ["pages", fmt(Number(m.pages))],
    ["malformed lines", fmt(Number(m.bad_lines))],
    ["duplicate ids", fmt(Number(m.duplicates))],
    ["input", `${m.input_path} (${formatBytes(Number(m.input_size))})`],
  ];
}

const FROM_INDEX = "--from-index DIR copies a compressed dense index into ClickHouse: give it with --kind dense and --backend URL";

/** A ClickHouse database. */
export const clickHouseBackend: Backend = {
  name: "clickhouse",
  version: 1,
  summary: "a ClickHouse database, sharded over a cluster's nodes: knowledge source, BM25 and dense indexes, runs",
  schemes: ["clickhouse"],
  copiesIndexes: FROM_INDEX,
  canonical: (location) => location,
  indexName(location) {
    const parts = new URL(location).pathname.split("/").filter(Boolean);
    return parts[parts.length - 1] ?? "bm25";
  },

  async openKnowledgeSource(location) {
    return (await import("./knowledge.js")).ClickHouseKnowledgeSource.open(location);
  },
  async ingest(file, location, o): Promise<IngestReport> {
    const r = await (await import("./knowledge.js")).ingestClickHouse(file, location, { strict: o.strict, force: o.force, commitBytes: o.commitBytes, onProblem: o.onProblem, onProgress: o.onProgress });
    return { backend: "clickhouse", location, pages: r.pages, alreadyComplete: r.alreadyComplete, summary: clickHouseIngestSummary(r, file, location), detail: r };
  },
  async knowledgeSourceStats(location): Promise<KnowledgeSourceStats> {
    const info = await (await import("./knowledge.js")).clickHouseKsInfo(location);
    return { backend: "clickhouse", location, rows: clickHouseKsRows(info), detail: info };
  },

  async openRetriever(locations, options) {
    if (locations.length > 1) {
      const { isClickHouseUrl } = await import("./client.js");
      throw new Error(`${locations.find(isClickHouseUrl) ?? locations[0]}: a ClickHouse index cannot be fused with other indexes yet; give it alone`);
    }
    const { applyStage, applyStages } = await import("../../retrieval/stages/index.js");
    return applyStages(await applyStage([await openIndex(locations[0], options.batch)], { name: "markers" }, locations), options.stages);
  },
  async describeIndex(location) {
    const r = await openIndex(location);
    try {
      return r.manifest;
    } finally {
      await r.close();
    }
  },
  // On this thread: a whole batch per statement, spread over the shards by ClickHouse.
  searchPool: (retriever, locations, options) => new SearchPool(retriever, locations, { ...options, threads: 1, chunk: 1000 }),
  async buildIndex(o: BackendBuildOptions, log): Promise<IndexBuildResult> {
    const target = o.out!;
    if (o.fromIndex !== undefined && o.kind !== "dense") throw new Error(FROM_INDEX);
    if (o.kind === "dense") return buildDense(o.fromIndex, target, log, o.onProgress ?? (() => {}));
    if (o.kind !== "bm25") throw new Error(`${target}: only bm25 and dense indexes are built in ClickHouse (--kind bm25, or --kind dense --from-index DIR); a ${o.kind} index needs a directory`);
    const { resolveSource, sourceUnits } = await import("../../retrieval/build.js");
    const { unit, source } = resolveSource(o);
    if (o.units !== undefined) throw new Error(`${target}: a ClickHouse index is built from pages: give --pages FILE or --ks DIR|URL`);
    const { buildBm25ClickHouse } = await import("./bm25.js");
    const report = o.onProgress ?? (() => {});
    const t0 = performance.now();
    let s;
    try {
      s = await buildBm25ClickHouse(sourceUnits(o, { unit, words: o.words }), target, { ...(o.params as Bm25BuildParams), unit, source }, (n) => report({ label: "index bm25", status: () => `${fmt(n)} ${unit} units` }));
    } finally {
      report({ label: "index bm25", status: () => "", done: true });
    }
    const seconds = (performance.now() - t0) / 1000;
    const resumed = s.resumedUnits > 0 ? `; went on after ${fmt(s.resumedUnits)} units a killed build had stored` : "";
    const detail = `${fmt(s.terms)} terms, ${fmt(s.postings)} postings on ${s.shards} shard${s.shards === 1 ? "" : "s"}, ${(s.bytes / 1e6).toFixed(1)} MB${resumed}`;
    log(`bm25 index of ${fmt(s.units)} ${unit} units (${detail}) from ${source} → ${target} in ${seconds.toFixed(1)} s`);
    return { out: target, unit, units: s.units, seconds, detail };
  },

  async openRuns(location) {
    return (await import("./runs.js")).ClickHouseRunsStore.open(location);
  },
};

/** A compressed dense index directory copied into ClickHouse (`index build --kind dense --from-index DIR --backend URL`). */
async function buildDense(fromIndex: string | undefined, target: string, log: (s: string) => void, report: OnProgress): Promise<IndexBuildResult> {
  if (fromIndex === undefined) throw new Error(`${target}: a dense index in ClickHouse is copied from a compressed dense index: give --from-index DIR (built with --vectors and --quantize binary)`);
  const { buildDenseClickHouse } = await import("./dense.js");
  const t0 = performance.now();
  let s;
  try {
    s = await buildDenseClickHouse(fromIndex, target, (n) => report({ label: "index dense", status: () => `${fmt(n)} vectors` }));
  } finally {
    report({ label: "index dense", status: () => "", done: true });
  }
  const seconds = (performance.now() - t0) / 1000;
  const detail = `${fmt(s.lists)} lists on ${s.shards} shard${s.shards === 1 ? "" : "s"}, ${(s.bytes / 1e6).toFixed(1)} MB`;
  log(`dense index of ${fmt(s.units)} vectors (${detail}) from ${fromIndex} → ${target} in ${seconds.toFixed(1)} s`);
  const unit = (await import("../../retrieval/manifest.js")).readManifest(fromIndex).unit;
  return { out: target, unit, units: s.units, seconds, detail };
}
