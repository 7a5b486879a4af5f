// Builds a BM25 index in bounded memory, on several cores, resumably. Units stream in and go to the unit
// store; their indexed text goes in batches to analysis workers (./build-worker.ts), batch i to worker
// i mod W. Each worker inverts its batches into a segment and flushes it to a sorted segment file when it
// reaches its share of the memory budget; finished segments are recorded in a small state file (written
// atomically), so a build killed at any moment resumes from them when re-run with the same arguments.
// At the end the segments are merged into the final files (./merge.ts, format: ./format.ts) and the
// manifest is written. Scoring statistics follow Lucene 8.7 (./similarity.ts).

import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { UnitKind } from "../types.js";
import type { Unit } from "../units/unit.js";
import { UnitWriter } from "../units/store.js";
import { writeManifest } from "../manifest.js";
import { workerScript } from "../../util/worker-script.js";
import { getAnalyzer, type AnalyzerName } from "./analyzer.js";
import { FILES, FORMAT_VERSION } from "./format.js";
import { mergeSegments } from "./merge.js";
import type { BuildWorkerInit, BuildWorkerReply, BuildWorkerRequest, FinishedSegment } from "./build-worker.js";
import { writeFileSafe } from "../../util/safe-output.js";
import { inputIdentity, type FileIdentity } from "../../util/input-identity.js";
import { readBuildState } from "../../util/build-state.js";

/** BM25's scoring parameters and analysis, recorded in the index's manifest (Lucene 8.7 BM25Similarity). */
export interface Bm25Params {
  /** Term-frequency saturation (Pyserini's default 0.9). */
  k1: number;
  /** Length normalization (Pyserini's default 0.4). */
  b: number;
  /** How texts and queries become terms; default `"english"`. */
  analyzer: AnalyzerName;
  /** Index the unit's title on a line before its text. Default true. */
  title: boolean;
}

/** Pyserini's defaults for KILT: k1 0.9, b 0.4, the English analyzer, titles indexed. */
export const DEFAULT_BM25_PARAMS: Bm25Params = { k1: 0.9, b: 0.4, analyzer: "english", title: true };

/**
 * What `buildBm25Index` takes: any of {@link Bm25Params} (the rest from {@link DEFAULT_BM25_PARAMS}), the
 * unit kind (recorded in the manifest) and a description of the source.
 */
export type Bm25BuildParams = Partial<Bm25Params> & { unit?: UnitKind; source?: string };

/** Default memory budget of a build: 3 GiB for the whole process. */
export const DEFAULT_BUILD_MEMORY = 3 * 1024 ** 3;

/** How a BM25 build runs (memory budget, threads, resumption); none of them changes the index it writes. */
export interface Bm25BuildOptions {
  /** Bytes the whole build process may use (peak RSS); default 3 GiB. Segments are flushed to stay under it. */
  memory?: number;
  /** Analysis workers; default the number of cores. */
  threads?: number;
  /** Units per batch sent to a worker; default 512. */
  batchUnits?: number;
  /** Called as units stream in (units so far, bytes of indexed text so far) and during the merge (phase "merge"). */
  onProgress?: (p: { phase: "analyse" | "merge"; units: number; bytes: number; terms?: number }) => void;
  /** Resume a killed build found in the directory (same arguments); default true. */
  resume?: boolean;
  /** Hears that a killed build's state was dropped because its source changed; default standard error. */
  log?: (line: string) => void;
  /** The directory belongs to this build (a temporary one): a fresh start empties it. */
  ownDir?: boolean;
  /**
   * The units come from this store-backed unit table (`tartan ks passages --table`), in its order, and
   * their `text` may be left empty: the analysis workers read the texts from the table's store themselves
   * (pages decoded on every core instead of the main thread).
   */
  textsFrom?: string;
}

/** What a BM25 build indexed, returned by `buildBm25Index`. */
export interface Bm25BuildStats {
  /** Units stored (and indexed). */
  units: number;
  /** Distinct terms in the dictionary. */
  terms: number;
  /** (term, unit) pairs. */
  postings: number;
  /** Units with at least one term. */
  docCount: number;
  /** Bytes of the BM25 files (bm25.*). */
  indexBytes: number;
  /** Segments merged (including those of a resumed build). */
  segments: number;
  /** Units whose analysis was skipped because a killed build had finished them. */
  resumedUnits: number;
}

/** The text BM25 indexes for a unit: `title + "\n" + text`, or the text alone with `title: false`. */
export function bm25IndexedText(unit: Unit, params: Pick<Bm25Params, "title">): string {
  return params.title ? `${unit.wikipedia_title}\n${unit.text}` : unit.text;
}

export function resolveParams(p: Partial<Bm25Params>): Bm25Params {
  const out: Bm25Params = {
    k1: p.k1 ?? DEFAULT_BM25_PARAMS.k1,
    b: p.b ?? DEFAULT_BM25_PARAMS.b,
    analyzer: p.analyzer ?? DEFAULT_BM25_PARAMS.analyzer,
    title: p.title ?? DEFAULT_BM25_PARAMS.title,
  };
  if (typeof out.k1 !== "number" || !(out.k1 >= 0) || !Number.isFinite(out.k1)) throw new Error(`bm25 k1 must be a finite number ≥ 0, got ${String(p.k1)}`);
  if (typeof out.b !== "number" || !(out.b >= 0 && out.b <= 1)) throw new Error(`bm25 b must be in [0, 1], got ${String(p.b)}`);
  if (typeof out.title !== "boolean") throw new Error(`bm25 title must be true or false, got ${String(p.title)}`);
  getAnalyzer(out.analyzer);
  return out;
}

/** The build's state file: what a resumed build needs. */
export const STATE_FILE = "bm25.build.json";

interface BuildState {
  /** The arguments the build was started with; a different key starts afresh. */
  key: string;
  /** The source's identity when the build began (a changed source starts afresh, saying so). */
  inputs: FileIdentity[] | null;
  segments: (FinishedSegment & { size: number })[];
}

function writeState(dir: string, state: BuildState): void {
  const path = join(dir, STATE_FILE);
  writeFileSafe(path, JSON.stringify(state));
}

/** A finished build's state when its arguments and segment files are intact, else null. */
function readState(dir: string, key: string, inputs: FileIdentity[] | null, log: (line: string) => void): BuildState | null {
  return readBuildState<BuildState>(dir, STATE_FILE, key, (s) => s.segments, {
    inputs,
    onChanged: (why) => log(`tartan: bm25 build in ${dir}: ${why} since the build began: starting over`),
  });
}

/** Memory the process needs besides the workers' segments: heaps, the unit writer, read buffers. */
const BASE_MEMORY = 1024 * 1024 ** 2;

/**
 * Indexes `units` into `outDir` (created): the unit store, the BM25 files and manifest.json (kind
 * "bm25"). `onProgress(n)` is called with the number of units read so far.
 */
export async function buildBm25Index(
  units: AsyncIterable<Unit> | Iterable<Unit>,
  outDir: string,
  params: Bm25BuildParams = {},
  onProgress?: (units: number) => void,
  options: Bm25BuildOptions = {},
): Promise<Bm25BuildStats> {
  const p = resolveParams(params);
  const memory = options.memory ?? DEFAULT_BUILD_MEMORY;
  const threads = Math.max(1, Math.min(options.threads ?? cpus().length, 16));
  const batchUnits = Math.max(1, Math.floor(options.batchUnits ?? 512));
  if (!(memory > 0)) throw new Error(`bm25: memory budget must be positive, got ${memory}`);
  // Each worker's share; at least 1 MB so tiny budgets (tests) still make progress.
  const capBytes = Math.max(1 << 20, Math.floor((memory - BASE_MEMORY) / threads));
  mkdirSync(outDir, { recursive: true });
  const key = JSON.stringify({ params: p, unit: params.unit ?? "passage", source: params.source ?? "", memory, threads, batchUnits, format: FORMAT_VERSION });
  const inputs = options.resume !== false ? inputIdentity(params.source) : null;
  const resumed = options.resume !== false ? readState(outDir, key, inputs, options.log ?? ((l) => process.stderr.write(`${l}\n`))) : null;
  if (!resumed && options.ownDir) for (const f of readdirSync(outDir)) rmSync(join(outDir, f), { recursive: true, force: true });
  const state: BuildState = resumed ?? { key, inputs, segments: [] };
  // Segment files this state does not list are from a build that was killed before recording them.
  const listed = new Set(state.segments.map((s) => s.file));
  for (const f of readdirSync(outDir)) if ((f.startsWith("bm25.seg-") && !listed.has(f)) || f.endsWith(".partial")) rmSync(join(outDir, f), { force: true });
  for (const f of Object.values(FILES)) rmSync(join(outDir, f), { force: true });
  writeState(outDir, state);
  const nextBatch = new Array<number>(threads).fill(0);
  const nextSeq = new Array<number>(threads).fill(0);
  for (const s of state.segments) {
    nextBatch[s.worker] = Math.max(nextBatch[s.worker], s.nextBatch);
    nextSeq[s.worker] = Math.max(nextSeq[s.worker], s.seq + 1);
  }

  const fromTable = options.textsFrom !== undefined;
  let textBytes = 0;
  const workers: Worker[] = [];
  const inFlight = new Array<number>(threads).fill(0);
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const finished = new Array<boolean>(threads).fill(false);
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const record = (seg: FinishedSegment | undefined) => {
    if (!seg) return;
    state.segments.push({ ...seg, size: statSync(join(outDir, seg.file)).size });
    writeState(outDir, state);
  };
  for (let w = 0; w < threads; w++) {
    const init: BuildWorkerInit = {
      tartanBm25Worker: true,
      worker: w,
      dir: outDir,
      analyzer: p.analyzer,
      capBytes,
      nextSegment: nextSeq[w],
      ...(options.textsFrom !== undefined ? { table: { dir: options.textsFrom, title: p.title } } : {}),
    };
    const worker = new Worker(workerScript(import.meta.url, "build-worker"), { workerData: init });
    worker.on("message", (msg: BuildWorkerReply) => {
      if ("error" in msg) failure ??= new Error(`bm25 build worker ${w}: ${msg.error}`);
      else if ("finished" in msg) {
        record(msg.segment);
        finished[w] = true;
      } else {
        inFlight[w]--;
        if (fromTable) textBytes += msg.bytes;
        record(msg.segment);
      }
      notify();
    });
    worker.on("error", (e) => {
      failure ??= e;
      notify();
    });
    worker.on("exit", (code) => {
      if (!finished[w]) failure ??= new Error(`bm25 build worker ${w} stopped (exit code ${code})`);
      notify();
    });
    workers.push(worker);
  }
  const waitFor = async (cond: () => boolean) => {
    while (!cond()) {
      if (failure) throw failure;
      await new Promise<void>((resolve) => (wake = resolve));
    }
    if (failure) throw failure;
  };

  const writer = new UnitWriter(outDir);
  let resumedUnits = 0;
  let count = 0;
  try {
    let batch = 0;
    let texts: string[] = [];
    let first = 0;
    let n = 0;
    const send = async () => {
      const w = batch % threads;
      if (batch < nextBatch[w]) resumedUnits += n;
      else {
        await waitFor(() => inFlight[w] < 2);
        inFlight[w]++;
        workers[w].postMessage((fromTable ? { batch, first, count: n } : { batch, first, count: n, texts }) satisfies BuildWorkerRequest);
      }
      batch++;
      texts = [];
      n = 0;
    };
    for await (const unit of units as AsyncIterable<Unit>) {
      if (failure) throw failure;
      if (fromTable && !unit.ref) throw new Error(`bm25: textsFrom ${options.textsFrom} is set, but unit ${count} does not refer to a store`);
      await writer.add(unit);
      if (n === 0) first = count;
      n++;
      if (!fromTable) {
        const text = bm25IndexedText(unit, p);
        texts.push(text);
        textBytes += text.length;
      }
      count++;
      if (n === batchUnits) await send();
      onProgress?.(count);
      options.onProgress?.({ phase: "analyse", units: count, bytes: textBytes });
    }
    if (n > 0) await send();
    await writer.close();
    for (const w of workers) w.postMessage({ finish: true } satisfies BuildWorkerRequest);
    await waitFor(() => finished.every(Boolean));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  if (count >= 0x7fffffff) throw new Error(`bm25: ${count} units exceed this index format (2^31 - 1)`);

  // Merge in a fixed order (the output does not depend on it).
  const segments = [...state.segments].sort((a, c) => a.worker - c.worker || a.seq - c.seq);
  const merged = mergeSegments(
    segments.map((s) => ({ path: join(outDir, s.file), size: s.size })),
    count,
    outDir,
    p.k1,
    p.b,
    (terms) => options.onProgress?.({ phase: "merge", units: count, bytes: textBytes, terms }),
  );
  writeManifest(outDir, {
    kind: "bm25",
    unit: params.unit ?? "passage",
    units: count,
    params: { k1: p.k1, b: p.b, analyzer: p.analyzer, title: p.title, buildId: merged.buildId, docCount: merged.docCount, sumTotalTermFreq: merged.sumTotalTermFreq, terms: merged.terms, postings: merged.postings },
    source: params.source ?? "",
    formatVersion: FORMAT_VERSION,
  });
  for (const s of segments) rmSync(join(outDir, s.file), { force: true });
  rmSync(join(outDir, STATE_FILE), { force: true });
  return { units: count, terms: merged.terms, postings: merged.postings, docCount: merged.docCount, indexBytes: merged.bytes, segments: segments.length, resumedUnits };
}
