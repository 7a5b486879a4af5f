// Nothing scored is never a table of zeros (issue 36): `tartan eval` exits 2 with the reason on an empty
// gold file, on two empty files and on `--only-predicted` against a gold file no prediction matches; and
// `tartan validate` on an empty file says "no records" without counting a record.

import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/eval/evaluate.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "tartan-nothing-scored-"));
const empty = join(dir, "empty.jsonl");
const gold = join(dir, "gold.jsonl");
const guess = join(dir, "guess.jsonl");
writeFileSync(empty, "");
writeFileSync(gold, `${JSON.stringify({ id: "1", input: "q", output: [{ answer: "a" }] })}\n`);
writeFileSync(guess, `${JSON.stringify({ id: "9", input: "q", output: [{ answer: "a" }] })}\n`);
const tartan = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8" });

describe("nothing scored", () => {
  it("an empty gold file: exit 2, no table", () => {
    for (const g of [guess, empty]) {
      const r = tartan("eval", empty, g);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`error   [input] the gold file ${empty} holds no records: nothing to score`);
      expect(r.stderr).toContain("tartan: nothing scored");
    }
  });

  it("--only-predicted against a gold file no prediction matches: exit 2, with the counts", () => {
    const r = tartan("eval", gold, guess, "--only-predicted", "--json");
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`--only-predicted: no prediction has the id of one of the 1 gold records of ${gold} (predictions: 1): is this the right gold file?`);
  });

  it("the library says so too, with null sections", async () => {
    const r = await evaluate(empty, guess);
    expect([r.eval_downstream, r.eval_retrieval, r.counts.evaluated]).toEqual([null, null, 0]);
    expect(r.problems.map((p) => [p.code, p.severity])).toContainEqual(["nothing-scored", "error"]);
  });

  it("validate on an empty file counts no record", () => {
    const r = tartan("validate", empty);
    expect(r.stdout + r.stderr).toContain("  warning  no records\n");
    expect(r.stdout + r.stderr).not.toContain("no records (1 record)");
  });
});
