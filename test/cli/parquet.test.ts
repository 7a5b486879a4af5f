// Hugging Face Parquet through the compiled CLI: `validate`, `eval`, `ks ingest` and `datasets convert
// parquet` take the kilt_tasks / kilt_wikipedia layouts as they take JSONL; errors name file, row and field.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readSquadFile, squadToPages } from "../../src/knowledge/squad.js";
import { parseKiltLines, stringFeature, listFeature, structFeature, writeKiltTasksParquet, writeKiltWikipediaParquet, writeParquetRows } from "../records/hf-parquet.js";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const FIX = fileURLToPath(new URL("../../../shared/fixtures/eval/", import.meta.url));
const DATA = fileURLToPath(new URL("../../../shared/data/", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-parquet-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", cwd: dir });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const gold = join(FIX, "real-hotpotqa-dev-0-1499", "gold.jsonl");
const guess = join(FIX, "real-hotpotqa-dev-0-1499", "guess.jsonl");
const goldPq = join(dir, "hotpotqa-dev.parquet");
const pagesPq = join(dir, "pages.parquet");
const badPq = join(dir, "bad.parquet");

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
  writeKiltTasksParquet(goldPq, parseKiltLines(readFileSync(gold, "utf8")), 600);
  writeKiltWikipediaParquet(pagesPq, squadToPages(readSquadFile(join(DATA, "squad", "dev-v1.1.reconstructed.json"))), 16);
  writeParquetRows(
    badPq,
    [stringFeature("id"), stringFeature("input"), listFeature("output", structFeature("element", [stringFeature("answer"), stringFeature("meta")]))],
    [
      { id: "q1", input: "a question", output: [{ answer: "yes" }] },
      { id: "q2", input: "another", output: [{ answer: "no", meta: "not a struct" }] },
    ],
  );
});

describe("Parquet input on the command line", () => {
  it("eval scores a kilt_tasks Parquet gold file as the official evaluator scores its JSONL", () => {
    const exp = JSON.parse(readFileSync(join(FIX, "real-hotpotqa-dev-0-1499", "expected.json"), "utf8"));
    const r = tartan("eval", goldPq, guess, "--json");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(JSON.stringify(out.eval_downstream)).toBe(JSON.stringify(exp.eval_downstream));
    expect(JSON.stringify(out.eval_retrieval)).toBe(JSON.stringify(exp.eval_retrieval));
  });

  it("validate reads a Parquet file like its JSONL, and names file, row and field of a bad row", () => {
    const ok = tartan("validate", goldPq, "--json");
    expect(ok.code).toBe(0);
    const [report] = JSON.parse(ok.stdout).files;
    expect(report.records).toBe(1500);
    expect(report.valid).toBe(true);
    const bad = tartan("validate", badPq);
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toContain("output[0].meta: expected a struct, found string");
    expect(bad.stdout).toBe(
      [
        `${badPq}: 1 task record (1 malformed row)`,
        "  error    Parquet field of the wrong type (1 record) row 2",
        `           e.g. row 2: field output[0].meta: expected a struct, found string "not a struct"`,
        "  => INVALID (1 error, 0 warnings)",
        "",
      ].join("\n"),
    );
  });

  it("ks ingest stores the pages of a kilt_wikipedia Parquet file", () => {
    const ks = join(dir, "ks");
    const r = tartan("ks", "ingest", pagesPq, "--out", ks);
    expect(r.code, r.stderr).toBe(0);
    const stats = tartan("ks", "stats", "--ks", ks, "--json");
    expect(JSON.parse(stats.stdout).pages).toBe(48);
    const page = tartan("ks", "get", "--ks", ks, "--id", "squad:Super_Bowl_50", "--json");
    expect(page.code).toBe(0);
    expect(JSON.parse(page.stdout).wikipedia_title).toBe("Super Bowl 50");
  });

  it("datasets convert parquet writes the KILT JSONL, stops at a bad row (nothing written) or skips it with --skip-bad", () => {
    const out = join(dir, "hotpotqa-dev.jsonl");
    const r = tartan("datasets", "convert", "parquet", goldPq, "--out", out);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${out}: 1,500 rows\n`);
    const lines = readFileSync(out, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(1500);
    expect(JSON.parse(lines[0]).id).toBe(JSON.parse(readFileSync(gold, "utf8").split("\n")[0]).id);
    // The converted file scores as the original does.
    expect(tartan("eval", out, guess, "--json").stdout).toBe(tartan("eval", gold, guess, "--json").stdout);

    const badOut = join(dir, "bad.jsonl");
    const stop = tartan("datasets", "convert", "parquet", badPq, "--out", badOut);
    expect(stop.code).toBe(2);
    expect(stop.stderr).toContain(`${badPq}: row 2: output[0].meta: expected a struct, found string "not a struct"`);
    expect(existsSync(badOut)).toBe(false);
    const skip = tartan("datasets", "convert", "parquet", badPq, "--out", badOut, "--skip-bad");
    expect(skip.code).toBe(1);
    expect(skip.stderr).toContain(`${badPq}: row 2: output[0].meta: expected a struct, found string "not a struct"; skipped`);
    expect(skip.stdout).toBe(`${badOut}: 1 rows, 1 skipped\n`);
    expect(readFileSync(badOut, "utf8")).toBe('{"id":"q1","input":"a question","output":[{"answer":"yes"}]}\n');

    const self = tartan("datasets", "convert", "parquet", badPq, "--out", badPq);
    expect(self.code).toBe(2);
    expect(self.stderr).toContain("refusing to overwrite it");
  });
});
