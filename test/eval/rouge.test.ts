// ROUGE-L of pltrdy rouge 1.0.1 (exclusive, summary level) with the values the official code gives
// (official-evaluator.md, probe p6), including its LCS tie-breaking and sentence splitting quirks.

import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/util/random.js";
import { PLTRDY_RECURSION_LIMIT_STEPS, RougeScorer, Vocabulary, prepareRougeText, rougeL } from "../../src/eval/rouge.js";

describe("rougeL", () => {
  it.each([
    ["the the the cat", "the cat sat on the mat", 0.2857142816326531],
    ["the cat sat on the mat", "The cat sat. On the mat.", 0.7272727223140496],
    ["d c b a", "a b c d", 0.24999999500000009],
    ["US costs 3 dollars", "U.S. costs 3.5 dollars", 0.5999999952],
    ["same words here", "same words here", 0.999999995],
  ])("%j vs %j", (hyp, ref, expected) => {
    expect(rougeL(hyp, ref)).toBe(expected);
  });

  it("is 0 where pltrdy raises ValueError (no sentence in hypothesis or reference)", () => {
    expect(rougeL(".", "blue")).toBe(0);
    expect(rougeL("...", "blue")).toBe(0);
    expect(rougeL("blue", "")).toBe(0);
  });

  it("keeps a whitespace-only piece between dots as the empty word", () => {
    const v = new Vocabulary();
    const t = prepareRougeText("a. . b", v);
    expect(t.sentences.length).toBe(3);
    expect(t.distinctWords).toBe(3); // "a", "", "b"
  });

  it("flags backtracks too long for pltrdy's recursion but still scores them", () => {
    const words = Array.from({ length: 990 }, (_, i) => `w${i}`).join(" ");
    const v = new Vocabulary();
    const scorer = new RougeScorer();
    const s = scorer.score(prepareRougeText(words, v), prepareRougeText(words, v), v.size);
    expect(s).toBe(0.999999995);
    expect(scorer.lastWouldOverflow).toBe(true);
    expect(PLTRDY_RECURSION_LIMIT_STEPS).toBe(985);
    const short = scorer.score(prepareRougeText("a b", v), prepareRougeText("a b", v), v.size);
    expect(short).toBe(0.999999995);
    expect(scorer.lastWouldOverflow).toBe(false);
  });
});

/**
 * pltrdy rouge 1.0.1's `_lcs` + `_recon` + union (rouge_score.py), transcribed on word strings with the
 * full (m+1)×(n+1) table: the oracle the bounded-memory scorer must equal on every input.
 */
function pltrdyRougeL(hyp: string, ref: string): number {
  const sents = (t: string) => t.split(".").filter((s) => s.length > 0).map((s) => { const w = s.split(/\s+/).filter((x) => x.length > 0); return w.length ? w : [""]; });
  const h = sents(hyp);
  const r = sents(ref);
  if (h.length === 0 || r.length === 0) return 0;
  const union = new Set<string>();
  for (const x of r) {
    for (const y of h) {
      const T = Array.from({ length: x.length + 1 }, () => new Int32Array(y.length + 1));
      for (let i = 1; i <= x.length; i++)
        for (let j = 1; j <= y.length; j++) T[i][j] = x[i - 1] === y[j - 1] ? T[i - 1][j - 1] + 1 : Math.max(T[i - 1][j], T[i][j - 1]);
      let i = x.length;
      let j = y.length;
      while (i > 0 && j > 0) {
        if (x[i - 1] === y[j - 1]) {
          union.add(x[i - 1]);
          i--;
          j--;
        } else if (T[i - 1][j] > T[i][j - 1]) i--;
        else j--;
      }
    }
  }
  const rc = union.size / new Set(r.flat()).size;
  const pc = union.size / new Set(h.flat()).size;
  return 2.0 * ((pc * rc) / (pc + rc + 1e-8));
}

function randomText(rand: () => number, words: number, vocab: number, sentenceEvery: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(`v${Math.floor(rand() * vocab)}` + (rand() < 1 / sentenceEvery ? "." : ""));
  return out.join(" ");
}

function score(hyp: string, ref: string, blockCells?: number): number {
  const v = new Vocabulary();
  const h = prepareRougeText(hyp, v);
  const r = prepareRougeText(ref, v);
  return new RougeScorer({ blockCells }).score(h, r, v.size);
}

describe("ROUGE-L in bounded memory", () => {
  it("equals pltrdy's full-table backtrack on 400 random pairs, whatever the block size (ties everywhere)", () => {
    const rand = seededRandom(11);
    for (let c = 0; c < 400; c++) {
      const hyp = randomText(rand, Math.floor(rand() * 80), 2 + Math.floor(rand() * 6), c % 3 === 0 ? 1e9 : 12);
      const ref = randomText(rand, Math.floor(rand() * 80), 2 + Math.floor(rand() * 6), c % 4 === 0 ? 1e9 : 15);
      const want = pltrdyRougeL(hyp, ref);
      for (const block of [4, 9, 40, 300, undefined]) expect(score(hyp, ref, block), `case ${c} block ${block}: ${hyp} | ${ref}`).toBe(want);
    }
  });

  it("a 3,000 x 2,000-word sentence pair equals the full table, in one block and in segments", () => {
    const rand = seededRandom(5);
    const hyp = randomText(rand, 3000, 7, 1e9);
    const ref = randomText(rand, 2000, 7, 1e9);
    const want = pltrdyRougeL(hyp, ref);
    expect(score(hyp, ref)).toBe(want);
    expect(score(ref, hyp)).toBe(pltrdyRougeL(ref, hyp));
    expect(score(hyp, ref, 5000)).toBe(want);
  });

  it("a 100,000-word answer sentence against a 2,000-word gold sentence: exact, and flagged as past pltrdy's recursion", () => {
    const gold = Array.from({ length: 2000 }, (_, i) => `w${i}`);
    const hyp = [...Array.from({ length: 49000 }, (_, i) => `j${i}`), ...gold, ...Array.from({ length: 49000 }, (_, i) => `k${i}`)];
    const v = new Vocabulary();
    const scorer = new RougeScorer();
    // Every gold word is in the LCS: recall 1, precision 2,000 / 100,000 distinct words.
    expect(scorer.score(prepareRougeText(hyp.join(" "), v), prepareRougeText(gold.join(" "), v), v.size)).toBe(0.0392156858900423);
    expect(scorer.lastWouldOverflow).toBe(true);
  });

  it("a 100,000-word answer against a 100,000-word gold sentence (10^10 cells): bit-parallel, seconds not minutes", () => {
    // Dense: 100,000 words of 1,000 types; the gold is the answer without every 7th word and without its
    // last, so every LCS is the gold itself (recall 1). Sparse: 1,000 distinct shared words planted in
    // order among 99,000 words of each side's own, so the LCS is exactly the planted words.
    const rand = seededRandom(23);
    const hyp = Array.from({ length: 100_000 }, () => `w${Math.floor(rand() * 1000)}`);
    const ref = hyp.filter((_, i) => i % 7 !== 3 && i !== hyp.length - 1);
    const planted = (own: string) => Array.from({ length: 100_000 }, (_, i) => (i % 100 === 50 ? `s${i / 100 - 0.5}` : `${own}${i}`)).join(" ");
    const t0 = process.cpuUsage();
    const pd = new Set(ref).size / new Set(hyp).size;
    expect(rougeL(hyp.join(" "), ref.join(" "))).toBe(2.0 * ((pd * 1) / (pd + 1 + 1e-8)));
    const p = 1000 / 100_000;
    expect(rougeL(planted("a"), planted("b"))).toBe(2.0 * ((p * p) / (p + p + 1e-8)));
    const cpu = process.cpuUsage(t0);
    // The full table took 168 CPU-s for one such pair; the bit rows take about 2.
    expect((cpu.user + cpu.system) / 1e6).toBeLessThan(30);
  });

  it("a 100,000-word answer equal to its gold (100,000 x 100,000 words: 40 GB as one table)", () => {
    const text = Array.from({ length: 100000 }, (_, i) => `w${i % 70000}`).join(" ");
    expect(rougeL(text, text)).toBe(0.999999995);
  });
});
