// Bounded heaps of a dense search over typed arrays: `TopHeap` keeps the positions of the `cap` largest
// values (the candidates a stage passes on), `TopHits` the k best (score, unit) pairs with ties to the
// lower unit (the hits).

import type { Hit } from "../types.js";

/** The `cap` largest values seen (with their positions): a binary min-heap over typed arrays. */
export class TopHeap {
  private readonly v: Float64Array;
  private readonly p: Float64Array;
  private n = 0;
  constructor(private readonly cap: number) {
    this.v = new Float64Array(cap);
    this.p = new Float64Array(cap);
  }
  push(value: number, pos: number): void {
    const v = this.v, p = this.p;
    if (this.n < this.cap) {
      let i = this.n++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (v[parent] <= value) break;
        v[i] = v[parent];
        p[i] = p[parent];
        i = parent;
      }
      v[i] = value;
      p[i] = pos;
      return;
    }
    if (value <= v[0]) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.n) break;
      const r = l + 1;
      const c = r < this.n && v[r] < v[l] ? r : l;
      if (v[c] >= value) break;
      v[i] = v[c];
      p[i] = p[c];
      i = c;
    }
    v[i] = value;
    p[i] = pos;
  }
  /** The smallest value kept once the heap is full (a value must beat it to enter); −∞ before. */
  get floor(): number {
    return this.n < this.cap ? -Infinity : this.v[0];
  }
  items(): Float64Array {
    return this.p.slice(0, this.n);
  }
  /** The values kept, in the order of {@link items}. */
  values(): Float64Array {
    return this.v.slice(0, this.n);
  }
}

/** The `k` best (score, unit) pairs, higher score first and ties to the lower unit: a min-heap on "worse". */
export class TopHits {
  private readonly s: Float64Array;
  private readonly u: Float64Array;
  private n = 0;
  constructor(private readonly k: number) {
    this.s = new Float64Array(k);
    this.u = new Float64Array(k);
  }
  /** True when (s1, u1) ranks below (s2, u2). */
  private static worse(s1: number, u1: number, s2: number, u2: number): boolean {
    return s1 < s2 || (s1 === s2 && u1 > u2);
  }
  push(score: number, unit: number): void {
    const s = this.s, u = this.u;
    if (this.k === 0) return;
    let i: number;
    if (this.n < this.k) {
      i = this.n++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!TopHits.worse(score, unit, s[p], u[p])) break;
        s[i] = s[p];
        u[i] = u[p];
        i = p;
      }
    } else {
      if (!TopHits.worse(s[0], u[0], score, unit)) return;
      i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= this.n) break;
        const r = l + 1;
        const c = r < this.n && TopHits.worse(s[r], u[r], s[l], u[l]) ? r : l;
        if (!TopHits.worse(s[c], u[c], score, unit)) break;
        s[i] = s[c];
        u[i] = u[c];
        i = c;
      }
    }
    s[i] = score;
    u[i] = unit;
  }
  hits(): Hit[] {
    const out: Hit[] = [];
    for (let i = 0; i < this.n; i++) out.push({ unit: this.u[i], score: this.s[i] });
    return out.sort((a, b) => b.score - a.score || a.unit - b.unit);
  }
}
