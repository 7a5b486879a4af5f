// BM25 behind the scoring seam (./scorer.ts): Lucene 8.7's score w − w / (1 + tf × normInverse[norm]) in
// float32 arithmetic at every step (./similarity.ts), with the scores of tf 1 and 2 (most postings)
// precomputed per norm byte, so that a posting of tf ≤ 2 costs one table read. A posting's impact is
// x = tf × normInverse[norm], the value the writer's block bounds hold (./postings-writer.ts).

import type { ScoringModel, TermScorer } from "./scorer.js";

const f = Math.fround;

/** BM25 scoring over an index's norms (a SmallFloat byte per unit) and its norm cache (./similarity.ts normInverseCache). */
export class Bm25Scoring implements ScoringModel<Bm25TermScorer> {
  constructor(
    readonly normInverse: Float32Array,
    readonly norms: Uint8Array,
  ) {}

  /** x = tf × normInverse[norm of doc] (float). */
  impact(tf: number, doc: number): number {
    return f(tf * this.normInverse[this.norms[doc]]);
  }

  termScorer(weight: number, reuse?: Bm25TermScorer): Bm25TermScorer {
    const s = reuse !== undefined && reuse.model === this ? reuse : new Bm25TermScorer(this);
    s.reset(weight);
    return s;
  }
}

/** One query term's BM25 scorer: its weight w = boost × idf and its scores for tf 1 and 2 by norm byte. */
export class Bm25TermScorer implements TermScorer {
  /** The term weight (boost × idf). */
  w = 0;
  /** table[(tf − 1) × 256 + norm] for tf 1 and 2. */
  readonly table = new Float32Array(512);
  readonly normInverse: Float32Array;
  readonly norms: Uint8Array;

  constructor(readonly model: Bm25Scoring) {
    this.normInverse = model.normInverse;
    this.norms = model.norms;
  }

  /** Sets the term weight and computes its table. */
  reset(w: number): void {
    this.w = w;
    const { table, normInverse } = this;
    for (let nb = 0; nb < 256; nb++) {
      table[nb] = f(w - f(w / f(1 + f(1 * normInverse[nb]))));
      table[256 + nb] = f(w - f(w / f(1 + f(2 * normInverse[nb]))));
    }
  }

  score(tf: number, doc: number): number {
    const nb = this.norms[doc];
    if (tf <= 2) return this.table[((tf - 1) << 8) | nb];
    const w = this.w;
    return f(w - f(w / f(1 + f(tf * this.normInverse[nb]))));
  }

  bound(x: number): number {
    const w = this.w;
    return f(w - f(w / f(1 + x)));
  }
}
