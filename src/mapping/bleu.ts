// Sentence BLEU exactly as nltk's `sentence_bleu` computes it without smoothing (nltk ≥ 3.4 `method0`),
// and KILT's `get_bleu` wrapper around it (kilt-spec.md §8.3): modified n-gram precision with clipping,
// brevity penalty against the closest reference length, `math.fsum` of the weighted logs. A zero
// unigram count returns exactly 0; a zero count at a higher order makes nltk use sys.float_info.min as
// that precision (with a warning), so the score is tiny but positive (~1e-77 for BLEU-4). See docs/mapping.md.

import { pyStrip } from "../records/python-str.js";

/** Python's `sys.float_info.min`: what nltk's method0 puts in place of a zero precision. */
export const FLOAT_MIN = 2.2250738585072014e-308;

/**
 * Python's `math.fsum`: the correctly rounded sum of the values (Shewchuk's algorithm with CPython's
 * final half-even correction), so a port sums weighted logs to the same double as Python.
 */
export function fsum(values: readonly number[]): number {
  const partials: number[] = [];
  for (let x of values) {
    let i = 0;
    for (let j = 0; j < partials.length; j++) {
      let y = partials[j];
      if (Math.abs(x) < Math.abs(y)) {
        const t = x;
        x = y;
        y = t;
      }
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo !== 0) partials[i++] = lo;
      x = hi;
    }
    partials.length = i;
    partials.push(x);
  }
  let n = partials.length;
  if (n === 0) return 0;
  let hi = partials[--n];
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = partials[--n];
    hi = x + y;
    const yr = hi - x;
    lo = y - yr;
    if (lo !== 0) break;
  }
  if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
    const y = lo * 2;
    const x = hi + y;
    const yr = x - hi;
    if (y === yr) hi = x;
  }
  return hi;
}

// ---- Correctly rounded exp and log --------------------------------------------------------------
// V8's Math.exp and Math.log (fdlibm) differ from glibc's, which CPython uses, in the last bit for
// about 10% and 6% of arguments. Both libraries are within about half an ulp of the true value, so the
// correctly rounded result is what glibc returns (checked on 300,000 arguments, docs/mapping.md):
// these compute it in double-double arithmetic (~100 bits) and round once.

type DD = [number, number];

function twoSum(a: number, b: number): DD {
  const s = a + b;
  const bb = s - a;
  return [s, a - (s - bb) + (b - bb)];
}
function quickTwoSum(a: number, b: number): DD {
  const s = a + b;
  return [s, b - (s - a)];
}
function split(a: number): DD {
  const t = 134217729 * a;
  const hi = t - (t - a);
  return [hi, a - hi];
}
function twoProd(a: number, b: number): DD {
  const p = a * b;
  const [ah, al] = split(a);
  const [bh, bl] = split(b);
  return [p, ah * bh - p + ah * bl + al * bh + al * bl];
}
function ddAdd(a: DD, b: DD): DD {
  const [s, e0] = twoSum(a[0], b[0]);
  const [t, f] = twoSum(a[1], b[1]);
  const [s1, e1] = quickTwoSum(s, e0 + t);
  return quickTwoSum(s1, e1 + f);
}
function ddMul(a: DD, b: DD): DD {
  const [p, e] = twoProd(a[0], b[0]);
  return quickTwoSum(p, e + (a[0] * b[1] + a[1] * b[0]));
}
function ddMulD(a: DD, d: number): DD {
  const [p, e] = twoProd(a[0], d);
  return quickTwoSum(p, e + a[1] * d);
}
function ddDivD(a: DD, d: number): DD {
  const q = a[0] / d;
  const [p, e] = twoProd(q, d);
  return quickTwoSum(q, (a[0] - p - e + a[1]) / d);
}

/** ln 2 as a double-double. */
const LN2: DD = [0.6931471805599453, 2.3190468138462996e-17];

/** 2^k for an integer k in [-2044, 2046], as a factor applied in two exact steps. */
function scale2(x: number, k: number): number {
  const k1 = Math.trunc(k / 2);
  return x * 2 ** k1 * 2 ** (k - k1);
}

/** e^x as a double-double (before scaling to 2^k: returns [mantissa dd, k]). */
function expDD(x: number): [DD, number] {
  const k = Math.round(x / LN2[0]);
  let r = ddAdd([x, 0], ddMulD([-LN2[0], -LN2[1]], k));
  r = [r[0] / 256, r[1] / 256];
  // Taylor series by Horner: s = 1 + r/1 (1 + r/2 (1 + … (1 + r/12))); |r| < 0.0014, so the
  // first omitted term is below 1e-45 relative.
  let s: DD = [1, 0];
  for (let i = 12; i >= 1; i--) s = ddAdd([1, 0], ddDivD(ddMul(s, r), i));
  for (let i = 0; i < 8; i++) s = ddMul(s, s);
  return [s, k];
}

/** e^x correctly rounded (for results in the normal range, which BLEU's are). */
export function crExp(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x === 0) return 1;
  if (x > 709.8) return Infinity;
  if (x < -745.2) return 0;
  const [s, k] = expDD(x);
  return scale2(s[0] + s[1], k);
}

const SQRT2 = Math.SQRT2;
const view = new DataView(new ArrayBuffer(8));

/** ln x correctly rounded, for finite x > 0. */
export function crLog(x: number): number {
  if (!(x > 0) || x === Infinity) return Math.log(x);
  if (x === 1) return 0;
  let e = 0;
  let m = x;
  if (m < 2.2250738585072014e-308) {
    m *= 2 ** 54;
    e -= 54;
  }
  view.setFloat64(0, m);
  const hi = view.getUint32(0);
  const exp = ((hi >>> 20) & 0x7ff) - 1023;
  view.setUint32(0, (hi & 0x800fffff) | (1023 << 20));
  m = view.getFloat64(0);
  e += exp;
  if (m > SQRT2) {
    m /= 2;
    e++;
  }
  // One Newton step on y0 ≈ ln m: y = y0 + log1p(m·e^(−y0) − 1).
  const y0 = Math.log(m);
  const [s, k] = expDD(-y0);
  const t = ddAdd(ddMulD([scale2(s[0], k), scale2(s[1], k)], m), [-1, 0]);
  let y = ddAdd([y0, 0], t);
  y = ddAdd(y, [-(t[0] * t[0]) / 2, 0]);
  if (e !== 0) y = ddAdd(y, ddMulD(LN2, e));
  return y[0] + y[1];
}

/** nltk `brevity_penalty(closest_ref_len, hyp_len)`. */
export function brevityPenalty(refLen: number, hypLen: number): number {
  if (hypLen > refLen) return 1;
  if (hypLen === 0) return 0;
  return crExp(1 - refLen / hypLen);
}

/**
 * BLEU from clipped match counts: `matches[i]` and `totals[i]` are the numerator and the hypothesis
 * n-gram count for order i + 1 (the denominator is `max(1, total)`, as nltk's). `hypLen` and
 * `refLen` feed the brevity penalty.
 */
export function bleuFromCounts(
  matches: ArrayLike<number>,
  totals: ArrayLike<number>,
  hypLen: number,
  refLen: number,
  weights: readonly number[],
): number {
  if (weights.length === 0 || matches[0] === 0) return 0;
  const bp = brevityPenalty(refLen, hypLen);
  const terms = new Array<number>(weights.length);
  for (let i = 0; i < weights.length; i++) {
    const p = matches[i] === 0 ? FLOAT_MIN : matches[i] / Math.max(1, totals[i]);
    terms[i] = weights[i] * crLog(p);
  }
  return bp * crExp(fsum(terms));
}

function ngramCounts(tokens: readonly string[], n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    const key = tokens.slice(i, i + n).join("\u0000");
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** nltk `modified_precision(references, hypothesis, n)` as `[numerator, denominator]`. */
export function modifiedPrecision(references: readonly (readonly string[])[], hypothesis: readonly string[], n: number): [number, number] {
  const counts = ngramCounts(hypothesis, n);
  const maxCounts = new Map<string, number>();
  for (const ref of references) {
    const rc = ngramCounts(ref, n);
    for (const g of counts.keys()) maxCounts.set(g, Math.max(maxCounts.get(g) ?? 0, rc.get(g) ?? 0));
  }
  let numerator = 0;
  let total = 0;
  for (const [g, c] of counts) {
    numerator += Math.min(c, maxCounts.get(g) ?? 0);
    total += c;
  }
  return [numerator, Math.max(1, total)];
}

/** nltk `closest_ref_length`: the reference length closest to `hypLen`, the shorter one on ties. */
export function closestRefLength(references: readonly (readonly string[])[], hypLen: number): number {
  let best = -1;
  for (const r of references) {
    const len = r.length;
    if (best < 0 || Math.abs(len - hypLen) < Math.abs(best - hypLen) || (Math.abs(len - hypLen) === Math.abs(best - hypLen) && len < best)) best = len;
  }
  return best;
}

/** nltk `sentence_bleu(references, hypothesis, weights)` with no smoothing and no auto-reweighing. */
export function sentenceBleu(
  references: readonly (readonly string[])[],
  hypothesis: readonly string[],
  weights: readonly number[] = [0.25, 0.25, 0.25, 0.25],
): number {
  if (references.length === 0) throw new Error("sentenceBleu: at least one reference is needed");
  const matches: number[] = [];
  const totals: number[] = [];
  for (let n = 1; n <= weights.length; n++) {
    const [num, den] = modifiedPrecision(references, hypothesis, n);
    matches.push(num);
    totals.push(den);
  }
  return bleuFromCounts(matches, totals, hypothesis.length, closestRefLength(references, hypothesis.length), weights);
}

/** KILT's weights: BLEU-4 `(0.25,)*4`, or uniform `1/n` over n orders for an answer of n < 4 tokens. */
export function kiltWeights(answerLength: number): number[] {
  if (answerLength >= 4) return [0.25, 0.25, 0.25, 0.25];
  return new Array<number>(answerLength).fill(1.0 / answerLength);
}

/**
 * KILT `get_bleu(candidate_tokens, gold_tokens)`: drops empty tokens from both, then
 * `sentence_bleu([candidate], gold, weights)` — the candidate span is the reference and the answer the
 * hypothesis. An empty answer scores 0 (nltk would fail on the empty weight list in recent versions).
 */
export function kiltBleu(candidate: readonly string[], answer: readonly string[]): number {
  const c = candidate.filter((t) => pyStrip(t).length > 0);
  const a = answer.filter((t) => pyStrip(t).length > 0);
  if (a.length === 0) return 0;
  return sentenceBleu([c], a, kiltWeights(a.length));
}

function approxBrevity(refLen: number, hypLen: number): number {
  return hypLen > refLen ? 1 : hypLen === 0 ? 0 : Math.exp(1 - refLen / hypLen);
}

const logMemo = new Map<number, number>();
/** crLog with a bounded memo: precisions are small fractions that recur from text to text. */
function memoLog(x: number): number {
  let v = logMemo.get(x);
  if (v === undefined) {
    if (logMemo.size >= 1 << 20) logMemo.clear();
    logMemo.set(x, (v = crLog(x)));
  }
  return v;
}

/**
 * BLEU for one fixed hypothesis against many references (the span search): the weighted log
 * precisions, brevity penalties and final exponentials are cached, so each span costs a few lookups.
 * Gives exactly {@link bleuFromCounts}.
 */
export class BleuScorer {
  /** logTerms[n][m] = weights[n] · log(p) for m clipped matches of order n + 1, filled on first use. */
  private readonly logTerms: number[][];
  private readonly bp = new Map<number, number>();
  private readonly expOf = new Map<number, number>();
  private readonly logSums = new Map<number, number>();
  private readonly bounds: number[] = [];

  constructor(
    readonly hypLen: number,
    readonly totals: readonly number[],
    readonly weights: readonly number[],
  ) {
    this.logTerms = weights.map(() => []);
  }

  private logTerm(i: number, m: number): number {
    let v = this.logTerms[i][m];
    if (v === undefined) this.logTerms[i][m] = v = this.weights[i] * memoLog(m === 0 ? FLOAT_MIN : m / Math.max(1, this.totals[i]));
    return v;
  }

  private brevity(refLen: number): number {
    let bp = this.bp.get(refLen);
    if (bp === undefined) this.bp.set(refLen, (bp = brevityPenalty(refLen, this.hypLen)));
    return bp;
  }

  /**
   * The score for clipped match counts `matches` (one per order) against a reference of `refLen` tokens.
   * With `floor`, a score certainly below it may come back approximate (from Math.exp, which is within
   * an ulp): callers looking for a maximum skip the exact exponential of spans that cannot win.
   */
  score(matches: ArrayLike<number>, refLen: number, floor = -Infinity): number {
    if (this.weights.length === 0 || matches[0] === 0) return 0;
    let key = 0;
    for (let i = this.weights.length - 1; i >= 0; i--) key = key * (this.hypLen + 1) + matches[i];
    let e = this.expOf.get(key);
    if (e === undefined) {
      let logSum = this.logSums.get(key);
      if (logSum === undefined) {
        const terms: number[] = [];
        for (let i = 0; i < this.weights.length; i++) terms.push(this.logTerm(i, matches[i]));
        this.logSums.set(key, (logSum = fsum(terms)));
      }
      if (floor > 0) {
        const approx = approxBrevity(refLen, this.hypLen) * Math.exp(logSum);
        if (approx < floor * (1 - 1e-9)) return approx;
      }
      this.expOf.set(key, (e = crExp(logSum)));
    }
    return this.brevity(refLen) * e;
  }

  /**
   * An upper bound of the score of any reference of `refLen` tokens: at most min(refLen, hypLen) − n + 1
   * n-grams can match. It rises with refLen up to hypLen and falls after (the brevity penalty).
   */
  upperBound(refLen: number): number {
    let b = this.bounds[refLen];
    if (b === undefined) {
      const m: number[] = this.totals.map((t, i) => Math.max(0, Math.min(t, Math.min(refLen, this.hypLen) - i)));
      this.bounds[refLen] = b = this.approxScore(m, refLen);
    }
    return b;
  }

  /** The score computed with Math.log/Math.exp (within a few ulps): for bounds compared with slack. */
  approxScore(matches: ArrayLike<number>, refLen: number): number {
    if (this.weights.length === 0 || matches[0] === 0) return 0;
    let s = 0;
    for (let i = 0; i < this.weights.length; i++) s += this.weights[i] * Math.log(matches[i] === 0 ? FLOAT_MIN : matches[i] / Math.max(1, this.totals[i]));
    return approxBrevity(refLen, this.hypLen) * Math.exp(s);
  }
}
