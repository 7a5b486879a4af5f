// BM25's k1 and b at search time (`--bm25 k1=1.2,b=0.75`, a request's `k1`/`b`): the postings store each
// unit's term frequency and length byte, so any k1 and b score exactly as an index built with them (Lucene
// 8's float arithmetic, ./similarity.ts), through a norm cache of their own. What the build fixed is the
// block bounds: the largest x = tf × normInverse[norm] under the build's k1 and b. A posting of norm byte n
// whose build x is at most X has tf ≤ X / normInverse[n], and tf below the next byte's length (a term
// occurs at most as often as the unit is long), so its new x' = tf × normInverse'[n] is at most
// min(X × ratio[n], cap[n]); the largest of those over the norm bytes units have (an envelope of ramps,
// read by binary search) bounds the block, rounded up: the bounds stay valid, the search exact, and it
// prunes (less sharply the further the parameters move). The score floor of ./maxscore.ts then comes from
// decoded postings' scores only: a block bound is no longer one posting's score.

import type { ScoringModel, TermScorer } from "./scorer.js";
import { Bm25Scoring, type Bm25TermScorer } from "./bm25-scorer.js";
import { LENGTH_TABLE } from "./similarity.js";

const f = Math.fround;
/** Headroom of a bound over the float32 scores it bounds (a few float roundings). */
const UP = 1 + 2 ** -16;

/** BM25's parameters at search time; an unset one keeps the index's. */
export interface Bm25SearchParams {
  k1?: number;
  b?: number;
}

/** `k1=1.2,b=0.75` (either or both) as parameters; throws naming the bad part. */
export function parseBm25Params(text: string, where = "--bm25"): Bm25SearchParams {
  const out: Bm25SearchParams = {};
  for (const part of text.split(",")) {
    const m = /^\s*(k1|b)\s*=\s*([-+0-9.eE]+)\s*$/u.exec(part);
    if (!m) throw new Error(`${where}: ${JSON.stringify(part.trim())} is not k1=N or b=N (give e.g. k1=1.2,b=0.75)`);
    out[m[1] as "k1" | "b"] = Number(m[2]);
  }
  checkBm25Params(out, where);
  return out;
}

/** Throws unless k1 is a number > 0 and b one in [0, 1] (those set). */
export function checkBm25Params(p: Bm25SearchParams, where = "bm25"): void {
  if (p.k1 !== undefined && !(Number.isFinite(p.k1) && p.k1 > 0)) throw new Error(`${where}: k1 must be a number above 0, got ${String(p.k1)}`);
  if (p.b !== undefined && !(Number.isFinite(p.b) && p.b >= 0 && p.b <= 1)) throw new Error(`${where}: b must be a number from 0 to 1, got ${String(p.b)}`);
}

/** BM25 scoring under other k1 and b than the index was built with, against the build's block bounds. */
export class RescaledBm25Scoring implements ScoringModel<RescaledTermScorer> {
  /** Bounds are upper bounds, not one posting's score: the score floor comes from decoded scores only. */
  readonly looseBounds = true;
  /** How the postings score: exact BM25 with the new norm cache. */
  readonly exact: Bm25Scoring;
  /** The ramps' saturation points X = cap / ratio, ascending; the largest cap among the first i; the largest ratio from i on. */
  private readonly at: Float64Array;
  private readonly capBefore: Float64Array;
  private readonly ratioFrom: Float64Array;

  constructor(
    readonly buildNormInverse: Float32Array,
    searchNormInverse: Float32Array,
    readonly norms: Uint8Array,
  ) {
    this.exact = new Bm25Scoring(searchNormInverse, norms);
    // Over the norm bytes some unit has (an empty unit's byte 0 has no postings; under b = 1 its cache is ∞).
    const present = new Uint8Array(256);
    for (let d = 0; d < norms.length; d++) present[norms[d]] = 1;
    const ramps: { at: number; cap: number; ratio: number }[] = [];
    for (let i = 0; i < 256; i++) {
      if (present[i] === 0) continue;
      const ratio = searchNormInverse[i] / buildNormInverse[i];
      if (!Number.isFinite(ratio)) throw new Error("bm25: these k1 and b give a unit length an infinite weight against the index's own (built with k1 = 0?); its block bounds do not carry over to them");
      // tf < the next byte's length (the lengths of byte i are [LENGTH_TABLE[i], LENGTH_TABLE[i + 1])).
      const cap = i < 255 ? LENGTH_TABLE[i + 1] * searchNormInverse[i] : Infinity;
      ramps.push({ at: cap / ratio, cap, ratio });
    }
    ramps.sort((x, y) => x.at - y.at);
    const n = ramps.length;
    this.at = Float64Array.from(ramps, (r) => r.at);
    this.capBefore = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) this.capBefore[i + 1] = Math.max(this.capBefore[i], ramps[i].cap);
    this.ratioFrom = new Float64Array(n + 1);
    for (let i = n - 1; i >= 0; i--) this.ratioFrom[i] = Math.max(this.ratioFrom[i + 1], ramps[i].ratio);
  }

  /** The largest new x of a posting whose build x is at most `x` (rounded up). */
  maxX(x: number): number {
    const at = this.at;
    let lo = 0;
    let hi = at.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (at[mid] <= x) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(this.capBefore[lo], x * this.ratioFrom[lo]) * UP;
  }

  /** The build's x (what the stored block bounds hold). */
  impact(tf: number, doc: number): number {
    return f(tf * this.buildNormInverse[this.norms[doc]]);
  }

  termScorer(weight: number, reuse?: RescaledTermScorer): RescaledTermScorer {
    const s = reuse instanceof RescaledTermScorer && reuse.model === this ? reuse : new RescaledTermScorer(this);
    s.reset(weight);
    return s;
  }
}

/** One query term's scorer under the new parameters: exact scores, bounds from the build's x. */
export class RescaledTermScorer implements TermScorer {
  private inner: Bm25TermScorer | undefined;
  private w = 0;

  constructor(readonly model: RescaledBm25Scoring) {}

  /** Sets the term weight (boost × idf). */
  reset(w: number): void {
    this.w = w;
    this.inner = this.model.exact.termScorer(w, this.inner);
  }

  score(tf: number, doc: number): number {
    return this.inner!.score(tf, doc);
  }

  /** w − w / (1 + x'), x' the largest new x under build x, rounded up: at least the score of any posting whose build x is at most x. */
  bound(x: number): number {
    const w = this.w;
    return (w - w / (1 + this.model.maxX(x))) * UP;
  }
}
