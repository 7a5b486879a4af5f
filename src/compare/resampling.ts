// Seeded resampling tests for paired per-query scores: Fisher's randomization test (sign-flip
// permutations of the paired differences) and the paired bootstrap (percentile confidence intervals
// and the shifted-null bootstrap test). Every random number comes from src/util/random.ts's mulberry32,
// so a seed gives the same result on every machine. The randomization test is the hot path of
// `tartan compare` (runs × permutations × queries): it draws one random bit per query and sums the
// flipped differences eight queries at a time through 256-entry tables of partial sums.

import { seededRandom } from "../util/random.js";

/** Sign flips of the randomization test by default. */
export const DEFAULT_PERMUTATIONS = 10_000;
/** Bootstrap samples by default. */
export const DEFAULT_SAMPLES = 10_000;
/** Seed of the resampling tests by default (results are reproducible). */
export const DEFAULT_SEED = 42;

/** Relative tolerance for "as extreme as observed": sums taken in another order round differently. */
const TIE_TOLERANCE = 1e-9;

/** Fisher's randomization test (sign flips of the paired differences). */
export interface RandomizationResult {
  /** Mean difference a − b. */
  difference: number;
  /** (b + 1) / (N + 1), b the permutations whose |mean difference| is at least the observed one. */
  pvalue: number;
  permutations: number;
  /** b in the formula above. */
  atLeastAsExtreme: number;
}

/** 32 random bits from the shared PRNG (it returns uint32 / 2³², so this is exact). */
function nextWord(rand: () => number): number {
  return (rand() * 4294967296) >>> 0;
}

/**
 * Fisher's randomization test of paired scores: under the null hypothesis each query's difference is
 * equally likely to have either sign. Two-sided; p = (b + 1)/(N + 1) (never 0).
 */
export function randomizationTest(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  options: { permutations?: number; seed?: number } = {},
): RandomizationResult {
  if (a.length !== b.length) throw new Error(`paired samples differ in length (${a.length} and ${b.length})`);
  const n = a.length;
  const permutations = options.permutations ?? DEFAULT_PERMUTATIONS;
  if (!Number.isInteger(permutations) || permutations < 1) throw new Error(`permutations must be a positive integer, got ${permutations}`);
  if (n === 0) return { difference: NaN, pvalue: NaN, permutations, atLeastAsExtreme: 0 };
  const blocks = Math.ceil(n / 8);
  // table[block*256 + mask] = Σ over the block's queries of (bit set ? −d : d)
  const table = new Float64Array(blocks * 256);
  let observed = 0;
  let scale = 0;
  for (let blk = 0; blk < blocks; blk++) {
    const base = blk * 256;
    const size = Math.min(8, n - blk * 8);
    for (let mask = 0; mask < 256; mask++) {
      let s = 0;
      for (let j = 0; j < size; j++) {
        const d = a[blk * 8 + j] - b[blk * 8 + j];
        s += (mask >> j) & 1 ? -d : d;
      }
      table[base + mask] = s;
    }
    observed += table[base];
    for (let j = 0; j < size; j++) scale += Math.abs(a[blk * 8 + j] - b[blk * 8 + j]);
  }
  const threshold = Math.abs(observed) - TIE_TOLERANCE * scale;
  // Permutations go in batches: their random words are drawn first (permutation after permutation,
  // so the stream does not depend on the batch size), then summed block by block, so each block's
  // 2 kB table stays in the cache while a whole batch reads it. Each permutation's sum still runs
  // over the blocks in order: the result is the same as summing one permutation at a time.
  const rand = seededRandom(options.seed ?? DEFAULT_SEED);
  const wordsPer = Math.ceil(blocks / 4);
  const batch = Math.max(1, Math.min(permutations, 2048));
  const words = new Uint32Array(batch * wordsPer);
  const sums = new Float64Array(batch);
  let extreme = 0;
  for (let done = 0; done < permutations; done += batch) {
    const size = Math.min(batch, permutations - done);
    for (let i = 0; i < size * wordsPer; i++) words[i] = nextWord(rand);
    sums.fill(0);
    for (let blk = 0; blk < blocks; blk++) {
      const base = blk * 256;
      const word = blk >> 2;
      const shift = 8 * (blk & 3);
      for (let p = 0; p < size; p++) sums[p] += table[base + ((words[p * wordsPer + word] >>> shift) & 255)];
    }
    for (let p = 0; p < size; p++) if (Math.abs(sums[p]) >= threshold) extreme++;
  }
  return { difference: observed / n, pvalue: (extreme + 1) / (permutations + 1), permutations, atLeastAsExtreme: extreme };
}

/** The q-quantile of sorted values, interpolated linearly between order statistics (NumPy's default). */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  const frac = pos - lo;
  return frac === 0 ? sorted[lo] : sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

/** A confidence interval. */
export interface Interval {
  low: number;
  high: number;
}

/** Percentile interval of bootstrap means: the (1−level)/2 and (1+level)/2 quantiles. */
export function percentileInterval(means: Float64Array, level: number): Interval {
  const sorted = Float64Array.from(means).sort();
  return { low: quantileSorted(sorted, (1 - level) / 2), high: quantileSorted(sorted, (1 + level) / 2) };
}

/**
 * The paired bootstrap: `samples` resamples of the n queries with replacement (the same resample for
 * every column, so differences between columns stay paired). Returns, per column, the mean of each
 * resample. Column j of resample s is Σ_i columns[j][idx_s(i)] / n.
 */
export function bootstrapMeans(
  columns: readonly ArrayLike<number>[],
  options: { samples?: number; seed?: number } = {},
): Float64Array[] {
  const samples = options.samples ?? DEFAULT_SAMPLES;
  if (!Number.isInteger(samples) || samples < 1) throw new Error(`samples must be a positive integer, got ${samples}`);
  const n = columns.length ? columns[0].length : 0;
  for (const c of columns) if (c.length !== n) throw new Error("bootstrap columns differ in length");
  const out = columns.map(() => new Float64Array(samples));
  if (n === 0) {
    for (const o of out) o.fill(NaN);
    return out;
  }
  // query-major layout: one resampled query's values for every column sit side by side
  const width = columns.length;
  const data = new Float64Array(n * width);
  columns.forEach((c, j) => {
    for (let i = 0; i < n; i++) data[i * width + j] = c[i];
  });
  const rand = seededRandom(options.seed ?? DEFAULT_SEED);
  const sums = new Float64Array(width);
  for (let s = 0; s < samples; s++) {
    sums.fill(0);
    for (let i = 0; i < n; i++) {
      const row = Math.floor(rand() * n) * width;
      for (let j = 0; j < width; j++) sums[j] += data[row + j];
    }
    for (let j = 0; j < width; j++) out[j][s] = sums[j] / n;
  }
  return out;
}

/** The paired bootstrap test: the mean difference, its p-value and percentile interval, and the number of samples. */
export interface BootstrapTestResult {
  difference: number;
  pvalue: number;
  interval: Interval;
  samples: number;
}

/**
 * The paired bootstrap test of a mean difference from resampled means of both columns (same resamples):
 * under the null the resampled differences are shifted to mean zero, so
 * p = (#{s : |m*_s − m| ≥ |m|} + 1)/(B + 1), m the observed mean difference and m*_s resample s's.
 * The interval is the percentile interval of m*.
 */
export function bootstrapTestFromMeans(
  meansA: Float64Array,
  meansB: Float64Array,
  observed: number,
  level = 0.95,
): BootstrapTestResult {
  const samples = meansA.length;
  const diffs = new Float64Array(samples);
  for (let s = 0; s < samples; s++) diffs[s] = meansA[s] - meansB[s];
  const threshold = Math.abs(observed) * (1 - TIE_TOLERANCE);
  let extreme = 0;
  for (let s = 0; s < samples; s++) if (Math.abs(diffs[s] - observed) >= threshold) extreme++;
  return { difference: observed, pvalue: (extreme + 1) / (samples + 1), interval: percentileInterval(diffs, level), samples };
}

/** The paired bootstrap test of a − b on its own (see bootstrapTestFromMeans). */
export function bootstrapTest(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  options: { samples?: number; seed?: number; level?: number } = {},
): BootstrapTestResult {
  if (a.length !== b.length) throw new Error(`paired samples differ in length (${a.length} and ${b.length})`);
  const [ma, mb] = bootstrapMeans([a, b], options);
  let observed = 0;
  for (let i = 0; i < a.length; i++) observed += a[i] - b[i];
  observed /= a.length;
  return bootstrapTestFromMeans(ma, mb, observed, options.level);
}
