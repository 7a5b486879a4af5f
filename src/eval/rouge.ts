// ROUGE-L F as KILT computes it: pltrdy `rouge` 1.0.1, summary level, exclusive mode
// (kilt-spec.md §4.5). Sentences split on every ".", words split on single spaces, the union of the
// word *types* of one LCS per (reference sentence, hypothesis sentence) pair, with pltrdy's
// backtracking tie-break. Only ROUGE-L is computed, on interned word ids and typed arrays, in bounded
// memory (long sentence pairs are traced in checkpointed segments, same path), and the backtrack is
// iterative (pltrdy's is recursive and crashes past ~985 steps; we report that instead).

import { isPythonSpace } from "../records/python-str.js";

/** Word interning shared by the texts of one datapoint, so sentences become Int32Arrays. */
export class Vocabulary {
  private ids = new Map<string, number>();
  /** Per word id, the last text that used it (counts a text's distinct words without a set). */
  private used = new Int32Array(64);
  private text = 0;
  /** Word ids of the sentence being split (scratch). */
  private sentence = new Int32Array(64);
  get size(): number {
    return this.ids.size;
  }
  /**
   * Forgets every word. A fresh map, not `Map.prototype.clear`: V8 links a cleared table to its
   * successor, so once one table is promoted the chain keeps every later table alive through scavenges.
   */
  clear(): void {
    this.ids = new Map();
  }
  /** Starts counting the distinct words of a new text. */
  beginText(): void {
    if (++this.text === 0x7fffffff) {
      this.used.fill(0);
      this.text = 1;
    }
  }
  /** Marks word `id` used by the current text; true the first time. */
  firstUse(id: number): boolean {
    if (id >= this.used.length) {
      const u = new Int32Array(Math.max(id + 1, this.used.length * 2));
      u.set(this.used);
      this.used = u;
    }
    if (this.used[id] === this.text) return false;
    this.used[id] = this.text;
    return true;
  }
  /** Appends `id` to the sentence scratch at `at`; returns the new length. */
  pushWord(at: number, id: number): number {
    if (at === this.sentence.length) {
      const b = new Int32Array(at * 2);
      b.set(this.sentence);
      this.sentence = b;
    }
    this.sentence[at] = id;
    return at + 1;
  }
  /** A copy of the first `n` ids of the sentence scratch. */
  sentenceCopy(n: number): Int32Array {
    return this.sentence.slice(0, n);
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

/**
 * Splits like pltrdy: on ".", drop empty pieces, split each on runs of Python whitespace (a piece of
 * whitespace only is one empty word). One pass over the text's code units: every Python whitespace
 * character is in the BMP, so testing UTF-16 units equals the code-point split.
 */
export function prepareRougeText(text: string, vocab: Vocabulary): RougeText {
  const sentences: Int32Array[] = [];
  let distinctWords = 0;
  vocab.beginText();
  const n = text.length;
  let i = 0;
  while (i <= n) {
    let j = text.indexOf(".", i);
    if (j < 0) j = n;
    if (j > i) {
      let count = 0;
      let k = i;
      while (k < j) {
        while (k < j && isPythonSpace(text.charCodeAt(k))) k++;
        if (k === j) break;
        const w = k;
        while (k < j && !isPythonSpace(text.charCodeAt(k))) k++;
        const id = vocab.id(text.slice(w, k));
        count = vocab.pushWord(count, id);
        if (vocab.firstUse(id)) distinctWords++;
      }
      if (count === 0) {
        const id = vocab.id("");
        count = vocab.pushWord(0, id);
        if (vocab.firstUse(id)) distinctWords++;
      }
      sentences.push(vocab.sentenceCopy(count));
    }
    i = j + 1;
  }
  return { sentences, distinctWords };
}

/** The backtrack length at which pltrdy's recursive `_recon` exceeds Python's recursion limit (approx.). */
export const PLTRDY_RECURSION_LIMIT_STEPS = 985;

/** LCS cells filled in one block by default (16 MiB of Int32): larger sentence pairs are traced in parts. */
export const DEFAULT_ROUGE_BLOCK_CELLS = 1 << 22;

/**
 * Reusable buffers for the LCS tables and the union of LCS word types.
 *
 * pltrdy backtracks one LCS through the full (m+1)×(n+1) table; a sentence pair larger than the block
 * budget would need gigabytes (100,000 × 100,000 words: 40 GB). Here the table's rows run over the
 * longer sentence and its columns over the shorter; a pair over budget is cut into row segments whose
 * boundary rows are kept as checkpoints (one forward pass), and the backtrack walks the segments from the
 * last, recomputing each from its checkpoint (recursively while a segment is still over budget). The
 * backtrack visits the same cells with the same values and makes the same choices, so the word types
 * found are pltrdy's; memory is the block budget plus O(short sentence × depth).
 */
export class RougeScorer {
  private table = new Int32Array(1 << 16);
  private zeros = new Int32Array(1 << 10);
  private stamp = new Int32Array(1 << 12);
  private epoch = 0;
  private llcs = 0;
  private steps = 0;
  private readonly blockCells: number;
  /** Set when the last score needed a backtrack longer than pltrdy's recursion can go. */
  lastWouldOverflow = false;

  /** `blockCells`: the largest LCS table filled at once (tests set it small to exercise the segments). */
  constructor(options: { blockCells?: number } = {}) {
    this.blockCells = Math.max(4, options.blockCells ?? DEFAULT_ROUGE_BLOCK_CELLS);
  }

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
    this.epoch++;
    this.llcs = 0;
    for (const x of ref.sentences) {
      for (const y of hyp.sentences) {
        this.steps = 0;
        this.pair(x, y);
        if (this.steps >= PLTRDY_RECURSION_LIMIT_STEPS) this.lastWouldOverflow = true;
      }
    }
    const r = this.llcs / ref.distinctWords;
    const p = this.llcs / hyp.distinctWords;
    return 2.0 * ((p * r) / (p + r + 1e-8));
  }

  /** Marks a word of the LCS (the union counts each word type once per score). */
  private hit(w: number): void {
    if (this.stamp[w] !== this.epoch) {
      this.stamp[w] = this.epoch;
      this.llcs++;
    }
  }

  /**
   * One (reference sentence x, hypothesis sentence y) pair. pltrdy's `_recon` on T (rows over x):
   * equal words -> diagonal; T[i-1][j] > T[i][j-1] -> up; else left. With rows over y instead (the
   * transposed table) the same rule reads: up when up >= left, else left.
   */
  private pair(x: Int32Array, y: Int32Array): void {
    let a = x.length;
    let b = y.length;
    // A common suffix is pltrdy's first diagonal steps, whatever the rest of the table holds.
    while (a > 0 && b > 0 && x[a - 1] === y[b - 1]) {
      this.hit(x[a - 1]);
      this.steps++;
      a--;
      b--;
    }
    if (a === 0 || b === 0) return;
    const transposed = b > a;
    const rows = transposed ? y : x;
    const cols = transposed ? x : y;
    const m = transposed ? b : a;
    const n = transposed ? a : b;
    if (this.zeros.length < n + 1) this.zeros = new Int32Array(n + 1);
    this.trace(rows, cols, transposed, this.zeros, 0, m, n);
  }

  /**
   * Backtracks from (r1, c1) through rows r0..r1 of the table, given row r0 (`top`, columns 0..c1).
   * Returns the column where the path reaches row r0, or -1 when it ends (column 0) before.
   */
  private trace(R: Int32Array, C: Int32Array, upOnTie: boolean, top: Int32Array, r0: number, r1: number, c1: number): number {
    const w = c1 + 1;
    const height = r1 - r0;
    if ((height + 1) * w <= this.blockCells || height === 1) return this.block(R, C, upOnTie, top, r0, r1, c1);
    // Checkpoint rows: segments of at most `step` rows, as many as fit a quarter of the budget.
    const perBlock = Math.max(1, Math.floor(this.blockCells / w) - 1);
    const parts = Math.max(2, Math.min(Math.ceil(height / perBlock), Math.floor(this.blockCells / 4 / w), 256));
    const step = Math.ceil(height / parts);
    const nCp = Math.ceil(height / step) - 1;
    const cps = new Int32Array(nCp * w);
    let prev = new Int32Array(w);
    let cur = new Int32Array(w);
    prev.set(top.subarray(0, w));
    for (let r = r0 + 1, k = 0; k < nCp; r++) {
      const xr = R[r - 1];
      cur[0] = 0;
      for (let j = 1; j < w; j++) {
        if (xr === C[j - 1]) cur[j] = prev[j - 1] + 1;
        else {
          const up = prev[j];
          const left = cur[j - 1];
          cur[j] = up >= left ? up : left;
        }
      }
      const t = prev;
      prev = cur;
      cur = t;
      if ((r - r0) % step === 0) cps.set(prev, w * k++);
    }
    let c = c1;
    for (let k = nCp; k >= 0 && c > 0; k--) {
      const s = r0 + k * step;
      const e = Math.min(r1, s + step);
      const segTop = k === 0 ? top : cps.subarray(w * (k - 1), w * k);
      c = this.trace(R, C, upOnTie, segTop, s, e, c);
    }
    return c;
  }

  /** Fills rows r0..r1 (columns 0..c1) from `top` and backtracks them (the table fits the budget). */
  private block(R: Int32Array, C: Int32Array, upOnTie: boolean, top: Int32Array, r0: number, r1: number, c1: number): number {
    const w = c1 + 1;
    const height = r1 - r0;
    const cells = (height + 1) * w;
    if (this.table.length < cells) this.table = new Int32Array(Math.max(cells, Math.min(this.blockCells, this.table.length * 2)));
    const t = this.table;
    for (let j = 0; j < w; j++) t[j] = top[j];
    for (let i = 1; i <= height; i++) {
      const row = i * w;
      const prev = row - w;
      t[row] = 0;
      const xi = R[r0 + i - 1];
      for (let j = 1; j < w; j++) {
        if (xi === C[j - 1]) t[row + j] = t[prev + j - 1] + 1;
        else {
          const up = t[prev + j];
          const left = t[row + j - 1];
          t[row + j] = up >= left ? up : left;
        }
      }
    }
    let i = height;
    let j = c1;
    let steps = 0;
    while (i > 0 && j > 0) {
      steps++;
      const xi = R[r0 + i - 1];
      if (xi === C[j - 1]) {
        this.hit(xi);
        i--;
        j--;
      } else {
        const up = t[(i - 1) * w + j];
        const left = t[i * w + j - 1];
        if (upOnTie ? up >= left : up > left) i--;
        else j--;
      }
    }
    this.steps += steps;
    return j > 0 ? j : -1;
  }
}

/** Convenience: ROUGE-L F of two strings, KILT semantics. */
export function rougeL(hypothesis: string, reference: string): number {
  const vocab = new Vocabulary();
  const h = prepareRougeText(hypothesis, vocab);
  const r = prepareRougeText(reference, vocab);
  return new RougeScorer().score(h, r, vocab.size);
}
