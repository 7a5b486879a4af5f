// Fusion weights tuned on training queries (`tartan retrieve --tune-on RECORDS`): each index is opened
// alone and searches every training record's input once (the fusion's depth); then, for each point of a
// grid, the members' lists are fused as the fusion stage fuses them (src/retrieval/hybrid.ts) and the fused
// top k scored against the records' gold provenance by the KILT evaluator (a metric of eval_retrieval,
// Rprec by default, at rank keys by unit: paragraph level for finer units). The grid: the weights on the
// simplex in steps of 1/10 for two indexes and 1/4 for more (weights only matter up to scale for rrf and
// wsum), or Pyserini's alpha from 0 to 2 in steps of 0.1 (wsum over two). The best point wins; ties go to
// the earliest in grid order. Its weights (or alpha) and every point's value are returned for the run's settings.

import { openRetriever } from "../backends/open.js";
import { evaluate } from "../eval/evaluate.js";
import { assertReadableFile, LineError, readJsonl } from "../records/jsonl.js";
import type { KiltRecord } from "../records/types.js";
import { HybridRetriever } from "../retrieval/hybrid.js";
import type { StageSpec } from "../retrieval/stages/stage.js";
import type { Hit, Retriever, UnitKind } from "../retrieval/types.js";
import { unitProvenance } from "../retrieval/units/unit.js";
import { fusionMethod, fusionNorm, type FusionMethod } from "../retrieval/fusion.js";
import type { OnProgress } from "../util/progress.js";

/** What {@link tuneFusion} tunes and how it scores. */
export interface TuneOptions {
  /** KILT task records with gold provenance: the training queries. */
  records: string;
  /** A metric of `tartan eval`'s retrieval section (default Rprec; also recall@K, precision@K, success_rate@K). */
  metric?: string;
  /** Rank keys of the metric (default: wikipedia_id for page units, wikipedia_id,start_paragraph_id otherwise). */
  keys?: string[];
  /** Tune Pyserini's alpha (wsum over two indexes) instead of the weights. */
  alpha?: boolean;
}

/** One grid point and its value. */
export interface TunePoint {
  weights?: number[];
  alpha?: number;
  value: number;
}

/** What {@link tuneFusion} chose. */
export interface TuneResult {
  records: string;
  queries: number;
  metric: string;
  keys: string[];
  method: FusionMethod;
  /** The chosen point. */
  chosen: TunePoint;
  /** Every point, in grid order. */
  grid: TunePoint[];
  /** The fusion stage with the chosen weights (or alpha). */
  fusion: StageSpec;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** Points on the simplex Σw = 1 in steps of 1/steps, for `members` weights, in lexicographic order of w₁, w₂, …. */
export function simplexGrid(members: number, steps: number): number[][] {
  const out: number[][] = [];
  const rec = (prefix: number[], left: number) => {
    if (prefix.length === members - 1) {
      out.push([...prefix, left].map((n) => round(n / steps)));
      return;
    }
    for (let i = 0; i <= left; i++) rec([...prefix, i], left - i);
  };
  rec([], steps);
  return out;
}

/** The metric's cut-off: `recall@5` → 5; Rprec → 1 (unused). */
function metricK(metric: string): number {
  const m = /@(\d+)$/u.exec(metric);
  if (m) return Number(m[1]);
  if (metric !== "Rprec") throw new Error(`--tune-metric: ${JSON.stringify(metric)} is not a retrieval metric (Rprec, recall@K, precision@K, success_rate@K)`);
  return 1;
}

/**
 * The fusion weights (or alpha) that score best on `t.records` (see the module comment). `fusion` is the
 * fusion asked for (its method, norm, k0, depth); `indexes` are opened one by one; `k` units are scored.
 */
export async function tuneFusion(indexes: readonly string[], fusion: StageSpec | undefined, k: number, t: TuneOptions, onProgress?: OnProgress): Promise<TuneResult> {
  if (indexes.length < 2) throw new Error("--tune-on tunes the weights of a fusion: give two or more indexes");
  const opts = { ...(fusion?.options ?? {}) } as { k0?: number; depth?: number; norm?: string; weights?: number[]; alpha?: number };
  const method = fusionMethod(fusion?.name ?? (t.alpha ? "wsum" : "rrf"));
  if (opts.weights !== undefined) throw new Error("--tune-on chooses the weights: leave --weights out");
  if (opts.alpha !== undefined) throw new Error("--tune-on chooses alpha: give --tune-alpha, not --alpha");
  if (method !== "rrf" && method !== "wsum") throw new Error(`--tune-on tunes rrf's or wsum's weights; ${method} has none`);
  if (t.alpha && (method !== "wsum" || indexes.length !== 2)) throw new Error("--tune-alpha tunes Pyserini's alpha: wsum over two indexes");
  const metric = t.metric ?? "Rprec";
  const mk = metricK(metric);
  assertReadableFile(t.records);
  const records: KiltRecord[] = [];
  for await (const { value, line } of readJsonl<KiltRecord>(t.records)) {
    if (value.id === undefined || value.id === null) throw new LineError(t.records, line, "record without id");
    if (typeof value.input !== "string") throw new LineError(t.records, line, `record ${String(value.id)} has no input`);
    records.push(value);
  }
  if (records.length === 0) throw new Error(`${t.records}: no training records`);
  const members: Retriever[] = [];
  try {
    for (const ix of indexes) members.push(await openRetriever(ix));
    const depth = opts.depth ?? Math.max(k, 100);
    const queries = records.map((r) => r.input!);
    const lists: Hit[][][] = [];
    for (let m = 0; m < members.length; m++) {
      const r = members[m];
      lists.push(r.searchBatch ? await r.searchBatch(queries, depth) : await Promise.all(queries.map((q) => r.search(q, depth))));
      onProgress?.({ label: "tune-on: member searches", unit: "indexes", items: m + 1, totalItems: members.length, countItems: true });
    }
    onProgress?.({ label: "tune-on: member searches", unit: "indexes", items: 0, done: true });
    const unit: UnitKind = members[0].manifest.unit;
    const keys = t.keys ?? (unit === "page" ? ["wikipedia_id"] : ["wikipedia_id", "start_paragraph_id"]);
    const points: Omit<TunePoint, "value">[] = t.alpha
      ? Array.from({ length: 21 }, (_, i) => ({ alpha: round(i / 10) }))
      : simplexGrid(members.length, members.length === 2 ? 10 : 4)
          .filter((w) => w.some((x) => x > 0))
          .map((weights) => ({ weights }));
    const grid: TunePoint[] = [];
    const norm = opts.norm === undefined ? undefined : fusionNorm(opts.norm);
    for (const p of points) {
      const h = new HybridRetriever(members, { method, norm, k0: opts.k0, depth, ...(p.alpha !== undefined ? { alpha: p.alpha } : { weights: p.weights }) }, indexes);
      const guesses = records.map((r, i) => ({ id: r.id, input: r.input, output: [{ provenance: h.fuse(lists.map((l) => l[i]), k).map((hit) => unitProvenance(h.units.get(hit.unit), hit.score, false)) }] }));
      const result = await evaluate(records, guesses, { ks: [mk], rankKeys: keys, mode: "retrieval" });
      const v = (result.eval_retrieval as Record<string, unknown> | null)?.[metric];
      if (typeof v !== "number") throw new Error(`--tune-metric: the evaluator gives no ${metric} (known: Rprec, recall@K, precision@K, success_rate@K)`);
      grid.push({ ...p, value: v });
      onProgress?.({ label: "tune-on: grid", unit: "points", items: grid.length, totalItems: points.length, countItems: true });
    }
    onProgress?.({ label: "tune-on: grid", unit: "points", items: 0, done: true });
    let chosen = grid[0];
    for (const g of grid) if (g.value > chosen.value) chosen = g;
    const options: Record<string, unknown> = { ...(fusion?.options ?? {}) };
    if (chosen.alpha !== undefined) options.alpha = chosen.alpha;
    else options.weights = chosen.weights;
    return { records: t.records, queries: records.length, metric, keys, method, chosen, grid, fusion: { name: method, options } };
  } finally {
    for (const m of members) await m.close();
  }
}
