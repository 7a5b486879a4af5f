// The learned reranker's model: a linear function of standardised features (./features.ts), trained with a
// pairwise logistic loss (RankNet's, with a linear scorer) by full-batch gradient descent from seeded
// initial weights, so the same data, options and seed give the same weights bit for bit. A passage's score
// is Σₖ wₖ·(xₖ − meanₖ)/scaleₖ. The model file (`tartan reranker train --out`) is JSON with a format name
// and version, checked field by field when it is read: a wrong file is refused naming the file and field.
// Why linear and not boosted trees: docs/decisions.md ("A linear learned reranker").

import { readFileSync } from "node:fs";
import { seededRandom } from "../../util/random.js";
import { computeFeatures, featureDefinition, FEATURE_NAMES } from "./features.js";
import type { RerankItem } from "./reranker.js";

/** The `format` of a model file. */
export const LEARNED_MODEL_FORMAT = "tartan-learned-reranker";
/** The model file version this build reads and writes. */
export const LEARNED_MODEL_VERSION = 1;

/** A learned reranker model (the model file's content). */
export interface LearnedModel {
  format: typeof LEARNED_MODEL_FORMAT;
  version: number;
  /** `pairwise-logistic`: RankNet's loss over a linear scorer. */
  objective: "pairwise-logistic";
  /** Feature names (./features.ts), in the order of the arrays below. */
  features: string[];
  /** Each feature's mean over the training passages. */
  mean: number[];
  /** Each feature's standard deviation over the training passages (1 where it is 0). */
  scale: number[];
  /** One weight per feature, over the standardised values. */
  weights: number[];
  /** How it was trained (data, options, the loss per epoch): informative, not read back. */
  training?: Record<string, unknown>;
}

/** One training query: an item and a relevance grade per passage (higher is more relevant; 0: not). */
export interface TrainingExample {
  item: RerankItem;
  labels: readonly number[];
}

/** How {@link trainLinearRanker} trains. */
export interface TrainOptions {
  /** Features used (default: every feature, ./features.ts). */
  features?: readonly string[];
  /** Gradient-descent steps over all pairs (default 300). */
  epochs?: number;
  /** Step size (default 0.5). */
  learningRate?: number;
  /** L2 penalty λ/2·‖w‖² (default 0.001). */
  l2?: number;
  /** Seed of the initial weights (uniform in ±0.01; default 1). */
  seed?: number;
  /** Called after each epoch with its loss. */
  onEpoch?: (epoch: number, loss: number) => void;
}

/** What {@link trainLinearRanker} gives: the model, and the loss before the first step and after each. */
export interface TrainResult {
  model: LearnedModel;
  /** loss[0]: the initial weights'; loss[e]: after epoch e. */
  loss: number[];
  queries: number;
  pairs: number;
}

function softplus(x: number): number {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/**
 * Trains the linear ranker on `examples` (every pair of passages of a query with different grades, each
 * query weighing the same): loss = mean over queries of the mean over its pairs of ln(1 + e^(−(s_i − s_j)))
 * for i graded above j, plus λ/2·‖w‖². Queries without such a pair are left out. Deterministic.
 */
export function trainLinearRanker(examples: readonly TrainingExample[], o: TrainOptions = {}): TrainResult {
  const features = [...(o.features ?? FEATURE_NAMES)];
  for (const f of features) featureDefinition(f, "--features");
  if (new Set(features).size !== features.length) throw new Error("--features: a feature is named twice");
  const epochs = o.epochs ?? 300;
  const lr = o.learningRate ?? 0.5;
  const l2 = o.l2 ?? 0.001;
  const seed = o.seed ?? 1;
  const d = features.length;
  // feature rows of every passage, and the pairs of each query
  const rows: number[][][] = [];
  const pairs: [number, number][][] = [];
  for (const ex of examples) {
    if (ex.labels.length !== ex.item.passages.length) throw new Error(`training: ${ex.labels.length} labels for ${ex.item.passages.length} passages`);
    const ps: [number, number][] = [];
    for (let i = 0; i < ex.labels.length; i++) for (let j = 0; j < ex.labels.length; j++) if (ex.labels[i] > ex.labels[j]) ps.push([i, j]);
    if (ps.length === 0) continue;
    rows.push(computeFeatures(ex.item, features));
    pairs.push(ps);
  }
  if (rows.length === 0) throw new Error("training: no query has a relevant and a less relevant passage among its candidates (are the run and the records of the same queries?)");
  const mean = new Array<number>(d).fill(0);
  const scale = new Array<number>(d).fill(0);
  let count = 0;
  for (const r of rows)
    for (const x of r) {
      count++;
      for (let k = 0; k < d; k++) mean[k] += x[k];
    }
  for (let k = 0; k < d; k++) mean[k] /= count;
  for (const r of rows) for (const x of r) for (let k = 0; k < d; k++) scale[k] += (x[k] - mean[k]) ** 2;
  for (let k = 0; k < d; k++) {
    const s = Math.sqrt(scale[k] / count);
    scale[k] = s > 1e-12 ? s : 1;
  }
  const z = rows.map((r) => r.map((x) => x.map((v, k) => (v - mean[k]) / scale[k])));
  const rand = seededRandom(seed);
  const w = Array.from({ length: d }, () => (rand() * 2 - 1) * 0.01);
  const grad = new Array<number>(d);
  const lossOf = (withGrad: boolean): number => {
    grad.fill(0);
    let loss = 0;
    for (let q = 0; q < z.length; q++) {
      const s = z[q].map((x) => x.reduce((a, v, k) => a + v * w[k], 0));
      const ps = pairs[q];
      const per = 1 / (ps.length * z.length);
      for (const [i, j] of ps) {
        const m = s[i] - s[j];
        loss += softplus(-m) * per;
        if (withGrad) {
          const g = -sigmoid(-m) * per;
          const xi = z[q][i];
          const xj = z[q][j];
          for (let k = 0; k < d; k++) grad[k] += g * (xi[k] - xj[k]);
        }
      }
    }
    let norm = 0;
    for (let k = 0; k < d; k++) {
      norm += w[k] * w[k];
      if (withGrad) grad[k] += l2 * w[k];
    }
    return loss + (l2 / 2) * norm;
  };
  const loss: number[] = [];
  for (let e = 0; e < epochs; e++) {
    loss.push(lossOf(true));
    for (let k = 0; k < d; k++) w[k] -= lr * grad[k];
    o.onEpoch?.(e + 1, loss[e]);
  }
  loss.push(lossOf(false));
  const npairs = pairs.reduce((a, p) => a + p.length, 0);
  return {
    model: { format: LEARNED_MODEL_FORMAT, version: LEARNED_MODEL_VERSION, objective: "pairwise-logistic", features, mean, scale, weights: w, training: { epochs, learningRate: lr, l2, seed, queries: z.length, pairs: npairs, loss } },
    loss,
    queries: z.length,
    pairs: npairs,
  };
}

/** The model's scores of one item's passages. */
export function scoreItem(model: LearnedModel, item: RerankItem): number[] {
  const rows = computeFeatures(item, model.features);
  return rows.map((x) => {
    let s = 0;
    for (let k = 0; k < x.length; k++) s += (model.weights[k] * (x[k] - model.mean[k])) / model.scale[k];
    return s;
  });
}

function numbers(file: string, o: Record<string, unknown>, field: string, n: number, positive = false): number[] {
  const v = o[field];
  if (!Array.isArray(v)) throw new Error(`${file}: field ${field}: expected an array of ${n} numbers`);
  if (v.length !== n) throw new Error(`${file}: field ${field}: ${v.length} numbers for ${n} features`);
  v.forEach((x, i) => {
    if (typeof x !== "number" || !Number.isFinite(x) || (positive && !(x > 0))) throw new Error(`${file}: field ${field}[${i}]: ${JSON.stringify(x)} is not a ${positive ? "positive" : "finite"} number`);
  });
  return v as number[];
}

/** A model checked field by field; `file` names it in every message. */
export function checkModel(value: unknown, file: string): LearnedModel {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error(`${file}: a learned reranker model is a JSON object`);
  const o = value as Record<string, unknown>;
  if (o.format !== LEARNED_MODEL_FORMAT) throw new Error(`${file}: field format: expected ${JSON.stringify(LEARNED_MODEL_FORMAT)}, not ${JSON.stringify(o.format)} (write one with tartan reranker train)`);
  if (o.version !== LEARNED_MODEL_VERSION) throw new Error(`${file}: field version: this tartan reads version ${LEARNED_MODEL_VERSION}, not ${JSON.stringify(o.version)}`);
  if (o.objective !== "pairwise-logistic") throw new Error(`${file}: field objective: expected "pairwise-logistic", not ${JSON.stringify(o.objective)}`);
  const fs = o.features;
  if (!Array.isArray(fs) || fs.length === 0 || fs.some((f) => typeof f !== "string")) throw new Error(`${file}: field features: expected a non-empty array of feature names`);
  fs.forEach((f, i) => featureDefinition(f as string, `${file}: field features[${i}]`));
  if (new Set(fs).size !== fs.length) throw new Error(`${file}: field features: a feature is listed twice`);
  const n = fs.length;
  return {
    format: LEARNED_MODEL_FORMAT,
    version: LEARNED_MODEL_VERSION,
    objective: "pairwise-logistic",
    features: fs as string[],
    mean: numbers(file, o, "mean", n),
    scale: numbers(file, o, "scale", n, true),
    weights: numbers(file, o, "weights", n),
    ...(o.training !== undefined && typeof o.training === "object" && o.training !== null ? { training: o.training as Record<string, unknown> } : {}),
  };
}

/** Reads and checks a model file; throws naming the file (and the field). */
export function readModel(file: string): LearnedModel {
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch (e) {
    throw new Error(`${file}: cannot read the learned reranker model (${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    throw new Error(`${file}: invalid JSON (${(e as Error).message})`);
  }
  return checkModel(value, file);
}
