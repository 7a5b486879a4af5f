// Hostile input that used to stop or stall an evaluation: 20,000-entry provenance lists (R-precision and
// evidence ranks by hashing, not list scans) give the exact metrics; values are worked out by hand.

import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/eval/evaluate.js";

describe("long provenance lists", () => {
  it("10 records x 20,000 gold and guess provenance entries: exact R-precision, precision and recall", async () => {
    const n = 20000;
    const gold = [];
    const guess = [];
    for (let r = 0; r < 10; r++) {
      // Gold: one evidence set of n pages; guess: n pages of which the first half are gold pages.
      const goldProv = Array.from({ length: n }, (_, i) => ({ wikipedia_id: `g${r}-${i}`, title: `t${i}` }));
      const guessProv = Array.from({ length: n }, (_, i) => ({ wikipedia_id: i < n / 2 ? `g${r}-${i}` : `x${r}-${i}` }));
      gold.push({ id: `q${r}`, input: "q", output: [{ answer: "a", provenance: goldProv }] });
      guess.push({ id: `q${r}`, output: [{ answer: "a", provenance: guessProv }] });
    }
    const res = await evaluate(gold, guess, { ks: [1, 5] });
    // R-precision: the first n guesses hold n/2 gold pages.
    expect(res.eval_retrieval!.Rprec).toBe(0.5);
    // The single evidence set is never completed: no TRUE in the rank.
    expect(res.eval_retrieval!["precision@1"]).toBe(0);
    expect(res.eval_retrieval!["recall@5"]).toBe(0);
    expect(res.eval_downstream!.downstream.em).toBe(1);
  });

  it("many single-page evidence sets: every hit in the top k counts", async () => {
    const n = 20000;
    const goldOutputs = Array.from({ length: n }, (_, i) => ({ answer: "a", provenance: [{ wikipedia_id: String(i) }] }));
    const guessProv = Array.from({ length: n }, (_, i) => ({ wikipedia_id: String(n - 1 - i) }));
    const res = await evaluate([{ id: 1, input: "q", output: goldOutputs }], [{ id: 1, output: [{ answer: "a", provenance: guessProv }] }], { ks: [1, 5, 20000] });
    expect(res.eval_retrieval!["precision@5"]).toBe(1);
    expect(res.eval_retrieval!["recall@5"]).toBe(5 / n);
    expect(res.eval_retrieval!["recall@20000"]).toBe(1);
    // R-precision is the max over gold outputs, each a single page: 1 only for the first guess's page.
    expect(res.eval_retrieval!.Rprec).toBe(1);
  });
});
