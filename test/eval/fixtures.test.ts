// The exactness test: on every case in ../shared/fixtures/eval, tartan's results equal the official
// evaluator's expected.json to the last bit (same floats, same keys, same key order). Where the official
// code raised, tartan reports the matching problem instead, or, where the meaning is clear, evaluates
// and warns (docs/eval.md).

import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate, type EvalResult } from "../../src/eval/evaluate.js";

const ROOT = fileURLToPath(new URL("../../../shared/fixtures/eval/", import.meta.url));
const cases = readdirSync(ROOT).filter((d) => existsSync(join(ROOT, d, "expected.json"))).sort();

interface Expected {
  eval_downstream: Record<string, unknown> & { error?: string };
  eval_retrieval: Record<string, unknown> & { error?: string };
}

function load(name: string) {
  const dir = join(ROOT, name);
  const args = JSON.parse(readFileSync(join(dir, "args.json"), "utf8")) as { ks: number[]; rank_keys: string[] };
  const expected = JSON.parse(readFileSync(join(dir, "expected.json"), "utf8")) as Expected;
  return { dir, args, expected };
}

async function run(name: string): Promise<{ result: EvalResult; expected: Expected }> {
  const { dir, args, expected } = load(name);
  const result = await evaluate(join(dir, "gold.jsonl"), join(dir, "guess.jsonl"), { ks: args.ks, rankKeys: args.rank_keys });
  return { result, expected };
}

const codes = (r: EvalResult, severity?: string) =>
  r.problems.filter((p) => severity === undefined || p.severity === severity).map((p) => p.code).sort();

/** The official error of each crashing case, and what tartan does instead. */
const officialErrorToProblem: [RegExp, string][] = [
  [/you should provide exactly one valid answer/, "guess-not-one-answer"],
  [/exactly one output with provenance/, "guess-not-one-provenance"],
  [/no prediction provided for id/, "missing-prediction"],
  [/max\(\) arg is an empty sequence/, "gold-no-answer"],
];

describe("official fixtures", () => {
  it("has all 36 cases", () => {
    expect(cases.length).toBe(36);
  });

  for (const name of cases) {
    it(name, async () => {
      const { result, expected } = await run(name);
      for (const [section, ours] of [
        ["eval_downstream", result.eval_downstream],
        ["eval_retrieval", result.eval_retrieval],
      ] as const) {
        const exp = expected[section];
        if (!exp.error) {
          // Bit-identical: same keys in the same order, same doubles.
          expect(JSON.stringify(ours)).toBe(JSON.stringify(exp));
          continue;
        }
        const mapped = officialErrorToProblem.find(([re]) => re.test(exp.error!));
        if (mapped) {
          expect(ours).toBeNull();
          expect(codes(result, "error")).toContain(mapped[1]);
        }
      }
    });
  }
});

describe("where the official evaluator crashes, tartan evaluates what is clear and warns", () => {
  it("TriviaQA gold without input (KeyError: 'input'): every metric but entity_in_input", async () => {
    const { result } = await run("dummy-triviaqa-top1");
    expect(codes(result)).toEqual(["gold-no-input"]);
    expect(result.eval_downstream).toEqual({
      kilt: { "KILT-accuracy": 1, "KILT-em": 1, "KILT-f1": 1, "KILT-rougel": 0.9999999949999999 },
      downstream: { accuracy: 1, em: 1, f1: 1, rougel: 0.9999999949999999 },
      retrieval: { Rprec: 1, "recall@5": 0.9 },
    });
    expect(result.eval_retrieval).not.toBeNull();
    expect(Object.keys(result.eval_retrieval!)).not.toContain("entity_in_input");
    expect(result.eval_retrieval!.Rprec).toBe(1);
    expect(result.eval_retrieval!["precision@5"]).toBe(0.2);
  });

  it("990-token answers (RecursionError in pltrdy): the exact ROUGE-L and a warning", async () => {
    const { result, expected } = await run("probe-p10");
    expect(codes(result)).toEqual(["rouge-recursion"]);
    expect(result.eval_downstream!.downstream).toEqual({ accuracy: 1, em: 1, f1: 1, rougel: 0.999999995 });
    expect(JSON.stringify(result.eval_retrieval)).toBe(JSON.stringify(expected.eval_retrieval));
  });

  it("a guess file ending in a blank line (JSONDecodeError): the blank line is skipped with a note", async () => {
    const { result } = await run("probe-p9");
    const p4 = load("probe-p4").expected;
    expect(codes(result, "note")).toEqual(["blank-lines"]);
    // Same gold as probe-p4, same guess apart from the blank line: the same results.
    expect(JSON.stringify(result.eval_retrieval)).toBe(JSON.stringify(p4.eval_retrieval));
    expect(result.eval_downstream).toBeNull();
    expect(codes(result, "error")).toEqual(["gold-no-answer"]);
  });

  it("missing predictions name the gold file, line and id", async () => {
    const { result } = await run("probe-p2");
    const missing = result.problems.find((p) => p.code === "missing-prediction")!;
    const gold = join(ROOT, "probe-p2", "gold.jsonl");
    expect(missing.count).toBe(2);
    expect(missing.examples).toEqual([
      { file: gold, line: 1, id: "1" },
      { file: gold, line: 2, id: "2" },
    ]);
    expect(result.problems.find((p) => p.code === "guess-extra-id")!.examples[0]).toMatchObject({ line: 2, id: "99" });
  });

  it("several outputs in a guess name every offending line", async () => {
    const { result } = await run("dummy-nq-identity");
    const p = result.problems.find((x) => x.code === "guess-not-one-answer")!;
    expect(p.count).toBe(5);
    expect(p.examples.map((e) => e.id)).toEqual([
      "6915606477668963399",
      "-8366545547296627039",
      "-5004457603684974952",
      "7217222058435937287",
      "-143054837169120955",
    ]);
  });
});

describe("library API over arrays", () => {
  it("gives the same result for records in memory as for the files", async () => {
    const { dir, args, expected } = load("probe-p5");
    const read = (f: string) =>
      readFileSync(join(dir, f), "utf8")
        .split("\n")
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l));
    const result = await evaluate(read("gold.jsonl"), read("guess.jsonl"), { ks: args.ks, rankKeys: args.rank_keys });
    expect(JSON.stringify(result.eval_retrieval)).toBe(JSON.stringify(expected.eval_retrieval));
    expect(JSON.stringify(result.eval_downstream)).toBe(JSON.stringify(expected.eval_downstream));
  });
});
