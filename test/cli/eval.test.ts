// `tartan eval` end to end through the compiled CLI: table and JSON output, exit codes, problems named
// with file, line and id, and a directory evaluation across datasets.

import { afterAll, describe, expect, it } from "vitest";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const FIX = fileURLToPath(new URL("../../../shared/fixtures/eval/", import.meta.url));
const DATA = fileURLToPath(new URL("../../../shared/data/", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-eval-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const fx = (name: string, file: string) => join(FIX, name, file);

describe("tartan eval", () => {
  it("prints the official keys with --json, equal to the official output", () => {
    const exp = JSON.parse(readFileSync(fx("real-hotpotqa-dev-0-1499", "expected.json"), "utf8"));
    const all = tartan("eval", fx("real-hotpotqa-dev-0-1499", "gold.jsonl"), fx("real-hotpotqa-dev-0-1499", "guess.jsonl"), "--json");
    expect(all.code).toBe(0);
    const out = JSON.parse(all.stdout);
    expect(Object.keys(out)).toEqual(["eval_downstream", "eval_retrieval"]);
    expect(JSON.stringify(out.eval_downstream)).toBe(JSON.stringify(exp.eval_downstream));
    expect(JSON.stringify(out.eval_retrieval)).toBe(JSON.stringify(exp.eval_retrieval));

    const down = tartan("eval", fx("real-hotpotqa-dev-0-1499", "gold.jsonl"), fx("real-hotpotqa-dev-0-1499", "guess.jsonl"), "--json", "--mode", "downstream");
    expect(JSON.stringify(JSON.parse(down.stdout))).toBe(JSON.stringify(exp.eval_downstream));
  });

  it("prints a readable table", () => {
    const r = tartan("eval", fx("probe-p1", "gold.jsonl"), fx("probe-p1", "guess.jsonl"), "--ks", "1,2,3,5");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("em          1.0000  0.6667");
    expect(r.stdout).toContain("R-precision      0.6667");
    expect(r.stdout).toContain("3 records evaluated (gold 3, predictions 4, 1 ignored)");
    expect(r.stderr).toContain("[input] prediction for an id not in the gold file");
  });

  it("evaluates the real HotpotQA dev file against the predictions it has with --only-predicted (the quick start)", () => {
    const r = tartan("eval", join(DATA, "kilt-dev", "hotpotqa-dev-kilt.jsonl"), fx("real-hotpotqa-dev-0-1499", "guess.jsonl"), "--only-predicted", "--json");
    expect(r.code).toBe(0);
    const exp = JSON.parse(readFileSync(fx("real-hotpotqa-dev-0-1499", "expected.json"), "utf8"));
    expect(JSON.stringify(JSON.parse(r.stdout).eval_retrieval)).toBe(JSON.stringify(exp.eval_retrieval));
    expect(r.stderr).toContain("4100 of 5600 gold records have no prediction");
  });

  it("exits 2 naming file, line and id when predictions are missing", () => {
    const r = tartan("eval", fx("probe-p2", "gold.jsonl"), fx("probe-p2", "guess.jsonl"));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no prediction for this gold id (the official code raises ValueError) (2 records): ${fx("probe-p2", "gold.jsonl")}:1 (id "1")`);
    expect(r.stdout).toBe("");
  });

  it("exits 1 when one section cannot be computed, still printing the other", () => {
    const r = tartan("eval", fx("probe-p8", "gold.jsonl"), fx("probe-p8", "guess.jsonl"), "--json");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("prediction must have exactly one output with an answer");
    const out = JSON.parse(r.stdout);
    expect(out.eval_downstream).toBeNull();
    expect(out.eval_retrieval.Rprec).toBe(1);
  });

  it("reports a malformed line with file and line, and exits 2", () => {
    const bad = join(tmp, "bad.jsonl");
    const lines = readFileSync(fx("probe-p1", "guess.jsonl"), "utf8").split("\n");
    lines.splice(1, 0, '{"id": "broken", "output": [');
    writeFileSync(bad, lines.join("\n"));
    const r = tartan("eval", fx("probe-p1", "gold.jsonl"), bad);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`malformed line \\(1 record\\): ${bad.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:2 invalid JSON`));
  });

  it("evaluates a directory of datasets into one table", () => {
    const gold = join(tmp, "gold");
    const guess = join(tmp, "guess");
    mkdirSync(gold);
    mkdirSync(guess);
    copyFileSync(fx("real-wow-dev-0-999", "gold.jsonl"), join(gold, "wow-dev-kilt.jsonl"));
    copyFileSync(fx("real-wow-dev-0-999", "guess.jsonl"), join(guess, "wow-dev-kilt.jsonl"));
    copyFileSync(fx("real-hotpotqa-dev-0-1499", "gold.jsonl"), join(gold, "hotpotqa-dev-kilt.jsonl"));
    copyFileSync(fx("real-hotpotqa-dev-0-1499", "guess.jsonl"), join(guess, "hotpotqa-dev-predictions.jsonl"));
    const r = tartan("eval", "--gold-dir", gold, "--guess-dir", guess, "--json");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const wow = JSON.parse(readFileSync(fx("real-wow-dev-0-999", "expected.json"), "utf8"));
    const hp = JSON.parse(readFileSync(fx("real-hotpotqa-dev-0-1499", "expected.json"), "utf8"));
    expect(Object.keys(out)).toEqual(["hotpotqa-dev", "wow-dev"]);
    expect(out["wow-dev"].eval_downstream).toEqual(wow.eval_downstream);
    expect(out["hotpotqa-dev"].eval_retrieval).toEqual(hp.eval_retrieval);
    const table = tartan("eval", "--gold-dir", gold, "--guess-dir", guess);
    expect(table.stdout.split("\n")[0]).toMatch(/^dataset\s+task\s+metric\s+score\s+KILT\s+R-prec\s+recall@5\s+records$/);
    expect(table.stdout).toMatch(/hotpotqa-dev\s+Open Domain QA\s+em\s+0\.5667\s+0\.0700\s+0\.3827\s+0\.4253\s+1500/);
    expect(table.stdout).toMatch(/wow-dev\s+Dialogue\s+f1\s+0\.5295\s+0\.1170\s+0\.2260\s+0\.6350\s+1000/);
  });
});
