// The contract every task of `tartan eval --task` keeps, declared once and run on each registered task
// (./contract.test.ts walks EVAL_TASKS, ./cases.ts gives each a small real gold/guess pair with the
// numbers an existing test records): evaluateTask scores the pair to those numbers, the report is plain
// JSON and the same twice, the text tables are non-empty, and the descriptor's flags are well formed.

import { Option } from "commander";
import { beforeAll, expect, it } from "vitest";
import { formatProblem } from "../../../src/eval/problems.js";
import { EVAL_TASKS, evaluateTask, type TaskResult } from "../../../src/eval/tasks/registry.js";
import type { TaskOptionsBase } from "../../../src/eval/tasks/task.js";

/** One task's contract case: a gold and a guess file, the options, and what the report must say. */
export interface TaskCase {
  gold: string;
  guess: string;
  options?: TaskOptionsBase & Record<string, unknown>;
  /** Asserts the recorded numbers on the report (and, where they are recorded, on the text). */
  check(report: Record<string, unknown>, text: string): void;
  /** Problems the pair must raise, as `tartan eval` prints them (a part of each). */
  problems?: string[];
}

/** Declares the task contract for the task called `name`, on the case `make()` gives. */
export function taskContract(name: string, make: () => TaskCase): void {
  let c: TaskCase;
  let r: TaskResult;
  beforeAll(async () => {
    c = make();
    r = await evaluateTask(name, c.gold, c.guess, c.options);
  }, 120_000);

  it("scores the pair to the recorded numbers", () => {
    expect(r.task).toBe(name);
    c.check(r.report as Record<string, unknown>, r.text);
  });

  it("reports plain JSON, text tables and its problems", () => {
    expect(JSON.parse(JSON.stringify(r.report))).toEqual(r.report);
    expect(typeof r.text).toBe("string");
    expect(r.text.trim().length).toBeGreaterThan(0);
    expect(Array.isArray(r.problems)).toBe(true);
    for (const p of r.problems) expect(["error", "warning", "note"]).toContain(p.severity);
    const printed = r.problems.map(formatProblem);
    for (const m of c.problems ?? []) expect(printed.filter((p) => p.includes(m))).toHaveLength(1);
  });

  it("scores the same twice, and its descriptor's evaluate is evaluateTask's", async () => {
    const again = await EVAL_TASKS.get(name).evaluate(c.gold, c.guess, c.options ?? {});
    expect(again.report).toEqual(r.report);
    expect(again.text).toBe(r.text);
    expect(again.problems).toEqual(r.problems);
  });

  it("declares well-formed flags: long, documented, each setting a distinct option", () => {
    const d = EVAL_TASKS.get(name);
    expect(d.summary.length).toBeGreaterThan(0);
    const options = d.flags.map((f) => f.option);
    expect(new Set(options).size).toBe(options.length);
    for (const f of d.flags) {
      const o = new Option(f.flag, f.description);
      expect(o.long).toMatch(/^--[a-z][a-z-]*$/);
      expect(f.description.length).toBeGreaterThan(0);
      if (f.choices && f.parse) for (const ch of f.choices) expect(() => f.parse!(ch)).not.toThrow();
    }
  });
}
