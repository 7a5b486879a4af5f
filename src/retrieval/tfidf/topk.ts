// Best-k selection shared by tartan's own retrievers: highest score first, ties broken by the lower unit
// number (the Retriever contract), in O(n log k) with a bounded heap.

import type { Hit } from "../types.js";

/** True when `a` ranks after `b` (lower score, or equal score and higher unit). */
function worse(sa: number, ua: number, sb: number, ub: number): boolean {
  return sa < sb || (sa === sb && ua > ub);
}

/** The best `k` of `units[i]` scored `scoreOf(units[i])`, best first. */
export function topK(units: ArrayLike<number>, count: number, scoreOf: (unit: number) => number, k: number): Hit[] {
  if (k <= 0 || count === 0) return [];
  // Min-heap on rank: heap[0] is the worst of the kept hits.
  const hu: number[] = [];
  const hs: number[] = [];
  const swap = (i: number, j: number) => {
    [hu[i], hu[j]] = [hu[j], hu[i]];
    [hs[i], hs[j]] = [hs[j], hs[i]];
  };
  const up = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!worse(hs[i], hu[i], hs[p], hu[p])) break;
      swap(i, p);
      i = p;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < hu.length && worse(hs[l], hu[l], hs[m], hu[m])) m = l;
      if (r < hu.length && worse(hs[r], hu[r], hs[m], hu[m])) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  for (let i = 0; i < count; i++) {
    const u = units[i];
    const s = scoreOf(u);
    if (hu.length < k) {
      hu.push(u);
      hs.push(s);
      up(hu.length - 1);
    } else if (worse(hs[0], hu[0], s, u)) {
      hu[0] = u;
      hs[0] = s;
      down(0);
    }
  }
  const hits: Hit[] = hu.map((unit, i) => ({ unit, score: hs[i] }));
  hits.sort((a, b) => b.score - a.score || a.unit - b.unit);
  return hits;
}
