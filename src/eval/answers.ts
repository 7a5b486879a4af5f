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

/**
 * Scores one datapoint after another, reusing its buffers: words are interned per datapoint (token ids
 * for F1, word ids for ROUGE-L, in one vocabulary), the gold answers' token ids kept one after another
 * in one array, F1's multiset overlap counted in a stamped array instead of a copied map. Same
 * arithmetic as {@link f1Score} and `RougeScorer.score`, so the same values.
 * Per datapoint: {@link begin}, {@link gold} for each gold answer, then {@link score}.
 */
export class AnswerScorer {
  private readonly vocab = new Vocabulary();
  private remaining = new Int32Array(64);
  private remainingStamp = new Int32Array(64);
  private stamp = 0;
  /** The datapoint's gold answers: stripped text, normalized text, token ids `tokens[tokenAt[j], tokenAt[j + 1])`. */
  private readonly texts: string[] = [];
  private readonly normalized: string[] = [];
  private tokenAt = new Int32Array(16);
  /** Token ids: the gold answers' from 0, then the guess's. */
  private tokens = new Int32Array(256);
  private readonly result: AnswerScores = { accuracy: 0, em: 0, f1: 0, rougel: 0, rougeOverflow: false };

  constructor(private readonly rouge: RougeScorer) {}

  /** Starts a datapoint (forgets the previous one's words and gold answers). */
  begin(): void {
    this.vocab.clear();
    if (this.texts.length !== 0) this.texts.length = this.normalized.length = 0;
  }

  /** Appends the ids of the tokens of a normalized text (single spaces between tokens) from `at`; returns the end. */
  private tokenIds(normalized: string, at: number): number {
    let n = at;
    const len = normalized.length;
    let i = 0;
    while (i < len) {
      let j = normalized.indexOf(" ", i);
      if (j < 0) j = len;
      if (n === this.tokens.length) {
        const b = new Int32Array(n * 2);
        b.set(this.tokens);
        this.tokens = b;
      }
      this.tokens[n++] = this.vocab.idOf(normalized, i, j);
      i = j + 1;
    }
    return n;
  }

  /** Adds a gold answer (stripped) of the current datapoint. */
  gold(text: string): void {
    const normalized = normalizeAnswer(text);
    const j = this.texts.length;
    if (j + 2 > this.tokenAt.length) {
      const b = new Int32Array(2 * this.tokenAt.length);
      b.set(this.tokenAt);
      this.tokenAt = b;
    }
    this.texts.push(text);
    this.normalized.push(normalized);
    this.tokenAt[j + 1] = this.tokenIds(normalized, this.tokenAt[j]);
  }

  /** F1 of the guess tokens `[p0, p1)` against gold tokens `[g0, g1)`: {@link f1Score}'s arithmetic. */
  private f1(p0: number, p1: number, g0: number, g1: number): number {
    if (p1 === p0 || g1 === g0) return 0;
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
    const tokens = this.tokens;
    for (let i = g0; i < g1; i++) {
      const t = tokens[i];
      if (marks[t] !== stamp) {
        marks[t] = stamp;
        remaining[t] = 1;
      } else remaining[t]++;
    }
    let same = 0;
    for (let i = p0; i < p1; i++) {
      const t = tokens[i];
      if (marks[t] === stamp && remaining[t] > 0) {
        remaining[t]--;
        same++;
      }
    }
    if (same === 0) return 0;
    const precision = (1.0 * same) / (p1 - p0);
    const recall = (1.0 * same) / (g1 - g0);
    return (2 * precision * recall) / (precision + recall);
  }

  /**
   * Scores a non-empty, stripped guess answer against the datapoint's (non-empty) gold answers. The
   * result is reused by the next call.
   */
  score(guess: string): AnswerScores {
    let accuracy = 0;
    let em = 0;
    let f1 = -Infinity;
    let rougel = -Infinity;
    let rougeOverflow = false;
    const normalized = normalizeAnswer(guess);
    const golds = this.texts.length;
    const tokenAt = this.tokenAt;
    const p0 = tokenAt[golds];
    const p1 = this.tokenIds(normalized, p0);
    let hypRouge: RougeText | null = null;
    for (let j = 0; j < golds; j++) {
      const text = this.texts[j];
      if (text === guess) accuracy = 1;
      if (this.normalized[j] === normalized) em = 1;
      const f = this.f1(p0, p1, tokenAt[j], tokenAt[j + 1]);
      if (f > f1) f1 = f;
      hypRouge ??= prepareRougeText(guess, this.vocab);
      const r = this.rouge.score(hypRouge, prepareRougeText(text, this.vocab), this.vocab.size);
      if (this.rouge.lastWouldOverflow) rougeOverflow = true;
      if (r > rougel) rougel = r;
    }
    const res = this.result;
    res.accuracy = accuracy;
    res.em = em;
    res.f1 = f1;
    res.rougel = rougel;
    res.rougeOverflow = rougeOverflow;
    return res;
  }
}
