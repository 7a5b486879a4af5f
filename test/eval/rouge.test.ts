// ROUGE-L of pltrdy rouge 1.0.1 (exclusive, summary level) with the values the official code gives
// (official-evaluator.md, probe p6), including its LCS tie-breaking and sentence splitting quirks.

import { describe, expect, it } from "vitest";
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
