import { describe, expect, it } from "vitest";
import { ExactIndex } from "../../../src/retrieval/dense/exact.js";
import { normalizeRows } from "../../../src/retrieval/dense/encoder.js";
import { dotF32, kernelBytes, localRangeSearcher, paddedDim } from "../../../src/retrieval/dense/simd.js";
import type { Hit } from "../../../src/retrieval/types.js";

/** Deterministic uniform numbers in [-0.5, 0.5). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296 - 0.5;
  };
}

function randomUnit(n: number, dim: number, seed: number): Float32Array {
  const r = rng(seed);
  return normalizeRows(Float32Array.from({ length: n * dim }, r), dim);
}

/** A plain loop over every row with the kernel's float32 arithmetic, sorted by score then unit. */
function bruteForce(m: Float32Array, qs: Float32Array, dim: number, k: number): Hit[][] {
  const n = m.length / dim;
  const out: Hit[][] = [];
  for (let q = 0; q < qs.length / dim; q++) {
    const all: Hit[] = [];
    for (let r = 0; r < n; r++) all.push({ unit: r, score: dotF32(m, r * dim, qs, q * dim, dim) });
    all.sort((a, b) => b.score - a.score || a.unit - b.unit);
    out.push(all.slice(0, k));
  }
  return out;
}

describe("WebAssembly SIMD kernel", () => {
  it("is valid WebAssembly", () => {
    expect(WebAssembly.validate(kernelBytes() as Uint8Array<ArrayBuffer>)).toBe(true);
  });

  it("gives dotF32's float32 sums bit for bit, padded dimensions included", () => {
    for (const dim of [1, 2, 3, 4, 5, 7, 8, 13, 384]) {
      const m = randomUnit(300, dim, dim);
      const qs = randomUnit(9, dim, 1000 + dim);
      const hits = localRangeSearcher(m, dim, 0)(qs, 9, 300);
      for (let q = 0; q < 9; q++) {
        for (let i = 0; i < 300; i++) {
          const { ids, scores } = hits;
          const unit = ids[q * 300 + i];
          expect(scores[q * 300 + i]).toBe(dotF32(m, unit * dim, qs, q * dim, dim));
        }
      }
    }
    expect(paddedDim(384)).toBe(384);
    expect(paddedDim(13)).toBe(16);
  });

  it("differs from a double-precision dot product only by float32 rounding", () => {
    const dim = 384;
    const m = randomUnit(50, dim, 5);
    const qs = randomUnit(1, dim, 6);
    for (let r = 0; r < 50; r++) {
      let d = 0;
      for (let j = 0; j < dim; j++) d += m[r * dim + j] * qs[j];
      expect(Math.abs(dotF32(m, r * dim, qs, 0, dim) - d)).toBeLessThan(1e-6);
    }
  });
});

describe("ExactIndex", () => {
  const dim = 37;
  const m = randomUnit(3001, dim, 42);
  const qs = randomUnit(70, dim, 43);
  const expected = bruteForce(m, qs, dim, 10);

  for (const threads of [0, 1, 2, 3]) {
    it(`equals brute force with ${threads} worker thread(s)`, async () => {
      const ix = new ExactIndex(m, dim, { threads });
      try {
        expect(await ix.search(qs, 10)).toEqual(expected);
        // one query at a time gives the same
        expect(await ix.search(qs.subarray(5 * dim, 6 * dim), 10)).toEqual([expected[5]]);
      } finally {
        await ix.close();
      }
    });
  }

  it("gives the same with the JavaScript kernel", async () => {
    const ix = new ExactIndex(m, dim, { threads: 2, noWasm: true });
    try {
      expect(await ix.search(qs, 10)).toEqual(expected);
    } finally {
      await ix.close();
    }
  });

  it("breaks ties by the lower row, across worker ranges too", async () => {
    // rows 1, 4, 7 and 9 equal the query exactly; the rest are orthogonal to it
    const d = 4;
    const rows = new Float32Array(10 * d);
    for (let r = 0; r < 10; r++) rows[r * d + ([1, 4, 7, 9].includes(r) ? 0 : 1 + (r % 3))] = 1;
    const q = Float32Array.from([1, 0, 0, 0]);
    for (const threads of [0, 2, 3]) {
      const ix = new ExactIndex(rows, d, { threads });
      const [hits] = await ix.search(q, 5);
      await ix.close();
      expect(hits.map((h) => h.unit)).toEqual([1, 4, 7, 9, 0]);
      expect(hits.map((h) => h.score)).toEqual([1, 1, 1, 1, 0]);
    }
  });

  it("returns every row when k exceeds them, and nothing for k = 0", async () => {
    const small = randomUnit(6, 8, 1);
    const q = randomUnit(2, 8, 2);
    const ix = new ExactIndex(small, 8, { threads: 2 });
    try {
      const all = await ix.search(q, 100);
      expect(all.map((h) => h.length)).toEqual([6, 6]);
      expect(all).toEqual(bruteForce(small, q, 8, 6));
      expect(await ix.search(q, 0)).toEqual([[], []]);
      expect(await ix.search(new Float32Array(0), 3)).toEqual([]);
      await expect(ix.search(new Float32Array(5), 3)).rejects.toThrow(/8-d/);
    } finally {
      await ix.close();
    }
  });

  it("finds the same top 10 as a double-precision scan on 384-d vectors", async () => {
    const d = 384;
    const big = randomUnit(5000, d, 7);
    const q = randomUnit(20, d, 8);
    const ix = new ExactIndex(big, d, { threads: 2 });
    const got = await ix.search(q, 10);
    await ix.close();
    for (let i = 0; i < 20; i++) {
      const scored: Hit[] = [];
      for (let r = 0; r < 5000; r++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += big[r * d + j] * q[i * d + j];
        scored.push({ unit: r, score: s });
      }
      scored.sort((a, b) => b.score - a.score || a.unit - b.unit);
      expect(got[i].map((h) => h.unit)).toEqual(scored.slice(0, 10).map((h) => h.unit));
      got[i].forEach((h, j) => expect(Math.abs(h.score - scored[j].score)).toBeLessThan(1e-6));
    }
  });
});
