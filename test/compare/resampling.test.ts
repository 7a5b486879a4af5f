// Randomization and bootstrap: the fast implementations equal straightforward ones drawing the same
// seeded random numbers, the randomization p-value approaches the exact one, and corrections follow
// their definitions.
import { describe, expect, it } from "vitest";
import { adjustPValues } from "../../src/compare/corrections.js";
import { bootstrapMeans, percentileInterval, quantileSorted, randomizationTest } from "../../src/compare/resampling.js";
import { seededRandom } from "../../src/util/random.js";

function sample(n: number, seed: number, p: number): Float64Array {
  const r = seededRandom(seed);
  return Float64Array.from({ length: n }, () => (r() < p ? 1 : Math.round(r() * 4) / 8));
}

/** One permutation at a time, one bit per query: query q is flipped by bit 8(q/8 mod 4) + q mod 8 of word ⌊q/32⌋. */
function naiveRandomization(a: Float64Array, b: Float64Array, permutations: number, seed: number): number {
  const n = a.length;
  const d = a.map((x, i) => x - b[i]);
  const words = Math.ceil(Math.ceil(n / 8) / 4);
  const observed = Math.abs(d.reduce((s, x) => s + x, 0));
  const scale = d.reduce((s, x) => s + Math.abs(x), 0);
  const rand = seededRandom(seed);
  let extreme = 0;
  for (let p = 0; p < permutations; p++) {
    const w = Array.from({ length: words }, () => (rand() * 4294967296) >>> 0);
    let s = 0;
    for (let q = 0; q < n; q++) s += (w[q >> 5] >>> (q & 31)) & 1 ? -d[q] : d[q];
    if (Math.abs(s) >= observed - 1e-9 * scale) extreme++;
  }
  return (extreme + 1) / (permutations + 1);
}

describe("Fisher's randomization test", () => {
  it("equals one-bit-per-query sign flips from the same seed", () => {
    for (const n of [1, 7, 8, 37, 300]) {
      const a = sample(n, n, 0.4);
      const b = sample(n, n + 1000, 0.35);
      const r = randomizationTest(a, b, { permutations: 3000, seed: 7 });
      expect(r.pvalue, `n=${n}`).toBe(naiveRandomization(a, b, 3000, 7));
      expect(r.pvalue).toBe((r.atLeastAsExtreme + 1) / 3001);
    }
  });
  it("approaches the exact p-value of all 2^n sign flips", () => {
    const a = Float64Array.from([0.9, 0.8, 0.75, 0.6, 0.5, 0.9, 0.3, 0.7, 0.65, 0.8, 0.2, 0.55]);
    const b = Float64Array.from([0.7, 0.8, 0.5, 0.65, 0.3, 0.6, 0.35, 0.4, 0.6, 0.5, 0.25, 0.5]);
    const d = a.map((x, i) => x - b[i]);
    const obs = Math.abs(d.reduce((s, x) => s + x, 0));
    let count = 0;
    for (let mask = 0; mask < 4096; mask++) {
      let s = 0;
      for (let i = 0; i < 12; i++) s += (mask >> i) & 1 ? -d[i] : d[i];
      if (Math.abs(s) >= obs - 1e-12) count++;
    }
    const exact = count / 4096;
    const r = randomizationTest(a, b, { permutations: 200_000, seed: 1 });
    expect(Math.abs(r.pvalue - exact)).toBeLessThan(0.002);
  });
  it("identical runs: p = 1; the seed matters, the same seed repeats", () => {
    const a = sample(500, 3, 0.5);
    expect(randomizationTest(a, a).pvalue).toBe(1);
    const b = sample(500, 4, 0.45);
    expect(randomizationTest(a, b, { seed: 5 }).pvalue).toBe(randomizationTest(a, b, { seed: 5 }).pvalue);
  });
});

describe("paired bootstrap", () => {
  it("equals resampling query by query from the same seed", () => {
    const cols = [sample(101, 1, 0.3), sample(101, 2, 0.6)];
    const got = bootstrapMeans(cols, { samples: 200, seed: 9 });
    const rand = seededRandom(9);
    for (let s = 0; s < 200; s++) {
      const sums = [0, 0];
      for (let i = 0; i < 101; i++) {
        const q = Math.floor(rand() * 101);
        sums[0] += cols[0][q];
        sums[1] += cols[1][q];
      }
      expect(got[0][s]).toBe(sums[0] / 101);
      expect(got[1][s]).toBe(sums[1] / 101);
    }
  });
  it("percentile interval interpolates as NumPy's percentile", () => {
    expect(quantileSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileSorted([10, 20, 30, 40, 50], 0.975)).toBe(49);
    const iv = percentileInterval(Float64Array.from([5, 1, 4, 2, 3]), 0.5);
    expect(iv).toEqual({ low: 2, high: 4 });
  });
});

describe("corrections", () => {
  const p = [0.01, 0.04, 0.03, 0.005];
  const close = (got: number[], want: number[]) => got.forEach((g, i) => expect(g).toBeCloseTo(want[i], 15));
  it("Bonferroni, Holm, Benjamini-Hochberg", () => {
    close(adjustPValues(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02]);
    close(adjustPValues(p, "holm"), [0.03, 0.06, 0.06, 0.02]);
    close(adjustPValues(p, "bh"), [0.02, 0.04, 0.04, 0.02]);
    expect(adjustPValues(p, "none")).toEqual(p);
  });
  it("NaN stays NaN and is not counted; results are capped at 1", () => {
    const got = adjustPValues([0.5, NaN, 0.6], "bonferroni");
    expect(got[0]).toBe(1);
    expect(got[1]).toBeNaN();
    expect(adjustPValues([0.02, NaN], "holm")[0]).toBe(0.02);
  });
});
