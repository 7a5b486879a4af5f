// `tartan cluster` and its record: a damaged or wrongly shaped `cluster.json` is refused by `status`,
// `stop` and `start`, naming the file and the field (never "x is not iterable", never exit 0); two
// `cluster start` at once on one directory (real clickhouse-server processes, one shard each) never
// both succeed, and `cluster.json` names only processes running that shard's configuration.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isShardProcess, readCluster, stopCluster } from "../../src/cluster/process.js";

const CLI = join(process.cwd(), "dist", "src", "cli", "main.js");
const tmp = mkdtempSync(join(tmpdir(), "tartan-cluster-record-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const tartan = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8" });

const good = (dir: string) => ({
  name: "tartan",
  dir,
  url: "clickhouse://127.0.0.1:18123/?cluster=tartan",
  shards: [{ index: 0, host: "127.0.0.1", httpPort: 18123, tcpPort: 18124, interserverPort: 18125, dir: `${dir}/shard0`, pid: 999999999, url: "clickhouse://127.0.0.1:18123/" }],
});

describe("a damaged cluster.json", () => {
  const cases: [string, (dir: string) => string, string][] = [
    ["not JSON", () => '{"name": "tartan", "shards": [', "not valid JSON (Unexpected end of JSON input)"],
    ["shards not a list", (d) => JSON.stringify({ ...good(d), shards: 3 }), "shards must be a non-empty array, got 3"],
    ["a shard not an object", (d) => JSON.stringify({ ...good(d), shards: [null] }), "shards[0] must be an object, got null"],
    ["a pid that is text", (d) => JSON.stringify({ ...good(d), shards: [{ ...good(d).shards[0], pid: "12" }] }), 'shards[0].pid must be an integer from 1 to 2147483647, got "12"'],
    ["no name", (d) => JSON.stringify({ ...good(d), name: undefined }), "name must be a non-empty string, got nothing"],
    ["an array", () => "[]", "the file must be a JSON object, got []"],
  ];
  for (const [what, text, message] of cases) {
    it(`${what}: status, stop and start refuse it naming the file and the field`, () => {
      const dir = join(tmp, what.replace(/\W+/g, "-"));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "cluster.json"), text(dir));
      for (const args of [["status"], ["stop"], ["start", "--shards", "1"]]) {
        const p = tartan("cluster", ...args, "--dir", dir);
        expect(p.status, args[0]).toBe(2);
        expect(p.stderr).toContain(`${join(dir, "cluster.json")}: ${message}`);
        expect(p.stderr).not.toMatch(/is not iterable|TypeError|    at /);
      }
      expect(() => readCluster(dir)).toThrow(`${join(dir, "cluster.json")}: ${message}`);
      // nothing was started: no shard directory written
      expect(existsSync(join(dir, "shard0"))).toBe(false);
    });
  }
});

describe("two cluster start at once on one directory", () => {
  it("one succeeds, the other is refused, and cluster.json names only running servers", async () => {
    const dir = join(tmp, "race");
    const base = 20000 + Math.floor(Math.random() * 3000) * 10;
    const start = () =>
      new Promise<{ code: number | null; stderr: string; stdout: string }>((done) => {
        const c = spawn(process.execPath, [CLI, "cluster", "start", "--shards", "1", "--dir", dir, "--base-port", String(base)], { stdio: ["ignore", "pipe", "pipe"] });
        let stderr = "";
        let stdout = "";
        c.stderr.on("data", (b: Buffer) => (stderr += b));
        c.stdout.on("data", (b: Buffer) => (stdout += b));
        c.on("exit", (code) => done({ code, stderr, stdout }));
      });
    try {
      const results = await Promise.all([start(), start()]);
      const ok = results.filter((r) => r.code === 0);
      const refused = results.filter((r) => r.code !== 0);
      expect(ok.length, results.map((r) => r.stderr).join("\n")).toBe(1);
      expect(refused.length).toBe(1);
      // refused by the lock while the other starts, or (had it come later) by the running cluster
      expect(refused[0].stderr).toMatch(new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(: a cluster is already running there| is being written by another process \\(pid \\d+)`));
      const c = readCluster(dir)!;
      expect(c.shards.length).toBe(1);
      expect(isShardProcess(c.shards[0].pid, c.shards[0])).toBe(true);
      expect(ok[0].stderr).toContain(`shard 0: pid ${c.shards[0].pid}, http 127.0.0.1:${base}`);
      expect(existsSync(`${dir}.lock`)).toBe(false);
      expect(readFileSync(join(dir, "cluster.json"), "utf8")).toContain(`"pid": ${c.shards[0].pid}`);
    } finally {
      if (existsSync(join(dir, "cluster.json"))) await stopCluster(dir);
    }
  }, 180_000);
});
