// Inputs of the WikiReading classifiers (paper §3.1.1): words of the document (its first 300) and of
// the property, lower-cased and split at anything not a letter, mark or digit; the vocabulary of the
// N_w most frequent words; bag-of-words document ⊕ property vectors of size 2·N_w, each half scaled
// to unit length; the N most frequent answers as the classes.

export const DOCUMENT_WORDS = 300;

/** Lower-cased words of tokens (or of whitespace-split text): runs of letters, marks and digits. */
export function wordsOf(tokens: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of tokens) for (const w of t.toLowerCase().split(/[^\p{L}\p{M}\p{N}]+/u)) if (w.length > 0) out.push(w);
  return out;
}

/** The first `DOCUMENT_WORDS` words of a document. */
export function documentWords(tokens: readonly string[], limit = DOCUMENT_WORDS): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    for (const w of t.toLowerCase().split(/[^\p{L}\p{M}\p{N}]+/u)) {
      if (w.length === 0) continue;
      out.push(w);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

/** Counts of strings, and the `n` most frequent (count descending, then code-unit order). */
export class Counter {
  readonly counts = new Map<string, number>();
  add(s: string, k = 1): void {
    this.counts.set(s, (this.counts.get(s) ?? 0) + k);
  }
  top(n: number): string[] {
    return [...this.counts.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, n)
      .map(([s]) => s);
  }
}

/** A word → index map. */
export class Vocabulary {
  readonly index = new Map<string, number>();
  constructor(readonly words: readonly string[]) {
    words.forEach((w, i) => this.index.set(w, i));
  }
  get size(): number {
    return this.words.length;
  }
}

/** Document ⊕ property bag of words: indices [0, N_w) for the document, [N_w, 2N_w) for the property; each half L2-normalized binary. */
export function bagOfWords(docWords: readonly string[], propWords: readonly string[], vocab: Vocabulary): { idx: Int32Array; val: Float64Array } {
  const d = new Set<number>();
  for (const w of docWords) {
    const i = vocab.index.get(w);
    if (i !== undefined) d.add(i);
  }
  const p = new Set<number>();
  for (const w of propWords) {
    const i = vocab.index.get(w);
    if (i !== undefined) p.add(i + vocab.size);
  }
  const idx = new Int32Array(d.size + p.size);
  const val = new Float64Array(idx.length);
  let k = 0;
  const dv = d.size ? 1 / Math.sqrt(d.size) : 0;
  const pv = p.size ? 1 / Math.sqrt(p.size) : 0;
  for (const i of [...d].sort((a, b) => a - b)) {
    idx[k] = i;
    val[k++] = dv;
  }
  for (const i of [...p].sort((a, b) => a - b)) {
    idx[k] = i;
    val[k++] = pv;
  }
  return { idx, val };
}
