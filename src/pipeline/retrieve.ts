// Retrieval over files (`tartan retrieve`'s work): every record of a KILT file searched in batches on
// every core (SearchPool), written as KILT guesses (one output whose provenance is the ranked units) or
// as a TREC run, optionally with TREC qrels from the records' gold provenance. Indexes are opened
// through the backend seam, so a clickhouse:// BM25 index works as a directory does.

import type { StageSpec } from "../retrieval/stages/stage.js";
import { openRetriever, searchPoolFor } from "../backends/open.js";
import { assertReadableFile, JsonlWriter, LineError, readJsonl } from "../records/jsonl.js";
import { readTopics, type TopicsOptions } from "../records/topics.js";
import { QueryVectorFile } from "../retrieval/dense/query-vectors.js";
import { hasSearchOptions, type QueryInput, type SearchOptions } from "../retrieval/query.js";
import type { KiltId, KiltRecord, Provenance } from "../records/types.js";
import { trecId, type RenderSpec } from "../retrieval/pool.js";
import type { Hit, Retriever, UnitKind } from "../retrieval/types.js";
import { unitProvenance } from "../retrieval/units/unit.js";
import { describeKind, isCompressedDense, memberManifests } from "../retrieval/manifest.js";
import { assertOutputsNotInputs, writeFileSafe } from "../util/safe-output.js";
import { formatCount as fmt, type OnProgress } from "../util/progress.js";
import { settingsFileFor } from "./rerank.js";
import { tuneFusion, type TuneOptions, type TuneResult } from "./tune-fusion.js";

/** Passage text in the provenance: auto = for passage and paragraph units, not for whole pages. */
export type RetrieveText = "auto" | "full" | "none";
/** Run file format: kilt = KILT guesses (JSONL), trec = `qid Q0 docid rank score tag` lines. */
export type RunFormat = "kilt" | "trec";

/** What {@link retrieve} reads, searches and writes. */
export interface RetrieveOptions {
  /** Index directories (several: their reciprocal-rank fusion) or one clickhouse:// BM25 index URL. */
  indexes: string[];
  /** KILT task records (their `input` is the query), or with `topics` the topic file. */
  input: string;
  /** Read `input` as a topic file (TSV, TREC or JSONL with a chosen field): each topic's id is its guess's or TREC query's id. */
  topics?: TopicsOptions;
  out: string;
  topK: number;
  format?: RunFormat;
  /** Passage text in the provenance: auto = for passage and paragraph units, not for whole pages. */
  text?: RetrieveText;
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
  /** Records per batch (memory bound); default {@link defaultBatch}(topK): 2,621 at top 100, 262 at top 1,000. */
  batch?: number;
  /** Query vectors encoded elsewhere (.npy, .fvecs): row i is the query of record i; dense indexes search them. */
  queryVectors?: string;
  /** Sparse query vectors encoded elsewhere (JSONL `{"id", "vector"}`, or `.tsv` of id and tokens, repetition = weight), matched to the records by id: impact indexes search them (other indexes of a fusion search the text). */
  queryTerms?: string;
  /** Compressed dense indexes: lists probed and candidates rescored (default: each index's); refused when no index is a compressed dense one. */
  denseSearch?: SearchOptions;
  /** BM25 indexes: k1 and b at search time (rankings equal an index built with them); refused when no index is BM25. */
  bm25?: { k1?: number; b?: number };
  /** The stage that fuses several indexes (`fusionStage` in tartan/retrieval: rrf, wsum, combsum, …); default rrf with `rrfK` and `depth`. */
  fusion?: StageSpec;
  /** Stages over the opened indexes, in order (`STAGES` in tartan/retrieval): the calling thread and every search worker apply them. */
  stages?: readonly StageSpec[];
  /** Tune the fusion's weights (or alpha) on training records first (./tune-fusion.ts); the choice is printed and written to `OUT.settings.json`. */
  tune?: TuneOptions;
  /**
   * Where the job reports its progress (a count line labelled "retrieve": queries done of the total, the
   * records counted first for it); absent: nothing is reported or drawn, and the records are not counted.
   */
  onProgress?: OnProgress;
}

/** What {@link retrieve} did. */
export interface RetrieveStats {
  records: number;
  skipped: number;
  seconds: number;
  unit: UnitKind;
  kind: string;
  /** With `tune`: what the tuning chose, and where the settings went. */
  tuning?: TuneResult & { settings: string };
}

/** The unit fields a TREC document id joins by default: pages by wikipedia_id, finer units with their first paragraph. */
export function defaultTrecKeys(unit: UnitKind): string[] {
  return unit === "page" ? ["wikipedia_id"] : ["wikipedia_id", "start_paragraph_id"];
}

/** KILT provenance for the hits of one query. */
export function hitsToProvenance(r: Retriever, hits: readonly Hit[], withText: boolean): Provenance[] {
  return hits.map((h) => unitProvenance(r.units.get(h.unit), h.score, withText));
}

/** Hits a batch of queries holds at most by default (queries × k, rendered as their output lines). */
export const HITS_IN_FLIGHT = 262_144;

/**
 * Records a batch holds by default for top `k`: as many as keep {@link HITS_IN_FLIGHT} hits (10,000 at most,
 * 128 at least), so a top-1,000 run holds as much as a top-100 one, not ten times as much.
 */
export function defaultBatch(k: number): number {
  return Math.max(128, Math.min(10_000, Math.floor(HITS_IN_FLIGHT / Math.max(1, k))));
}

/** One query of the input: a KILT record's, or a topic's (no record). */
interface QueryItem {
  line: number;
  id: KiltId | undefined | null;
  input: unknown;
  record?: KiltRecord;
}

/** The queries of `file`: KILT records, or the topics `topics` reads. */
async function* queriesOf(file: string, topics?: TopicsOptions): AsyncGenerator<QueryItem> {
  if (topics) for await (const t of readTopics(file, topics)) yield { line: t.line, id: t.id, input: t.text };
  else for await (const { value, line } of readJsonl<KiltRecord>(file)) yield { line, id: value.id, input: value.input, record: value };
}

/** The records of a KILT file (every line that reads as a record, with input or not), or its topics. */
async function countRecords(file: string, topics?: TopicsOptions): Promise<number> {
  let n = 0;
  for await (const _ of queriesOf(file, topics)) n++;
  return n;
}

/** Retrieves for every record of a KILT file (`tartan retrieve`): KILT guesses or a TREC run, batches on every core; `log` gets warnings and the summary. */
export async function retrieve(o: RetrieveOptions, log: (s: string) => void): Promise<RetrieveStats> {
  const t0 = performance.now();
  const format = o.format ?? "kilt";
  const settingsFile = o.tune ? settingsFileFor(o.out) : undefined;
  assertOutputsNotInputs([o.out, o.qrels, settingsFile], [o.input, o.tune?.records]);
  assertReadableFile(o.input);
  let tuning: TuneResult | undefined;
  if (o.tune) {
    if (o.queryVectors !== undefined || o.queryTerms !== undefined) throw new Error("--tune-on searches the training records' texts: it cannot take --query-vectors or --query-terms (they hold the run's queries only)");
    tuning = await tuneFusion(o.indexes, o.fusion ?? (o.rrfK !== undefined || o.depth !== undefined ? { name: "rrf", options: { ...(o.rrfK !== undefined ? { k0: o.rrfK } : {}), ...(o.depth !== undefined ? { depth: o.depth } : {}) } } : undefined), o.topK, o.tune, o.onProgress);
    const c = tuning.chosen;
    log(`tune-on ${o.tune.records}: ${tuning.method} ${c.alpha !== undefined ? `alpha ${c.alpha}` : `weights ${c.weights!.join(",")}`} chosen, ${tuning.metric} (${tuning.keys.join(",")}) ${c.value.toFixed(4)} on ${fmt(tuning.queries)} queries (grid of ${tuning.grid.length})`);
    o = { ...o, fusion: tuning.fusion };
  }
  if (o.topics && o.qrels) throw new Error("--qrels are written from KILT records' gold provenance; topics have none");
  // With --threads above 1 the search pool is the one layer that spreads the work: every index, here as in
  // the pool's workers, is opened single-threaded. Without it a kind whose search spreads over every core
  // itself (dense) keeps its own threads, and the pool gets one (the registry's rule, searchPoolFor).
  // What opens the indexes, the same on this thread and in the pool's workers: fusion and stages.
  const opening = { k0: o.rrfK, depth: o.depth, fusion: o.fusion, stages: o.stages };
  const retriever = await openRetriever(o.indexes, { ...opening, threads: o.threads !== undefined && o.threads > 1 ? 1 : undefined });
  let vectors: QueryVectorFile | null = null;
  let sparse: Map<string, Record<string, number>> | null = null;
  let total: number | undefined;
  try {
    const dense = memberManifests(retriever.manifest).filter((m) => m.kind === "dense");
    if (o.bm25 !== undefined && !memberManifests(retriever.manifest).some((m) => m.kind === "bm25"))
      throw new Error(`--bm25 sets k1 and b of a BM25 index, and no index given is one (${describeKind(retriever.manifest)})`);
    if (o.bm25 !== undefined && o.indexes.some((l) => /^[a-z][a-z0-9+.-]*:\/\//iu.test(l))) throw new Error(`--bm25: k1 and b at search time are for BM25 index directories, not ${o.indexes.find((l) => l.includes("://"))}`);
    if (hasSearchOptions(o.denseSearch) && !dense.some(isCompressedDense))
      throw new Error(`--nprobe and --refine set the search of a compressed dense index, and no index given is one (${describeKind(retriever.manifest)})`);
    if (o.queryVectors !== undefined) {
      if (dense.length === 0) throw new Error(`${o.queryVectors}: query vectors given, but no index is dense (${describeKind(retriever.manifest)})`);
      const dims = [...new Set(dense.map((m) => (m.params as { dim?: number }).dim).filter((d): d is number => d !== undefined))];
      if (dims.length > 1) throw new Error(`${o.queryVectors}: the dense indexes hold vectors of different sizes (${dims.join(", ")}); one query vector file cannot serve them all`);
      total = await countRecords(o.input, o.topics);
      vectors = QueryVectorFile.open(o.queryVectors, total, dims[0]);
    }
    if (o.queryTerms !== undefined) {
      if (!memberManifests(retriever.manifest).some((m) => m.kind === "impact")) throw new Error(`${o.queryTerms}: sparse query vectors given, but no index is an impact one (${describeKind(retriever.manifest)})`);
      const { readImpactQueries } = await import("../retrieval/impact/queries.js");
      sparse = new Map();
      for (const q of await readImpactQueries(o.queryTerms)) sparse.set(q.id, Object.fromEntries(q.weights));
    }
  } catch (e) {
    await retriever.close();
    throw e;
  }
  // The first index's unit (a fusion's first member's), read from the manifests opening read.
  const unit = memberManifests(retriever.manifest)[0].unit;
  const pool = searchPoolFor(retriever, o.indexes, { ...opening, threads: o.threads });
  // The call's options: the compressed dense indexes' and BM25's k1 and b.
  const searchOptions: SearchOptions | undefined = o.bm25 ? { ...o.denseSearch, bm25: o.bm25 } : o.denseSearch;
  const spec: RenderSpec = {
    format,
    withText: o.text === "full" || ((o.text ?? "auto") === "auto" && unit !== "page"),
    keys: o.trecKeys ?? defaultTrecKeys(unit),
    tag: (o.tag ?? `tartan-${retriever.kind}`).replace(/\s+/gu, "_"),
  };
  // Whole or not at all, gzip by name; a full disk is an error naming the file (records/jsonl.ts).
  const writer = new JsonlWriter(o.out);
  const qrelLines: string[] = [];
  // With progress reported, the records are counted first (cheap next to searching them), so the line has an ETA.
  if (total === undefined && o.onProgress) total = await countRecords(o.input, o.topics);
  const report = o.onProgress ?? (() => {});
  const line = { label: "retrieve", unit: "queries", totalItems: total, countItems: true };
  const progress = { update: (items: number) => report({ ...line, items }), done: () => report({ ...line, items: 0, done: true }) };
  let records = 0;
  let skipped = 0;
  const batchSize = o.batch ?? defaultBatch(o.topK);
  let ids: KiltId[] = [];
  let inputs: QueryInput[] = [];
  // Row i of the query vector file is record i of the input (every record counted, with input or not).
  let row = 0;

  const flush = async () => {
    if (inputs.length === 0) return;
    const lines = await pool.render(inputs, ids, o.topK, spec, (n) => progress.update(row - inputs.length + n), searchOptions);
    for (const l of lines) if (l.length > 0) await writer.writeLine(l);
    records += inputs.length;
    ids = [];
    inputs = [];
  };

  try {
    for await (const value of queriesOf(o.input, o.topics)) {
      const { line } = value;
      const at = row++;
      if (value.id === undefined || value.id === null) throw new LineError(o.input, line, "record without id");
      if (typeof value.input !== "string") {
        skipped++;
        if (skipped <= 5) log(`warning: ${o.input}:${line}: record ${String(value.id)} has no input: left out`);
        continue;
      }
      if (o.qrels) {
        const qid = String(value.id).trim().replace(/\s+/gu, "_");
        const gold = new Set<string>();
        for (const output of value.record?.output ?? [])
          for (const p of output.provenance ?? []) {
            const doc = trecId(p, spec.keys);
            if (doc !== null) gold.add(doc);
          }
        for (const doc of gold) qrelLines.push(`${qid} 0 ${doc} 1`);
      }
      ids.push(value.id);
      let terms: Record<string, number> | undefined;
      if (sparse) {
        terms = sparse.get(String(value.id));
        if (terms === undefined) throw new LineError(o.input, line, `record ${String(value.id)} has no sparse query vector in ${o.queryTerms}`);
      }
      inputs.push(vectors || terms ? { text: value.input, ...(vectors ? { vector: vectors.vector(at) } : {}), ...(terms ? { terms } : {}) } : value.input);
      if (inputs.length >= batchSize) await flush();
    }
    await flush();
    progress.done();
    await writer.close();
  } catch (e) {
    progress.done();
    await writer.abort();
    await pool.close();
    vectors?.close();
    await retriever.close();
    throw e;
  }
  await pool.close();
  vectors?.close();
  await retriever.close();
  if (o.qrels) writeFileSafe(o.qrels, qrelLines.length ? `${qrelLines.join("\n")}\n` : "");
  if (tuning && settingsFile) writeFileSafe(settingsFile, `${JSON.stringify({ command: "retrieve", indexes: o.indexes, input: o.input, topK: o.topK, fusion: tuning.fusion, tuning }, null, 2)}\n`);
  const seconds = (performance.now() - t0) / 1000;
  log(
    `${fmt(records)} ${records === 1 ? "query" : "queries"} → ${o.out} (${format}, top ${o.topK} ${unit} units, ${retriever.kind}) in ${seconds.toFixed(1)} s` +
      (seconds > 0 ? `, ${fmt(Math.round(records / seconds))} queries/s` : "") +
      (skipped ? `; ${fmt(skipped)} ${skipped === 1 ? "record" : "records"} without input left out` : ""),
  );
  return { records, skipped, seconds, unit, kind: retriever.kind, ...(tuning && settingsFile ? { tuning: { ...tuning, settings: settingsFile } } : {}) };
}
