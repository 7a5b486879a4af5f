// `tartan index build`: builds a retrieval index (tfidf, entity, bm25 or dense) from KILT pages, with a
// progress line on stderr and a summary at the end. Every kind builds into a sibling temporary directory
// (`.NAME.building`) that replaces the old index only when complete and sealed (every file's size and
// checksum in the manifest), so a killed build never leaves a half-old, half-new index; a killed BM25 or
// entity build resumes from that directory when re-run with the same arguments.

import { lockOutput } from "../../util/lock.js";
import { diskError, diskErrorCode } from "../../util/disk-errors.js";
import { existsSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import { subcommand } from "../subcommand.js";
import { sealIndex } from "../../retrieval/manifest.js";
import { buildTfidfIndex } from "../../retrieval/tfidf/build.js";
import { buildEntityIndex } from "../../retrieval/entity/build.js";
import { pageFeed, type PageFeed } from "../../retrieval/entity/source.js";
import { unitsFrom as unitsFromSource, unitsFromPages, type UnitOptions } from "../../retrieval/sources.js";
import { isClickHouseUrl, pagesOf } from "../../backends/open.js";
import { TableUnitStore } from "../../retrieval/unit-table.js";
import type { RetrieverKind, UnitKind } from "../../retrieval/types.js";
import type { Unit } from "../../retrieval/units.js";
import type { Bm25BuildParams } from "../../retrieval/bm25/index.js";
import type { DenseBuildParams } from "../../retrieval/dense/index.js";
import { Progress, ProgressLine, formatCount } from "../../util/progress.js";
import { makeDirs } from "../../util/safe-output.js";

const fmt = (n: number) => n.toLocaleString("en-US");

export { ProgressLine };

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

export interface IndexBuildOptions {
  /** Pages JSONL file. */
  pages?: string;
  /** Knowledge-source directory (needs the knowledge-source store). */
  ks?: string;
  /** A unit table from `tartan ks passages --ks DIR --table UNITS` (passages already cut; text read from the store). */
  units?: string;
  kind: Exclude<RetrieverKind, "hybrid">;
  unit?: UnitKind;
  words?: number;
  out?: string;
  /** bm25: write the index into this ClickHouse database instead of `out` (clickhouse://host:port/db[/name]?cluster=C). */
  backend?: string;
  /** Kind-specific parameters (tfidf: ngram, hashBits, title; entity: titleCount, maxMentionTokens; dense: encoder, …). */
  params?: Record<string, unknown>;
  /** BM25, entity: bytes the build may use (default 3 GiB). */
  memory?: number;
  /** BM25: analysis threads (default: the number of cores). */
  threads?: number;
}

/** The temporary directory an index is built in before it replaces `out`. */
export function buildingDir(out: string): string {
  return join(dirname(out), `.${basename(out)}.building`);
}

/** Replaces `out` with the finished `tmp` (the old index stays whole until the last rename). */
function swapInto(tmp: string, out: string): void {
  const old = join(dirname(out), `.${basename(out)}.old`);
  rmSync(old, { recursive: true, force: true });
  if (existsSync(out)) renameSync(out, old);
  renameSync(tmp, out);
  rmSync(old, { recursive: true, force: true });
}

export interface IndexBuildResult {
  out: string;
  unit: UnitKind;
  units: number;
  seconds: number;
  detail: string;
}

/** The unit a kind indexes by default: DrQA's TF-IDF and the entity retriever are page level. */
export function defaultUnit(kind: RetrieverKind): UnitKind {
  return kind === "tfidf" || kind === "entity" ? "page" : "passage";
}

/** Builds one index; `log` gets the summary line. */
export async function buildIndex(o: IndexBuildOptions, log: (s: string) => void): Promise<IndexBuildResult> {
  let tableUnit: UnitKind | undefined;
  if (o.units !== undefined) {
    if (o.pages || o.ks) throw new Error("give one source: --pages FILE, --ks DIR or --units DIR");
    const t = TableUnitStore.open(o.units);
    tableUnit = t.description.unit as UnitKind | undefined;
    t.close();
    if (tableUnit === undefined) throw new Error(`${o.units}: the unit table does not say what its units are (make it with tartan ks passages --table)`);
    if (o.unit !== undefined && o.unit !== tableUnit) throw new Error(`${o.units} holds ${tableUnit} units, not ${o.unit}`);
  } else if (!o.pages === !o.ks) throw new Error("give the pages with --pages FILE or a knowledge source with --ks DIR");
  const source = (o.units ?? o.ks ?? o.pages)!;
  const unit = tableUnit ?? o.unit ?? defaultUnit(o.kind);
  if (o.kind === "entity" && unit !== "page") throw new Error("entity indexes are page level: use --unit page (or leave --unit out)");
  // Pages from a clickhouse:// knowledge source come through its backend; files and directories as before.
  const unitsFrom = (src: { pages?: string; ks?: string; units?: string }, u: UnitOptions) =>
    src.ks !== undefined && isClickHouseUrl(src.ks) ? unitsFromPages(pagesOf(src.ks), u) : unitsFromSource(src, u);
  if (o.backend !== undefined) return buildIndexClickHouse(o, unitsFrom({ pages: o.pages, ks: o.ks }, { unit, words: o.words }), unit, source, log);
  const out = o.out ?? `index-${o.kind}-${unit}`;
  const lock = lockOutput(out, log); // the default name too; re-entrant with the command's own lock
  // A previous swap killed between its renames left the old index at .NAME.old: put it back.
  const old = join(dirname(out), `.${basename(out)}.old`);
  if (!existsSync(out) && existsSync(old)) renameSync(old, out);
  const tmp = buildingDir(out);
  // Only BM25 and entity builds resume from what a killed build left; other kinds start afresh.
  if (o.kind !== "bm25" && o.kind !== "entity") rmSync(tmp, { recursive: true, force: true });
  makeDirs(tmp); // errors name the directory and the parent that refused it
  const progress = new ProgressLine(`index ${o.kind}`);
  const tick = (n: number) => progress.update(() => `${fmt(n)} ${o.kind === "entity" ? "pages" : `${unit} units`}`);
  const src = { pages: o.pages, ks: o.ks, units: o.units };
  const params = o.params ?? {};
  const t0 = performance.now();
  let units = 0;
  let detail = "";
  try {
    if (o.kind === "tfidf") {
      const s = await buildTfidfIndex(unitsFrom(src, { unit, words: o.words }), tmp, { ...params, unit, source }, tick);
      units = s.units;
      detail = `${fmt(s.buckets)} buckets used, ${fmt(s.postings)} postings`;
    } else if (o.kind === "entity") {
      if (o.units) throw new Error("entity indexes are built from pages: give --pages FILE or --ks DIR");
      const feed: PageFeed = o.ks !== undefined && isClickHouseUrl(o.ks) ? { pages: pagesOf(o.ks), bytes: () => 0 } : pageFeed(src);
      // Pages from a store are counted against its page count; from a file, by bytes against its size.
      const bar = new Progress({ label: "index entity", unit: "pages", totalBytes: feed.totalBytes, totalItems: feed.totalPages, countItems: feed.totalPages !== undefined });
      let reading = true;
      const s = await buildEntityIndex(feed.pages, tmp, { ...params, source }, undefined, {
        memory: o.memory,
        ownDir: true,
        onProgress: (p) => {
          if (p.phase === "read") return bar.update(p.pages, feed.bytes());
          if (reading) bar.done();
          reading = false;
          progress.update(() => (p.phase === "resolve" ? `resolving anchors (${fmt(p.runs)} runs)` : `merging: ${fmt(p.aliases ?? 0)} aliases`));
        },
      });
      if (reading) bar.done();
      units = s.units;
      detail = `${fmt(s.aliases)} aliases, ${fmt(s.anchors)} anchors (${fmt(s.unresolvedAnchors)} to pages not in the source)${s.runs > 0 ? `, ${fmt(s.runs)} runs` : ""}${s.resumedPages > 0 ? `, resumed after ${fmt(s.resumedPages)} pages` : ""}`;
    } else if (o.kind === "bm25") {
      const { buildBm25Index } = await import("../../retrieval/bm25/index.js");
      // From a unit table the workers read the texts from its store themselves (pages decoded on every core).
      const table = o.units !== undefined ? TableUnitStore.open(o.units) : null;
      const bar = new Progress({ label: "index bm25", unit: `${unit} units`, ...(table ? { totalItems: table.count } : {}) });
      let merging = false;
      const input = table ? table.scan(0, table.count, false) : unitsFrom(src, { unit, words: o.words });
      const s = await buildBm25Index(input, tmp, { ...(params as Bm25BuildParams), unit, source }, undefined, {
        memory: o.memory,
        threads: o.threads,
        ownDir: true,
        ...(table ? { textsFrom: o.units } : {}),
        onProgress: (p) => {
          if (p.phase === "analyse") bar.update(p.units, p.bytes);
          else {
            if (!merging) bar.done();
            merging = true;
            progress.update(() => `merging segments: ${formatCount(p.terms ?? 0)} terms`);
          }
        },
      });
      if (!merging) bar.done();
      table?.close();
      units = s.units;
      detail = `${fmt(s.terms)} terms, ${fmt(s.postings)} postings, ${fmt(s.segments)} segments${s.resumedUnits > 0 ? `, resumed after ${fmt(s.resumedUnits)} units` : ""}`;
    } else if (o.kind === "dense") {
      const { buildDenseIndex } = await import("../../retrieval/dense/index.js");
      // Universal Sentence Encoder lite is the one real encoder that installs offline: the default.
      const dense = { encoder: { type: "use-lite" }, ...params, unit, source } as DenseBuildParams;
      // On a terminal, count the units first (cheap next to encoding them) so the line has an ETA.
      let total: number | undefined;
      if (process.stderr.isTTY) {
        total = 0;
        for await (const _ of unitsFrom(src, { unit, words: o.words })) total++;
      }
      const bar = new Progress({ label: "index dense: encoding", unit: `${unit} units`, totalItems: total, countItems: true });
      let encoded = false;
      const m = await buildDenseIndex(unitsFrom(src, { unit, words: o.words }), tmp, dense, (p) => {
        if (p.phase === "encode") bar.update(p.done);
        else {
          if (!encoded) bar.done();
          encoded = true;
          progress.update(() => `HNSW graph: ${formatCount(p.done)} vectors added`);
        }
      });
      if (!encoded) bar.done();
      units = m.units;
      detail = `${String((m.params as { dim?: number }).dim ?? "?")}-d ${dense.encoder.type} vectors`;
    } else throw new Error(`unknown index kind ${JSON.stringify(o.kind)}`);
    sealIndex(tmp);
    swapInto(tmp, out);
  } catch (e) {
    // A full disk: nothing of this build is kept (not even to resume), the previous index is untouched.
    if (diskErrorCode(e) === undefined) throw e;
    rmSync(tmp, { recursive: true, force: true });
    throw diskError(out, e, { cleanup: `removed ${tmp}${existsSync(out) ? `; the previous index in ${out} is untouched` : ""}` });
  } finally {
    progress.done();
    lock.release();
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`${o.kind} index of ${fmt(units)} ${unit} units${detail ? ` (${detail})` : ""} from ${source} → ${out} in ${seconds.toFixed(1)} s`);
  return { out, unit, units, seconds, detail };
}

/** A size such as `3G`, `512M`, `3GiB`, `1.5g` or a number of bytes. */
export function byteSize(value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(value);
  if (!m) throw new InvalidArgumentError("expected a size such as 3G, 512M or a number of bytes");
  const n = Number(m[1]) * 1024 ** " kmgt".indexOf((m[2] || " ").toLowerCase());
  if (!(n >= 1 << 20)) throw new InvalidArgumentError("expected at least 1M");
  return Math.floor(n);
}

/** `index build --kind bm25 --backend clickhouse://…`: the index goes into ClickHouse's sharded tables. */
async function buildIndexClickHouse(o: IndexBuildOptions, units: AsyncIterable<Unit>, unit: UnitKind, source: string, log: (s: string) => void): Promise<IndexBuildResult> {
  const url = o.backend!;
  if (o.kind !== "bm25" || !isClickHouseUrl(url)) throw new Error("--backend takes a clickhouse:// URL, for --kind bm25");
  const { buildBm25ClickHouse } = await import("../../backends/clickhouse/bm25.js");
  const progress = new ProgressLine("index bm25");
  const t0 = performance.now();
  let s;
  try {
    s = await buildBm25ClickHouse(units, url, { ...(o.params as Bm25BuildParams), unit, source }, (n) => progress.update(() => `${fmt(n)} ${unit} units`));
  } finally {
    progress.done();
  }
  const seconds = (performance.now() - t0) / 1000;
  const resumed = s.resumedUnits > 0 ? `; went on after ${fmt(s.resumedUnits)} units a killed build had stored` : "";
  const detail = `${fmt(s.terms)} terms, ${fmt(s.postings)} postings on ${s.shards} shard${s.shards === 1 ? "" : "s"}, ${(s.bytes / 1e6).toFixed(1)} MB${resumed}`;
  log(`bm25 index of ${fmt(s.units)} ${unit} units (${detail}) from ${source} → ${url} in ${seconds.toFixed(1)} s`);
  return { out: url, unit, units: s.units, seconds, detail };
}

function jsonObject(value: string): Record<string, unknown> {
  try {
    const v = JSON.parse(value) as unknown;
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  throw new InvalidArgumentError("expected a JSON object");
}

const log = (s: string) => process.stderr.write(`${s}\n`);

/** The `index` command of `program`, created if no other module made it yet. */
export function indexCommand(program: Command): Command {
  return subcommand(program, "index", "retrieval indexes: build them from KILT pages");
}

/** Adds `index build`. */
export function registerIndexBuild(program: Command): void {
  indexCommand(program)
    .command("build")
    .description("build a retrieval index from KILT pages (units with KILT provenance, manifest.json, the kind's files)")
    .addOption(new Option("--kind <kind>", "retriever").choices(["bm25", "tfidf", "dense", "entity"]).makeOptionMandatory())
    .option("--pages <pages.jsonl>", "KILT pages JSONL (.gz too), e.g. from tartan ks from-squad")
    .option("--ks <dir>", "knowledge-source directory or clickhouse:// URL")
    .option("--units <dir>", "a unit table from tartan ks passages --ks DIR --table UNITS (passages cut once, text read from the store)")
    .addOption(new Option("--unit <unit>", "what to retrieve (default: page for tfidf and entity, passage otherwise)").choices(["passage", "paragraph", "page"]))
    .option("--words <n>", "passage size in words (--unit passage)", positiveInt, 100)
    .option("--out <dir>", "index directory to write (default: index-<kind>-<unit>)")
    .option("--backend <url>", "bm25: write the index into ClickHouse (clickhouse://host:port/db[/name]?cluster=C) instead of a directory")
    .option("--ngram <n>", "tfidf: longest n-gram", positiveInt)
    .option("--hash-bits <n>", "tfidf: log2 of the hash buckets", positiveInt)
    .option("--no-title", "tfidf, bm25, dense: index the unit text without its title")
    .option("--title-count <n>", "entity: pseudo-links a title adds", Number)
    .option("--memory <size>", "bm25, entity: memory budget of the build, e.g. 3G, 512M (default 3G)", byteSize)
    .option("--threads <n>", "bm25: analysis threads (default: the number of cores)", positiveInt)
    .option("--params <json>", 'kind-specific parameters as a JSON object (dense: {"encoder": {"type": "use-lite"}})', jsonObject)
    .action(async (o: { kind: IndexBuildOptions["kind"]; pages?: string; ks?: string; units?: string; unit?: UnitKind; words: number; out?: string; backend?: string; ngram?: number; hashBits?: number; title: boolean; titleCount?: number; params?: Record<string, unknown>; memory?: number; threads?: number }) => {
      const params: Record<string, unknown> = { ...(o.params ?? {}) };
      if (o.ngram !== undefined) params.ngram = o.ngram;
      if (o.hashBits !== undefined) params.hashBits = o.hashBits;
      if (o.kind !== "entity" && o.title === false) params.title = false;
      if (o.titleCount !== undefined) params.titleCount = o.titleCount;
      await buildIndex({ pages: o.pages, ks: o.ks, units: o.units, kind: o.kind, unit: o.unit, words: o.words, out: o.out, backend: o.backend, params, memory: o.memory, threads: o.threads }, log);
    });
}
