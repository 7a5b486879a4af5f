// Lucene 8.7's BM25Similarity, bit for bit: document lengths stored in one byte (SmallFloat.intToByte4),
// idf = ln(1 + (N - df + 0.5) / (df + 0.5)), a 256-entry cache of 1 / (k1 * (1 - b + b * len / avgdl)),
// and score = w - w / (1 + tf * cache[norm]) with w = boost * idf, all in 32-bit float arithmetic
// (Math.fround at every step, as the JVM rounds each float operation). No (k1 + 1) factor: Lucene 8
// dropped it (LUCENE-8563; it does not change rankings).

const f = Math.fround;

/** Byte values below this stand for themselves (SmallFloat.NUM_FREE_VALUES in Lucene 8). */
const NUM_FREE_VALUES = 24;

function longToInt4(i: number): number {
  const numBits = 32 - Math.clz32(i);
  if (numBits < 4) return i;
  const shift = numBits - 4;
  return ((i >>> shift) & 0x07) | ((shift + 1) << 3);
}

function int4ToLong(i: number): number {
  const bits = i & 0x07;
  const shift = (i >>> 3) - 1;
  return shift === -1 ? bits : (bits | 0x08) * 2 ** shift;
}

/** SmallFloat.intToByte4: a document length (number of indexed terms) as the unsigned norm byte. */
export function intToByte4(i: number): number {
  if (i < 0 || !Number.isInteger(i) || i > 0x7fffffff) throw new RangeError(`length ${i} out of range`);
  return i < NUM_FREE_VALUES ? i : NUM_FREE_VALUES + longToInt4(i - NUM_FREE_VALUES);
}

/** SmallFloat.byte4ToInt: the length a norm byte stands for. */
export function byte4ToInt(b: number): number {
  return b < NUM_FREE_VALUES ? b : NUM_FREE_VALUES + int4ToLong(b - NUM_FREE_VALUES);
}

/** BM25Similarity.LENGTH_TABLE: the length of each norm byte, as a float. */
export const LENGTH_TABLE: Float32Array = Float32Array.from({ length: 256 }, (_, i) => byte4ToInt(i));

/** idf of a term in `docFreq` of `docCount` documents (float). */
export function idf(docFreq: number, docCount: number): number {
  return f(Math.log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5)));
}

/** avgdl = sumTotalTermFreq / docCount (float). */
export function averageLength(sumTotalTermFreq: number, docCount: number): number {
  return f(sumTotalTermFreq / docCount);
}

/** The scorer's cache: 1 / (k1 * ((1 - b) + b * LENGTH_TABLE[i] / avgdl)) for each norm byte i (float). */
export function normInverseCache(k1: number, b: number, avgdl: number): Float32Array {
  const k = f(k1);
  const bb = f(b);
  const oneMinusB = f(1 - bb);
  const cache = new Float32Array(256);
  for (let i = 0; i < 256; i++) cache[i] = f(1 / f(k * f(oneMinusB + f(f(bb * LENGTH_TABLE[i]) / avgdl))));
  return cache;
}

/** The term weight w = boost * idf (float); a query term repeated n times has boost n. */
export function termWeight(boost: number, termIdf: number): number {
  return f(f(boost) * termIdf);
}

/** x = tf * normInverse (float): the score grows with x, so a posting list's largest x bounds its scores. */
export function tfNorm(tf: number, normInverse: number): number {
  return f(tf * normInverse);
}

/** BM25Scorer.score: w - w / (1 + x) with x = tf * normInverse (float). */
export function scoreOf(weight: number, x: number): number {
  return f(weight - f(weight / f(1 + x)));
}
