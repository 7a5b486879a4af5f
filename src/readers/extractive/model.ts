// The span-ranking model: a conditional (listwise) logistic regression. For one question the
// probability of candidate i is softmax(w · x_i) over its candidates; training maximises the log
// probability of the gold spans (several positives share the mass) with L2 regularisation, by Adam
// over shuffled mini-batches of questions. Features are standardised with the training mean and
// standard deviation. Seeded, single-threaded and order-fixed, so the same data gives the same JSON.

import { FEATURE_NAMES } from "./features.js";
import { seededRandom, shuffle } from "../../util/random.js";

/** One training question: its candidates' features (row-major, dense or {@link SparseRows}) and which rows are gold. */
export interface TrainingGroup {
  features: Float64Array | SparseRows;
  rows: number;
  positives: number[];
}

/**
 * Feature rows without their zeros: row `r`'s non-zero columns are `index[start[r] .. start[r + 1])`
 * with their exact values in `value`. Most of the reader's 498 features are indicators, so a training
 * set held this way takes about a seventh of the memory of dense rows (the quick start: ~2 GB → ~0.3 GB).
 * Only +0 is left out, so {@link unpackRows} gives back the very same float64 rows.
 */
export interface SparseRows {
  start: Uint32Array;
  index: Uint16Array;
  value: Float64Array;
}

/** `rows` dense rows of `d` columns as {@link SparseRows} (lossless: -0 and NaN are kept). */
export function packRows(features: Float64Array, rows: number, d: number): SparseRows {
  if (d > 0x10000) throw new Error(`packRows: ${d} columns do not fit 16-bit indexes`);
  let nz = 0;
  for (let i = 0; i < rows * d; i++) if (!isPositiveZero(features[i])) nz++;
  const start = new Uint32Array(rows + 1);
  const index = new Uint16Array(nz);
  const value = new Float64Array(nz);
  let k = 0;
  for (let r = 0; r < rows; r++) {
    start[r] = k;
    const base = r * d;
    for (let j = 0; j < d; j++) {
      const v = features[base + j];
      if (isPositiveZero(v)) continue;
      index[k] = j;
      value[k++] = v;
    }
  }
  start[rows] = k;
  return { start, index, value };
}

/** The dense rows of `features` (`rows` × `d`): the array itself when dense, else unpacked into `scratch` when it is big enough. */
export function unpackRows(features: Float64Array | SparseRows, rows: number, d: number, scratch?: Float64Array): Float64Array {
  if (features instanceof Float64Array) return features;
  const out = scratch && scratch.length >= rows * d ? scratch.subarray(0, rows * d) : new Float64Array(rows * d);
  out.fill(0);
  const { start, index, value } = features;
  for (let r = 0; r < rows; r++) {
    const base = r * d;
    for (let k = start[r]; k < start[r + 1]; k++) out[base + index[k]] = value[k];
  }
  return out;
}

function maxRowsOf(groups: readonly TrainingGroup[]): number {
  let max = 0;
  for (const g of groups) if (g.rows > max) max = g.rows;
  return max;
}

function isPositiveZero(v: number): boolean {
  return v === 0 && 1 / v > 0;
}

/** Options of {@link trainSpanModel}: Adam over mini-batches of questions, seeded. */
export interface TrainOptions {
  epochs?: number;
  learningRate?: number;
  l2?: number;
  batchSize?: number;
  seed?: number;
  /** Called after each mini-batch with the groups trained on so far and the total (every epoch counts them again). */
  onBatch?: (done: number, total: number) => void;
}

/** A saved span ranker. */
export interface SpanModelJson {
  kind: "tartan-span-ranker";
  version: 1;
  features: string[];
  mean: number[];
  std: number[];
  weights: number[];
  /** How it was trained (data, options, final loss); informational. */
  training?: Record<string, unknown>;
}

export { seededRandom, shuffle };

/** The span ranker: feature standardisation and one weight per feature (see the module comment). */
export class SpanModel {
  constructor(
    readonly mean: Float64Array,
    readonly std: Float64Array,
    readonly weights: Float64Array,
    readonly training: Record<string, unknown> = {},
  ) {}

  get dims(): number {
    return this.weights.length;
  }

  /** Scores of `rows` feature rows (higher = more likely the answer). */
  score(features: Float64Array, rows: number): Float64Array {
    const d = this.dims;
    const out = new Float64Array(rows);
    const w = this.weights;
    const mu = this.mean;
    const sd = this.std;
    for (let r = 0; r < rows; r++) {
      let s = 0;
      const base = r * d;
      for (let j = 0; j < d; j++) s += w[j] * ((features[base + j] - mu[j]) / sd[j]);
      out[r] = s;
    }
    return out;
  }

  /** The model as JSON (with the feature names, so a model of other features is refused on load). */
  toJSON(): SpanModelJson {
    return {
      kind: "tartan-span-ranker",
      version: 1,
      features: [...FEATURE_NAMES],
      mean: [...this.mean],
      std: [...this.std],
      weights: [...this.weights],
      training: this.training,
    };
  }

  /** The model saved by {@link SpanModel.toJSON}; refuses another kind, version or feature list. */
  static fromJSON(json: SpanModelJson): SpanModel {
    if (json === null || typeof json !== "object" || json.kind !== "tartan-span-ranker" || json.version !== 1)
      throw new Error(`not a tartan span-ranker model (kind ${String((json as Partial<SpanModelJson> | null)?.kind)})`);
    const names = json.features;
    if (!Array.isArray(names) || names.length !== FEATURE_NAMES.length || names.some((n, i) => n !== FEATURE_NAMES[i]))
      throw new Error("model features differ from this tartan version's features: retrain the model");
    for (const field of ["mean", "std", "weights"] as const) {
      const v = json[field];
      if (!Array.isArray(v) || v.length !== names.length || v.some((x) => typeof x !== "number" || !Number.isFinite(x)))
        throw new Error(`${field} must be ${names.length} finite numbers, one per feature`);
    }
    return new SpanModel(Float64Array.from(json.mean), Float64Array.from(json.std), Float64Array.from(json.weights), json.training ?? {});
  }
}

/** Mean and standard deviation of every column over all rows of all groups (std 1 for constant columns). */
function standardisation(groups: readonly TrainingGroup[], d: number): { mean: Float64Array; std: Float64Array } {
  const mean = new Float64Array(d);
  const sq = new Float64Array(d);
  let n = 0;
  const scratch = new Float64Array(maxRowsOf(groups) * d);
  for (const g of groups) {
    const features = unpackRows(g.features, g.rows, d, scratch);
    for (let r = 0; r < g.rows; r++) {
      const base = r * d;
      for (let j = 0; j < d; j++) {
        const v = features[base + j];
        mean[j] += v;
        sq[j] += v * v;
      }
      n++;
    }
  }
  const std = new Float64Array(d);
  for (let j = 0; j < d; j++) {
    mean[j] = n > 0 ? mean[j] / n : 0;
    const v = n > 0 ? sq[j] / n - mean[j] * mean[j] : 0;
    std[j] = v > 1e-12 ? Math.sqrt(v) : 1;
  }
  return { mean, std };
}

/** Negative log-likelihood of one group and (optionally) its gradient added into `grad`. */
function groupLoss(model: SpanModel, g: TrainingGroup, grad: Float64Array | null, scratch?: Float64Array): number {
  const d = model.dims;
  const features = unpackRows(g.features, g.rows, d, scratch);
  const s = model.score(features, g.rows);
  let max = -Infinity;
  for (let i = 0; i < g.rows; i++) if (s[i] > max) max = s[i];
  let z = 0;
  for (let i = 0; i < g.rows; i++) z += Math.exp(s[i] - max);
  let zPos = 0;
  for (const i of g.positives) zPos += Math.exp(s[i] - max);
  const loss = Math.log(z) - Math.log(zPos);
  if (grad) {
    const isPos = new Uint8Array(g.rows);
    for (const i of g.positives) isPos[i] = 1;
    for (let i = 0; i < g.rows; i++) {
      const e = Math.exp(s[i] - max);
      const coef = e / z - (isPos[i] ? e / zPos : 0);
      if (coef === 0) continue;
      const base = i * d;
      for (let j = 0; j < d; j++) grad[j] += coef * ((features[base + j] - model.mean[j]) / model.std[j]);
    }
  }
  return loss;
}

/** Trains the ranker. Groups without a positive are ignored. Returns the model and the loss per epoch. */
export function trainSpanModel(groups: readonly TrainingGroup[], options: TrainOptions = {}): { model: SpanModel; losses: number[] } {
  const d = FEATURE_NAMES.length;
  const epochs = options.epochs ?? 10;
  const lr = options.learningRate ?? 0.003;
  const l2 = options.l2 ?? 1e-4;
  const batchSize = options.batchSize ?? 32;
  const rand = seededRandom(options.seed ?? 1);
  const usable = groups.filter((g) => g.positives.length > 0 && g.rows > 1);
  const { mean, std } = standardisation(usable, d);
  const model = new SpanModel(mean, std, new Float64Array(d));
  const m1 = new Float64Array(d);
  const m2 = new Float64Array(d);
  const b1 = 0.9;
  const b2 = 0.999;
  let step = 0;
  const losses: number[] = [];
  const order = usable.map((_, i) => i);
  const grad = new Float64Array(d);
  const scratch = new Float64Array(maxRowsOf(usable) * d); // sparse groups are unpacked here, one at a time
  for (let e = 0; e < epochs; e++) {
    shuffle(order, rand);
    let total = 0;
    for (let b = 0; b < order.length; b += batchSize) {
      grad.fill(0);
      const end = Math.min(order.length, b + batchSize);
      for (let k = b; k < end; k++) total += groupLoss(model, usable[order[k]], grad, scratch);
      options.onBatch?.(e * order.length + end, epochs * order.length);
      const n = end - b;
      step++;
      for (let j = 0; j < d; j++) {
        const gj = grad[j] / n + l2 * model.weights[j];
        m1[j] = b1 * m1[j] + (1 - b1) * gj;
        m2[j] = b2 * m2[j] + (1 - b2) * gj * gj;
        const mh = m1[j] / (1 - b1 ** step);
        const vh = m2[j] / (1 - b2 ** step);
        model.weights[j] -= (lr * mh) / (Math.sqrt(vh) + 1e-8);
      }
    }
    losses.push(usable.length > 0 ? total / usable.length : 0);
  }
  return { model, losses };
}
