// A note when the predictions' and the gold's values of a rank key never agree (issue 36 §5): on the real
// HotpotQA dev gold (1,500 records, sections "Section::::Abstract."), predictions that are the gold's own
// provenance with each section's final period the other way (as tartan retrieve once wrote
// "Section::::Abstract" against the converters' "Section::::Abstract.") score 0 at
// section level, and the evaluator says why; the same predictions with the gold's sections score 1, no note.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/eval/evaluate.js";
import type { KiltRecord } from "../../src/records/types.js";

const GOLD = new URL("../../../shared/fixtures/eval/real-hotpotqa-dev-0-1499/gold.jsonl", import.meta.url).pathname;
const gold = readFileSync(GOLD, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as KiltRecord);
const KEYS = ["wikipedia_id", "section"];

/** The gold's provenance as predictions, each section passed through `section`. */
function guesses(section: (s: string) => string): KiltRecord[] {
  return gold.map((r) => ({
    id: r.id,
    input: r.input,
    output: [{ answer: r.output![0].answer, provenance: r.output![0].provenance!.map((p) => ({ ...p, section: section(p.section as string) })) }],
  }));
}

describe("rank keys whose values never match", () => {
  it("are noted, naming the keys, when no retrieved passage matches any gold provenance", async () => {
    const r = await evaluate(GOLD, guesses((s) => (s.endsWith(".") ? s.slice(0, -1) : `${s}.`)), { rankKeys: KEYS });
    expect(r.eval_retrieval!.Rprec).toBe(0);
    expect(r.eval_retrieval!["success_rate@5"]).toBe(0);
    const notes = r.problems.filter((p) => p.code === "rank-key-no-match");
    expect(notes).toHaveLength(1);
    expect(notes[0].severity).toBe("note");
    expect(notes[0].message).toContain("no retrieved passage matched any gold provenance on --rank-keys wikipedia_id,section");
  });

  it("are not noted when they match: the gold's own sections score Rprec 1", async () => {
    const r = await evaluate(GOLD, guesses((s) => s), { rankKeys: KEYS });
    expect(r.eval_retrieval!.Rprec).toBe(1);
    expect(r.problems.filter((p) => p.code === "rank-key-no-match")).toEqual([]);
  });
});
