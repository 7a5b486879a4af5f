// The scoring seam of the postings search (src/retrieval/bm25/scorer.ts): each scoring model keeps the
// contract MaxScore relies on (a posting scores its bound at its impact; bounds grow with the impact), BM25
// bit for bit as Lucene's formula, and the MaxScore / block-max search over a small impact index built
// here (quantized impacts, as a learned-sparse index stores them) equal to brute-force scoring.
import { describe, expect, it } from "vitest";
import { Bm25Scoring } from "../../../src/retrieval/bm25/bm25-scorer.js";
import { ByteSink } from "../../../src/retrieval/bm25/codec.js";
import type { TermInfo } from "../../../src/retrieval/bm25/dictionary.js";
import { ImpactScoring } from "../../../src/retrieval/bm25/impact-scorer.js";
import { maxScoreScratch, maxScoreSearch, type MaxScoreIndex, type QueryTerm } from "../../../src/retrieval/bm25/maxscore.js";
import { bytesOf, PostingCursor } from "../../../src/retrieval/bm25/postings-reader.js";
import { TermEncoder } from "../../../src/retrieval/bm25/postings-writer.js";
import type { ScoringModel } from "../../../src/retrieval/bm25/scorer.js";
import { idf, normInverseCache, scoreOf, termWeight, tfNorm } from "../../../src/retrieval/bm25/similarity.js";
import { seededRandom } from "../../../src/util/random.js";

const f = Math.fround;

const random = seededRandom;

// One unit per norm byte, so that doc = norm byte for BM25.
const norms = Uint8Array.from({ length: 256 }, (_, i) => i);
const normInverse = normInverseCache(0.9, 0.4, 57.3);
const models: Record<string, { model: ScoringModel; weights: number[] }> = {
  bm25: { model: new Bm25Scoring(normInverse, norms), weights: [termWeight(1, idf(3, 4)), termWeight(3, idf(10, 1_000_000)), termWeight(1, idf(999_999, 1_000_000))] },
  impact: { model: new ImpactScoring(), weights: [1, f(0.37), f(2.75), 0] },
};

describe.each(Object.entries(models))("scoring model %s keeps the seam's contract", (_name, { model, weights }) => {
  it("scores a posting exactly its bound at its impact, bounds never negative and growing with the impact", () => {
    for (const w of weights) {
      const s = model.termScorer(w);
      const xs: number[] = [];
      for (let tf = 1; tf <= 300; tf++) {
        for (let doc = 0; doc < 256; doc++) {
          const x = model.impact(tf, doc);
          xs.push(x);
          expect(s.score(tf, doc)).toBe(s.bound(x));
        }
      }
      xs.sort((a, b) => a - b);
      let last = 0;
      for (const x of xs) {
        const b = s.bound(x);
        expect(b).toBeGreaterThanOrEqual(last);
        last = b;
      }
    }
  });

  it("resets a reused scorer to the new weight", () => {
    const a = model.termScorer(weights[1]);
    const b = model.termScorer(weights[0], a);
    expect(b).toBe(a);
    expect(b.score(5, 7)).toBe(model.termScorer(weights[0]).score(5, 7));
  });
});

describe("BM25 behind the seam", () => {
  it("scores as Lucene's formula bit for bit, through the tf ≤ 2 tables and beyond", () => {
    const scoring = models.bm25.model as Bm25Scoring;
    for (const w of models.bm25.weights) {
      const s = scoring.termScorer(w);
      for (let tf = 1; tf <= 1000; tf += tf < 10 ? 1 : 37) {
        for (let nb = 0; nb < 256; nb++) expect(s.score(tf, nb)).toBe(scoreOf(w, tfNorm(tf, normInverse[nb])));
      }
    }
  });

  it("makes a new scorer when handed another model's", () => {
    const other = new Bm25Scoring(normInverseCache(1.2, 0.75, 10), norms);
    const s = other.termScorer(1);
    const t = (models.bm25.model as Bm25Scoring).termScorer(1, s);
    expect(t).not.toBe(s);
    expect(t.score(3, 200)).toBe(scoreOf(1, tfNorm(3, normInverse[200])));
  });
});

describe("impact scoring", () => {
  it("scores impact × weight in float and refuses a negative weight", () => {
    const s = new ImpactScoring().termScorer(0.1);
    expect(s.score(3, 0)).toBe(f(3 * f(0.1)));
    expect(() => new ImpactScoring().termScorer(-1)).toThrow(/must be ≥ 0/);
    expect(() => new ImpactScoring().termScorer(Number.NaN)).toThrow(/must be ≥ 0/);
  });
});

/**
 * A small impact index in memory: per term, postings (doc, impact) encoded by the BM25 postings writer with
 * a norm cache of ones (so a block's stored bound x = impact × 1 is its largest impact), and a MaxScore
 * index over them scored by ImpactScoring.
 */
function impactIndex(units: number, seed: number) {
  const rand = random(seed);
  const ones = new Float32Array(256).fill(1);
  const enc = new TermEncoder(ones);
  const out = new ByteSink(1 << 16);
  const postings: Map<number, number>[] = [];
  const infos: TermInfo[] = [];
  // Densities from every unit to a handful; impacts skewed low (8-bit quantization), with bursts of high ones.
  const densities = [1, 0.6, 0.3, 0.1, 0.03, 0.01, 0.002, 0.0004, 0.0001, 0.5, 0.05, 0.2];
  for (let t = 0; t < densities.length; t++) {
    const p = new Map<number, number>();
    const burst = Math.floor(rand() * units);
    for (let d = 0; d < units; d++) {
      if (rand() >= densities[t]) continue;
      const inBurst = Math.abs(d - burst) < 700;
      const impact = inBurst ? 200 + Math.floor(rand() * 56) : 1 + Math.floor(rand() ** 3 * (t % 3 === 0 ? 40 : 255));
      p.set(d, impact);
      enc.add(d, impact, 0);
    }
    const offset = out.pos;
    const [docFreq, bytes] = enc.finish(out);
    postings.push(p);
    infos.push({ docFreq, offset, bytes });
  }
  const buf = out.buf.subarray(0, out.pos);
  const scoring = new ImpactScoring();
  const index: MaxScoreIndex = {
    scoring,
    stats: { scored: 0, candidates: 0, windowsSkipped: 0, blocksSkipped: 0 },
    scratch: maxScoreScratch(),
    cursor(info, reuse) {
      const bytes = buf.subarray(info.offset, info.offset + info.bytes);
      return reuse ? reuse.reset(bytes, info.docFreq, scoring, "impacts") : new PostingCursor(bytes, info.docFreq, scoring, "impacts");
    },
  };
  return { index, postings, infos };
}

/** Top k by scoring every posting: per unit the sum of f(impact × f(weight)), rounded to float; ties to the lower unit. */
function bruteForce(postings: Map<number, number>[], query: [number, number][], k: number) {
  const acc = new Map<number, number>();
  for (const [t, w] of query) for (const [d, impact] of postings[t]) acc.set(d, (acc.get(d) ?? 0) + f(impact * f(w)));
  return [...acc]
    .map(([unit, s]) => ({ unit, score: f(s) }))
    .sort((a, b) => b.score - a.score || a.unit - b.unit)
    .slice(0, k);
}

describe("MaxScore over an impact index", () => {
  it("returns exactly the brute-force top k (12 terms over 40,000 units, 120 queries, k 1-1000), skipping blocks", () => {
    const { index, postings, infos } = impactIndex(40_000, 5);
    const rand = random(9);
    let compared = 0;
    let postingsOfQueries = 0;
    for (let qi = 0; qi < 120; qi++) {
      const n = 1 + Math.floor(rand() * 6);
      const picked = new Set<number>();
      while (picked.size < n) picked.add(Math.floor(rand() * infos.length));
      // Weights as a learned query encoder gives them (floats), some integral (quantized query weights).
      const query: [number, number][] = [...picked].map((t) => [t, qi % 3 === 0 ? 1 + Math.floor(rand() * 5) : f(0.05 + rand() * 3)]);
      const terms: QueryTerm[] = query.map(([t, w]) => ({ term: `t${t}`, info: infos[t], weight: w }));
      for (const k of [1, 10, 100, 1000]) {
        postingsOfQueries += query.reduce((sum, [t]) => sum + infos[t].docFreq, 0);
        const got = maxScoreSearch(index, terms, k);
        expect(got, `query ${qi} @${k}`).toEqual(bruteForce(postings, query, k));
        compared += got.length;
      }
    }
    expect(compared).toBeGreaterThan(120_000);
    expect(index.stats.blocksSkipped).toBeGreaterThan(0);
    // Pruned: fewer postings scored than exhaustive scoring would (random impacts leave blocks' bounds alike: 56%).
    expect(index.stats.scored).toBeLessThan(0.7 * postingsOfQueries);
  });
});
