// A deterministic generator of realistic embedding sets for bench:dense-scale, readable by row range
// (a VectorSource), so 22.2M × 768 vectors stream into a build without sitting on disk:
//   - anisotropic: a shared mean direction (real sentence embeddings share one: random pairs have a
//     positive mean cosine) and a decaying per-dimension spectrum;
//   - clustered with heavy-tailed cluster sizes: row i's cluster is drawn from a Zipf(1.1) law over
//     n/43 clusters by a hash of i;
//   - queries are noisy neighbours of passages (a passage vector plus fresh noise), not copies.
// Gaussians come from a table of 65,536 standard normal quantiles indexed by a xorshift stream.
// `stats` gives the statistics compared with the real USE-lite SQuAD vectors (bench/dense-calibrate.mjs);
// bench/dense-data-stats.mjs compares the PCA spectrum and the local intrinsic dimensionality.
// Two settings (`setting`, SETTINGS below; bench:dense-scale's --setting): "default", today's vectors,
// byte for byte, and "calibrated", whose spectrum and intrinsic dimensionality match USE lite's too.

const TABLE = (() => {
  // inverse normal CDF (Acklam) at the midpoints of 65,536 equal-probability bins
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const inv = (p) => {
    if (p < 0.02425) {
      const q = Math.sqrt(-2 * Math.log(p));
      return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - 0.02425) return -inv(1 - p);
    const q = p - 0.5;
    const r = q * q;
    return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  };
  const t = new Float32Array(65536);
  for (let i = 0; i < 65536; i++) t[i] = inv((i + 0.5) / 65536);
  return t;
})();

function hash32(x) {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Adds `scale[d] · s · N(0,1)` to out[o + d] for every d, from the stream seeded by `seed`. */
function addNoise(out, o, dim, seed, scale, s) {
  let x = hash32(seed) | 1;
  for (let d = 0; d < dim; d++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[o + d] += scale[d] * s * TABLE[x & 0xffff];
  }
}

function normalize(out, o, dim) {
  let n = 0;
  for (let d = 0; d < dim; d++) n += out[o + d] * out[o + d];
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  for (let d = 0; d < dim; d++) out[o + d] *= s;
}

/** Generator settings ("default" matches USE-lite SQuAD's cosines, "calibrated" its spectrum and intrinsic dimensionality too). */
//   Calibrated (bench/dense-calibrate.mjs, 2,067 paragraphs and 414 questions) against USE lite over the
//   SQuAD dev paragraphs: mean cosine of random passage pairs 0.268 (USE lite 0.276), of a query to its
//   own passage 0.558 (0.552), a query's top-1 0.558 (0.590) and top-10 0.484 (0.493). A cluster stands for
//   an article's passages (43 on average, as the 48 SQuAD articles have); the query is mostly noise (its
//   own passage is near, but so are its cluster's other passages), as real questions are. The first
//   generator (clusters of 200, queries at cosine 0.876 of their passage) was far easier than real data.
//   "calibrated" (bench/dense-data-stats.mjs): the default's covariance spectrum is far flatter than USE
//   lite's and its local intrinsic dimensionality (Levina–Bickel MLE, k = 20) far higher (at 2,067 rows:
//   61 against 10.5). Its spread decays as (1 + d/16)^-2.3 (fitted to USE lite's shares of variance in the
//   top 10, 50, 100, 200 components: 0.505, 0.865, 0.943, 0.979), the clusters spread less (0.5), and
//   runs of 4 consecutive rows share an offset (0.7: an article's neighbouring paragraphs), which brings
//   the intrinsic dimensionality down to USE lite's (10.7); the cosines stay USE lite's (2,000 questions:
//   pairs 0.272 (USE lite 0.272), query to passage 0.554 (0.550), top-1 0.603 (0.594), top-10 0.500 (0.509)).
export const SETTINGS = {
  default: { clusterSize: 43, meanWeight: 0.5, spread: 0.9, noise: 0.5, queryNoise: 1.5, tau: 32, beta: 1 },
  calibrated: { clusterSize: 43, meanWeight: 0.57, spread: 0.5, noise: 0.5, queryNoise: 1.5, tau: 16, beta: 2.3, groupSize: 4, groupNoise: 0.7 },
};

export function generator({ count, dim = 768, seed = 1, setting = "default", ...given }) {
  if (!Object.hasOwn(SETTINGS, setting)) throw new Error(`setting: ${JSON.stringify(setting)}; expected ${Object.keys(SETTINGS).join(", ")}`);
  const p = { ...SETTINGS[setting] };
  for (const [k, v] of Object.entries(given)) if (v !== undefined) p[k] = v;
  const { clusterSize, meanWeight, spread, noise, queryNoise, tau, beta, groupSize, groupNoise } = p;
  const clusters = Math.max(1, Math.round(count / clusterSize));
  const scale = new Float32Array(dim);
  // the per-dimension spread: variance (1 + d/tau)^-beta (the default's 1/√(1 + d/32) computed as it always was)
  for (let d = 0; d < dim; d++) scale[d] = beta === 1 ? 1 / Math.sqrt(1 + d / tau) : (1 + d / tau) ** (-beta / 2);
  let ss = 0;
  for (let d = 0; d < dim; d++) ss += scale[d] * scale[d];
  for (let d = 0; d < dim; d++) scale[d] /= Math.sqrt(ss); // a noise vector has norm ≈ 1
  const mean = new Float32Array(dim);
  addNoise(mean, 0, dim, seed * 7 + 3, new Float32Array(dim).fill(1), 1);
  normalize(mean, 0, dim);
  // Zipf(1.1) cumulative weights over clusters, for the cluster of a row
  const cdf = new Float64Array(clusters);
  let acc = 0;
  for (let j = 0; j < clusters; j++) cdf[j] = acc += 1 / (j + 1) ** 1.1;
  for (let j = 0; j < clusters; j++) cdf[j] /= acc;
  const clusterOf = (i) => {
    const u = hash32(i * 2 + seed * 0x9e3779b1) / 4294967296;
    let lo = 0, hi = clusters - 1;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (cdf[m] < u) lo = m + 1;
      else hi = m;
    }
    // clusters are shuffled so that big ones are not all alike
    return hash32(lo + seed * 131) % clusters;
  };
  const centres = new Float32Array(clusters * dim);
  for (let j = 0; j < clusters; j++) {
    for (let d = 0; d < dim; d++) centres[j * dim + d] = meanWeight * mean[d];
    addNoise(centres, j * dim, dim, 0x51ed + j * 2 + seed * 1000003, scale, spread);
  }
  // with groupSize, runs of groupSize consecutive rows (an article's neighbouring paragraphs) share their
  // cluster and a group offset of spread groupNoise, each row adding its own noise on top
  const row = (out, o, i) => {
    const c = groupSize === undefined ? clusterOf(i) : clusterOf(Math.floor(i / groupSize));
    for (let d = 0; d < dim; d++) out[o + d] = centres[c * dim + d];
    if (groupSize !== undefined) addNoise(out, o, dim, 0x6a09e667 ^ (Math.floor(i / groupSize) * 2 + 1) ^ seed, scale, groupNoise);
    addNoise(out, o, dim, 0x2545f491 ^ (i * 2 + 1) ^ seed, scale, noise);
    normalize(out, o, dim);
  };
  return {
    name: setting === "default" ? `synthetic(${count}×${dim}, seed ${seed})` : `synthetic ${setting}(${count}×${dim}, seed ${seed})`,
    count,
    dim,
    read(start, n) {
      const out = new Float32Array(n * dim);
      for (let r = 0; r < n; r++) row(out, r * dim, start + r);
      return out;
    },
    close() {},
    /** Query j: a noisy neighbour of passage row `target(j)`. */
    target: (j) => hash32(j * 7919 + seed * 17 + 5) % count,
    queries(nq) {
      const out = new Float32Array(nq * dim);
      for (let j = 0; j < nq; j++) {
        row(out, j * dim, this.target(j));
        addNoise(out, j * dim, dim, 0x3c6ef372 ^ (j * 2 + 1) ^ (seed * 31), scale, queryNoise);
        normalize(out, j * dim, dim);
      }
      return out;
    },
  };
}

/** Statistics compared with real embeddings: mean cosine of random pairs, of a query to its passage, and the share of variance in the top 10% of dimensions' principal spread (approximated per coordinate). */
export function stats(vectors, dim, queries, targetsOf) {
  const n = vectors.length / dim;
  let pair = 0;
  const pairs = Math.min(20000, n * 4);
  let x = 12345;
  for (let t = 0; t < pairs; t++) {
    x = hash32(x + t);
    const a = x % n;
    const b = hash32(x) % n;
    let s = 0;
    for (let d = 0; d < dim; d++) s += vectors[a * dim + d] * vectors[b * dim + d];
    pair += s / pairs;
  }
  let qp = 0;
  const nq = queries ? queries.length / dim : 0;
  for (let j = 0; j < nq; j++) {
    const p = targetsOf(j);
    let s = 0;
    for (let d = 0; d < dim; d++) s += queries[j * dim + d] * vectors[p * dim + d];
    qp += s / nq;
  }
  return { randomPairCosine: pair, queryToPassageCosine: nq ? qp : null };
}
