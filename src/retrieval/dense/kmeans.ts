// k-means on a sample of vectors, as the compressed dense index trains its quantizers: spherical k-means
// (unit centroids, assignment by the largest inner product through the SIMD kernel of ./simd.ts) for the
// coarse lists, and Euclidean k-means for product-quantization codebooks (as the inner product with the
// centroid extended by −‖c‖²/2, the same kernel). Deterministic: seeded initial picks, ties to the lower
// centroid.

import { localRangeSearcher } from "./simd.js";
import { seededRandom, shuffle } from "../../util/random.js";

/** Nearest of `centroids` (`k × dim`) for each of `xs` (`n × dim`) by inner product. */
export function assignByDot(centroids: Float32Array, dim: number, xs: Float32Array): Int32Array {
  const n = xs.length / dim;
  const search = localRangeSearcher(centroids, dim, 0);
  return search(xs, n, 1).ids;
}

/** Nearest of `centroids` for each of `xs` by Euclidean distance (argmax x·c − ‖c‖²/2). */
export function assignByL2(centroids: Float32Array, dim: number, xs: Float32Array): Int32Array {
  const k = centroids.length / dim;
  const n = xs.length / dim;
  const ext = new Float32Array(k * (dim + 1));
  for (let c = 0; c < k; c++) {
    let nn = 0;
    for (let d = 0; d < dim; d++) {
      const v = centroids[c * dim + d];
      ext[c * (dim + 1) + d] = v;
      nn += v * v;
    }
    ext[c * (dim + 1) + dim] = -nn / 2;
  }
  const xe = new Float32Array(n * (dim + 1));
  for (let i = 0; i < n; i++) {
    xe.set(xs.subarray(i * dim, (i + 1) * dim), i * (dim + 1));
    xe[i * (dim + 1) + dim] = 1;
  }
  return assignByDot(ext, dim + 1, xe);
}

/** Options of {@link kmeans}. */
export interface KmeansOptions {
  iterations?: number;
  seed?: number;
  /** "dot": unit centroids, assignment by inner product (spherical); "l2": plain means, Euclidean. */
  metric: "dot" | "l2";
}

/** k centroids (`k × dim`) of the rows of `xs`; with fewer rows than k, the missing centroids are copies of rows. */
export function kmeans(xs: Float32Array, dim: number, k: number, o: KmeansOptions): Float32Array {
  const n = xs.length / dim;
  const rand = seededRandom(o.seed ?? 1234);
  const centroids = new Float32Array(k * dim);
  if (n === 0) return centroids;
  // initial centroids: distinct rows picked at random (all rows, cycled, when there are fewer than k)
  const order = shuffle(Array.from({ length: n }, (_, i) => i), rand);
  for (let c = 0; c < k; c++) centroids.set(xs.subarray(order[c % n] * dim, (order[c % n] + 1) * dim), c * dim);
  if (n <= k) return centroids;
  const sums = new Float64Array(k * dim);
  const counts = new Int32Array(k);
  for (let it = 0; it < (o.iterations ?? 8); it++) {
    const a = o.metric === "dot" ? assignByDot(centroids, dim, xs) : assignByL2(centroids, dim, xs);
    sums.fill(0);
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      const c = a[i];
      counts[c]++;
      const so = c * dim;
      const xo = i * dim;
      for (let d = 0; d < dim; d++) sums[so + d] += xs[xo + d];
    }
    for (let c = 0; c < k; c++) {
      if (counts[c] === 0) {
        // an empty cluster takes a random row
        const r = Math.floor(rand() * n);
        centroids.set(xs.subarray(r * dim, (r + 1) * dim), c * dim);
        continue;
      }
      let norm = 0;
      for (let d = 0; d < dim; d++) {
        const v = sums[c * dim + d] / counts[c];
        centroids[c * dim + d] = v;
        norm += v * v;
      }
      if (o.metric === "dot" && norm > 0) {
        const s = 1 / Math.sqrt(norm);
        for (let d = 0; d < dim; d++) centroids[c * dim + d] *= s;
      }
    }
  }
  return centroids;
}
