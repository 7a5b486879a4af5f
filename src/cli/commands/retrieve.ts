// `tartan retrieve` (KILT task records in, KILT guesses or a TREC run out, batches on both cores) and
// `tartan search` (one query, titles, scores and highlighted passages on the terminal).

import { createWriteStream, existsSync } from "node:fs";
import { join } from "node:path";
import { MANIFEST_FILE } from "../../retrieval/manifest.js";
import { once } from "node:events";
import { createGzip } from "node:zlib";
import { Command, InvalidArgumentError, Option } from "commander";
import { assertReadableFile, LineError, readJsonl } from "../../records/jsonl.js";
import type { KiltId, KiltRecord, Provenance } from "../../records/types.js";
import { describeIndex, isClickHouseUrl, openRetriever } from "../../backends/open.js";
import { SearchPool, trecId, type RenderSpec } from "../../retrieval/pool.js";
import { highlight } from "../../retrieval/highlight.js";
import type { Hit, Retriever, UnitKind } from "../../retrieval/types.js";
import { unitProvenance, type Unit } from "../../retrieval/units.js";
import { commitTemp, createTempFor, discardTemp, assertOutputsNotInputs, writeFileSafe } from "../../util/safe-output.js";
import { positiveInt, ProgressLine } from "./index-build.js";
import { trecRunToGuesses } from "./trec-eval.js";

export { highlight };

const fmt = (n: number) => n.toLocaleString("en-US");

export type TextMode = "auto" | "full" | "none";
export type RunFormat = "kilt" | "trec";

export interface RetrieveOptions {
  indexes: string[];
  input: string;
  out: string;
  topK: number;
  format?: RunFormat;
  /** Passage text in the provenance: auto = for passage and paragraph units, not for whole pages. */
  text?: TextMode;
  /** Threads in all; default: the number of cores (1 with a dense index, whose search uses every core itself). */
  threads?: number;
  /** RRF constant and depth for several indexes. */
  rrfK?: number;
  depth?: number;
  /** TREC document ids: these unit fields joined with "+" (default by unit: page → wikipedia_id, else wikipedia_id,start_paragraph_id). */
  trecKeys?: string[];
  /** Also write TREC qrels from the input's gold provenance (same keys). */
  qrels?: string;
  /** Run tag of the TREC run. */
  tag?: string;
  /** Records per batch (memory bound); default 10,000. */
  batch?: number;
}

export interface RetrieveStats {
  records: number;
  skipped: number;
  seconds: number;
  unit: UnitKind;
  kind: string;
}

export function defaultTrecKeys(unit: UnitKind): string[] {
  return unit === "page" ? ["wikipedia_id"] : ["wikipedia_id", "start_paragraph_id"];
}

/** KILT provenance for the hits of one query. */
export function hitsToProvenance(r: Retriever, hits: readonly Hit[], withText: boolean): Provenance[] {
  return hits.map((h) => unitProvenance(r.units.get(h.unit), h.score, withText));
}

interface Pending {
  id: string;
  input: string;
  record: KiltRecord;
}

/** Runs `tartan retrieve`. */
export async function retrieve(o: RetrieveOptions, log: (s: string) => void): Promise<RetrieveStats> {
  const t0 = performance.now();
  const format = o.format ?? "kilt";
  assertOutputsNotInputs([o.out, o.qrels], [o.input]);
  assertReadableFile(o.input);
  const manifests = await Promise.all(o.indexes.map(describeIndex));
  const unit = manifests[0].unit;
  // Dense exact search already spreads each batch over every core, a ClickHouse index over its
  // shards (many queries per statement): one search thread then.
  const remote = o.indexes.some(isClickHouseUrl);
  const threads = o.threads ?? (remote || manifests.some((m) => m.kind === "dense") ? 1 : undefined);
  const retriever = await openRetriever(o.indexes, { k0: o.rrfK, depth: o.depth });
  const pool = new SearchPool(retriever, o.indexes, { threads: remote ? 1 : threads, chunk: remote ? 1000 : undefined, k0: o.rrfK, depth: o.depth });
  const spec: RenderSpec = {
    format,
    withText: o.text === "full" || ((o.text ?? "auto") === "auto" && unit !== "page"),
    keys: o.trecKeys ?? defaultTrecKeys(unit),
    tag: (o.tag ?? `tartan-${retriever.kind}`).replace(/\s+/gu, "_"),
  };
  const temp = createTempFor(o.out, log);
  const out = createWriteStream(temp.path, { fd: temp.fd });
  const gz = o.out.endsWith(".gz") ? createGzip() : null;
  const sink = gz ?? out;
  if (gz) gz.pipe(out);
  const qrelLines: string[] = [];
  const progress = new ProgressLine("retrieve");
  let records = 0;
  let skipped = 0;
  const batchSize = o.batch ?? 10_000;
  let ids: KiltId[] = [];
  let inputs: string[] = [];

  const flush = async () => {
    if (inputs.length === 0) return;
    const base = records;
    const lines = await pool.render(inputs, ids, o.topK, spec, (n) => progress.update(() => `${fmt(base + n)} queries`));
    for (const l of lines) if (l.length > 0 && !sink.write(`${l}\n`)) await once(sink, "drain");
    records += inputs.length;
    ids = [];
    inputs = [];
  };

  try {
    for await (const { value, line } of readJsonl<KiltRecord>(o.input)) {
      if (value.id === undefined || value.id === null) throw new LineError(o.input, line, "record without id");
      if (typeof value.input !== "string") {
        skipped++;
        if (skipped <= 5) log(`warning: ${o.input}:${line}: record ${String(value.id)} has no input: left out`);
        continue;
      }
      if (o.qrels) {
        const qid = String(value.id).trim().replace(/\s+/gu, "_");
        const gold = new Set<string>();
        for (const output of value.output ?? [])
          for (const p of output.provenance ?? []) {
            const doc = trecId(p, spec.keys);
            if (doc !== null) gold.add(doc);
          }
        for (const doc of gold) qrelLines.push(`${qid} 0 ${doc} 1`);
      }
      ids.push(value.id);
      inputs.push(value.input);
      if (inputs.length >= batchSize) await flush();
    }
    await flush();
  } catch (e) {
    progress.done();
    sink.end();
    await once(out, "close");
    discardTemp(temp);
    await pool.close();
    await retriever.close();
    throw e;
  }
  progress.done();
  sink.end();
  await once(out, "close");
  commitTemp(temp, o.out);
  await pool.close();
  await retriever.close();
  if (o.qrels) writeFileSafe(o.qrels, qrelLines.length ? `${qrelLines.join("\n")}\n` : "");
  const seconds = (performance.now() - t0) / 1000;
  log(
    `${fmt(records)} ${records === 1 ? "query" : "queries"} → ${o.out} (${format}, top ${o.topK} ${unit} units, ${retriever.kind}) in ${seconds.toFixed(1)} s` +
      (seconds > 0 ? `, ${fmt(Math.round(records / seconds))} queries/s` : "") +
      (skipped ? `; ${fmt(skipped)} ${skipped === 1 ? "record" : "records"} without input left out` : ""),
  );
  return { records, skipped, seconds, unit, kind: retriever.kind };
}

function where(u: Unit): string {
  if (u.start_paragraph_id === undefined) return "";
  const span = u.end_paragraph_id !== undefined && u.end_paragraph_id !== u.start_paragraph_id ? `¶${u.start_paragraph_id}–${u.end_paragraph_id}` : `¶${u.start_paragraph_id}`;
  return `${u.section ? `${u.section} ` : ""}${span}`;
}

/** `tartan search`: the lines it prints. */
export async function searchLines(indexes: string[], query: string, k: number, color: boolean, options: { rrfK?: number; depth?: number } = {}): Promise<string[]> {
  const r = await openRetriever(indexes, { k0: options.rrfK, depth: options.depth });
  try {
    const hits = await r.search(query, k);
    if (hits.length === 0) return ["no results"];
    const mark = color ? (w: string) => `\x1b[1;33m${w}\x1b[0m` : (w: string) => `**${w}**`;
    const lines: string[] = [];
    hits.forEach((h, i) => {
      const u = r.units.get(h.unit);
      const title = color ? `\x1b[1m${u.wikipedia_title}\x1b[0m` : u.wikipedia_title;
      lines.push(`${String(i + 1).padStart(3)}. ${h.score.toFixed(4)}  ${title}  [${u.wikipedia_id}${where(u) ? ` ${where(u)}` : ""}]`);
      lines.push(`     ${highlight(u.text, query, mark)}`);
    });
    return lines;
  } finally {
    await r.close();
  }
}

const log = (s: string) => process.stderr.write(`${s}\n`);

/**
 * `tartan search --index A B "query"`: the words after `--index` that are index directories (they hold
 * a manifest) are more indexes, fused as `retrieve` does, not query words. At least one word stays the query.
 */
export function indexesAndQuery(indexes: readonly string[], words: readonly string[]): { indexes: string[]; query: string } {
  const all = [...indexes];
  let i = 0;
  while (i < words.length - 1 && existsSync(join(words[i], MANIFEST_FILE))) all.push(words[i++]);
  const query = words.slice(i).join(" ").trim();
  if (query === "") throw new Error("search: no query words after the index directories");
  return { indexes: all, query };
}

function keyList(s: string): string[] {
  const keys = s.split(",").map((k) => k.trim()).filter(Boolean);
  if (keys.length === 0) throw new InvalidArgumentError("expected comma-separated provenance keys");
  return keys;
}

/** Adds `retrieve` and `search`. */
export function registerRetrieve(program: Command): void {
  program
    .command("retrieve")
    .description("retrieve for every record of a KILT file: KILT guesses (one output, the ranked provenance) for tartan eval, or a TREC run")
    .option("--index <dirs...>", "index directories (several: reciprocal-rank fusion), or a clickhouse:// BM25 index URL; required unless --from-trec")
    .option("--input <records.jsonl>", "KILT task records (their input is the query); with --from-trec: the guesses follow their ids and order")
    .option("--from-trec <run>", "no retrieval: turn this TREC run (Pyserini, Anserini, ranx, …) into KILT guesses, docids split by --trec-keys (docs/compare.md)")
    .requiredOption("--out <file>", "guesses (.jsonl/.jsonl.gz) or TREC run to write")
    .option("--top-k <k>", "units per query", positiveInt, 100)
    .addOption(new Option("--format <format>", "kilt: KILT guesses; trec: qid Q0 docid rank score tag").choices(["kilt", "trec"]).default("kilt"))
    // Compact runs by default, as Pyserini's: passage text only when asked (SQuAD top-20 with text: 235 MB).
    .addOption(new Option("--text <mode>", "passage text in the provenance: none (default), full, or auto (not for whole pages); the context metrics of tartan eval (answer_in_context@k) need it").choices(["auto", "full", "none"]).default("none"))
    .option("--threads <n>", "threads (default: the number of cores)", positiveInt)
    .option("--rrf-k <n>", "RRF constant for several indexes", Number, 60)
    .option("--depth <n>", "hits taken from each fused index (default max(top-k, 100))", positiveInt)
    .option("--trec-keys <keys>", "TREC docid = these unit fields joined by + (default: wikipedia_id for pages, wikipedia_id,start_paragraph_id otherwise)", keyList)
    .option("--qrels <file>", "with --format trec: also write qrels from the records' gold provenance")
    .option("--tag <tag>", "TREC run tag")
    .action(async (o: { index?: string[]; input?: string; out: string; topK: number; format: RunFormat; text: TextMode; threads?: number; rrfK: number; depth?: number; trecKeys?: string[]; qrels?: string; tag?: string; fromTrec?: string }) => {
      if (o.fromTrec) return void (await trecRunToGuesses(o.fromTrec, o.out, { keys: o.trecKeys, gold: o.input, topK: o.topK }, log));
      if (!o.index || !o.input) throw new Error("--index and --input are required (or --from-trec RUN)");
      if (o.qrels && o.format !== "trec") throw new Error("--qrels goes with --format trec");
      await retrieve({ indexes: o.index, input: o.input, out: o.out, topK: o.topK, format: o.format, text: o.text, threads: o.threads, rrfK: o.rrfK, depth: o.depth, trecKeys: o.trecKeys, qrels: o.qrels, tag: o.tag }, log);
    });

  program
    .command("search")
    .description("search one or more indexes for a query: titles, scores and highlighted passages")
    .requiredOption("--index <dir>", "index directory (or clickhouse:// BM25 index URL); repeat for reciprocal-rank fusion", (v: string, prev: string[] = []) => [...prev, v])
    .option("-k, --top-k <k>", "results", positiveInt, 10)
    .option("--rrf-k <n>", "RRF constant for several indexes", Number, 60)
    .argument("<query...>", "the query")
    .action(async (words: string[], o: { index: string[]; topK: number; rrfK: number }) => {
      const { indexes, query } = indexesAndQuery(o.index, words);
      const lines = await searchLines(indexes, query, o.topK, process.stdout.isTTY === true, { rrfK: o.rrfK });
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
