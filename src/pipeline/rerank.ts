// Reranking a run file (`tartan rerank`'s work): a KILT guesses file (JSONL) or a TREC run in, the same
// format out, each query's best `depth` entries reranked by a reranker (src/retrieval/rerank/) on every
// core (RerankPool) and cut to them. The query is the record's `input`, or the `--records` record's of the
// same id; a passage's text is its provenance's `text` when the run has it, else its span read from the
// knowledge source (`--ks`: the paragraphs and characters the provenance names, or the whole page for
// page-level provenance). KILT provenance is kept entry by entry (every field but the score, which is the
// reranker's), the record's other fields and outputs as they were; TREC lines keep their docids. Beside the
// output, `OUT.settings.json` records the reranker's spec and settings (model, prompt) and every answer a
// model server gave, by query, so that the run can be reproduced. Both files are written whole or not at all.

import { readFileSync } from "node:fs";
import { openKnowledgeSource } from "../backends/open.js";
import type { KnowledgeSourceReader } from "../knowledge/source.js";
import { provenanceText } from "../knowledge/span.js";
import { assertReadableFile, JsonlWriter, LineError, readJsonl } from "../records/jsonl.js";
import type { KiltPage, KiltRecord, Provenance } from "../records/types.js";
import { RerankPool } from "../retrieval/rerank/pool.js";
import { describeSpec, parseRerankerSpec, rerankOrder, type RerankerSpec, type RerankItem, type RerankPassage } from "../retrieval/rerank/reranker.js";
import { TARTAN_VERSION } from "../retrieval/manifest.js";
import { pageUnit } from "../retrieval/units/unit.js";
import { provenanceOf, trecQid } from "../trec/convert.js";
import { rankEntries, readRun } from "../trec/files.js";
import { formatCount as fmt, type OnProgress } from "../util/progress.js";
import { assertOutputsNotInputs, writeFileSafe } from "../util/safe-output.js";

/** What {@link rerankRun} reads, reranks and writes. */
export interface RerankRunOptions {
  /** The run: KILT guesses (.jsonl, .jsonl.gz) or a TREC run (`qid Q0 docid rank score tag`). */
  input: string;
  /** KILT task records giving each query's text by id (needed when the run's records have no `input`, and for a TREC run). */
  records?: string;
  /** The knowledge source (directory or URL) passages' text is read from when the run's provenance has none. */
  ks?: string;
  /** The reranker: a spec (`NAME:key=value,…`, JSON, `@file.json`). */
  reranker: string | RerankerSpec;
  /** Entries of each query reranked and kept (default 100). */
  depth?: number;
  out: string;
  /** The run's format; default: by its first character (`{`: KILT). */
  format?: "kilt" | "trec";
  /** A TREC run's docid fields joined by `+` (default: wikipedia_id, or wikipedia_id,start_paragraph_id for docids with a `+`). */
  trecKeys?: string[];
  /** Tag of the TREC run written (default: the input's tag with `-rerank`). */
  tag?: string;
  /** Worker threads (default: the number of cores). */
  threads?: number;
  /** Queries per batch (default 256). */
  batch?: number;
  /** Where progress goes (a count line labelled "rerank"). */
  onProgress?: OnProgress;
}

/** What {@link rerankRun} did. */
export interface RerankRunStats {
  queries: number;
  /** Passages scored. */
  pairs: number;
  seconds: number;
  format: "kilt" | "trec";
  /** Where the settings went. */
  settings: string;
}

/** One query of the run, before and after. */
interface Query {
  qid: string;
  text: string;
  passages: RerankPassage[];
  /** KILT: the record and its first output's provenance (cut to depth); TREC: the docids. */
  record?: KiltRecord;
  provenance?: Provenance[];
  docids?: string[];
}

/** The settings file written beside `out`. */
export function settingsFileFor(out: string): string {
  return `${out.replace(/\.gz$/u, "")}.settings.json`;
}

/** A run's format by its first character (`{`: KILT guesses, else TREC); throws on an empty file. */
export function detectFormat(file: string): "kilt" | "trec" {
  const head = readFileSync(file).subarray(0, 4096).toString("utf8").replace(/^\uFEFF/u, "").trimStart();
  if (head === "") throw new Error(`${file}: an empty run`);
  return head.startsWith("{") ? "kilt" : "trec";
}

async function readQueries(file: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const { value, line } of readJsonl<KiltRecord>(file)) {
    if (value.id === undefined || value.id === null) throw new LineError(file, line, "record without id");
    if (typeof value.input === "string") out.set(trecQid(value.id), value.input);
  }
  return out;
}

/** Reads passages' text: the provenance's own, or its span from the knowledge source (pages cached per batch). */
export class Texts {
  private pages = new Map<string, KiltPage | null>();
  constructor(
    private readonly ks: KnowledgeSourceReader | null,
    private readonly ksName: string | undefined,
  ) {}

  /** The passage of one provenance entry: its text, and its score, page and first paragraph where it has them. */
  async passage(p: Provenance, where: string): Promise<RerankPassage> {
    const extra: Partial<RerankPassage> = {};
    if (typeof p.score === "number" && Number.isFinite(p.score)) extra.score = p.score;
    if (p.wikipedia_id !== undefined && p.wikipedia_id !== null) extra.page = String(p.wikipedia_id);
    if (typeof p.start_paragraph_id === "number") extra.paragraph = p.start_paragraph_id;
    return { ...(await this.text(p, where)), ...extra };
  }

  private async text(p: Provenance, where: string): Promise<RerankPassage> {
    if (typeof p.text === "string") return { title: String(p.title ?? ""), text: p.text };
    if (p.wikipedia_id === undefined || p.wikipedia_id === null) throw new Error(`${where}: provenance without wikipedia_id`);
    if (!this.ks) throw new Error(`${where}: the provenance has no text; give --ks (the knowledge source the run retrieved from)`);
    const id = String(p.wikipedia_id);
    let page = this.pages.get(id);
    if (page === undefined) this.pages.set(id, (page = await this.ks.getPageById(id)));
    if (page === null) throw new Error(`${where}: page ${id} is not in the knowledge source ${this.ksName}`);
    const title = String(p.title ?? page.wikipedia_title ?? "");
    if (p.start_paragraph_id === undefined || p.start_paragraph_id === null) return { title, text: pageUnit(page).text };
    try {
      return { title, text: provenanceText(page, p) };
    } catch (e) {
      throw new Error(`${where}: ${(e as Error).message}`);
    }
  }

  clear(): void {
    this.pages.clear();
  }
}

/** Reranks a run file (`tartan rerank`); see the module comment. `log` gets the summary. */
export async function rerankRun(o: RerankRunOptions, log: (s: string) => void): Promise<RerankRunStats> {
  const t0 = performance.now();
  const depth = o.depth ?? 100;
  if (!Number.isInteger(depth) || depth < 1) throw new Error(`--depth must be a positive integer, not ${depth}`);
  const settingsFile = settingsFileFor(o.out);
  assertOutputsNotInputs([o.out, settingsFile], [o.input, o.records]);
  assertReadableFile(o.input);
  if (o.records) assertReadableFile(o.records);
  const spec = parseRerankerSpec(o.reranker);
  const format = o.format ?? detectFormat(o.input);
  const queries = o.records ? await readQueries(o.records) : new Map<string, string>();
  const ks = o.ks ? await openKnowledgeSource(o.ks) : null;
  const texts = new Texts(ks, o.ks);
  let pool: RerankPool | null = null;
  const writer = new JsonlWriter(o.out);
  const answers: Record<string, unknown[]> = {};
  let done = 0;
  let pairs = 0;
  const report = o.onProgress ?? (() => {});
  try {
    pool = await RerankPool.open(spec, { threads: o.threads });
    const rerank = async (batch: Query[]) => {
      if (batch.length === 0) return;
      const items: RerankItem[] = batch.map((q) => ({ query: q.text, passages: q.passages }));
      const outs = await pool!.rerank(items);
      for (let i = 0; i < batch.length; i++) {
        const q = batch[i];
        const { scores } = outs[i];
        if (outs[i].answers) answers[q.qid] = outs[i].answers!;
        const order = rerankOrder(scores);
        pairs += q.passages.length;
        if (q.record) {
          const provenance = order.map((j) => ({ ...q.provenance![j], score: scores[j] }));
          const [first, ...rest] = q.record.output ?? [];
          await writer.write({ ...q.record, output: [{ ...first, provenance }, ...rest] });
        } else {
          for (let r = 0; r < order.length; r++) await writer.writeLine(`${q.qid} Q0 ${q.docids![order[r]]} ${r + 1} ${scores[order[r]]} ${tag}`);
        }
      }
      done += batch.length;
      report({ label: "rerank", unit: "queries", items: done, countItems: true });
      texts.clear();
    };
    const batchSize = o.batch ?? 256;
    let batch: Query[] = [];
    let tag = "";
    if (format === "kilt") {
      for await (const { value, line } of readJsonl<KiltRecord>(o.input)) {
        const where = `${o.input}:${line}`;
        if (value.id === undefined || value.id === null) throw new LineError(o.input, line, "record without id");
        const qid = trecQid(value.id);
        const text = typeof value.input === "string" ? value.input : queries.get(qid);
        if (text === undefined) throw new LineError(o.input, line, `record ${qid} has no input${o.records ? `, and ${o.records} has no record ${qid} with one` : "; give --records (the task records with the queries)"}`);
        const provenance = (value.output?.[0]?.provenance ?? []).slice(0, depth);
        const passages: RerankPassage[] = [];
        for (const p of provenance) passages.push(await texts.passage(p, `${where}: record ${qid}`));
        batch.push({ qid, text, passages, record: value, provenance });
        if (batch.length >= batchSize) {
          await rerank(batch);
          batch = [];
        }
      }
    } else {
      const run = readRun(o.input);
      tag = (o.tag ?? `${run.tag}-rerank`).replace(/\s+/gu, "_");
      for (const [qid, entries] of run.queries) {
        const text = queries.get(qid);
        if (text === undefined) throw new Error(`${o.input}: query ${qid}: ${o.records ? `${o.records} has no record ${qid} with an input` : "a TREC run has no query texts; give --records (the task records with the queries)"}`);
        const ranked = rankEntries(entries).slice(0, depth);
        const docids = ranked.map((e) => e.docno);
        const keys = o.trecKeys ?? (docids.some((d) => d.includes("+")) ? ["wikipedia_id", "start_paragraph_id"] : ["wikipedia_id"]);
        const passages: RerankPassage[] = [];
        for (const d of docids) {
          let p: Provenance;
          try {
            p = provenanceOf(d, keys);
          } catch (e) {
            throw new Error(`${o.input}: query ${qid}: ${(e as Error).message}; give --trec-keys with one field per "+"-separated part`);
          }
          const score = ranked[passages.length].score;
          passages.push({ ...(await texts.passage(p, `${o.input}: query ${qid}, document ${d}`)), ...(Number.isFinite(score) ? { score } : {}) });
        }
        batch.push({ qid, text, passages, docids });
        if (batch.length >= batchSize) {
          await rerank(batch);
          batch = [];
        }
      }
    }
    await rerank(batch);
    report({ label: "rerank", unit: "queries", items: 0, done: true });
    const settings = {
      command: "rerank",
      tartanVersion: TARTAN_VERSION,
      input: o.input,
      format,
      ...(o.records ? { records: o.records } : {}),
      ...(o.ks ? { ks: o.ks } : {}),
      depth,
      reranker: describeSpec(spec),
      spec,
      settings: pool.settings,
      threads: pool.threads,
      ...(Object.keys(answers).length ? { answers } : {}),
    };
    await writer.close();
    writeFileSafe(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
  } catch (e) {
    await writer.abort();
    throw e;
  } finally {
    await pool?.close();
    await ks?.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`${fmt(done)} ${done === 1 ? "query" : "queries"} reranked (${fmt(pairs)} passages, ${describeSpec(spec).slice(0, 80)}) → ${o.out} (${format}) in ${seconds.toFixed(1)} s; settings → ${settingsFile}`);
  return { queries: done, pairs, seconds, format, settings: settingsFile };
}
