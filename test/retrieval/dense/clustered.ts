// Test helper: seeded unit vectors, plain or clustered as dense-retrieval embeddings are (shared by the
// HNSW, compressed-index and vector-file tests).

import { normalizeRows } from "../../../src/retrieval/dense/encoder.js";

/** A seeded generator of values in [-0.5, 0.5). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296 - 0.5;
  };
}

/** `n` seeded random unit vectors (no clusters), row-major. */
export function unitVectors(n: number, dim: number, seed: number): Float32Array {
  return normalizeRows(Float32Array.from({ length: n * dim }, rng(seed)), dim);
}

/** `n` unit vectors around `clusters` random centres (spread 0.5), as dense-retrieval embeddings are. */
export function clustered(n: number, dim: number, clusters: number, seed: number): Float32Array {
  const r = rng(seed);
  const centres = Float32Array.from({ length: clusters * dim }, r);
  const m = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const c = Math.floor((r() + 0.5) * clusters) % clusters;
    for (let d = 0; d < dim; d++) m[i * dim + d] = centres[c * dim + d] + 0.5 * r();
  }
  return normalizeRows(m, dim);
}
