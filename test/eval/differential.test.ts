// Differential fixtures: 300 seeded cases of bench/eval-diff/generate.mjs (random and adversarial
// gold/guess pairs: Unicode, numbers as ids and answers, odd ks, every rank-key combination, malformed
// shapes) with the official evaluator's output, kept in test/eval/fixtures/differential.jsonl so CI
// checks them without Python. Each case must classify clean (bench/eval-diff/compare.mjs): equal
// sections bit for bit, refusals and crashes only where docs/eval.md documents them, and the same
// section whichever --mode computes it.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate, type EvalMode, type EvalResult } from "../../src/eval/evaluate.js";
// @ts-expect-error: plain JavaScript module shared with the differential script
import { classify } from "../../bench/eval-diff/compare.mjs";
// @ts-expect-error: plain JavaScript module shared with the differential script
import { generateCase } from "../../bench/eval-diff/generate.mjs";

interface Case {
  seed: number;
  ks: number[];
  rank_keys: string[];
  gold: string;
  guess: string;
  official: { eval_downstream: Record<string, unknown>; eval_retrieval: Record<string, unknown> };
}
interface Finding {
  section: string;
  kind: string;
  ok: boolean;
  detail?: string;
}

const FILE = fileURLToPath(new URL("./fixtures/differential.jsonl", import.meta.url));
const cases = readFileSync(FILE, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Case);
const tmp = mkdtempSync(join(tmpdir(), "tartan-diff-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("differential fixtures (official outputs of generated cases)", () => {
  it("holds 300 cases, each still what its seed generates", () => {
    expect(cases.length).toBe(300);
    for (const c of cases.slice(0, 20)) {
      const g = generateCase(c.seed);
      expect([g.gold, g.guess, g.ks, g.rankKeys]).toEqual([c.gold, c.guess, c.ks, c.rank_keys]);
    }
  });

  it("every case classifies clean in all three modes", async () => {
    const kinds = new Map<string, number>();
    const bad: string[] = [];
    for (const c of cases) {
      const gold = join(tmp, "gold.jsonl");
      const guess = join(tmp, "guess.jsonl");
      writeFileSync(gold, c.gold);
      writeFileSync(guess, c.guess);
      const runs: Partial<Record<EvalMode, EvalResult>> = {};
      for (const mode of ["all", "downstream", "retrieval"] as const) runs[mode] = await evaluate(gold, guess, { ks: c.ks, rankKeys: c.rank_keys, mode });
      const findings = classify(c.official, runs) as Finding[];
      for (const f of findings) kinds.set(`${f.section} ${f.kind}`, (kinds.get(`${f.section} ${f.kind}`) ?? 0) + 1);
      for (const f of findings) if (!f.ok) bad.push(`seed ${c.seed}: ${f.section} ${f.kind} ${f.detail ?? ""}`);
    }
    expect(bad).toEqual([]);
    // The set exercises equal sections in both evaluators, and the official crashes.
    expect(kinds.get("eval_downstream equal")).toBeGreaterThan(200);
    expect(kinds.get("eval_retrieval equal")).toBeGreaterThan(200);
    expect(kinds.get("eval_downstream both-refuse")).toBeGreaterThan(20);
  }, 120_000);
});

describe("differential fixtures: long ROUGE-L sentence pairs (official outputs; cases regenerated from their seeds)", () => {
  const LONG = fileURLToPath(new URL("./fixtures/differential-long-rouge.jsonl", import.meta.url));
  const longCases = readFileSync(LONG, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Omit<Case, "gold" | "guess">);

  it("tartan's segmented LCS (tables over its 4M-cell block) gives the official eval_downstream bit for bit", async () => {
    expect(longCases.length).toBeGreaterThanOrEqual(4);
    for (const c of longCases) {
      const g = generateCase(c.seed);
      const gold = join(tmp, "long-gold.jsonl");
      const guess = join(tmp, "long-guess.jsonl");
      writeFileSync(gold, g.gold);
      writeFileSync(guess, g.guess);
      const res = await evaluate(gold, guess, { ks: c.ks, rankKeys: c.rank_keys, mode: "downstream" });
      expect(JSON.stringify(res.eval_downstream), `seed ${c.seed}`).toBe(JSON.stringify(c.official.eval_downstream));
    }
  }, 120_000);
});
