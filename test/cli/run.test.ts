// `tartan run` through the compiled CLI: two worker shards give exactly the predictions of one
// in-process run, in input order; an interrupted output (cut mid-line) resumes to the same file.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { quickstart } from "../../src/pipeline/quickstart.js";
import { markRunOutput } from "../../src/pipeline/run.js";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const SQUAD = fileURLToPath(new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "tartan-run-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("tartan run", () => {
  it("shards over two processes, merges in input order, resumes, and evaluates", async () => {
    const q = await quickstart({ squad: SQUAD, work, limit: 40, trainLimit: 200 });
    const expected = readFileSync(q.predictions, "utf8");
    const args = ["--input", join(work, "test-gold.jsonl"), "--index", join(work, "index-bm25"), "--reader", "extractive", "--model", join(work, "reader-model.json"), "--text", "cited"];

    const sharded = join(work, "sharded.jsonl");
    const r = tartan("run", ...args, "--out", sharded, "--workers", "2");
    expect(r.code).toBe(0);
    expect(readFileSync(sharded, "utf8")).toBe(expected);
    expect(r.stdout).toContain("downstream   score    KILT");

    const resumed = join(work, "resumed.jsonl");
    const lines = expected.split("\n");
    writeFileSync(resumed, `${lines.slice(0, 10).join("\n")}\n${lines[10].slice(0, 25)}`); // as a killed run leaves it
    markRunOutput(resumed, join(work, "test-gold.jsonl"));
    const again = tartan("run", ...args, "--out", resumed, "--no-evaluate");
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("30 answered, 10 already done, 0 failed");
    expect(readFileSync(resumed, "utf8")).toBe(expected);

    // --config: the same run from a PIPELINE.json
    const config = join(work, "pipeline.json");
    const viaConfig = join(work, "via-config.jsonl");
    const settings = { input: join(work, "test-gold.jsonl"), out: viaConfig, index: [join(work, "index-bm25")], reader: "extractive", model: join(work, "reader-model.json"), text: "cited", evaluate: false };
    writeFileSync(config, JSON.stringify(settings));
    const viaFile = tartan("run", "--config", config);
    expect(viaFile.code).toBe(0);
    expect(viaFile.stdout).toBe("");
    expect(readFileSync(viaConfig, "utf8")).toBe(expected);
    writeFileSync(config, JSON.stringify({ ...settings, topK: "20" }));
    const bad = tartan("run", "--config", config);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(`tartan: ${config}: topK must be a positive integer\n`);
  });

  it("names what is missing", () => {
    const r = tartan("run", "--input", "x.jsonl", "--out", "y.jsonl");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--input, --out and --reader are required");
  });
});
