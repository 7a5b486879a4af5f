// The paired Student t test and the Wilcoxon signed-rank test, with SciPy's exact semantics
// (`scipy.stats.ttest_rel`, `scipy.stats.wilcoxon` with its defaults: two-sided, zero_method "wilcox",
// no continuity correction, method "auto"), so their p-values equal SciPy's to 1e-12. The sums use
// NumPy's pairwise summation so the statistics agree with SciPy's to the last bit, too.

import { normalSf, studentTCdf } from "./distributions.js";

/** NumPy's pairwise summation (`np.add.reduce` on a contiguous float64 array). */
export function pairwiseSum(a: ArrayLike<number>, start = 0, n = a.length - start): number {
  if (n < 8) {
    let s = -0; // NumPy starts from -0.0 (so the sum of nothing, or of -0s, is -0)
    for (let i = 0; i < n; i++) s += a[start + i];
    return s;
  }
  if (n <= 128) {
    const r = [a[start], a[start + 1], a[start + 2], a[start + 3], a[start + 4], a[start + 5], a[start + 6], a[start + 7]];
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += a[start + i + j];
    let res = r[0] + r[1] + (r[2] + r[3]) + (r[4] + r[5] + (r[6] + r[7]));
    for (; i < n; i++) res += a[start + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(a, start, n2) + pairwiseSum(a, start + n2, n - n2);
}

/** The result of a paired t or Wilcoxon test. */
export interface TestResult {
  /** The test statistic as SciPy reports it (t; for Wilcoxon min(R+, R−)). */
  statistic: number;
  /** Two-sided p-value (NaN when undefined, e.g. all differences zero). */
  pvalue: number;
}

function differences(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  if (a.length !== b.length) throw new Error(`paired samples differ in length (${a.length} and ${b.length})`);
  const d = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) d[i] = a[i] - b[i];
  return d;
}

/** `scipy.stats.ttest_rel(a, b)`: t = mean(d) / √(var(d, ddof=1)/n), two-sided p from t with n−1 df. */
export function pairedTTest(a: ArrayLike<number>, b: ArrayLike<number>): TestResult & { df: number } {
  const d = differences(a, b);
  const n = d.length;
  if (n < 2) return { statistic: NaN, pvalue: NaN, df: n - 1 };
  const mean = pairwiseSum(d) / n;
  const dev = new Float64Array(n);
  for (let i = 0; i < n; i++) dev[i] = (d[i] - mean) * (d[i] - mean);
  const variance = (pairwiseSum(dev) / n) * (n / (n - 1));
  const t = mean / Math.sqrt(variance / n);
  const pvalue = Number.isNaN(t) ? NaN : 2 * studentTCdf(n - 1, -Math.abs(t));
  return { statistic: t, pvalue, df: n - 1 };
}

/** Average ranks (1-based) of the values; ties get the mean of their positions. */
export function averageRanks(values: ArrayLike<number>): { ranks: Float64Array; tieGroups: number[] } {
  const n = values.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => values[x] - values[y] || x - y);
  const ranks = new Float64Array(n);
  const tieGroups: number[] = [];
  for (let i = 0; i < n; ) {
    let j = i + 1;
    while (j < n && values[order[j]] === values[order[i]]) j++;
    const r = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) ranks[order[k]] = r;
    tieGroups.push(j - i);
    i = j;
  }
  return { ranks, tieGroups };
}

const wilcoxonPmfs = new Map<number, Float64Array>();

/** The exact null distribution of R+ for n untied, non-zero differences (SciPy's `_get_wilcoxon_distr`). */
export function wilcoxonPmf(n: number): Float64Array {
  let c = wilcoxonPmfs.get(n);
  if (c) return c;
  c = new Float64Array([1]);
  for (let k = 1; k <= n; k++) {
    const prev = c;
    c = new Float64Array((k * (k + 1)) / 2 + 1);
    const m = prev.length;
    for (let i = 0; i < m; i++) c[i] = prev[i] * 0.5;
    for (let i = 0; i < m; i++) c[c.length - m + i] += prev[i] * 0.5;
  }
  wilcoxonPmfs.set(n, c);
  return c;
}

function pmfSum(pmf: Float64Array, from: number, to: number): number {
  // NumPy's sum of a slice: pairwise
  const lo = Math.max(0, from);
  const hi = Math.min(pmf.length, to);
  return hi > lo ? pairwiseSum(pmf, lo, hi - lo) : 0;
}

/** How Wilcoxon's p-value is computed (as SciPy's `method`): the exact distribution, permutations, or the normal approximation. */
export type WilcoxonMethod = "exact" | "permutation" | "asymptotic";

/**
 * `scipy.stats.wilcoxon(a, b)` with its defaults: zero differences dropped ("wilcox"), no continuity
 * correction, and method "auto": the exact distribution when n ≤ 50 and there are neither ties nor
 * zeros; with ties or zeros an exact enumeration of all 2ⁿ sign flips when n ≤ 13, else the normal
 * approximation with the tie correction (also for n > 50).
 */
export function wilcoxonTest(a: ArrayLike<number>, b: ArrayLike<number>): TestResult & { method: WilcoxonMethod; z?: number } {
  const d = differences(a, b);
  const n = d.length;
  if (n === 0) return { statistic: NaN, pvalue: NaN, method: "asymptotic" };
  const nonZero: number[] = [];
  for (const x of d) if (x !== 0 && !Number.isNaN(x)) nonZero.push(x);
  const nZero = n - nonZero.length;
  const count = nonZero.length;
  const abs = nonZero.map(Math.abs);
  const { ranks, tieGroups } = averageRanks(abs);
  // SciPy sums with NumPy (pairwise) over all n entries, zeros contributing 0
  const rPlus = pairwiseSum(signedRankTerms(d, nonZero, ranks, 1));
  const rMinus = pairwiseSum(signedRankTerms(d, nonZero, ranks, -1));
  const hasTies = tieGroups.some((g) => g > 1);
  const statistic = Math.min(rPlus, rMinus);
  let method: WilcoxonMethod;
  if (n > 50) method = "asymptotic";
  else if (!hasTies && nZero === 0) method = "exact";
  else if (n <= 13) method = "permutation";
  else method = "asymptotic";

  if (method === "exact") {
    const pmf = wilcoxonPmf(count);
    const mean = (count * (count + 1)) / 4;
    const cdf = (k: number) => (k <= mean ? pmfSum(pmf, 0, k + 1) : 1 - pmfSum(pmf, k + 1, pmf.length));
    const sf = (k: number) => (k <= mean ? pmfSum(pmf, k, pmf.length) : 1 - pmfSum(pmf, 0, k));
    const p = 2 * Math.min(sf(Math.floor(rPlus)), cdf(Math.ceil(rPlus)));
    return { statistic, pvalue: Math.min(1, Math.max(0, p)), method };
  }
  if (method === "permutation") {
    // all 2ⁿ sign assignments of the n differences (zeros stay zero); the statistic is R+
    const signedRanks = new Float64Array(n);
    let k = 0;
    for (let i = 0; i < n; i++) if (d[i] !== 0) signedRanks[i] = ranks[k++];
    const gamma = Math.abs(EPS100 * rPlus);
    const total = 2 ** n;
    let less = 0;
    let greater = 0;
    const terms = new Float64Array(n);
    for (let mask = 0; mask < total; mask++) {
      for (let i = 0; i < n; i++) {
        // SciPy flips the sign of element i when bit i is set; a positive entry adds its rank
        const positive = d[i] !== 0 && (d[i] > 0) !== ((mask >> i) & 1) > 0;
        terms[i] = positive ? signedRanks[i] : 0;
      }
      const r = pairwiseSum(terms);
      if (r <= rPlus + gamma) less++;
      if (r >= rPlus - gamma) greater++;
    }
    const p = Math.min(less / total, greater / total) * 2;
    return { statistic, pvalue: Math.min(1, Math.max(0, p)), method };
  }
  const mn = count * (count + 1) * 0.25;
  let se = count * (count + 1) * (2 * count + 1);
  let tieCorrect = 0;
  for (const g of tieGroups) tieCorrect += g * g * g - g;
  se = Math.sqrt((se - tieCorrect / 2) / 24);
  const z = (rPlus - mn) / se;
  const pvalue = 2 * normalSf(Math.abs(z));
  return { statistic, pvalue, method, z: -Math.abs(z) };
}

const EPS100 = 2.220446049250313e-16 * 100;

/** Per-entry contributions rank·[sign matches] over all n entries, in input order (zeros give 0). */
function signedRankTerms(d: Float64Array, nonZero: number[], ranks: Float64Array, sign: 1 | -1): Float64Array {
  const out = new Float64Array(d.length);
  let k = 0;
  for (let i = 0; i < d.length; i++) {
    if (d[i] === 0 || Number.isNaN(d[i])) continue;
    if ((nonZero[k] > 0 ? 1 : -1) === sign) out[i] = ranks[k];
    k++;
  }
  return out;
}
