// `tartan run` under interruption and failure: a run killed and resumed, and a run over two worker
// shards, are byte-identical to one uninterrupted process; shards stop when their parent dies; a run
// where every record failed says so and exits 1 before evaluating; --text full|cited|none.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, spawnSync, execFileSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { quickstart } from "../../src/pipeline/quickstart.js";
import type { KiltRecord } from "../../src/records/types.js";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const SQUAD = fileURLToPath(new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url));
const NQ = fileURLToPath(new URL("../../../shared/data/kilt-samples/nq-dev-kilt.jsonl", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "tartan-run-hard-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lineCount = (f: string) => (existsSync(f) ? readFileSync(f, "utf8").split("\n").length - 1 : 0);

describe("reproducible runs", () => {
  let args: string[];
  beforeAll(async () => {
    await quickstart({ squad: SQUAD, work, limit: 240, trainLimit: 300 });
    args = ["--input", join(work, "test-gold.jsonl"), "--index", join(work, "index-bm25"), "--reader", "extractive", "--model", join(work, "reader-model.json"), "--no-evaluate"];
  }, 600_000);

  it("a killed and resumed run and a two-shard run write exactly the bytes of one uninterrupted process", async () => {
    const one = join(work, "one.jsonl");
    expect(tartan("run", ...args, "--out", one).code).toBe(0);
    const expected = readFileSync(one, "utf8");
    expect(expected.split("\n").length - 1).toBe(240);

    const killed = join(work, "killed.jsonl");
    const child = spawn("node", [CLI, "run", ...args, "--out", killed], { stdio: "ignore" });
    while (lineCount(killed) < 40 && child.exitCode === null) await sleep(20);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const cut = lineCount(killed);
    expect(cut).toBeGreaterThanOrEqual(40);
    expect(cut).toBeLessThan(240);
    const resumed = tartan("run", ...args, "--out", killed);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`${240 - cut} answered, ${cut} already done, 0 failed`);
    expect(readFileSync(killed, "utf8")).toBe(expected);

    const sharded = join(work, "sharded.jsonl");
    expect(tartan("run", ...args, "--out", sharded, "--workers", "2").code).toBe(0);
    expect(readFileSync(sharded, "utf8")).toBe(expected);
  }, 600_000);

  it("--text cited keeps only the cited passages' text, --text none none, and the default all", () => {
    const few = join(work, "few.jsonl");
    execFileSync("sh", ["-c", `head -n 20 ${join(work, "test-gold.jsonl")} > ${few}`]);
    const texts: Record<string, number[]> = {};
    for (const mode of ["full", "cited", "none"]) {
      const out = join(work, `text-${mode}.jsonl`);
      expect(tartan("run", ...args.slice(2), "--input", few, "--out", out, "--text", mode).code).toBe(0);
      const recs = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as KiltRecord);
      texts[mode] = recs.map((r) => r.output[0].provenance!.filter((p) => typeof p.text === "string").length);
    }
    expect(texts.full).toEqual(new Array(20).fill(20));
    expect(texts.none).toEqual(new Array(20).fill(0));
    // The extractive reader cites the one passage its answer comes from.
    expect(texts.cited).toEqual(new Array(20).fill(1));
    expect(statSync(join(work, "text-cited.jsonl")).size).toBeLessThan(statSync(join(work, "text-full.jsonl")).size / 3);
  }, 120_000);
});

describe("runs against an endpoint", () => {
  let server: Server;
  let hang: Server;
  let url: string;
  let hangUrl: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(400, { "content-type": "application/json" });
        res.end('{"error":{"message":"model not found"}}');
      });
    });
    hang = createServer((req) => req.resume()); // never answers
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    await new Promise<void>((r) => hang.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    hangUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => {
    server.close();
    hang.closeAllConnections();
    hang.close();
  });

  it("says that nothing was answered and exits 1 without evaluating when every record failed", async () => {
    const out = join(work, "failed.jsonl");
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((ok) => {
      const c = spawn("node", [CLI, "run", "--input", NQ, "--out", out, "--reader", "generative", "--model", "m", "--base-url", url]);
      let stdout = "";
      let stderr = "";
      c.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      c.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      c.on("exit", (code) => ok({ code, stdout, stderr }));
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("nothing was answered: all 5 records failed");
    expect(r.stdout).toBe(""); // no table of zeros
  }, 60_000);

  it("--workers 2: the shards stop when the parent process dies", async () => {
    const out = join(work, "orphans.jsonl");
    const parent = spawn("node", [CLI, "run", "--input", NQ, "--out", out, "--reader", "generative", "--model", "m", "--base-url", hangUrl, "--workers", "2"], { stdio: "ignore" });
    let shards: number[] = [];
    for (let i = 0; i < 200 && shards.length < 2; i++) {
      await sleep(50);
      const ps = spawnSync("pgrep", ["-P", String(parent.pid)], { encoding: "utf8" }).stdout.trim();
      shards = ps ? ps.split("\n").map(Number) : [];
    }
    expect(shards).toHaveLength(2);
    await sleep(1500); // the shards are now waiting for the endpoint
    parent.kill("SIGKILL");
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && shards.some(alive); i++) await sleep(50);
    const left = shards.filter(alive);
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left).toEqual([]);
  }, 60_000);
});
