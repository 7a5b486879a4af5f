// Training the span ranker: every record's candidates become one training group, positives being the
// candidates whose normalised text equals a normalised gold answer (any occurrence in the passages),
// negatives a seeded random sample of the rest. Records with no matching candidate are counted and
// skipped.

import { normalizeAnswer } from "../../eval/normalize.js";
import type { KiltRecord } from "../../records/types.js";
import type { ReaderPassage } from "../types.js";
import { candidateText, generateCandidates, type CandidateOptions } from "./candidates.js";
import { FEATURE_COUNT, featureMatrix } from "./features.js";
import { seededRandom, shuffle } from "../../util/random.js";
import { packRows, trainSpanModel, type SpanModel, type TrainingGroup, type TrainOptions } from "./model.js";
import { analyzeQuestion } from "./question.js";

/** Options of {@link trainReader}. */
export interface ReaderTrainOptions extends TrainOptions, CandidateOptions {
  /** Negatives kept per question (default 100). */
  negatives?: number;
  /** Called after each question's candidates and features are made, with the count so far and the total. */
  onFeatures?: (done: number, total: number) => void;
}

/** What {@link trainReader} saw: records, the ones trained on, candidates, positives and the loss per epoch. */
export interface TrainStats {
  records: number;
  /** Records with at least one positive candidate (the ones trained on). */
  used: number;
  /** Records whose gold answer is not among the candidates. */
  noPositive: number;
  candidates: number;
  positives: number;
  losses: number[];
}

/** Distinct normalised gold answers of a record. */
export function goldAnswers(r: KiltRecord): Set<string> {
  const s = new Set<string>();
  for (const o of r.output) if (typeof o.answer === "string" && o.answer.trim() !== "") s.add(normalizeAnswer(o.answer.trim()));
  return s;
}

/** One record's training group (candidates sub-sampled), or null when no candidate is a gold answer. */
export function trainingGroup(
  r: KiltRecord,
  passages: readonly ReaderPassage[],
  rand: () => number,
  options: ReaderTrainOptions = {},
): { group: TrainingGroup; candidates: number } | null {
  const gold = goldAnswers(r);
  const q = analyzeQuestion(r.input ?? "");
  const set = generateCandidates(q, passages, options);
  const pos: number[] = [];
  const neg: number[] = [];
  set.candidates.forEach((c, i) => (gold.has(normalizeAnswer(candidateText(set, c).text)) ? pos : neg).push(i));
  if (pos.length === 0) return null;
  const keep = shuffle(neg, rand).slice(0, options.negatives ?? 100);
  const chosen = [...pos, ...keep].sort((a, b) => a - b);
  const sub = { ...set, candidates: chosen.map((i) => set.candidates[i]) };
  const features = featureMatrix(q, passages, sub);
  const posSet = new Set(pos);
  const positives = chosen.flatMap((ci, row) => (posSet.has(ci) ? [row] : []));
  if (features.length !== chosen.length * FEATURE_COUNT) throw new Error("feature matrix size mismatch");
  // held without their zeros: a seventh of the memory, the same float64 rows when unpacked
  return { group: { features: packRows(features, chosen.length, FEATURE_COUNT), rows: chosen.length, positives }, candidates: set.candidates.length };
}

/** Trains a span ranker on records and the passages each is read from. Deterministic for a given seed. */
export function trainReader(
  items: readonly { record: KiltRecord; passages: readonly ReaderPassage[] }[],
  options: ReaderTrainOptions = {},
): { model: SpanModel; stats: TrainStats } {
  const rand = seededRandom((options.seed ?? 1) ^ 0x5eed);
  const groups: TrainingGroup[] = [];
  const stats: TrainStats = { records: items.length, used: 0, noPositive: 0, candidates: 0, positives: 0, losses: [] };
  for (const { record, passages } of items) {
    const g = trainingGroup(record, passages, rand, options);
    options.onFeatures?.(stats.used + stats.noPositive + 1, items.length);
    if (g === null) {
      stats.noPositive++;
      continue;
    }
    stats.used++;
    stats.candidates += g.candidates;
    stats.positives += g.group.positives.length;
    groups.push(g.group);
  }
  const { model, losses } = trainSpanModel(groups, options);
  stats.losses = losses;
  Object.assign(model.training, {
    records: stats.records,
    used: stats.used,
    noPositive: stats.noPositive,
    options: {
      epochs: options.epochs ?? 10,
      learningRate: options.learningRate ?? 0.003,
      l2: options.l2 ?? 1e-4,
      batchSize: options.batchSize ?? 32,
      seed: options.seed ?? 1,
      negatives: options.negatives ?? 100,
      maxWords: options.maxWords ?? 8,
    },
    finalLoss: losses[losses.length - 1],
  });
  return { model, stats };
}
