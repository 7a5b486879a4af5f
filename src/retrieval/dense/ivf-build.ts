// Builds a compressed dense index from precomputed vectors (a `VectorSource`: .npy, .fvecs, raw, or any
// generator) in bounded memory, whatever the corpus size:
//   1. units: the provenance of row i goes to the unit store (one unit per row, counts checked);
//   2. train: the quantizer (./quantizer.ts) learns from an evenly spaced sample of rows;
//   3. assign: every row is given its coarse list and its code, appended in row order to two work files,
//      checkpointed every few batches (a killed build goes on from the last checkpoint);
//   4. lay out: rows are placed list by list: ids and codes gathered in memory (4 + code bytes a row),
//      the int8 rescoring vectors written in place on disk (dim bytes a row), then the list offsets.
// The directory's `build.json` records the inputs' identity (name, rows, dimensions, size, mtime) and the
// parameters; a re-run with other inputs or parameters starts over, saying so. The manifest is written
// last, so a directory with a manifest is complete (the caller seals and swaps it into place).

import { depthLine, startingDepth, tuneDepth } from "./default-depth.js";
import { closeSync, existsSync, fdatasyncSync, ftruncateSync, openSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { IndexManifest, UnitKind } from "../types.js";
import type { Unit } from "../units/unit.js";
import { UnitWriter } from "../units/store.js";
import { TARTAN_VERSION, writeManifest } from "../manifest.js";
import { writeFileSafe, makeDirs } from "../../util/safe-output.js";
import type { EncoderSpec } from "./encoder.js";
import type { VectorSource } from "./vector-files.js";
import { QUANTIZE_KINDS, Quantizer, type QuantizerParams } from "./quantizer.js";
import { AssignPool } from "./assign-pool.js";
import { IVF_FILES, IVF_FORMAT, IVF_FORMAT_VERSION, headerBytes, readAll, writeAll } from "./ivf-files.js";

export const IVF_BUILD_STATE = "build.json";
const ASSIGN_TMP = "assign.work";
const CODES_TMP = "codes.work";

/** What a compressed dense index is built with (recorded in its manifest). */
export interface IvfBuildParams extends QuantizerParams {
  /** What the units are; default "passage". */
  unit?: UnitKind;
  /** Where the units came from (recorded in the manifest). */
  source?: string;
  /** The encoder text queries are encoded with (null: queries come as vectors). */
  encoder?: EncoderSpec | null;
  /** Rows the quantizer is trained on (default 131,072, or every row of a smaller corpus). */
  sample?: number;
  /** Search defaults recorded in the manifest: lists probed and candidates rescored. */
  nprobe?: number;
  refine?: number;
}

/** Where a build is. */
export interface IvfProgress {
  phase: "units" | "train" | "assign" | "layout";
  done: number;
  total: number;
}

/** Options of {@link buildIvfIndex} that are not recorded. */
export interface IvfBuildOptions {
  /** Hears each phase's progress (rows done of the total). */
  onProgress?: (p: IvfProgress) => void;
  /** Rows read at a time (default 8,192). */
  batch?: number;
  /** Say what happens (resumed, started over). */
  log?: (line: string) => void;
  /** Worker threads of the assign step (default: the number of cores; 0 = the calling thread). */
  threads?: number;
  /** Files the vectors and units come from: their size and modification time are part of the resume key. */
  inputFiles?: readonly string[];
  /**
   * Measure the default depth against exact search before the manifest is written (./default-depth.ts),
   * deepening it to the target with `tune`; the result goes into the manifest (`defaultRecall`) and the log.
   */
  measureDepth?: { tune: boolean };
}

interface BuildState {
  build: string;
  identity: string;
  units: boolean;
  trained: boolean;
  assigned: number;
}

/** The identity of the inputs and parameters: a resumed build must see the same. */
function identityOf(vectors: VectorSource, p: IvfBuildParams, files: readonly string[]): string {
  const stats = files.filter((f) => existsSync(f)).map((f) => {
    const s = statSync(f);
    return [f, s.size, s.mtimeMs];
  });
  return JSON.stringify({ name: vectors.name, count: vectors.count, dim: vectors.dim, stats, p: { ...p, source: undefined } });
}

/** Builds a compressed dense index of `vectors` (row i is the unit `units` yields i-th) in `outDir`. */
export async function buildIvfIndex(
  vectors: VectorSource,
  units: AsyncIterable<Unit> | Iterable<Unit>,
  outDir: string,
  params: IvfBuildParams,
  options: IvfBuildOptions = {},
): Promise<IndexManifest> {
  const n = vectors.count;
  const dim = vectors.dim;
  const p: IvfBuildParams = { ...params };
  if (!QUANTIZE_KINDS.includes(p.quantize)) throw new Error(`quantize: ${JSON.stringify(p.quantize)}; expected ${QUANTIZE_KINDS.join(", ")}`);
  const log = options.log ?? (() => {});
  const batch = Math.max(1, options.batch ?? 8192);
  makeDirs(outDir);
  const identity = identityOf(vectors, p, options.inputFiles ?? []);
  const statePath = join(outDir, IVF_BUILD_STATE);
  let state: BuildState | null = null;
  if (existsSync(statePath)) {
    try {
      state = JSON.parse(readFileSync(statePath, "utf8")) as BuildState;
    } catch {
      state = null;
    }
    if (state && state.identity !== identity) {
      log(`${outDir}: the inputs or parameters changed since the interrupted build: starting over`);
      state = null;
    } else if (state) log(`${outDir}: resuming an interrupted build (${state.trained ? `trained, ${state.assigned.toLocaleString("en-US")} of ${n.toLocaleString("en-US")} rows assigned` : state.units ? "units written" : "started"})`);
  }
  if (!state) {
    for (const f of readdirSync(outDir)) rmSync(join(outDir, f), { recursive: true, force: true });
    state = { build: randomBytes(8).toString("hex"), identity, units: false, trained: false, assigned: 0 };
  }
  const save = () => writeFileSafe(statePath, `${JSON.stringify(state)}\n`);
  save();
  const progress = (phase: IvfProgress["phase"], done: number, total: number) => options.onProgress?.({ phase, done, total });

  // 1. units
  if (!state.units) {
    await writeRowUnits(units, vectors, outDir, p.unit ?? "passage", (count) => progress("units", count, n));
    state.units = true;
    save();
  }

  // 2. train
  const qPath = join(outDir, IVF_FILES.quantizer);
  let q: Quantizer;
  if (!state.trained) {
    const want = Math.min(n, p.sample ?? 131072);
    const sample = new Float32Array(want * dim);
    const step = n / Math.max(1, want);
    for (let i = 0; i < want; i++) sample.set(vectors.read(Math.floor(i * step), 1), i * dim);
    progress("train", 0, 1);
    q = Quantizer.train(sample, dim, p, n);
    rmSync(qPath, { force: true });
    q.save(qPath, state.build);
    state.trained = true;
    save();
    progress("train", 1, 1);
  } else q = Quantizer.load(qPath, state.build);

  // 3. assign (row order), checkpointed
  const cb = q.codeBytes;
  const assignPath = join(outDir, ASSIGN_TMP);
  const codesPath = join(outDir, CODES_TMP);
  if (state.assigned < n) {
    const fa = openSync(assignPath, existsSync(assignPath) ? "r+" : "w+");
    const fc = openSync(codesPath, existsSync(codesPath) ? "r+" : "w+");
    const pool = new AssignPool(q, options.threads);
    try {
      ftruncateSync(fa, state.assigned * 4);
      ftruncateSync(fc, state.assigned * cb);
      let sinceCheckpoint = 0;
      // the next batch is read (or generated) while the workers assign this one
      let next: Float32Array | null = vectors.read(state.assigned, Math.min(batch, n - state.assigned));
      for (let r = state.assigned; r < n; r += batch) {
        const m = Math.min(batch, n - r);
        const xs = next as Float32Array;
        const job = pool.assign(xs);
        next = r + m < n ? vectors.read(r + m, Math.min(batch, n - r - m)) : null;
        const { lists, codes } = await job;
        writeAll(fa, new Uint8Array(lists.buffer, lists.byteOffset, lists.byteLength), r * 4, assignPath);
        if (cb > 0) writeAll(fc, codes, r * cb, codesPath);
        progress("assign", r + m, n);
        if (++sinceCheckpoint >= 16 || r + m === n) {
          fdatasyncSync(fa);
          fdatasyncSync(fc);
          state.assigned = r + m;
          save();
          sinceCheckpoint = 0;
        }
      }
    } finally {
      await pool.close();
      closeSync(fa);
      closeSync(fc);
    }
  }

  // 4. lay out list by list
  const lists = new Int32Array(n);
  {
    const fa = openSync(assignPath, "r");
    try {
      readAll(fa, new Uint8Array(lists.buffer), 0, assignPath);
    } finally {
      closeSync(fa);
    }
  }
  const L = q.lists;
  const offsets = new Float64Array(L + 1);
  for (let i = 0; i < n; i++) {
    const l = lists[i];
    if (!(l >= 0 && l < L)) throw new Error(`${assignPath}: row ${i} in list ${l} of ${L} (damaged work file; delete ${outDir} and rebuild)`);
    offsets[l + 1]++;
  }
  for (let l = 0; l < L; l++) offsets[l + 1] += offsets[l];
  const fill = Float64Array.from(offsets.subarray(0, L));
  const ids = new Uint32Array(n);
  const codes = new Uint8Array(n * cb);
  const pos = new Float64Array(n);
  for (let i = 0; i < n; i++) pos[i] = fill[lists[i]]++;
  const build = state.build;
  const rescorePath = join(outDir, IVF_FILES.rescore);
  const rh = headerBytes({ format: IVF_FORMAT, version: IVF_FORMAT_VERSION, file: "rescore", build, rows: n, rowBytes: dim, dim });
  const fr = openSync(rescorePath, "w");
  const fc = cb > 0 ? openSync(codesPath, "r") : -1;
  try {
    writeAll(fr, rh, 0, rescorePath);
    ftruncateSync(fr, rh.length + n * dim);
    for (let r = 0; r < n; r += batch) {
      const m = Math.min(batch, n - r);
      const xs = vectors.read(r, m);
      const rows = q.int8Rows(xs);
      const rowBytes = new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength);
      let rowCodes: Uint8Array | null = null;
      if (cb > 0) {
        rowCodes = new Uint8Array(m * cb);
        readAll(fc, rowCodes, r * cb, codesPath);
      }
      // runs of consecutive positions are written at once
      let i = 0;
      while (i < m) {
        let j = i + 1;
        while (j < m && pos[r + j] === pos[r + j - 1] + 1) j++;
        writeAll(fr, rowBytes.subarray(i * dim, j * dim), rh.length + pos[r + i] * dim, rescorePath);
        i = j;
      }
      for (let t = 0; t < m; t++) {
        const at = pos[r + t];
        ids[at] = r + t;
        if (rowCodes) codes.set(rowCodes.subarray(t * cb, (t + 1) * cb), at * cb);
      }
      progress("layout", r + m, n);
    }
  } finally {
    closeSync(fr);
    if (fc >= 0) closeSync(fc);
  }
  writeRows(join(outDir, IVF_FILES.ids), { file: "ids", build, rows: n, rowBytes: 4 }, new Uint8Array(ids.buffer));
  writeRows(join(outDir, IVF_FILES.codes), { file: "codes", build, rows: n, rowBytes: cb, kind: q.kind }, codes);
  writeRows(join(outDir, IVF_FILES.lists), { file: "lists", build, rows: L + 1, rowBytes: 8 }, new Uint8Array(offsets.buffer));
  for (const f of [assignPath, codesPath]) if (existsSync(f)) unlinkSync(f);
  const draft: Omit<IndexManifest, "created" | "tartanVersion"> = {
    kind: "dense",
    unit: p.unit ?? "passage",
    units: n,
    params: {
      encoder: p.encoder ?? null,
      dim,
      quantize: q.kind,
      build,
      k1: q.k1,
      k2: q.k2,
      lists: L,
      ...q.codes.header,
      codeBytes: cb,
      sample: Math.min(n, p.sample ?? 131072),
      ...defaultDepth(L, n, p),
      vectors: vectors.name,
      search: "ivf",
    },
    source: p.source ?? vectors.name,
    formatVersion: IVF_FORMAT_VERSION,
  };
  if (options.measureDepth) {
    // every file but the manifest is in place: the index opens from the draft, and the manifest is still written once, last
    const d = draft.params as { nprobe: number; refine: number };
    const r = await tuneDepth(vectors, outDir, { ...draft, created: "", tartanVersion: TARTAN_VERSION }, { nprobe: d.nprobe, refine: d.refine }, options.measureDepth.tune);
    log(depthLine(r, L));
    draft.params = { ...draft.params, nprobe: r.nprobe, refine: r.refine, defaultRecall: r.recall === null ? null : { recallAt100: r.recall, queries: r.queries, tuned: r.tuned } };
  }
  const manifest = writeManifest(outDir, draft);
  unlinkSync(statePath);
  return manifest;
}

/**
 * The search depth a new index records (`retrieve --nprobe --refine` override it): the given values, else
 * the starting depth of ./default-depth.ts (which a build from vectors then measures and may deepen).
 */
function defaultDepth(lists: number, rows: number, p: { nprobe?: number; refine?: number }): { nprobe: number; refine: number } {
  const start = startingDepth(lists, rows);
  return { nprobe: p.nprobe ?? start.nprobe, refine: p.refine ?? start.refine };
}

/** Writes the unit of every row of `vectors` to the unit store in `outDir`; their counts must agree. */
export async function writeRowUnits(units: AsyncIterable<Unit> | Iterable<Unit>, vectors: VectorSource, outDir: string, unit: UnitKind, onCount?: (count: number) => void): Promise<void> {
  const n = vectors.count;
  const writer = new UnitWriter(outDir, { unit });
  let count = 0;
  try {
    for await (const u of units as AsyncIterable<Unit>) {
      if (count >= n) throw new Error(`${vectors.name} has ${n.toLocaleString("en-US")} rows, the units go on past that (unit ${count + 1}: ${u.wikipedia_id})`);
      await writer.add(u);
      count++;
      if (count % 65536 === 0) onCount?.(count);
    }
  } finally {
    await writer.close();
  }
  if (count !== n) throw new Error(`${vectors.name} has ${n.toLocaleString("en-US")} rows, the units ${count.toLocaleString("en-US")}: row i must be unit i`);
}

function writeRows(path: string, h: { file: string; build: string; rows: number; rowBytes: number; [k: string]: unknown }, data: Uint8Array): void {
  const fd = openSync(path, "w");
  try {
    writeAll(fd, headerBytes({ format: IVF_FORMAT, version: IVF_FORMAT_VERSION, ...h }), null, path);
    for (let off = 0; off < data.length; off += 1 << 28) writeAll(fd, data.subarray(off, Math.min(data.length, off + (1 << 28))), null, path);
  } finally {
    closeSync(fd);
  }
}
