// One line per registered task: its name → a small real gold/guess pair and the numbers an existing test
// records for it (KILT: the official evaluator's output on 1,500 HotpotQA dev predictions,
// test/cli/eval.test.ts; Mintaka and WikiReading: test/eval/tasks/cli.test.ts).

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { TaskCase } from "./contract.js";

const at = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const HOTPOT = at("../../../../shared/fixtures/eval/real-hotpotqa-dev-0-1499/");
const MINTAKA_DEV = at("../../../../shared/data/mintaka/mintaka_dev.json");
const SHARD = at("../../fixtures/wikireading/shard.json");

/** A guess file of these predictions. */
function guessFile(lines: unknown[]): string {
  const file = join(mkdtempSync(join(tmpdir(), "tartan-task-case-")), "guess.jsonl");
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n"));
  return file;
}

/** The official evaluator's numbers (expected.json) on real HotpotQA dev predictions. */
function kilt(): TaskCase {
  const exp = JSON.parse(readFileSync(join(HOTPOT, "expected.json"), "utf8")) as Record<string, unknown>;
  return {
    gold: join(HOTPOT, "gold.jsonl"),
    guess: join(HOTPOT, "guess.jsonl"),
    check: (report) => {
      expect(Object.keys(report)).toEqual(["eval_downstream", "eval_retrieval"]);
      expect(JSON.stringify(report.eval_downstream)).toBe(JSON.stringify(exp.eval_downstream));
      expect(JSON.stringify(report.eval_retrieval)).toBe(JSON.stringify(exp.eval_retrieval));
    },
  };
}

/** Three Japanese predictions against the Mintaka dev JSON: 2 hits of 2,000. */
function mintaka(): TaskCase {
  const guess = guessFile([
    { id: "9ace9041-ja", output: [{ answer: "x", meta: { wikidata_id: "Q53945" } }] },
    { id: "db942bdc-ja", output: [{ answer: "いいえ" }] },
    { id: "a1bee914-ja", output: [{ answer: "３" }] },
  ]);
  return {
    gold: MINTAKA_DEV,
    guess,
    options: { lang: "ja" },
    problems: ["1997 of 2000 gold questions have no prediction"],
    check: (r, text) => {
      expect(r.overall).toEqual({ count: 2000, hits: 2, "hits@1": 0.001 });
      expect((r.by_complexity_type as Record<string, unknown>).ordinal).toEqual({ count: 200, hits: 1, "hits@1": 0.005 });
      expect(r.judged_by).toEqual({ wikidata_id: 1, string: 2 });
      expect(text).toContain("  ordinal          200  0.0050");
    },
  };
}

/** Four predictions against the hand-written shard, property classes from the shard itself: Mean F1 3.1667/16. */
function wikireading(): TaskCase {
  const guess = guessFile([
    { id: "7186:occupation", output: [{ answer: "physicist" }] },
    { id: "7251:occupation", output: [{ answer: "mathematician; cryptanalyst" }] },
    { id: "90:country", output: [{ answer: "France" }] },
    { id: "937:date of birth", output: [{ answer: "14 March 1879" }] },
  ]);
  return {
    gold: SHARD,
    guess,
    options: { train: SHARD, separator: ";" },
    check: (r, text) => {
      expect(r.overall).toEqual({ count: 16, "mean-f1": (2 / 3 + 1 / 2 + 1 + 1) / 16 });
      expect(r.categorical).toEqual({ count: 6, "mean-f1": 1 / 6 });
      expect(r.date).toEqual({ count: 3, "mean-f1": 1 / 3 });
      expect(text).toMatch(/^ {2}all +16 +0\.1979$/m);
    },
  };
}

/** Each registered task's case, by name. */
export const TASK_CASES: Record<string, () => TaskCase> = {
  kilt: () => kilt(),
  mintaka: () => mintaka(),
  wikireading: () => wikireading(),
};
