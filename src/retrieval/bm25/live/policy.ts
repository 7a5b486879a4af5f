// Which segments of a live BM25 index to merge. Segments are only merged with their neighbours, so the
// order of the units (and with it the ties of a ranking, which go to the earlier unit) is the order a
// fresh build of the live units in that order has.
//
// The automatic policy (during updates) is logarithmic, as Lucene's LogMergePolicy: a segment's level is
// log_factor of its live units (segments under `floorUnits` counted as that many); `factor` neighbours
// whose levels lie within LEVEL_SPAN of each other (Lucene's LEVEL_LOG_SPAN, 0.75: sizes that straddle a
// power of `factor` still merge) merge into one, about a level up. A unit is then rewritten about once per level, log_factor(N /
// floorUnits) times in all: write amplification bounded by that plus the rewrites of segments that are
// mostly deleted (a segment whose deleted share passes `maxDeletedShare` is rewritten without them).
// A forced merge (`tartan index merge --max-segments N`) joins the smallest adjacent neighbours until N
// segments are left, and rewrites every segment that has deletions.

import type { CommitSegment } from "./layout.js";

/** The automatic merge policy's parameters. */
export interface MergePolicy {
  /** Segments of one level merged at once (default 10). */
  factor: number;
  /** Segments with fewer live units count as this many (default 1,000): they merge as one level. */
  floorUnits: number;
  /** A segment with a larger share of its units deleted is rewritten (default 0.5). */
  maxDeletedShare: number;
}

/** Lucene-like defaults: 10 segments a level, levels from 1,000 units, segments half deleted rewritten. */
export const DEFAULT_MERGE_POLICY: MergePolicy = { factor: 10, floorUnits: 1000, maxDeletedShare: 0.5 };

const liveOf = (s: CommitSegment) => s.units - (s.deletions?.deleted ?? 0);

/** Levels within this of each other count as one level (Lucene's LogMergePolicy.LEVEL_LOG_SPAN). */
export const LEVEL_SPAN = 0.75;

/** The level of a segment of `live` units: log_factor(max(live, floorUnits)). */
export function levelOf(live: number, p: MergePolicy): number {
  return Math.log(Math.max(live, p.floorUnits, 1)) / Math.log(p.factor);
}

/**
 * Runs [from, to) of `segments` to merge (disjoint, adjacent segments), simulated to a fixed point: after
 * a merge the new segment may complete a run of the next level.
 */
export function planMerges(segments: readonly CommitSegment[], p: MergePolicy): [number, number][] {
  if (!(p.factor >= 2) || !Number.isInteger(p.factor)) throw new Error(`merge policy: factor must be a whole number ≥ 2, got ${p.factor}`);
  // Simulate on (live units, is-original index range) and report runs over the original positions.
  type Sim = { live: number; from: number; to: number; dirty: boolean };
  let sim: Sim[] = segments.map((s, i) => ({ live: liveOf(s), from: i, to: i + 1, dirty: false }));
  for (const [i, s] of segments.entries()) if (s.units > 0 && (s.deletions?.deleted ?? 0) / s.units > p.maxDeletedShare) sim[i].dirty = true;
  for (;;) {
    let done = true;
    for (let i = 0; i + p.factor <= sim.length; i++) {
      let lo = Infinity;
      let hi = -Infinity;
      for (let j = i; j < i + p.factor; j++) {
        const l = levelOf(sim[j].live, p);
        lo = Math.min(lo, l);
        hi = Math.max(hi, l);
      }
      const j = i + p.factor;
      if (hi - lo <= LEVEL_SPAN + 1e-9) {
        const run = sim.slice(i, j);
        sim = [...sim.slice(0, i), { live: run.reduce((n, r) => n + r.live, 0), from: run[0].from, to: run[run.length - 1].to, dirty: true }, ...sim.slice(j)];
        done = false;
        break;
      }
    }
    if (done) break;
  }
  return sim.filter((x) => x.dirty).map((x) => [x.from, x.to]);
}

/** Runs to merge down to `maxSegments` segments: smallest neighbours first; every run with deletions is rewritten. */
export function planForceMerge(segments: readonly CommitSegment[], deleted: readonly number[], maxSegments: number): [number, number][] {
  let groups = segments.map((s, i) => ({ live: s.units - deleted[i], from: i, to: i + 1, deleted: deleted[i] }));
  while (groups.length > maxSegments) {
    let best = 0;
    for (let i = 1; i + 1 < groups.length; i++) if (groups[i].live + groups[i + 1].live < groups[best].live + groups[best + 1].live) best = i;
    const a = groups[best];
    const b = groups[best + 1];
    groups = [...groups.slice(0, best), { live: a.live + b.live, from: a.from, to: b.to, deleted: a.deleted + b.deleted }, ...groups.slice(best + 2)];
  }
  return groups.filter((g) => g.to - g.from > 1 || g.deleted > 0).map((g) => [g.from, g.to]);
}
