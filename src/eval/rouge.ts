// ROUGE-L F as KILT computes it: pltrdy `rouge` 1.0.1, summary level, exclusive mode
// (kilt-spec.md §4.5). Sentences split on every ".", words split on single spaces, the union of the
// word *types* of one LCS per (reference sentence, hypothesis sentence) pair, with pltrdy's
// backtracking tie-break. Only ROUGE-L is computed, on interned word ids and bit-parallel LCS rows (32
// cells a word), in bounded memory (long sentence pairs are traced in checkpointed segments, same
// path), and the backtrack is
// iterative (pltrdy's is recursive and crashes past ~985 steps; we report that instead).

import { isPythonSpace } from "../records/python-str.js";

/** FNV-1a over UTF-16 code units: `h = imul(h ^ unit, FNV_PRIME)` from `FNV_OFFSET`. */
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

/**
 * Word interning shared by the texts of one datapoint, so sentences become Int32Arrays. Words are
 * hashed from the text's code units where they lie ({@link idOf}) into an open-addressing table of ids,
 * so a word already seen costs no substring and no Map entry; the table is emptied by bumping a
 * generation stamp, not reallocated, per datapoint.
 */
export class Vocabulary {
  /** Per id: the word and its hash. */
  private words: string[] = [];
  private hashes = new Int32Array(64);
  private count = 0;
  /** Slots of the hash table: an id, valid where `slotGen` is the current generation. */
  private slots = new Int32Array(256);
  private slotGen = new Int32Array(256);
  private gen = 1;
  /** Per word id, the last text that used it (counts a text's distinct words without a set). */
  private used = new Int32Array(64);
  private text = 0;
  /** Word ids of the sentence being split (scratch). */
  private sentence = new Int32Array(64);
  get size(): number {
    return this.count;
  }
  /** Forgets every word. */
  clear(): void {
    this.count = 0;
    if (++this.gen === 0x7fffffff) {
      this.slotGen.fill(0);
      this.gen = 1;
    }
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
    return this.idOf(word, 0, word.length);
  }
  /** The id of the word `text[start, end)` (code units), added when new. */
  idOf(text: string, start: number, end: number): number {
    let h = FNV_OFFSET;
    for (let k = start; k < end; k++) h = Math.imul(h ^ text.charCodeAt(k), FNV_PRIME);
    return this.idOfHashed(text, start, end, h);
  }
  /** `idOf` for a caller that has hashed the word's code units already (FNV-1a: `FNV_OFFSET`, `FNV_PRIME`). */
  idOfHashed(text: string, start: number, end: number, h: number): number {
    const len = end - start;
    const slots = this.slots;
    const slotGen = this.slotGen;
    const gen = this.gen;
    const mask = slots.length - 1;
    let i = (h ^ (h >>> 16)) & mask;
    while (slotGen[i] === gen) {
      const id = slots[i];
      if (this.hashes[id] === h) {
        const w = this.words[id];
        if (w.length === len) {
          let k = 0;
          while (k < len && w.charCodeAt(k) === text.charCodeAt(start + k)) k++;
          if (k === len) return id;
        }
      }
      i = (i + 1) & mask;
    }
    const id = this.count++;
    slotGen[i] = gen;
    slots[i] = id;
    if (id === this.hashes.length) {
      const b = new Int32Array(id * 2);
      b.set(this.hashes);
      this.hashes = b;
    }
    this.hashes[id] = h;
    this.words[id] = len === text.length ? text : text.slice(start, end);
    if (this.count * 2 > slots.length) this.grow();
    return id;
  }
  /** Doubles the hash table (at half full) and re-inserts the current words. */
  private grow(): void {
    const size = this.slots.length * 2;
    const slots = new Int32Array(size);
    const slotGen = new Int32Array(size);
    const mask = size - 1;
    for (let id = 0; id < this.count; id++) {
      const h = this.hashes[id];
      let i = (h ^ (h >>> 16)) & mask;
      while (slotGen[i] === 1) i = (i + 1) & mask;
      slotGen[i] = 1;
      slots[i] = id;
    }
    this.slots = slots;
    this.slotGen = slotGen;
    this.gen = 1;
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
        let h = FNV_OFFSET;
        for (; k < j; k++) {
          const c = text.charCodeAt(k);
          if (isPythonSpace(c)) break;
          h = Math.imul(h ^ c, FNV_PRIME);
        }
        const id = vocab.idOfHashed(text, w, k, h);
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

/**
 * LCS cells held in one block by default: rows are bit vectors (one bit a cell, 32 cells a word), so
 * this is 16 MiB of words. Larger sentence pairs are traced in parts.
 */
export const DEFAULT_ROUGE_BLOCK_CELLS = 1 << 27;

/** Set bits of a 32-bit word. */
function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** T[i][j] of a one-word row (`RougeScorer.small`): j minus the set bits of `row` below bit j (j <= 32). */
function rowValue(row: number, j: number): number {
  return j - popcount(j === 32 ? row : row & ((1 << j) - 1));
}

/**
 * Reusable buffers for the LCS rows and the union of LCS word types.
 *
 * pltrdy backtracks one LCS through the full (m+1)×(n+1) table. Here a row of the table is a bit vector
 * (Hyyrö's bit-parallel LCS, after Allison and Dix: bit j-1 of row i is set when T[i][j] = T[i][j-1];
 * a row follows from the one above in one pass of additions over its words, 32 cells a word, and a row
 * whose word does not occur in the other sentence is the row above), and the backtrack reads T[i][j] as
 * the zero bits of row i before column j, kept up to date step by step. The rows run over the longer
 * sentence and the columns over the shorter; a pair over the block budget is cut into row segments whose
 * boundary rows are kept as checkpoints (one forward pass), and the backtrack walks the segments from the
 * last, recomputing each from its checkpoint (recursively while a segment is still over budget). The
 * backtrack visits the same cells with the same values and makes the same choices, so the word types
 * found are pltrdy's; time is about m×n/32 word operations, memory the block budget / 8 bytes plus
 * O(short sentence × depth).
 */
export class RougeScorer {
  private table = new Uint32Array(1 << 12);
  private ones = new Uint32Array(1 << 6).fill(0xffffffff);
  private mask = new Uint32Array(1 << 6);
  private stamp = new Int32Array(1 << 12);
  /** Per word id, its first position in the column sentence (-1: none); `next` chains the later ones. */
  private head = new Int32Array(1 << 12).fill(-1);
  private next = new Int32Array(1 << 10);
  /** `small`: per word id, its positions in the column sentence as bits, valid where maskStamp is maskEpoch. */
  private colMask = new Uint32Array(1 << 12);
  private maskStamp = new Int32Array(1 << 12);
  private maskEpoch = 0;
  private epoch = 0;
  private llcs = 0;
  private steps = 0;
  private readonly blockCells: number;
  /** Set when the last score needed a backtrack longer than pltrdy's recursion can go. */
  lastWouldOverflow = false;

  /** `blockCells`: the most LCS cells held at once (tests set it small to exercise the segments). */
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
      const ms = new Int32Array(s.length);
      ms.set(this.maskStamp);
      this.maskStamp = ms;
      this.colMask = new Uint32Array(s.length);
      const h = new Int32Array(s.length).fill(-1);
      h.set(this.head);
      this.head = h;
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
    if (n <= 32 && (m + 1) * 32 <= this.blockCells) return this.small(rows, cols, transposed, m, n);
    const words = (n + 31) >>> 5;
    if (this.ones.length < words) this.ones = new Uint32Array(words).fill(0xffffffff);
    if (this.mask.length < words) this.mask = new Uint32Array(words);
    if (this.next.length < n) this.next = new Int32Array(Math.max(n, this.next.length * 2));
    // Positions of each word in the column sentence, ascending: head[w], next[head[w]], …
    for (let j = n - 1; j >= 0; j--) {
      this.next[j] = this.head[cols[j]];
      this.head[cols[j]] = j;
    }
    try {
      this.trace(rows, cols, transposed, this.ones, 0, m, n);
    } finally {
      for (let j = 0; j < n; j++) this.head[cols[j]] = -1;
    }
  }

  /**
   * A pair whose shorter sentence has at most 32 words, held whole: `block` with one word a row, the
   * match mask of each column word built once, and T read from the row word directly (same cells, same
   * choices, same steps; most sentence pairs are this small).
   */
  private small(R: Int32Array, C: Int32Array, upOnTie: boolean, m: number, n: number): void {
    if (++this.maskEpoch === 0x7fffffff) {
      this.maskStamp.fill(0);
      this.maskEpoch = 1;
    }
    const epoch = this.maskEpoch;
    const maskStamp = this.maskStamp;
    const colMask = this.colMask;
    for (let j = 0; j < n; j++) {
      const w = C[j];
      if (maskStamp[w] !== epoch) {
        maskStamp[w] = epoch;
        colMask[w] = 0;
      }
      colMask[w] |= 1 << j;
    }
    if (this.table.length < m + 1) this.table = new Uint32Array(Math.max(m + 1, this.table.length * 2));
    const t = this.table;
    // Rows: Hyyrö's V' = (V + (V & M)) | (V & ~M), carries past bit 31 dropped as in `advance`.
    let v = 0xffffffff;
    t[0] = v;
    for (let i = 1; i <= m; i++) {
      const x = R[i - 1];
      if (maskStamp[x] === epoch) {
        const mk = colMask[x];
        v = ((v + ((v & mk) >>> 0)) | (v & ~mk)) >>> 0;
      }
      t[i] = v;
    }
    // T[i][j] = j - (set bits of row i below bit j) (`rowValue`); T[i][j] - T[i][j-1] = bit j-1 of row i, inverted.
    let i = m;
    let j = n;
    let steps = 0;
    let cur = rowValue(t[i], j);
    let up = rowValue(t[i - 1], j);
    while (i > 0 && j > 0) {
      steps++;
      const xi = R[i - 1];
      if (xi === C[j - 1]) {
        this.hit(xi);
        cur = up - (((t[i - 1] >>> (j - 1)) & 1) ^ 1);
        i--;
        j--;
        if (i > 0) up = rowValue(t[i - 1], j);
      } else {
        const left = cur - (((t[i] >>> (j - 1)) & 1) ^ 1);
        if (upOnTie ? up >= left : up > left) {
          cur = up;
          i--;
          if (i > 0) up = rowValue(t[i - 1], j);
        } else {
          cur = left;
          up -= ((t[i - 1] >>> (j - 1)) & 1) ^ 1;
          j--;
        }
      }
    }
    this.steps += steps;
  }

  /**
   * Row `x` of the table from the row above, in place: `row[off..off+words)` (columns 1..c1). Hyyrö's
   * V' = (V + (V & M)) | (V & ~M), M the positions of x among the first c1 columns; only the words from
   * the first match until the carry dies are touched.
   */
  private advance(row: Uint32Array, off: number, x: number, c1: number): void {
    const p = this.head[x];
    if (p < 0 || p >= c1) return;
    const mask = this.mask;
    let last = 0;
    for (let q = p; q >= 0 && q < c1; q = this.next[q]) {
      last = q >>> 5;
      mask[last] |= 1 << (q & 31);
    }
    const words = (c1 + 31) >>> 5;
    let carry = 0;
    for (let k = p >>> 5; k < words; k++) {
      const mk = mask[k];
      if (mk === 0 && carry === 0) {
        if (k > last) break;
        continue;
      }
      mask[k] = 0;
      const v = row[off + k];
      const sum = v + ((v & mk) >>> 0) + carry;
      carry = sum > 0xffffffff ? 1 : 0;
      row[off + k] = (sum >>> 0) | (v & ~mk);
    }
  }

  /** T[row][j]: the zero bits of the row (at `off`) before column j. */
  private value(row: Uint32Array, off: number, j: number): number {
    const full = j >>> 5;
    let ones = 0;
    for (let k = 0; k < full; k++) ones += popcount(row[off + k]);
    const rest = j & 31;
    if (rest) ones += popcount(row[off + full] & ((1 << rest) - 1));
    return j - ones;
  }

  /**
   * Backtracks from (r1, c1) through rows r0..r1 of the table, given row r0 (`top`, its bit vector).
   * Returns the column where the path reaches row r0, or -1 when it ends (column 0) before.
   */
  private trace(R: Int32Array, C: Int32Array, upOnTie: boolean, top: Uint32Array, r0: number, r1: number, c1: number): number {
    const words = (c1 + 31) >>> 5;
    const w = words * 32;
    const height = r1 - r0;
    if ((height + 1) * w <= this.blockCells || height === 1) return this.block(R, C, upOnTie, top, r0, r1, c1);
    // Checkpoint rows: segments of at most `step` rows, as many as fit a quarter of the budget.
    const perBlock = Math.max(1, Math.floor(this.blockCells / w) - 1);
    const parts = Math.max(2, Math.min(Math.ceil(height / perBlock), Math.floor(this.blockCells / 4 / w), 256));
    const step = Math.ceil(height / parts);
    const nCp = Math.ceil(height / step) - 1;
    const cps = new Uint32Array(nCp * words);
    const cur = top.slice(0, words);
    for (let r = r0 + 1, k = 0; k < nCp; r++) {
      this.advance(cur, 0, R[r - 1], c1);
      if ((r - r0) % step === 0) cps.set(cur, words * k++);
    }
    let c = c1;
    for (let k = nCp; k >= 0 && c > 0; k--) {
      const s = r0 + k * step;
      const e = Math.min(r1, s + step);
      const segTop = k === 0 ? top : cps.subarray(words * (k - 1), words * k);
      c = this.trace(R, C, upOnTie, segTop, s, e, c);
    }
    return c;
  }

  /** Fills rows r0..r1 (columns 0..c1) from `top` and backtracks them (the rows fit the budget). */
  private block(R: Int32Array, C: Int32Array, upOnTie: boolean, top: Uint32Array, r0: number, r1: number, c1: number): number {
    const words = (c1 + 31) >>> 5;
    const height = r1 - r0;
    const need = (height + 1) * words;
    if (this.table.length < need) this.table = new Uint32Array(Math.max(need, Math.min(this.blockCells >>> 5, this.table.length * 2)));
    const t = this.table;
    t.set(top.subarray(0, words), 0);
    for (let i = 1; i <= height; i++) {
      t.copyWithin(i * words, (i - 1) * words, i * words);
      this.advance(t, i * words, R[r0 + i - 1], c1);
    }
    // h(row, j) = T[row][j] - T[row][j-1]: 1 where bit j-1 is clear.
    const h = (i: number, j: number) => ((t[i * words + ((j - 1) >>> 5)] >>> ((j - 1) & 31)) & 1) ^ 1;
    let i = height;
    let j = c1;
    let steps = 0;
    let cur = this.value(t, i * words, j);
    let up = this.value(t, (i - 1) * words, j);
    while (i > 0 && j > 0) {
      steps++;
      const xi = R[r0 + i - 1];
      if (xi === C[j - 1]) {
        this.hit(xi);
        cur = up - h(i - 1, j);
        i--;
        j--;
        if (i > 0) up = this.value(t, (i - 1) * words, j);
      } else {
        const left = cur - h(i, j);
        if (upOnTie ? up >= left : up > left) {
          cur = up;
          i--;
          if (i > 0) up = this.value(t, (i - 1) * words, j);
        } else {
          cur = left;
          up -= h(i - 1, j);
          j--;
        }
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
