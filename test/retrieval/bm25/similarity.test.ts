// Lucene 8.7 BM25Similarity arithmetic: SmallFloat length bytes and scores, checked against values
// printed by Lucene 8.7 (SmallFloat.intToByte4/byte4ToInt; Bm25Bench on a four-document corpus).
import { describe, expect, it } from "vitest";
import { averageLength, byte4ToInt, idf, intToByte4, LENGTH_TABLE, normInverseCache, scoreOf, termWeight, tfNorm } from "../../../src/retrieval/bm25/similarity.js";

describe("SmallFloat length bytes", () => {
  it("encodes and decodes lengths like Lucene", () => {
    // [length, byte, decoded length] from Lucene 8.7.
    const lucene: [number, number, number][] = [
      [0, 0, 0], [1, 1, 1], [23, 23, 23], [24, 24, 24], [25, 25, 25], [31, 31, 31], [32, 32, 32], [40, 40, 40], [100, 57, 96],
      [101, 57, 96], [120, 60, 120], [128, 61, 128], [255, 70, 248], [1000, 87, 984], [65535, 135, 61464], [1048576, 167, 983064],
      [2147483647, 255, 2013265944],
    ];
    for (const [len, byte, back] of lucene) {
      expect(intToByte4(len)).toBe(byte);
      expect(byte4ToInt(byte)).toBe(back);
    }
    expect(LENGTH_TABLE[255]).toBe(2013265920); // 2013265944 as a float
    expect(() => intToByte4(-1)).toThrow(RangeError);
  });
});

describe("BM25 score", () => {
  it("computes Lucene's score by hand for one posting", () => {
    // Corpus of 4 documents, 13 terms; "cat" in 3 of them. Document 0 has 3 terms, tf(cat) = 1.
    const w = termWeight(1, idf(3, 4));
    expect(w).toBe(Math.fround(Math.log(1 + 1.5 / 3.5)));
    const avgdl = averageLength(13, 4);
    expect(avgdl).toBe(3.25);
    const cache = normInverseCache(0.9, 0.4, avgdl);
    // 1 / (0.9 * (0.6 + 0.4 * 3 / 3.25)) = 1.1463845
    expect(cache[3]).toBeCloseTo(1 / (0.9 * (0.6 + (0.4 * 3) / 3.25)), 6);
    // w - w / (1 + x): 0.35667494 * (1 - 1 / 2.1463845) = 0.19050017, Lucene's exact float.
    expect(scoreOf(w, tfNorm(1, cache[3]))).toBe(Math.fround(0.19050017));
    // Same corpus, document 1: tf(cat) = 2, 3 terms. Lucene: 0.24835427.
    expect(scoreOf(w, tfNorm(2, cache[3]))).toBe(Math.fround(0.24835427));
    // k1 = 1.2, b = 0.75 (Lucene: 0.16739257 and 0.2278513).
    const c2 = normInverseCache(1.2, 0.75, avgdl);
    expect(scoreOf(w, tfNorm(1, c2[3]))).toBe(Math.fround(0.16739257));
    expect(scoreOf(w, tfNorm(2, c2[3]))).toBe(Math.fround(0.2278513));
  });

  it("has no (k1 + 1) factor and grows with tf towards the weight", () => {
    const w = termWeight(1, idf(1, 1000));
    const cache = normInverseCache(0.9, 0.4, 100);
    const s1 = scoreOf(w, tfNorm(1, cache[byteFor(100)]));
    const s1000 = scoreOf(w, tfNorm(1000, cache[byteFor(100)]));
    expect(s1).toBeLessThan(s1000);
    expect(s1000).toBeLessThan(w);
    expect(s1000).toBeGreaterThan(w * 0.99);
  });

  it("weights a repeated query term by its count", () => {
    expect(termWeight(2, idf(3, 4))).toBe(Math.fround(2 * idf(3, 4)));
  });
});

function byteFor(len: number): number {
  return intToByte4(len);
}
