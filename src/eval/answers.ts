// Downstream answer metrics of KILT's `eval_downstream` (kilt-spec.md §3): strict accuracy,
// normalized exact match, token F1 and ROUGE-L, each the max over the gold answer set.

import { normalizeAnswer, normalizedTokens } from "./normalize.js";
import { prepareRougeText, Vocabulary, type RougeScorer, type RougeText } from "./rouge.js";

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

/** A gold answer of the datapoint being scored: its stripped text, normalized form and token ids. */
export interface PreparedAnswer {
  text: string;
  normalized: string;
  /** Ids (in the scorer's vocabulary) of `normalize_answer(text).split()`. */
  tokens: Int32Array;
}

/**
 * Scores one datapoint after another, reusing its buffers: words are interned per datapoint (token ids
 * for F1, word ids for ROUGE-L, in one vocabulary), F1's multiset overlap is counted in a stamped array
 * instead of a copied map. Same arithmetic as {@link f1Score} and `RougeScorer.score`, so the same values.
 * Per datapoint: {@link begin}, {@link gold} for each gold answer, then {@link score}.
 */
export class AnswerScorer {
  private readonly vocab = new Vocabulary();
  private remaining = new Int32Array(64);
  private remainingStamp = new Int32Array(64);
  private stamp = 0;
  private tokenScratch = new Int32Array(64);

  constructor(private readonly rouge: RougeScorer) {}

  /** Starts a datapoint (forgets the previous one's words). */
  begin(): void {
    this.vocab.clear();
  }

  /** Ids of the tokens of a normalized text (single spaces between tokens). */
  private tokenIds(normalized: string): Int32Array {
    let n = 0;
    const len = normalized.length;
    let i = 0;
    while (i < len) {
      let j = normalized.indexOf(" ", i);
      if (j < 0) j = len;
      if (n === this.tokenScratch.length) {
        const b = new Int32Array(n * 2);
        b.set(this.tokenScratch);
        this.tokenScratch = b;
      }
      this.tokenScratch[n++] = this.vocab.idOf(normalized, i, j);
      i = j + 1;
    }
    return this.tokenScratch.slice(0, n);
  }

  /** A gold answer (stripped) of the current datapoint, and its `normalize_answer` when known. */
  gold(text: string, normalized = normalizeAnswer(text)): PreparedAnswer {
    return { text, normalized, tokens: this.tokenIds(normalized) };
  }

  /** F1 of guess token ids against a gold answer: {@link f1Score}'s arithmetic. */
  private f1(pred: Int32Array, gold: Int32Array): number {
    if (pred.length === 0 || gold.length === 0) return 0;
    const size = this.vocab.size;
    if (this.remaining.length < size) {
      this.remaining = new Int32Array(Math.max(size, this.remaining.length * 2));
      this.remainingStamp = new Int32Array(this.remaining.length);
      this.stamp = 0;
    }
    if (++this.stamp === 0x7fffffff) {
      this.remainingStamp.fill(0);
      this.stamp = 1;
    }
    const stamp = this.stamp;
    const remaining = this.remaining;
    const marks = this.remainingStamp;
    for (let i = 0; i < gold.length; i++) {
      const t = gold[i];
      if (marks[t] !== stamp) {
        marks[t] = stamp;
        remaining[t] = 1;
      } else remaining[t]++;
    }
    let same = 0;
    for (let i = 0; i < pred.length; i++) {
      const t = pred[i];
      if (marks[t] === stamp && remaining[t] > 0) {
        remaining[t]--;
        same++;
      }
    }
    if (same === 0) return 0;
    const precision = (1.0 * same) / pred.length;
    const recall = (1.0 * same) / gold.length;
    return (2 * precision * recall) / (precision + recall);
  }

  /** Scores a non-empty, stripped guess answer against the datapoint's (non-empty) gold answers. */
  score(guess: string, golds: readonly PreparedAnswer[]): AnswerScores {
    let accuracy = 0;
    let em = 0;
    let f1 = -Infinity;
    let rougel = -Infinity;
    let rougeOverflow = false;
    const normalized = normalizeAnswer(guess);
    const tokens = this.tokenIds(normalized);
    let hypRouge: RougeText | null = null;
    for (const g of golds) {
      if (g.text === guess) accuracy = 1;
      if (g.normalized === normalized) em = 1;
      const f = this.f1(tokens, g.tokens);
      if (f > f1) f1 = f;
      hypRouge ??= prepareRougeText(guess, this.vocab);
      const r = this.rouge.score(hypRouge, prepareRougeText(g.text, this.vocab), this.vocab.size);
      if (this.rouge.lastWouldOverflow) rougeOverflow = true;
      if (r > rougel) rougel = r;
    }
    return { accuracy, em, f1, rougel, rougeOverflow };
  }
}
