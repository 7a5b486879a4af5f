// The embedded backend: knowledge sources, indexes and runs databases as directories on this machine
// (the SQLite page store of src/knowledge, the index kinds of src/retrieval, the SQLite runs store of
// src/runs). Plain paths are its locations; `file://` and `sqlite://` URLs (and `sqlite:DIR`) name runs
// databases too.

import { basename, resolve } from "node:path";
import { KnowledgeSource, readStoreInfo, type StoreInfo } from "../../knowledge/store.js";
import type { IngestResult } from "../../knowledge/ingest.js";
import { defaultSearchThreads, openIndexes } from "../../retrieval/open.js";
import { SearchPool } from "../../retrieval/pool.js";
import { readManifest } from "../../retrieval/manifest.js";
import { openRunsStore } from "../../runs/open.js";
import { formatBytes, formatCount, formatDuration } from "../../util/progress.js";
import type { Backend, IngestReport, KnowledgeSourceStats } from "../backend.js";

/** The line `tartan ks ingest` prints for an embedded store. */
export function ingestSummary(r: IngestResult): string {
  if (r.alreadyComplete) {
    return `${r.out} already holds all ${formatCount(r.pages)} pages of ${r.file}: nothing to do (--force rebuilds it)`;
  }
  const skipped: string[] = [];
  if (r.badLines > 0) skipped.push(`${formatCount(r.badLines)} malformed line${r.badLines === 1 ? "" : "s"}`);
  if (r.duplicates > 0) skipped.push(`${formatCount(r.duplicates)} duplicate id${r.duplicates === 1 ? "" : "s"}`);
  const rate = r.seconds > 0 ? r.bytesThisRun / r.seconds / 1e6 : 0;
  return [
    `${formatCount(r.pages)} pages from ${r.file} in ${r.out}`,
    skipped.length > 0 ? ` (skipped ${skipped.join(", ")})` : "",
    r.resumedAt ? `; resumed after line ${formatCount(r.resumedAt.line)}` : "",
    `; ${r.seconds < 10 ? `${r.seconds.toFixed(1)}s` : formatDuration(r.seconds)} at ${rate.toFixed(1)} MB/s`,
    `; store ${formatBytes(r.storeBytes)} (${(r.storeBytes / Math.max(1, r.inputBytes)).toFixed(2)} of the input)`,
  ].join("");
}

/** The rows `tartan ks stats` prints for an embedded store. */
export function storeRows(info: StoreInfo): [string, string][] {
  const status =
    info.complete === 1
      ? "complete"
      : `incomplete: stopped after line ${formatCount(info.checkpoint_line)} (${formatBytes(info.checkpoint_byte)} of ${formatBytes(info.input_size)}); re-run \`tartan ks ingest\` to resume`;
  return [
    ["store", `${info.dir} (${formatBytes(info.storeBytes)}, ${(info.storeBytes / Math.max(1, info.input_size)).toFixed(2)} of the input)`],
    ["status", status],
    ["pages", formatCount(info.pages)],
    ["malformed lines", formatCount(info.bad_lines)],
    ["duplicate ids", formatCount(info.duplicates)],
    ["input", `${info.input_path} (${formatBytes(info.input_size)})`],
    ["ingest time", `${formatDuration(info.ingest_seconds)} over ${info.runs} run${info.runs === 1 ? "" : "s"}`],
  ];
}

/** Directories on this machine. */
export const embeddedBackend: Backend = {
  name: "embedded",
  version: 1,
  summary: "directories on this machine: the page store, index directories, the SQLite runs store",
  schemes: ["file", "sqlite"],
  canonical: (location) => resolve(location),
  indexName: (location) => basename(resolve(location)),

  openKnowledgeSource: async (location) => KnowledgeSource.open(location),
  async ingest(file, location, options): Promise<IngestReport> {
    const r = await (await import("../../knowledge/ingest.js")).ingest(file, { ...options, out: location });
    return { backend: "embedded", location, pages: r.pages, alreadyComplete: r.alreadyComplete, summary: ingestSummary(r), detail: r };
  },
  async knowledgeSourceStats(location): Promise<KnowledgeSourceStats> {
    const info = readStoreInfo(location);
    return { backend: "embedded", location, rows: storeRows(info), detail: info };
  },

  openRetriever: (locations, options) => openIndexes(locations, options),
  describeIndex: async (location) => readManifest(location),
  searchPool: (retriever, locations, options) => new SearchPool(retriever, locations, { ...options, threads: options.threads ?? defaultSearchThreads(retriever) }),
  async buildIndex(options, log) {
    return (await import("../../retrieval/build.js")).buildIndex(options, log);
  },

  openRuns: (location) => openRunsStore(location),
};
