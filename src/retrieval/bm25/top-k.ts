// The best k (score, unit) pairs of a BM25 search, in a binary heap over two typed arrays: worst at the
// root (lowest score, then highest unit), so ties go to the lower unit.

import type { Hit } from "../types.js";

/** Keeps the best k (score, unit) pairs; worst = lowest score, then highest unit. */
export class TopK {
  readonly scores: Float64Array;
  readonly units: Int32Array;
  size = 0;
  constructor(readonly k: number) {
    this.scores = new Float64Array(k);
    this.units = new Int32Array(k);
  }
  /** Lowest score kept once full, else -Infinity: a unit must score above it to enter. */
  get threshold(): number {
    return this.size < this.k ? -Infinity : this.scores[0];
  }
  private worse(i: number, j: number): boolean {
    const a = this.scores[i];
    const b = this.scores[j];
    return a < b || (a === b && this.units[i] > this.units[j]);
  }
  private swap(i: number, j: number): void {
    const s = this.scores[i];
    this.scores[i] = this.scores[j];
    this.scores[j] = s;
    const u = this.units[i];
    this.units[i] = this.units[j];
    this.units[j] = u;
  }
  /**
   * Offers a unit (units arrive in increasing order, so a tie with the worst never enters). Small, to be
   * inlined into the caller (a double argument to a call that is not inlined is boxed).
   */
  offer(score: number, unit: number): void {
    if (this.size < this.k) return this.push(score, unit);
    if (!(score > this.scores[0])) return;
    this.scores[0] = score;
    this.units[0] = unit;
    this.siftDown(0);
  }
  private push(score: number, unit: number): void {
    let i = this.size++;
    this.scores[i] = score;
    this.units[i] = unit;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }
  /** Offers a unit in any order (exhaustive scoring). */
  offerAny(score: number, unit: number): void {
    if (this.size < this.k) return this.offer(score, unit);
    const s0 = this.scores[0];
    if (score > s0 || (score === s0 && unit < this.units[0])) {
      this.scores[0] = score;
      this.units[0] = unit;
      this.siftDown(0);
    }
  }
  /** Moves the entry at i down to its place (the hole technique: one write per level). */
  private siftDown(i: number): void {
    const scores = this.scores;
    const units = this.units;
    const size = this.size;
    const s = scores[i];
    const u = units[i];
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      let m = l;
      let ms = scores[l];
      if (l + 1 < size) {
        const rs = scores[l + 1];
        if (rs < ms || (rs === ms && units[l + 1] > units[l])) {
          m = l + 1;
          ms = rs;
        }
      }
      // Stop when the child is not worse than the entry.
      if (!(ms < s || (ms === s && units[m] > u))) break;
      scores[i] = ms;
      units[i] = units[m];
      i = m;
    }
    scores[i] = s;
    units[i] = u;
  }
  /** Best first; ties by lower unit. Empties the heap (taking the worst off, k log k). */
  hits(): Hit[] {
    const out: Hit[] = new Array(this.size);
    while (this.size > 0) {
      const last = --this.size;
      out[last] = { unit: this.units[0], score: this.scores[0] };
      this.scores[0] = this.scores[last];
      this.units[0] = this.units[last];
      this.siftDown(0);
    }
    return out;
  }
}
