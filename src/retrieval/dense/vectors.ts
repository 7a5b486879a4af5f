// Vector helpers the encoders and the dense index share: rows scaled to unit length. A leaf module, so
// the encoders (./use-lite.ts, ./onnx.ts, ./openai.ts) do not import ./encoder.ts, which loads them.

/** Scales each `dim`-long row of `m` to unit L2 length in place (rows of zeros are left alone). */
export function normalizeRows(m: Float32Array, dim: number): Float32Array {
  if (dim <= 0 || m.length % dim !== 0) throw new Error(`matrix of ${m.length} values is not a whole number of ${dim}-d rows`);
  for (let o = 0; o < m.length; o += dim) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += m[o + d] * m[o + d];
    if (s === 0) continue;
    const inv = 1 / Math.sqrt(s);
    for (let d = 0; d < dim; d++) m[o + d] *= inv;
  }
  return m;
}
