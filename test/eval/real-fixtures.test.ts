// Exactness with non-default ks and rank keys, in all three modes: real KILT dev records (HotpotQA,
// Wizard of Wikipedia) with sections, paragraph spans, titles and mixed id types as the ranked units
// (test/eval/fixtures/real, made by bench/eval-diff/make_real_fixtures.py; expected.json is the
// official evaluator's output). The combined --json keeps eval_downstream's page-level Rprec/recall@5
// apart from eval_retrieval's figures.

import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate, type EvalMode } from "../../src/eval/evaluate.js";
import { pythonJson } from "../../src/util/python-json.js";
import { officialJson } from "../../src/eval/report.js";

const ROOT = fileURLToPath(new URL("./fixtures/real/", import.meta.url));
const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const cases = readdirSync(ROOT).sort();

function load(name: string) {
  const dir = join(ROOT, name);
  const args = JSON.parse(readFileSync(join(dir, "args.json"), "utf8")) as { ks: number[]; rank_keys: string[] };
  const expected = JSON.parse(readFileSync(join(dir, "expected.json"), "utf8"));
  return { gold: join(dir, "gold.jsonl"), guess: join(dir, "guess.jsonl"), args, expected };
}

describe("real fixtures with non-default ks and rank keys", () => {
  it("has the four cases", () => {
    expect(cases).toEqual(["hotpotqa-paragraph-span-ks-7-1-3", "hotpotqa-section-ks-1-2-3", "hotpotqa-title-ks-1-100", "wow-mixed-ids-ks-2-4"]);
  });

  for (const name of cases) {
    it(`${name}: bit-identical in all three modes`, async () => {
      const { gold, guess, args, expected } = load(name);
      const opts = { ks: args.ks, rankKeys: args.rank_keys };
      const runs: Record<EvalMode, Awaited<ReturnType<typeof evaluate>>> = {
        all: await evaluate(gold, guess, { ...opts, mode: "all" }),
        downstream: await evaluate(gold, guess, { ...opts, mode: "downstream" }),
        retrieval: await evaluate(gold, guess, { ...opts, mode: "retrieval" }),
      };
      expect(JSON.stringify(officialJson(runs.all))).toBe(JSON.stringify(expected));
      expect(JSON.stringify(officialJson(runs.downstream))).toBe(JSON.stringify(expected.eval_downstream));
      expect(JSON.stringify(officialJson(runs.retrieval))).toBe(JSON.stringify(expected.eval_retrieval));
      for (const r of Object.values(runs)) expect(r.problems.filter((p) => p.severity !== "note")).toEqual([]);
    });
  }

  it("the combined --json keeps the downstream block page level (section-level eval_retrieval differs)", () => {
    const { gold, guess, expected } = load("hotpotqa-section-ks-1-2-3");
    const r = spawnSync("node", [CLI, "eval", gold, guess, "--ks", "1,2,3", "--rank-keys", "wikipedia_id,section", "--json"], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${pythonJson(expected)}\n`);
    const out = JSON.parse(r.stdout);
    expect(out.eval_downstream.retrieval).toEqual({ Rprec: 0.38, "recall@5": 0.48 });
    expect(out.eval_retrieval.Rprec).toBe(0.28);
    expect(out.eval_retrieval["recall@5"]).toBeUndefined();
  });
});
