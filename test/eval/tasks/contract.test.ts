// Runs the task contract (./contract.ts) on every task registered in EVAL_TASKS, each on its line of
// ./cases.ts; a task registered without a case, or a case naming no task, fails the guard.

import { describe, expect, it } from "vitest";
import { EVAL_TASKS } from "../../../src/eval/tasks/registry.js";
import { TASK_CASES } from "./cases.js";
import { taskContract } from "./contract.js";

describe("every registered task has a contract case", () => {
  it("and every case names a registered task", () => {
    expect(EVAL_TASKS.names().filter((n) => !(n in TASK_CASES))).toEqual([]);
    expect(Object.keys(TASK_CASES).filter((n) => !EVAL_TASKS.has(n))).toEqual([]);
  });
});

for (const name of EVAL_TASKS.names()) {
  const make = TASK_CASES[name];
  if (make) describe(`task ${name}`, () => taskContract(name, make));
}
