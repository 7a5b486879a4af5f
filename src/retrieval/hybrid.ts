// Reciprocal-rank fusion (Cormack et al. 2009) of any retrievers over the same units:
// score(u) = Σ_r 1 / (k0 + rank_r(u)), ranks from 1, each member searched `depth` deep. Members must
// retrieve the same units (same kind, count and provenance), so a fused hit is one unit of all of them.

import type { Hit, Retriever } from "./types.js";
import type { Unit, UnitStore } from "./units.js";
import { topK } from "./tfidf/topk.js";

export interface HybridOptions {
  /** RRF constant; default 60. */
  k0?: number;
  /** How many hits to take from each member; default max(k, 100). */
  depth?: number;
}

export const DEFAULT_RRF_K = 60;

function sameUnit(a: Unit, b: Unit): boolean {
  return (
    a.wikipedia_id === b.wikipedia_id &&
    a.start_paragraph_id === b.start_paragraph_id &&
    a.start_character === b.start_character &&
    a.end_paragraph_id === b.end_paragraph_id &&
    a.end_character === b.end_character
  );
}

/** Throws unless `b` holds the same units as `a` (count, and provenance of a sample spread over the store). */
export function checkSameUnits(a: UnitStore, b: UnitStore, nameA = "first index", nameB = "other index"): void {
  if (a.count !== b.count) throw new Error(`hybrid: ${nameA} has ${a.count} units, ${nameB} ${b.count}: build them from the same source with the same --unit`);
  const n = a.count;
  const sample = new Set<number>();
  for (let i = 0; i < 16 && n > 0; i++) sample.add(Math.floor((i * (n - 1)) / 15));
  for (const i of sample) {
    if (!sameUnit(a.get(i), b.get(i))) throw new Error(`hybrid: unit ${i} differs between ${nameA} and ${nameB}: build them from the same source with the same --unit`);
  }
}

export class HybridRetriever implements Retriever {
  readonly kind = "hybrid" as const;
  readonly units: UnitStore;
  readonly k0: number;
  readonly depth?: number;

  constructor(
    readonly members: readonly Retriever[],
    options: HybridOptions = {},
    names: readonly string[] = members.map((m, i) => `index ${i + 1} (${m.kind})`),
  ) {
    if (members.length === 0) throw new Error("hybrid: no retrievers to fuse");
    this.k0 = options.k0 ?? DEFAULT_RRF_K;
    if (!(this.k0 >= 0)) throw new Error(`hybrid: k0 must be ≥ 0, got ${this.k0}`);
    this.depth = options.depth;
    this.units = members[0].units;
    for (let i = 1; i < members.length; i++) checkSameUnits(this.units, members[i].units, names[0], names[i]);
  }

  private depthFor(k: number): number {
    return this.depth ?? Math.max(k, 100);
  }

  /** Fuses one query's member rankings. */
  fuse(rankings: readonly Hit[][], k: number): Hit[] {
    const scores = new Map<number, number>();
    for (const hits of rankings) hits.forEach((h, r) => scores.set(h.unit, (scores.get(h.unit) ?? 0) + 1 / (this.k0 + r + 1)));
    const units = [...scores.keys()];
    return topK(units, units.length, (u) => scores.get(u)!, k);
  }

  async search(query: string, k: number): Promise<Hit[]> {
    const depth = this.depthFor(k);
    const rankings: Hit[][] = [];
    for (const m of this.members) rankings.push(await m.search(query, depth));
    return this.fuse(rankings, k);
  }

  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    const depth = this.depthFor(k);
    const per: Hit[][][] = [];
    for (const m of this.members) {
      if (m.searchBatch) per.push(await m.searchBatch(queries, depth));
      else {
        const out: Hit[][] = [];
        for (const q of queries) out.push(await m.search(q, depth));
        per.push(out);
      }
    }
    return queries.map((_, i) => this.fuse(per.map((p) => p[i]), k));
  }

  async close(): Promise<void> {
    for (const m of this.members) await m.close();
  }
}
