// Downstream answer metrics of KILT's `eval_downstream` (kilt-spec.md §3): strict accuracy,
// normalized exact match, token F1 and ROUGE-L, each the max over the gold answer set.

import { normalizeAnswer, normalizedTokens } from "./normalize.js";
import { prepareRougeText, type RougeScorer, type RougeText, type Vocabulary } from "./rouge.js";

/** A gold answer prepared for scoring: raw (stripped), normalized, and its token counts. */
export interface GoldAnswer {
  text: string;
  normalized: string;
  tokenCounts: Map<string, number>;
  tokenTotal: number;
}

/** A gold answer normalised and tokenised once, as the KILT evaluator compares it. */
export function prepareGoldAnswer(text: string): GoldAnswer {
  const normalized = normalizeAnswer(text);
  const tokens = normalizedTokens(normalized);
  const tokenCounts = new Map<string, number>();
  for (const t of tokens) tokenCounts.set(t, (tokenCounts.get(t) ?? 0) + 1);
  return { text, normalized, tokenCounts, tokenTotal: tokens.length };
}

/** `_f1_score` of SQuAD: multiset token overlap; 0 when nothing overlaps. */
export function f1Score(predTokens: readonly string[], gold: GoldAnswer): number {
  if (predTokens.length === 0 || gold.tokenTotal === 0) return 0;
  const remaining = new Map(gold.tokenCounts);
  let same = 0;
  for (const t of predTokens) {
    const c = remaining.get(t);
    if (c !== undefined && c > 0) {
      remaining.set(t, c - 1);
      same++;
    }
  }
  if (same === 0) return 0;
  const precision = (1.0 * same) / predTokens.length;
  const recall = (1.0 * same) / gold.tokenTotal;
  return (2 * precision * recall) / (precision + recall);
}

/** The four downstream scores of one datapoint. */
export interface AnswerScores {
  accuracy: number;
  em: number;
  f1: number;
  rougel: number;
  /** The ROUGE-L backtrack was longer than pltrdy's recursion allows (the official evaluator crashes). */
  rougeOverflow: boolean;
}

/**
 * Scores a non-empty, stripped guess answer against a non-empty gold answer set. `vocab` interns
 * the words of this one datapoint (pass a fresh or cleared one; nothing is cached across datapoints).
 */
export function scoreAnswer(
  guess: string,
  golds: readonly GoldAnswer[],
  vocab: Vocabulary,
  scorer: RougeScorer,
): AnswerScores {
  let accuracy = 0;
  let em = 0;
  let f1 = -Infinity;
  let rougel = -Infinity;
  let rougeOverflow = false;
  const normalized = normalizeAnswer(guess);
  const tokens = normalizedTokens(normalized);
  let hypRouge: RougeText | null = null;
  for (const g of golds) {
    if (g.text === guess) accuracy = 1;
    if (g.normalized === normalized) em = 1;
    const f = f1Score(tokens, g);
    if (f > f1) f1 = f;
    hypRouge ??= prepareRougeText(guess, vocab);
    const r = scorer.score(hypRouge, prepareRougeText(g.text, vocab), vocab.size);
    if (scorer.lastWouldOverflow) rougeOverflow = true;
    if (r > rougel) rougel = r;
  }
  return { accuracy, em, f1, rougel, rougeOverflow };
}
