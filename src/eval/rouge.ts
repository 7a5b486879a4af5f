// ROUGE-L F as KILT computes it: pltrdy `rouge` 1.0.1, summary level, exclusive mode
// (kilt-spec.md §4.5). Sentences split on every ".", words split on single spaces, the union of the
// word *types* of one LCS per (reference sentence, hypothesis sentence) pair, with pltrdy's
// backtracking tie-break. Only ROUGE-L is computed, on interned word ids and typed arrays, and the
// backtrack is iterative (pltrdy's is recursive and crashes past ~985 steps; we report that instead).

import { pySplit } from "../records/python-str.js";

/** Word interning shared by all texts of one evaluation, so sentences become Int32Arrays. */
export class Vocabulary {
  private readonly ids = new Map<string, number>();
  get size(): number {
    return this.ids.size;
  }
  clear(): void {
    this.ids.clear();
  }
  id(word: string): number {
    let v = this.ids.get(word);
    if (v === undefined) {
      v = this.ids.size;
      this.ids.set(word, v);
    }
    return v;
  }
}

/** A text prepared for ROUGE-L: its sentences as word ids, and its number of distinct words. */
export interface RougeText {
  sentences: Int32Array[];
  distinctWords: number;
}

/** Splits like pltrdy: on ".", drop empty pieces, collapse whitespace, then split on " ". */
export function prepareRougeText(text: string, vocab: Vocabulary): RougeText {
  const sentences: Int32Array[] = [];
  const seen = new Set<number>();
  for (const piece of text.split(".")) {
    if (piece.length === 0) continue;
    const words = pySplit(piece);
    const ids = words.length === 0 ? new Int32Array([vocab.id("")]) : new Int32Array(words.length);
    for (let i = 0; i < words.length; i++) ids[i] = vocab.id(words[i]);
    for (let i = 0; i < ids.length; i++) seen.add(ids[i]);
    sentences.push(ids);
  }
  return { sentences, distinctWords: seen.size };
}

/** The backtrack length at which pltrdy's recursive `_recon` exceeds Python's recursion limit (approx.). */
export const PLTRDY_RECURSION_LIMIT_STEPS = 985;

/** Reusable buffers for the LCS tables and the union of LCS word types. */
export class RougeScorer {
  private table = new Int32Array(1 << 16);
  private stamp = new Int32Array(1 << 12);
  private epoch = 0;
  /** Set when the last score needed a backtrack longer than pltrdy's recursion can go. */
  lastWouldOverflow = false;

  /**
   * KILT's `_rougel_score(hypothesis, reference)`: ROUGE-L F, or 0 when pltrdy raises ValueError
   * (no sentence in the hypothesis or the reference).
   */
  score(hyp: RougeText, ref: RougeText, vocabSize: number): number {
    this.lastWouldOverflow = false;
    if (hyp.sentences.length === 0 || ref.sentences.length === 0) return 0;
    if (this.stamp.length < vocabSize) {
      const s = new Int32Array(Math.max(vocabSize, this.stamp.length * 2));
      s.set(this.stamp);
      this.stamp = s;
    }
    const epoch = ++this.epoch;
    const stamp = this.stamp;
    let llcs = 0;
    for (const x of ref.sentences) {
      for (const y of hyp.sentences) {
        const a = x.length;
        const b = y.length;
        const w = b + 1;
        const cells = (a + 1) * w;
        if (this.table.length < cells) this.table = new Int32Array(Math.max(cells, this.table.length * 2));
        const t = this.table;
        for (let j = 0; j <= b; j++) t[j] = 0;
        for (let i = 1; i <= a; i++) {
          const row = i * w;
          const prev = row - w;
          t[row] = 0;
          const xi = x[i - 1];
          for (let j = 1; j <= b; j++) {
            if (xi === y[j - 1]) t[row + j] = t[prev + j - 1] + 1;
            else {
              const up = t[prev + j];
              const left = t[row + j - 1];
              t[row + j] = up >= left ? up : left;
            }
          }
        }
        // pltrdy's _recon: equal words -> diagonal; T[i-1][j] > T[i][j-1] -> up; else left.
        let i = a;
        let j = b;
        let steps = 0;
        while (i > 0 && j > 0) {
          steps++;
          const xi = x[i - 1];
          if (xi === y[j - 1]) {
            if (stamp[xi] !== epoch) {
              stamp[xi] = epoch;
              llcs++;
            }
            i--;
            j--;
          } else if (t[(i - 1) * w + j] > t[i * w + j - 1]) i--;
          else j--;
        }
        if (steps >= PLTRDY_RECURSION_LIMIT_STEPS) this.lastWouldOverflow = true;
      }
    }
    const r = llcs / ref.distinctWords;
    const p = llcs / hyp.distinctWords;
    return 2.0 * ((p * r) / (p + r + 1e-8));
  }
}

/** Convenience: ROUGE-L F of two strings, KILT semantics. */
export function rougeL(hypothesis: string, reference: string): number {
  const vocab = new Vocabulary();
  const h = prepareRougeText(hypothesis, vocab);
  const r = prepareRougeText(reference, vocab);
  return new RougeScorer().score(h, r, vocab.size);
}
