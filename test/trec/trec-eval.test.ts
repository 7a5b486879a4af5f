// trec_eval's measures against trec_eval 10.0 itself: for SQuAD runs written by `tartan retrieve`
// (BM25 and TF-IDF over paragraphs, BM25 over pages) and for generated edge cases (ties, graded
// relevance, queries missing on one side, duplicate documents, an empty run), tartan prints exactly
// what trec_eval printed, line for line, with and without -q and -c; where trec_eval stops, tartan
// stops with an error that says why.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { readQrels, readRun } from "../../src/trec/files.js";
import { fixed4, formatTrecEval, parseMeasures, trecEval } from "../../src/trec/measures.js";

const ROOT = fileURLToPath(new URL("../fixtures/trec/", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-trec-"));
const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));

interface Invocation {
  args: string[];
  status: number;
  stdout: string;
  stderr: string;
}

function readMaybeGz(dir: string, name: string): string {
  const gz = join(dir, `${name}.gz`);
  return existsSync(gz) ? gunzipSync(readFileSync(gz)).toString("utf8") : readFileSync(join(dir, name), "utf8");
}

/** The case's qrels and run as plain files (trec_eval read them plain). */
function caseFiles(name: string): { qrels: string; run: string; expected: Invocation[] } {
  const dir = join(ROOT, name);
  const out = join(tmp, name);
  spawnSync("mkdir", ["-p", out]);
  writeFileSync(join(out, "qrels"), readMaybeGz(dir, "qrels"));
  writeFileSync(join(out, "run"), readMaybeGz(dir, "run"));
  return { qrels: join(out, "qrels"), run: join(out, "run"), expected: JSON.parse(readMaybeGz(dir, "expected.json")).invocations };
}

function tartanTrecEval(qrels: string, run: string, args: string[]): string {
  const specs: string[] = [];
  for (let i = 0; i < args.length; i++) if (args[i] === "-m") specs.push(args[++i]);
  const result = trecEval(readQrels(qrels), readRun(run), parseMeasures(specs.length ? specs : ["official"]), { complete: args.includes("-c") });
  return formatTrecEval(result, args.includes("-q"));
}

const CASES = readdirSync(ROOT).sort();

describe("trec_eval 10.0 measures", () => {
  it("has the cases", () => {
    expect(CASES).toEqual(["duplicate", "empty", "graded", "missing", "squad-bm25", "squad-bm25-page", "squad-tfidf", "ties"]);
  });
  for (const name of CASES)
    it(name, () => {
      const { qrels, run, expected } = caseFiles(name);
      for (const inv of expected) {
        const label = `${name}: trec_eval ${inv.args.join(" ")}`;
        if (inv.status === 0) expect(tartanTrecEval(qrels, run, inv.args), label).toBe(inv.stdout);
        else expect(() => tartanTrecEval(qrels, run, inv.args), label).toThrow(/duplicate docs|empty run|no results in the run/);
      }
    });
});

describe("tartan eval --qrels --run (CLI)", () => {
  it("prints trec_eval's lines for the SQuAD BM25 run (-q, the issue's measures)", () => {
    const { qrels, run, expected } = caseFiles("squad-bm25");
    const inv = expected[3];
    expect(inv.args).toEqual(["-q", "-m", "map", "-m", "ndcg_cut.10", "-m", "P.10", "-m", "recall.100", "-m", "recip_rank", "-m", "Rprec", "-m", "success.5"]);
    const r = spawnSync("node", [CLI, "eval", "--qrels", qrels, "--run", run, "--measures", "map,ndcg_cut_10,P_10,recall_100,recip_rank,Rprec,success_5", "-q"], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(inv.stdout);
    const json = spawnSync("node", [CLI, "eval", "--qrels", qrels, "--run", run, "-m", "map", "--json"], { encoding: "utf8" });
    expect(JSON.parse(json.stdout).all.map.toFixed(4)).toBe(inv.stdout.split("\n").find((l) => l.startsWith("map ") && l.includes("\tall\t"))!.split("\t")[2]);
  });
  it("stops where trec_eval stops, saying why", () => {
    const { qrels, run } = caseFiles("missing");
    const r = spawnSync("node", [CLI, "eval", "--qrels", qrels, "--run", run], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("query m2 is judged in the qrels but has no results in the run");
    const bad = join(tmp, "bad.run");
    writeFileSync(bad, "q1 Q0 d1 1 2.0\n");
    const r2 = spawnSync("node", [CLI, "eval", "--qrels", qrels, "--run", bad], { encoding: "utf8" });
    expect(r2.stderr).toContain(`${bad}:1: 5 fields, a run line has 6`);
  });
});

describe("printf %6.4f", () => {
  it("rounds exact halves to even, like C", () => {
    expect(fixed4(1 / 32)).toBe("0.0312");
    expect(fixed4(3 / 32)).toBe("0.0938");
    expect(fixed4(0.00015)).toBe("0.0001"); // the double is just below the half
    expect(fixed4(2 / 3)).toBe("0.6667");
    expect(fixed4(1)).toBe("1.0000");
  });
});
