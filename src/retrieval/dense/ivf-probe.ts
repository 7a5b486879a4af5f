// The coarse probe of a compressed dense index (./ivf-build.ts): a query's `nprobe` nearest lists, the
// nearest top centroids first (`topProbe` of them), then the best sub-centroids among theirs, nearest
// first, ties to the lower list. Shared by the embedded search (./ivf-search.ts) and the ClickHouse
// one (../../backends/clickhouse/dense.ts), so both probe the same lists.

import type { Quantizer } from "./quantizer.js";
import { localRangeSearcher, type RangeResult } from "./simd.js";

type Searcher = (qs: Float32Array, nq: number, k: number) => RangeResult;

/** The search depth's defaults: lists probed, top centroids considered for them. */
export function probeDepth(q: Quantizer, nprobe: number | undefined, defaultNprobe: number, topProbe?: number): { nprobe: number; topProbe: number } {
  const n = Math.max(1, Math.min(q.lists, nprobe ?? defaultNprobe));
  return { nprobe: n, topProbe: topProbe ?? Math.max(4, Math.ceil((n * 4) / Math.max(1, q.k2))) };
}

/** Finds the lists queries probe, with the centroids' SIMD searchers made once and kept. */
export class Prober {
  private readonly topSearch: Searcher;
  private readonly subSearch: (Searcher | null)[];
  private flatSearch: Searcher | null = null;

  constructor(private readonly q: Quantizer) {
    this.topSearch = localRangeSearcher(q.top, q.dim, 0);
    this.subSearch = new Array<Searcher | null>(q.k1).fill(null);
  }

  /** The lists each query probes (`nq × nprobe`, nearest first). */
  probe(qs: Float32Array, nq: number, nprobe: number, topProbe: number): Int32Array[] {
    return this.probeScored(qs, nq, nprobe, topProbe).lists;
  }

  /** {@link probe}'s lists with the query's inner product with each one's centroid (the SIMD kernel's, in the same order). */
  probeScored(qs: Float32Array, nq: number, nprobe: number, topProbe: number): { lists: Int32Array[]; scores: Float64Array[] } {
    const q = this.q;
    const dim = q.dim;
    if (q.k2 === 1) return this.probeFlat(qs, nq, nprobe);
    const t1 = Math.min(q.k1, topProbe);
    const top = this.topSearch(qs, nq, t1);
    const byTop = new Map<number, number[]>();
    for (let i = 0; i < nq; i++)
      for (let j = 0; j < t1; j++) {
        const c = top.ids[i * t1 + j];
        if (c < 0) continue;
        let g = byTop.get(c);
        if (!g) byTop.set(c, (g = []));
        g.push(i);
      }
    const cand: { list: number; score: number }[][] = Array.from({ length: nq }, () => []);
    const k2 = Math.min(q.k2, nprobe);
    for (const [c, g] of byTop) {
      const s = (this.subSearch[c] ??= localRangeSearcher(q.sub.subarray(c * q.k2 * dim, (c + 1) * q.k2 * dim), dim, c * q.k2));
      const part = new Float32Array(g.length * dim);
      for (let j = 0; j < g.length; j++) part.set(qs.subarray(g[j] * dim, (g[j] + 1) * dim), j * dim);
      const r = s(part, g.length, k2);
      for (let j = 0; j < g.length; j++) for (let t = 0; t < k2; t++) if (r.ids[j * k2 + t] >= 0) cand[g[j]].push({ list: r.ids[j * k2 + t], score: r.scores[j * k2 + t] });
    }
    const lists: Int32Array[] = [];
    const scores: Float64Array[] = [];
    for (const c of cand) {
      c.sort((a, b) => b.score - a.score || a.list - b.list);
      const n = Math.min(nprobe, c.length);
      const l = new Int32Array(n);
      const s = new Float64Array(n);
      for (let j = 0; j < n; j++) {
        l[j] = c[j].list;
        s[j] = c[j].score;
      }
      lists.push(l);
      scores.push(s);
    }
    return { lists, scores };
  }

  /**
   * One level (k2 = 1: list c is top centroid c, its sub-centroid scored in its place): the `nprobe` best
   * lists by their own centroids, as the two-level route would rank them, in one pass.
   */
  private probeFlat(qs: Float32Array, nq: number, nprobe: number): { lists: Int32Array[]; scores: Float64Array[] } {
    const q = this.q;
    const n = Math.min(q.k1, nprobe);
    const r = (this.flatSearch ??= localRangeSearcher(q.sub, q.dim, 0))(qs, nq, n);
    const lists: Int32Array[] = [];
    const scores: Float64Array[] = [];
    for (let i = 0; i < nq; i++) {
      const order: number[] = [];
      for (let j = 0; j < n; j++) if (r.ids[i * n + j] >= 0) order.push(i * n + j);
      order.sort((a, b) => r.scores[b] - r.scores[a] || r.ids[a] - r.ids[b]);
      lists.push(Int32Array.from(order, (x) => r.ids[x]));
      scores.push(Float64Array.from(order, (x) => r.scores[x]));
    }
    return { lists, scores };
  }
}
