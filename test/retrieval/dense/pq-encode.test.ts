// The PQ encoder's WebAssembly kernel against its JavaScript route and against a plain search for the
// nearest centroid: the same codes, ties to the lower centroid, for several sub-space sizes.

import { describe, expect, it } from "vitest";
import { PqEncoder } from "../../../src/retrieval/dense/pq-encode.js";
import { rng } from "./clustered.js";

/** The nearest centroid by Euclidean distance in float64, ties to the lower one (the reference). */
function nearest(r: Float64Array, cb: Float32Array, s: number, dsub: number): number {
  let best = Infinity;
  let arg = 0;
  for (let c = 0; c < 256; c++) {
    let d2 = 0;
    for (let d = 0; d < dsub; d++) d2 += (r[d] - cb[(s * 256 + c) * dsub + d]) ** 2;
    if (d2 < best) {
      best = d2;
      arg = c;
    }
  }
  return arg;
}

describe("PQ encoder", () => {
  for (const [dim, m] of [[32, 4], [48, 6], [64, 16], [24, 8]] as const) {
    it(`${dim} dimensions in ${m} sub-spaces: the kernel equals the JavaScript route and the nearest centroid`, () => {
      const dsub = dim / m;
      const next = rng(dim * 7 + m);
      const cb = Float32Array.from({ length: m * 256 * dsub }, () => next() - 0.5);
      // duplicated centroids: a tie that must go to the lower one (centroid 3 = centroid 200, 7 = 9)
      for (let s = 0; s < m; s++)
        for (const [a, b] of [[3, 200], [7, 9]])
          for (let d = 0; d < dsub; d++) cb[(s * 256 + b) * dsub + d] = cb[(s * 256 + a) * dsub + d];
      const lists = 3;
      const centroids = Float32Array.from({ length: lists * dim }, () => (next() - 0.5) * 0.2);
      const n = 700; // more than one kernel chunk
      const xs = new Float32Array(n * dim);
      const li = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        li[i] = i % lists;
        for (let d = 0; d < dim; d++) xs[i * dim + d] = centroids[li[i] * dim + d] + next() - 0.5;
        // rows that sit exactly on a duplicated centroid
        if (i % 50 === 0) for (let s = 0; s < m; s++) for (let d = 0; d < dsub; d++) xs[i * dim + s * dsub + d] = centroids[li[i] * dim + s * dsub + d] + cb[(s * 256 + (i % 100 === 0 ? 200 : 9)) * dsub + d];
      }
      const enc = new PqEncoder(dim, m, cb);
      const kernel = enc.encode(xs, li, centroids);
      expect(kernel).toEqual(enc.encodeJs(xs, li, centroids));
      expect(new PqEncoder(dim, m, cb, false).encode(xs, li, centroids)).toEqual(kernel);
      let agree = 0;
      const r = new Float64Array(dsub);
      for (let i = 0; i < n; i++)
        for (let s = 0; s < m; s++) {
          for (let d = 0; d < dsub; d++) r[d] = Math.fround(xs[i * dim + s * dsub + d] - centroids[li[i] * dim + s * dsub + d]);
          if (nearest(r, cb, s, dsub) === kernel[i * m + s]) agree++;
        }
      // float32 arithmetic may only swap near-ties with the float64 reference
      expect(agree / (n * m)).toBeGreaterThan(0.999);
      for (let i = 0; i < n; i += 50) for (let s = 0; s < m; s++) expect(kernel[i * m + s]).toBe(i % 100 === 0 ? 3 : 7);
    });
  }
});
