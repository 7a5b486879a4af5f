// RaBitQ codes (src/retrieval/dense/codes/rabitq.ts) beyond the code-type contract: the rotation is
// orthogonal; the estimator is unbiased and its error bound holds on random data (a property test over
// many vector–query pairs, in 128 and 768 dimensions, the second padded and mixed by the Kac step); the
// bound's pruning never drops one of the k best of the probed lists; a quantizer.bin that does not fit is
// refused.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Rotation, paddedDim, rotationSigns } from "../../../src/retrieval/dense/rotation.js";
import { RABITQ_EPSILON, RabitqCodec, rabitqCodes } from "../../../src/retrieval/dense/codes/rabitq.js";
import { Quantizer } from "../../../src/retrieval/dense/quantizer.js";
import { layout, memorySource } from "./codes/contract.js";
import { seededRandom } from "../../../src/util/random.js";
import { clustered, rng } from "./clustered.js";

/** Standard normal values from a seeded uniform stream (Box–Muller). */
function gaussians(n: number, seed: number): Float32Array {
  const r = seededRandom(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const u = Math.max(1e-12, r());
    const v = r();
    const m = Math.sqrt(-2 * Math.log(u));
    out[i] = m * Math.cos(2 * Math.PI * v);
    if (i + 1 < n) out[i + 1] = m * Math.sin(2 * Math.PI * v);
  }
  return out;
}

const dot = (a: Float32Array, ao: number, b: Float32Array, bo: number, n: number): number => {
  let s = 0;
  for (let d = 0; d < n; d++) s += a[ao + d] * b[bo + d];
  return s;
};

describe("the rotation", () => {
  for (const dim of [64, 128, 768]) {
    it(`is orthogonal in ${dim} dimensions (columns orthonormal to 1e-5)`, () => {
      const rot = new Rotation(dim, rotationSigns(dim, 11));
      const cols: Float32Array[] = [];
      const e = new Float32Array(dim);
      for (let i = 0; i < dim; i++) {
        e.fill(0);
        e[i] = 1;
        cols.push(rot.apply(e, 0, dim, new Float32Array(dim)).slice());
      }
      let worst = 0;
      for (let i = 0; i < dim; i += 7)
        for (let j = 0; j < dim; j++) worst = Math.max(worst, Math.abs(dot(cols[i], 0, cols[j], 0, dim) - (i === j ? 1 : 0)));
      expect(worst).toBeLessThan(1e-5);
      // and it mixes: no column keeps its weight on one coordinate
      for (const c of cols) expect(Math.max(...Array.from(c, Math.abs))).toBeLessThan(0.5);
    });
  }

  it("pads to whole 64-dimension groups and refuses other sizes", () => {
    expect([1, 64, 65, 300, 768, 769].map(paddedDim)).toEqual([64, 64, 128, 320, 768, 832]);
    expect(() => new Rotation(100, new Float32Array(400))).toThrow("a rotation needs a positive multiple of 64 dimensions, not 100");
    expect(() => new Rotation(64, new Float32Array(100))).toThrow("rotation signs: 100 values are not whole rounds of 64");
  });
});

describe("the estimator", () => {
  for (const dim of [128, 768]) {
    it(`is unbiased and within its error bound in ${dim} dimensions (4,000 pairs)`, () => {
      const codec = new RabitqCodec(dim, rotationSigns(paddedDim(dim), 5));
      const pairs = 4000;
      const xs = gaussians(pairs * dim, 1);
      const qs = gaussians(pairs * dim, 2);
      const code = new Uint8Array(codec.codeBytes);
      const rot = new Float32Array(paddedDim(dim));
      let outside = 0;
      let outsidePaper = 0;
      let sumErr = 0;
      let sumSq = 0;
      let sumBound = 0;
      for (let i = 0; i < pairs; i++) {
        code.fill(0);
        const p = codec.encodeResidual(xs, i * dim, code, 0, rot);
        const { rq, norm } = codec.rotateQuery(qs, i * dim);
        let s = 0;
        for (let d = 0; d < paddedDim(dim); d++) s += code[d >> 3] & (1 << (d & 7)) ? rq[d] : -rq[d];
        const est = p.factor * s;
        const truth = dot(xs, i * dim, qs, i * dim, dim);
        const bound = RABITQ_EPSILON * norm * p.error;
        if (Math.abs(est - truth) > bound) outside++;
        if (Math.abs(est - truth) > 1.9 * norm * p.error) outsidePaper++;
        sumErr += est - truth;
        sumSq += (est - truth) ** 2;
        sumBound += bound;
      }
      const sd = Math.sqrt(sumSq / pairs);
      // E is the error's scale: the paper's ε₀ = 1.9 leaves out about what a normal deviation's 1.9 σ does
      // (5.7%), the pruning's ε₀ = 3.5 under a quarter of a percent
      expect(outsidePaper / pairs).toBeGreaterThan(0.03);
      expect(outsidePaper / pairs).toBeLessThan(0.09);
      expect(outside / pairs).toBeLessThan(0.0025);
      // unbiased: the mean error is within three standard errors of zero
      expect(Math.abs(sumErr / pairs)).toBeLessThan((3 * sd) / Math.sqrt(pairs));
      // and the bound is not vacuous: on average within five standard deviations of the error
      expect(sumBound / pairs).toBeLessThan(5 * sd);
    });
  }

  it("a zero residual has no factor and no error", () => {
    const codec = new RabitqCodec(64, rotationSigns(64, 1));
    expect(codec.encodeResidual(new Float32Array(64), 0, new Uint8Array(codec.codeBytes), 0, new Float32Array(64))).toMatchObject({ factor: 0, error: 0 });
  });
});

describe("pruning by the error bound", () => {
  const DIM = 128;
  const N = 4000;
  const xs = clustered(N, DIM, 20, 9);
  const q = Quantizer.train(xs.subarray(0, 3000 * DIM), DIM, { quantize: "rabitq", k1: 4, k2: 4 }, N);
  const lists = q.assign(xs);
  const { offsets, codes: laid, order: rowAt } = layout(q, xs);
  const opened = q.codes.openLists(memorySource(laid, offsets, q.codeBytes, 1), q);

  it("keeps every one of the k best of the probed lists, and drops candidates that cannot be", () => {
    const r = rng(4);
    let dropped = 0;
    for (let t = 0; t < 40; t++) {
      const row = Math.floor((r() + 0.5) * N) % N;
      const qs = new Float32Array(DIM);
      for (let d = 0; d < DIM; d++) qs[d] = xs[row * DIM + d] + 0.2 * r();
      const probe = Int32Array.from({ length: 4 }, (_, j) => (lists[row] + j * 3) % q.lists);
      let total = 0;
      for (const l of probe) total += offsets[l + 1] - offsets[l];
      const k = 10;
      const refine = Math.min(total - 1, 200);
      const all = opened.candidates({ qs, qo: 0, lists: probe, total, refine, refineFactor: 1 });
      const pruned = opened.candidates({ qs, qo: 0, lists: probe, total, refine, refineFactor: 1, k });
      // a subset of the unpruned candidates
      const allSet = new Set(all);
      for (const p of pruned) expect(allSet.has(p)).toBe(true);
      // the true k best of the probed lists (exact inner products) that the estimate shortlisted are all kept
      const exact = Array.from(probe).flatMap((l) => Array.from({ length: offsets[l + 1] - offsets[l] }, (_, j) => offsets[l] + j));
      exact.sort((a, b) => dot(xs, rowAt[b] * DIM, qs, 0, DIM) - dot(xs, rowAt[a] * DIM, qs, 0, DIM));
      const prunedSet = new Set(pruned);
      for (const p of exact.slice(0, k)) if (allSet.has(p)) expect(prunedSet.has(p)).toBe(true);
      // and what was dropped is truly below the k-th best
      const kth = dot(xs, rowAt[exact[k - 1]] * DIM, qs, 0, DIM);
      for (const p of all) if (!prunedSet.has(p)) expect(dot(xs, rowAt[p] * DIM, qs, 0, DIM)).toBeLessThan(kth);
      dropped += all.length - pruned.length;
    }
    // the bound prunes (in 128 dimensions the estimates are loose; more are dropped in 768)
    expect(dropped).toBeGreaterThan(100);
  });
});

describe("quantizer.bin", () => {
  const tmp = mkdtempSync(join(tmpdir(), "tartan-rabitq-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("holds the rotation's signs; a header that does not fit the dimensions is refused", () => {
    const xs = clustered(500, 96, 5, 3);
    const q = Quantizer.train(xs, 96, { quantize: "rabitq", k1: 2, k2: 2 }, 500);
    expect(q.codes.header).toEqual({ padDim: 128, rounds: 4 });
    expect(q.codes.stored.length).toBe(512);
    q.save(join(tmp, "quantizer.bin"), "b1");
    expect(Array.from(Quantizer.load(join(tmp, "quantizer.bin"), "b1").codes.stored)).toEqual(Array.from(q.codes.stored));
    expect(() => rabitqCodes.load(96, { padDim: 96, rounds: 4 }, q.codes.stored)).toThrow("rabitq: quantizer.bin's padDim 96 and rounds 4 do not fit 96 dimensions");
    expect(() => new RabitqCodec(2100, rotationSigns(2112, 1))).toThrow("rabitq: 2100 dimensions; the fast-scan kernel takes at most 2048");
  });
});
