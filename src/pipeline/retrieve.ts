// Retrieval over files (`tartan retrieve`'s work): every record of a KILT file searched in batches on
// every core (SearchPool), written as KILT guesses (one output whose provenance is the ranked units) or
// as a TREC run, optionally with TREC qrels from the records' gold provenance. Indexes are opened
// through the backend seam, so a clickhouse:// BM25 index works as a directory does.

import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { createGzip } from "node:zlib";
import { isClickHouseUrl, openRetriever } from "../backends/open.js";
import { assertReadableFile, LineError, readJsonl } from "../records/jsonl.js";
import type { KiltId, KiltRecord, Provenance } from "../records/types.js";
import { defaultSearchThreads } from "../retrieval/open.js";
import { SearchPool, trecId, type RenderSpec } from "../retrieval/pool.js";
import type { Hit, IndexManifest, Retriever, UnitKind } from "../retrieval/types.js";
import { unitProvenance } from "../retrieval/units.js";
import { commitTemp, createTempFor, discardTemp, assertOutputsNotInputs, writeFileSafe } from "../util/safe-output.js";
import { ProgressLine, formatCount as fmt } from "../util/progress.js";

/** Passage text in the provenance: auto = for passage and paragraph units, not for whole pages. */
export type RetrieveText = "auto" | "full" | "none";
/** Run file format: kilt = KILT guesses (JSONL), trec = `qid Q0 docid rank score tag` lines. */
export type RunFormat = "kilt" | "trec";

/** What {@link retrieve} reads, searches and writes. */
export interface RetrieveOptions {
  /** Index directories (several: their reciprocal-rank fusion) or one clickhouse:// BM25 index URL. */
  indexes: string[];
  input: string;
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
  /** Records per batch (memory bound); default 10,000. */
  batch?: number;
}

/** What {@link retrieve} did. */
export interface RetrieveStats {
  records: number;
  skipped: number;
  seconds: number;
  unit: UnitKind;
  kind: string;
}

/** The unit fields a TREC document id joins by default: pages by wikipedia_id, finer units with their first paragraph. */
export function defaultTrecKeys(unit: UnitKind): string[] {
  return unit === "page" ? ["wikipedia_id"] : ["wikipedia_id", "start_paragraph_id"];
}

/** KILT provenance for the hits of one query. */
export function hitsToProvenance(r: Retriever, hits: readonly Hit[], withText: boolean): Provenance[] {
  return hits.map((h) => unitProvenance(r.units.get(h.unit), h.score, withText));
}

/** Retrieves for every record of a KILT file (`tartan retrieve`): KILT guesses or a TREC run, batches on every core; `log` gets warnings and the summary. */
export async function retrieve(o: RetrieveOptions, log: (s: string) => void): Promise<RetrieveStats> {
  const t0 = performance.now();
  const format = o.format ?? "kilt";
  assertOutputsNotInputs([o.out, o.qrels], [o.input]);
  assertReadableFile(o.input);
  const retriever = await openRetriever(o.indexes, { k0: o.rrfK, depth: o.depth });
  // The first index's unit (a fusion's first member's), read from the manifests opening read.
  const unit = retriever.kind === "hybrid" ? (retriever.manifest.params.members as IndexManifest[])[0].unit : retriever.manifest.unit;
  // A kind whose search spreads over every core itself (dense) gets one search thread (the registry's
  // rule), and so does a ClickHouse index, spread over its shards (many queries per statement).
  const remote = o.indexes.some(isClickHouseUrl);
  const threads = o.threads ?? (remote ? 1 : defaultSearchThreads(retriever));
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
