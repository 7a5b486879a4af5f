// A reproducibility matrix: cells of (retriever × dataset), each building (or reusing) its index,
// retrieving for the dataset's gold records and scoring the run with the KILT evaluator, then
// comparing each figure (page- or paragraph-level R-precision, recall@k) with its published reference
// within the tolerance stated for it. Resumable cell by cell: a finished cell is stored in
// WORK/cells/ID.json with the checksums of its inputs and a checksum of its own content, and is reused
// only while its spec and inputs are unchanged, its content matches its checksum and each figure's
// verdict follows from its value and reference; otherwise it is run again, and the result says why.
// Used by `tartan repro squad` and `tartan repro kilt` (squad.ts, kilt.ts).

import { createHash } from "node:crypto";
import { createReadStream, existsSync, lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { evaluate } from "../eval/evaluate.js";
import { buildIndex } from "../retrieval/build.js";
import { retrieve } from "../pipeline/retrieve.js";
import { TARTAN_VERSION } from "../retrieval/manifest.js";
import type { UnitKind } from "../retrieval/types.js";
import { makeDirs, writeFileSafe } from "../util/safe-output.js";
import type { OnProgress } from "../util/progress.js";
import type { Reference } from "./references.js";

/** The index a cell retrieves from. */
export interface IndexSpec {
  kind: "bm25" | "tfidf" | "dense";
  unit: UnitKind;
  /** Passage size in words (unit passage). */
  words?: number;
  /** A prebuilt index directory (a dense index, a pulled artefact): used as it is, never built; its checksum is one of the cell's inputs. */
  dir?: string;
}

/** One figure a cell checks. */
export interface FigureSpec {
  /** The evaluator's key: "Rprec", "recall@5", … */
  metric: string;
  /**
   * Page level (rank key wikipedia_id), paragraph level (wikipedia_id + start_paragraph_id), or
   * "downstream": KILT's eval_downstream of a pipeline cell (em, f1, KILT-em, KILT-f1, and its
   * page-level Rprec and recall@5).
   */
  level: "page" | "paragraph" | "downstream";
  /** The published figure, as a fraction; none: reported without a check. */
  reference?: Reference;
  /** Largest |figure − reference| that passes, as a fraction. */
  tolerance: number;
  /** Why this tolerance. */
  toleranceNote?: string;
}

/** One cell of a matrix. */
export interface CellSpec {
  /** Unique id, also its file names: "bm25-paragraph", "fever/bm25-document". */
  id: string;
  /** The retriever as shown: "BM25, paragraphs". */
  system: string;
  /** The dataset as shown: "SQuAD v1.1 dev", "FEVER dev". */
  dataset: string;
  index: IndexSpec;
  /** Gold records (KILT JSONL). */
  gold: string;
  topK: number;
  figures: FigureSpec[];
  /**
   * A pipeline cell computes its figures itself (retrieve, read, evaluate): `run` gets the cell's
   * working directory and returns the values by `level:metric`; `commands` replace the generated ones.
   */
  custom?: {
    /** The commands shown for the cell. */
    commands: string[];
    /** Computes the cell in `dir`: its values by `level:metric` and the records scored. */
    run: (dir: string) => Promise<{ values: Record<string, number>; records: number }>;
  };
}

/** A figure as measured. */
export interface FigureResult extends FigureSpec {
  value: number;
  /** value − reference (undefined without a reference). */
  difference?: number;
  /** Within the tolerance (undefined without a reference). */
  pass?: boolean;
}

/** A cell as run (or reused). */
export interface CellResult {
  id: string;
  system: string;
  dataset: string;
  figures: FigureResult[];
  /** The exact commands that reproduce the cell. */
  commands: string[];
  /** sha256 of the cell's inputs (gold records, knowledge source), by path. */
  inputs: Record<string, string>;
  records: number;
  seconds: number;
  tartanVersion: string;
  /** True when this run reused the stored result. */
  resumed: boolean;
  /** Fingerprint of the spec and inputs the stored result belongs to. */
  key: string;
  /** Set when a stored result was there but failed its check, so the cell was run again: why. */
  rerun?: string;
}

/** A cell as stored in WORK/cells/ID.json: the result and the checksum of its content. */
export interface StoredCell extends CellResult {
  /** `sha256:` over the result's JSON without `checksum`, `resumed` and `rerun` ({@link cellChecksum}). */
  checksum: string;
}

/** A matrix as run. */
export interface MatrixResult {
  title: string;
  /** Paragraphs said above the table (what the source is, where the references come from). */
  notes: string[];
  cells: CellResult[];
  /** sha256 of the shared inputs (the source the knowledge source was made from, the store). */
  inputs: Record<string, string>;
  /** Commands run once before the cells (building the knowledge source). */
  setup: string[];
  passed: number;
  failed: number;
  unchecked: number;
  created: string;
  tartanVersion: string;
}

/** What a matrix run needs besides its cells. */
export interface MatrixOptions {
  /** Working directory: indexes/, runs/, cells/. */
  work: string;
  /** The knowledge-source store the indexes are built from. */
  ks: string;
  /** Run every cell again even if a stored result matches. */
  fresh?: boolean;
  /** Called with a line per step. */
  log?: (line: string) => void;
  /** Called when a cell starts: its index and the number of cells. */
  onCell?: (index: number, total: number, cell: CellSpec) => void;
  /** Where a cell's index build and retrieval report their progress; absent: nothing is reported. */
  onProgress?: OnProgress;
}

const RANK_KEYS = { page: ["wikipedia_id"], paragraph: ["wikipedia_id", "start_paragraph_id"] } as const;

/** sha256 of a file, streamed. */
export async function fileSha256(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const c of createReadStream(path)) h.update(c as Buffer);
  return h.digest("hex");
}

/** Directories up to this size are hashed file by file; larger ones are fingerprinted by sizes and times. */
const FULL_HASH_LIMIT = 1 << 30;

/**
 * A checksum of an input: a file's sha256; a directory's sha256 over its files' paths and sha256
 * (`sha256:` prefix), or over their paths, sizes and modification times past 1 GiB (`fingerprint:`,
 * said so, since hashing a 35 GB store on every run would take longer than the cells).
 */
export async function inputChecksum(path: string): Promise<string> {
  const st = lstatSync(path);
  if (!st.isDirectory()) return `sha256:${await fileSha256(path)}`;
  const files: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      const s = lstatSync(p);
      if (s.isDirectory()) walk(p);
      else if (s.isFile() && !/-(journal|wal|shm)$/u.test(n)) files.push(p);
    }
  };
  walk(path);
  const total = files.reduce((s, f) => s + lstatSync(f).size, 0);
  const h = createHash("sha256");
  if (total <= FULL_HASH_LIMIT) {
    for (const f of files) h.update(`${relative(path, f).split(sep).join("/")}\0${await fileSha256(f)}\n`);
    return `sha256:${h.digest("hex")}`;
  }
  for (const f of files) {
    const s = lstatSync(f);
    h.update(`${relative(path, f).split(sep).join("/")}\0${s.size}\0${s.mtimeMs}\n`);
  }
  return `fingerprint:${h.digest("hex")}`;
}

/** The index directory of a spec under `work`. */
export function indexDir(work: string, spec: IndexSpec): string {
  if (spec.dir !== undefined) return spec.dir;
  return join(work, "indexes", `${spec.kind}-${spec.unit}${spec.unit === "passage" ? `-${spec.words ?? 100}` : ""}`);
}

/** The cut-offs a cell's figures need (recall@k → k), at least 1. */
function cutoffs(figures: readonly FigureSpec[]): number[] {
  const ks = new Set<number>();
  for (const f of figures) {
    const m = /@(\d+)$/u.exec(f.metric);
    if (m) ks.add(Number(m[1]));
  }
  if (ks.size === 0) ks.add(1);
  return [...ks].sort((a, b) => a - b);
}

/** The exact commands of a cell (paths as given). */
export function cellCommands(cell: CellSpec, work: string, ks: string): string[] {
  if (cell.custom) return cell.custom.commands;
  const dir = indexDir(work, cell.index);
  const run = join(work, "runs", `${cell.id.replace(/\//gu, "-")}.jsonl`);
  const build = cell.index.dir !== undefined ? `# prebuilt ${cell.index.kind} index ${dir} (tartan index verify ${dir})` : `tartan index build --kind ${cell.index.kind} --unit ${cell.index.unit}${cell.index.unit === "passage" ? ` --words ${cell.index.words ?? 100}` : ""} --ks ${ks} --out ${dir}`;
  const levels = [...new Set(cell.figures.map((f) => f.level))];
  const ksList = cutoffs(cell.figures).join(",");
  return [
    build,
    `tartan retrieve --index ${dir} --input ${cell.gold} --out ${run} --top-k ${cell.topK} --text none`,
    ...levels.map((l) => `tartan eval ${cell.gold} ${run} --mode retrieval --ks ${ksList}${l === "paragraph" ? " --rank-keys wikipedia_id,start_paragraph_id" : ""} --json`),
  ];
}

/** The figure checked against its reference. */
export function checkFigure(spec: FigureSpec, value: number): FigureResult {
  if (!spec.reference) return { ...spec, value };
  const difference = value - spec.reference.value;
  // a hair of slack for the decimal rounding of references and tolerances
  return { ...spec, value, difference, pass: Math.abs(difference) <= spec.tolerance + 1e-12 };
}

/** Runs one cell (building its index if need be); returns the result without storing it. */
async function runCell(cell: CellSpec, o: MatrixOptions, inputs: Record<string, string>, key: string): Promise<CellResult> {
  const log = o.log ?? (() => {});
  const t0 = performance.now();
  if (cell.custom) {
    const dirOf = join(o.work, "pipelines", cell.id.replace(/\//gu, "-"));
    makeDirs(join(o.work, "pipelines"));
    const { values, records } = await cell.custom.run(dirOf);
    const figures = cell.figures.map((f) => {
      const v = values[`${f.level}:${f.metric}`];
      if (typeof v !== "number") throw new Error(`${cell.id}: the pipeline gives no ${f.level} ${f.metric}`);
      return checkFigure(f, v);
    });
    return { id: cell.id, system: cell.system, dataset: cell.dataset, figures, commands: cell.custom.commands, inputs, records, seconds: (performance.now() - t0) / 1000, tartanVersion: TARTAN_VERSION, resumed: false, key };
  }
  const dir = indexDir(o.work, cell.index);
  if (cell.index.dir !== undefined && !existsSync(join(dir, "manifest.json"))) throw new Error(`${dir}: no manifest.json (not an index directory)`);
  if (!existsSync(join(dir, "manifest.json"))) {
    makeDirs(join(o.work, "indexes"));
    if (cell.index.kind === "dense") throw new Error(`${cell.id}: dense cells need a prebuilt index (IndexSpec.dir)`);
    await buildIndex({ ks: o.ks, kind: cell.index.kind, unit: cell.index.unit, words: cell.index.words, out: dir, onProgress: o.onProgress }, (l) => log(`    ${l}`));
  }
  makeDirs(join(o.work, "runs"));
  const run = join(o.work, "runs", `${cell.id.replace(/\//gu, "-")}.jsonl`);
  const r = await retrieve({ indexes: [dir], input: cell.gold, out: run, topK: cell.topK, text: "none", onProgress: o.onProgress }, (l) => log(`    ${l}`));
  const figures: FigureResult[] = [];
  const ks = cutoffs(cell.figures);
  for (const level of ["page", "paragraph", "downstream"] as const) {
    const specs = cell.figures.filter((f) => f.level === level);
    if (specs.length === 0) continue;
    if (level === "downstream") throw new Error(`${cell.id}: downstream figures need a pipeline cell (custom)`);
    const e = await evaluate(cell.gold, run, { ks, rankKeys: [...RANK_KEYS[level]], mode: "retrieval" });
    const scores = e.eval_retrieval as Record<string, number> | null;
    if (!scores) throw new Error(`${cell.id}: the evaluation of ${run} against ${cell.gold} failed: ${e.problems.map((p) => p.message).join("; ")}`);
    for (const f of specs) {
      if (typeof scores[f.metric] !== "number") throw new Error(`${cell.id}: the evaluator gives no ${f.metric}`);
      figures.push(checkFigure(f, scores[f.metric]));
    }
  }
  // figures in the order the cell lists them
  figures.sort((a, b) => cell.figures.findIndex((f) => f.metric === a.metric && f.level === a.level) - cell.figures.findIndex((f) => f.metric === b.metric && f.level === b.level));
  return {
    id: cell.id,
    system: cell.system,
    dataset: cell.dataset,
    figures,
    commands: cellCommands(cell, o.work, o.ks),
    inputs,
    records: r.records,
    seconds: (performance.now() - t0) / 1000,
    tartanVersion: TARTAN_VERSION,
    resumed: false,
    key,
  };
}

/** The checksum a stored cell carries: sha256 over its JSON without `checksum`, `resumed` and `rerun`. */
export function cellChecksum(cell: CellResult | StoredCell): string {
  const { checksum: _c, resumed: _r, rerun: _x, ...content } = cell as StoredCell;
  return `sha256:${createHash("sha256").update(JSON.stringify(content)).digest("hex")}`;
}

/** JSON with object keys sorted, to compare values whatever their key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") return `{${Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(",")}}`;
  return JSON.stringify(v);
}

/**
 * The stored result of `cell` in `file` when it may be reused: same spec and inputs (`key`, and the
 * inputs it records), its content matching its checksum, and every figure re-checked from its value
 * (a verdict is never taken from the file). Otherwise why not; `why` undefined: the spec or the inputs
 * changed, a normal re-run.
 */
function storedResult(file: string, cell: CellSpec, key: string, inputs: Record<string, string>): { ok: true; result: CellResult } | { ok: false; why?: string } {
  let stored: StoredCell;
  try {
    stored = JSON.parse(readFileSync(file, "utf8")) as StoredCell;
  } catch (e) {
    return { ok: false, why: `cannot be read (${(e as Error).message})` };
  }
  if (!stored || typeof stored !== "object") return { ok: false, why: "is not a stored cell" };
  if (stored.key !== key) return { ok: false };
  if (typeof stored.checksum !== "string") return { ok: false, why: "has no checksum of its content (written by an earlier tartan, or edited)" };
  if (stored.checksum !== cellChecksum(stored)) return { ok: false, why: "does not match its checksum (edited or damaged)" };
  if (stored.id !== cell.id || canonical(stored.inputs) !== canonical(inputs)) return { ok: false, why: "records other inputs than this run's" };
  if (!Array.isArray(stored.figures) || stored.figures.length !== cell.figures.length) return { ok: false, why: "does not hold the cell's figures" };
  const figures: FigureResult[] = [];
  for (const spec of cell.figures) {
    const f = stored.figures.find((x) => x && x.level === spec.level && x.metric === spec.metric);
    const name = `${spec.level} ${spec.metric}`;
    if (!f || typeof f.value !== "number" || !Number.isFinite(f.value)) return { ok: false, why: `has no value for its figure ${name}` };
    const checked = checkFigure(spec, f.value);
    if (canonical(checked) !== canonical(f)) return { ok: false, why: `its figure ${name} does not follow from its value and reference` };
    figures.push(checked);
  }
  const { checksum: _c, ...result } = stored;
  return { ok: true, result: { ...result, figures, resumed: true } };
}

/** Runs (or reuses) every cell in order; see the module comment. */
export async function runMatrix(cells: readonly CellSpec[], o: MatrixOptions, storeChecksum: string): Promise<CellResult[]> {
  const ids = new Set<string>();
  for (const c of cells) {
    if (ids.has(c.id)) throw new Error(`cell ${c.id} appears twice`);
    ids.add(c.id);
  }
  const log = o.log ?? (() => {});
  makeDirs(join(o.work, "cells"));
  // indexes built from another knowledge source are not reused
  const stamp = join(o.work, "indexes", "source.checksum");
  if (existsSync(join(o.work, "indexes"))) {
    if (!existsSync(stamp)) throw new Error(`${join(o.work, "indexes")}: exists but was not made by tartan repro (no source.checksum): choose another output directory`);
    if (readFileSync(stamp, "utf8").trim() !== storeChecksum) {
      log(`${join(o.work, "indexes")}: built from another knowledge source: removed, the indexes are built again`);
      rmSync(join(o.work, "indexes"), { recursive: true, force: true });
    }
  }
  makeDirs(join(o.work, "indexes"));
  writeFileSafe(stamp, `${storeChecksum}\n`);
  const results: CellResult[] = [];
  const goldSums = new Map<string, string>();
  for (const [i, cell] of cells.entries()) {
    o.onCell?.(i, cells.length, cell);
    if (!goldSums.has(cell.gold)) goldSums.set(cell.gold, await inputChecksum(cell.gold));
    const inputs: Record<string, string> = { [cell.gold]: goldSums.get(cell.gold)!, [o.ks]: storeChecksum };
    if (cell.index.dir !== undefined) {
      if (!goldSums.has(cell.index.dir)) goldSums.set(cell.index.dir, await inputChecksum(cell.index.dir));
      inputs[cell.index.dir] = goldSums.get(cell.index.dir)!;
    }
    const key = createHash("sha256").update(JSON.stringify({ cell, inputs, version: TARTAN_VERSION })).digest("hex");
    const file = join(o.work, "cells", `${cell.id.replace(/\//gu, "-")}.json`);
    let why: string | undefined;
    if (!o.fresh && existsSync(file)) {
      const stored = storedResult(file, cell, key, inputs);
      if (stored.ok) {
        log(`cell ${i + 1}/${cells.length} ${cell.id}: done before, reused (${file})`);
        results.push(stored.result);
        continue;
      }
      if (stored.why) {
        why = `its stored result ${file} ${stored.why}`;
        log(`cell ${i + 1}/${cells.length} ${cell.id}: ${why}: running it again`);
      }
    }
    log(`cell ${i + 1}/${cells.length} ${cell.id}: ${cell.system} on ${cell.dataset}`);
    let r: CellResult;
    try {
      r = await runCell(cell, o, inputs, key);
    } catch (e) {
      if (why) throw new Error(`${cell.id}: ${why}, and running the cell again failed: ${(e as Error).message}`);
      throw e;
    }
    writeFileSafe(file, `${JSON.stringify({ ...r, checksum: cellChecksum(r) } satisfies StoredCell, null, 2)}\n`);
    results.push(why ? { ...r, rerun: why } : r);
  }
  return results;
}

/** Counts the checked figures that pass and fail, and the unchecked ones. */
export function tally(cells: readonly CellResult[]): { passed: number; failed: number; unchecked: number } {
  let passed = 0;
  let failed = 0;
  let unchecked = 0;
  for (const c of cells)
    for (const f of c.figures) {
      if (f.pass === undefined) unchecked++;
      else if (f.pass) passed++;
      else failed++;
    }
  return { passed, failed, unchecked };
}
