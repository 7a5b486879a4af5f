// Impact scoring behind the scoring seam (./scorer.ts), for learned-sparse indexes (SPLADE, uniCOIL) whose
// postings store each (term, unit) pair's quantized score contribution in place of a frequency: a
// posting's impact is its stored value, and its score is impact × the query term's weight (float32), so the
// same MaxScore and block-max search (./maxscore.ts) serves them. No norms: a unit's length is already in
// its impacts.

import type { ScoringModel, TermScorer } from "./scorer.js";

const f = Math.fround;

/** Scoring of stored impacts (positive integers, as the postings store them): score = impact × weight. */
export class ImpactScoring implements ScoringModel<ImpactTermScorer> {
  /** x = the stored impact. */
  impact(tf: number, _doc: number): number {
    return tf;
  }

  termScorer(weight: number, reuse?: ImpactTermScorer): ImpactTermScorer {
    if (!(weight >= 0)) throw new RangeError(`an impact query term's weight must be ≥ 0, not ${weight}`);
    const s = reuse instanceof ImpactTermScorer ? reuse : new ImpactTermScorer();
    s.w = f(weight);
    return s;
  }
}

/** One query term's impact scorer: its weight (float). */
export class ImpactTermScorer implements TermScorer {
  /** The query term's weight (float). */
  w = 0;

  score(tf: number, _doc: number): number {
    return f(tf * this.w);
  }

  bound(x: number): number {
    return f(x * this.w);
  }
}
