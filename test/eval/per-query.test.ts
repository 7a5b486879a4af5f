// Per-query scores: on the real KILT dev fixtures (HotpotQA, Wizard of Wikipedia, paragraph rank keys),
// the mean of every per-query value, summed in gold order, is exactly the printed summary figure,
// which is itself the official evaluator's; through the library and through `tartan eval --per-query`.

import { afterAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate, type PerQueryRow } from "../../src/eval/evaluate.js";

const FIX = fileURLToPath(new URL("../../../shared/fixtures/eval/", import.meta.url));
const DEV = fileURLToPath(new URL("../../../shared/data/kilt-dev/", import.meta.url));
const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-per-query-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Section = Record<string, unknown>;

/** The mean of each leaf over the rows' sections, summed in row order and divided once (as the summary). */
function means(sections: Section[]): Section {
  const first = sections[0];
  const out: Section = {};
  for (const [k, v] of Object.entries(first)) {
    if (typeof v === "number") {
      let s = 0;
      for (const sec of sections) s += sec[k] as number;
      out[k] = s / sections.length;
    } else out[k] = means(sections.map((sec) => sec[k] as Section));
  }
  return out;
}

const cases = [
  { name: "real-hotpotqa-dev-0-1499", rows: 1500 },
  { name: "real-hotpotqa-dev-0-1499-para", rows: 1500 },
  { name: "real-wow-dev-0-999", rows: 1000 },
];

describe("per-query scores", () => {
  for (const c of cases) {
    it(`${c.name}: means of the rows equal the summary and the official figures exactly`, async () => {
      const dir = join(FIX, c.name);
      const args = JSON.parse(readFileSync(join(dir, "args.json"), "utf8")) as { ks: number[]; rank_keys: string[] };
      const expected = JSON.parse(readFileSync(join(dir, "expected.json"), "utf8"));
      const rows: PerQueryRow[] = [];
      const r = await evaluate(join(dir, "gold.jsonl"), join(dir, "guess.jsonl"), {
        ks: args.ks,
        rankKeys: args.rank_keys,
        perQuery: (row) => rows.push(row),
      });
      expect(rows.length).toBe(c.rows);
      // Gold order, gold ids.
      const goldIds = readFileSync(join(dir, "gold.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => String(JSON.parse(l).id).trim());
      expect(rows.map((x) => x.id)).toEqual(goldIds);
      const down = means(rows.map((x) => x.eval_downstream as unknown as Section));
      const ret = means(rows.map((x) => x.eval_retrieval as Section));
      expect(JSON.stringify(down)).toBe(JSON.stringify(r.eval_downstream));
      expect(JSON.stringify(ret)).toBe(JSON.stringify(r.eval_retrieval));
      expect(JSON.stringify(down)).toBe(JSON.stringify(expected.eval_downstream));
      expect(JSON.stringify(ret)).toBe(JSON.stringify(expected.eval_retrieval));
      // Every row has the summary's keys in its order, and values a single datapoint can take.
      for (const x of rows) {
        expect(Object.keys(x.eval_retrieval!)).toEqual(Object.keys(r.eval_retrieval!));
        expect(x.eval_retrieval!["success_rate@5"] === 0 || x.eval_retrieval!["success_rate@5"] === 1).toBe(true);
        expect([0, 1]).toContain(x.eval_downstream!.downstream.em);
      }
    });
  }

  it("the full HotpotQA dev file with --only-predicted: one row per predicted gold record", async () => {
    const rows: PerQueryRow[] = [];
    const r = await evaluate(join(DEV, "hotpotqa-dev-kilt.jsonl"), join(FIX, "real-hotpotqa-dev-0-1499", "guess.jsonl"), {
      onlyPredicted: true,
      perQuery: (row) => rows.push(row),
    });
    expect(r.counts.goldRecords).toBe(5600);
    expect(rows.length).toBe(1500);
    expect(JSON.stringify(means(rows.map((x) => x.eval_retrieval as Section)))).toBe(JSON.stringify(r.eval_retrieval));
  });

  it("a section that could not be computed is null in every row too", async () => {
    const rows: PerQueryRow[] = [];
    const r = await evaluate(join(FIX, "probe-p8", "gold.jsonl"), join(FIX, "probe-p8", "guess.jsonl"), {
      perQuery: (row) => rows.push(row),
    });
    expect(r.eval_downstream).toBeNull();
    expect(rows.length).toBeGreaterThan(0);
    for (const x of rows) {
      expect(x.eval_downstream).toBeNull();
      expect(x.eval_retrieval).not.toBeNull();
    }
  });
});

describe("tartan eval --per-query", () => {
  it("writes one JSON line per gold record whose means are the printed --json figures", () => {
    const dir = join(FIX, "real-wow-dev-0-999");
    const out = join(tmp, "wow.jsonl");
    const r = spawnSync("node", [CLI, "eval", join(dir, "gold.jsonl"), join(dir, "guess.jsonl"), "--json", "--per-query", out], {
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    const printed = JSON.parse(r.stdout);
    const rows = readFileSync(out, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as PerQueryRow);
    expect(rows.length).toBe(1000);
    expect(Object.keys(rows[0])).toEqual(["id", "eval_downstream", "eval_retrieval"]);
    expect(JSON.stringify(means(rows.map((x) => x.eval_downstream as unknown as Section)))).toBe(JSON.stringify(printed.eval_downstream));
    expect(JSON.stringify(means(rows.map((x) => x.eval_retrieval as Section)))).toBe(JSON.stringify(printed.eval_retrieval));
    // No temporary file left beside it.
    expect(readdirSync(tmp).filter((f) => f.includes("partial"))).toEqual([]);
  });

  it("refuses to overwrite an input, even through a link, and leaves it intact", () => {
    const dir = join(FIX, "probe-p1");
    const guess = join(tmp, "guess.jsonl");
    const content = readFileSync(join(dir, "guess.jsonl"), "utf8");
    writeFileSync(guess, content);
    const link = join(tmp, "link.jsonl");
    symlinkSync(guess, link);
    for (const target of [guess, link]) {
      const r = spawnSync("node", [CLI, "eval", join(dir, "gold.jsonl"), guess, "--ks", "1,2,3,5", "--per-query", target], { encoding: "utf8" });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`${target}: this output is the input ${guess}`);
      expect(readFileSync(guess, "utf8")).toBe(content);
    }
  });

  it("writes nothing when nothing is scored (exit 2)", () => {
    const dir = join(FIX, "probe-p2");
    const out = join(tmp, "p2.jsonl");
    const r = spawnSync("node", [CLI, "eval", join(dir, "gold.jsonl"), join(dir, "guess.jsonl"), "--per-query", out], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(tmp).filter((f) => f.includes("partial"))).toEqual([]);
  });
});

describe("tartan eval with GOLD and GUESS swapped", () => {
  for (const name of ["real-wow-dev-0-999", "real-hotpotqa-dev-0-1499"]) {
    it(`${name}: says so first and exits 2 (nothing scored)`, () => {
      const dir = join(FIX, name);
      const r = spawnSync("node", [CLI, "eval", join(dir, "guess.jsonl"), join(dir, "gold.jsonl"), "--json"], { encoding: "utf8" });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.split("\n")[0]).toContain("did you swap GOLD and GUESS?");
    });
  }

  it("the right order raises no such error", () => {
    const dir = join(FIX, "real-wow-dev-0-999");
    const r = spawnSync("node", [CLI, "eval", join(dir, "gold.jsonl"), join(dir, "guess.jsonl")], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain("swap");
  });
});
