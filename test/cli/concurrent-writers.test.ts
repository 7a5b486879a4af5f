// Concurrent writers, with real processes: every command that writes a named output or store is
// refused while another live process holds its lock (the message names the holder's pid), takes over
// the lock of a dead pid saying so, and removes its lock when done; parallel `runs add` into one
// database all succeed; `index verify` reports a file the manifest does not list.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const LOCK = fileURLToPath(new URL("../../dist/src/util/lock.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-writers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Spawns `tartan …` and resolves with its exit code and output. */
function tartanAsync(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args]);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const pages = join(dir, "pages.jsonl");
const gold = join(dir, "gold.jsonl");
const guess = join(dir, "guess.jsonl");
beforeAll(() => {
  const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ wikipedia_id: `${i}`, wikipedia_title: `Page ${i}`, text: [`Page ${i}\n`, `Paragraph about topic ${i} and ${i % 7}.\n`] }));
  writeFileSync(pages, `${lines.join("\n")}\n`);
  writeFileSync(gold, `${Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: `q${i}`, input: `question ${i}`, output: [{ answer: `a${i}` }] })).join("\n")}\n`);
  writeFileSync(guess, `${Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: `q${i}`, output: [{ answer: i % 2 ? `a${i}` : "x" }] })).join("\n")}\n`);
});

describe("one writer per output", () => {
  let holder: ChildProcess;
  const held = join(dir, "held");
  beforeAll(async () => {
    // Another process holds the lock on `held` (as a running writer would) until it is killed.
    holder = spawn(process.execPath, ["--input-type=module", "-e", `const { lockOutput } = await import(${JSON.stringify(LOCK)}); lockOutput(${JSON.stringify(held)}); console.log("locked"); setInterval(() => {}, 1000);`]);
    await new Promise<void>((resolve) => holder.stdout!.once("data", () => resolve()));
  });
  afterAll(() => holder?.kill("SIGKILL"));

  it("every writing command is refused naming the holder's pid, and touches nothing", () => {
    const commands: string[][] = [
      ["run", "--input", gold, "--index", "nowhere", "--reader", "extractive", "--model", "m.json", "--out", held],
      ["index", "build", "--kind", "bm25", "--pages", pages, "--out", held],
      ["ks", "ingest", pages, "--out", held],
      ["ks", "passages", "--pages", pages, "--out", held],
      ["retrieve", "--index", "nowhere", "--input", gold, "--out", held],
      ["map", "--input", gold, "--ks", "nowhere", "--out", held],
      ["datasets", "convert", "squad", gold, "--out", held],
      ["quickstart", "--work", held],
    ];
    for (const args of commands) {
      const r = tartan(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toBe(`tartan: ${held} is being written by another process (pid ${holder.pid}; lock file ${held}.lock): wait for it to finish, or remove ${held}.lock if that process is not writing it\n`);
    }
    expect(existsSync(held)).toBe(false);
  });

  it("a lock whose process is gone is taken over, saying so, and removed at the end", () => {
    const out = join(dir, "ks-stale");
    writeFileSync(`${out}.lock`, "4194305\ntartan ks ingest\n2026-01-01T00:00:00.000Z\n"); // above Linux's largest pid
    const r = tartan("ks", "ingest", pages, "--out", out);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`tartan: took over the lock on ${out} left by pid 4194305, which is no longer running\n`);
    expect(existsSync(`${out}.lock`)).toBe(false);
    expect(existsSync(join(dir, "ks-stale"))).toBe(true);
  });

  it("two index builds on one --out at once: one builds, the other is refused (or runs after it); the index verifies", async () => {
    const out = join(dir, "index-race");
    const [a, b] = await Promise.all([tartanAsync("index", "build", "--kind", "bm25", "--pages", pages, "--out", out), tartanAsync("index", "build", "--kind", "bm25", "--pages", pages, "--out", out)]);
    for (const r of [a, b]) {
      if (r.code !== 0) {
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(new RegExp(`^tartan: ${out} is being written by another process \\(pid \\d+; lock file ${out}\\.lock\\)`));
      }
    }
    expect([a.code, b.code]).toContain(0);
    expect([a, b].map((r) => r.stderr).join("")).not.toMatch(/\n\s+at /);
    const v = tartan("index", "verify", out);
    expect(v.code).toBe(0);
    expect(existsSync(`${out}.lock`)).toBe(false);
  }, 120_000);
});

describe("the runs database", () => {
  it("four parallel runs add into one new database all succeed", async () => {
    const runs = join(dir, "runs");
    const results = await Promise.all([0, 1, 2, 3].map((i) => tartanAsync("runs", "add", guess, "--gold", gold, "--name", `run-${i}`, "--runs", runs)));
    results.forEach((r, i) => expect([r.code, r.stderr]).toEqual([0, `recorded run-${i} (dataset unknown, 20 queries) in ${runs}\n`]));
    const list = tartan("runs", "list", "--runs", runs);
    expect(list.stdout.split("\n").slice(1, 5).map((l) => l.split(/\s+/)[0]).sort()).toEqual(["run-0", "run-1", "run-2", "run-3"]);
  }, 120_000);

  it("a broken database is named", () => {
    const runs = join(dir, "broken-runs");
    rmSync(runs, { recursive: true, force: true });
    tartan("runs", "list", "--runs", runs);
    writeFileSync(join(runs, "runs.sqlite"), "this is not a database, just text".repeat(200));
    const r = tartan("runs", "list", "--runs", runs);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toBe(`tartan: ${join(runs, "runs.sqlite")}: file is not a database (damaged, or not a tartan runs database)\n`);
  });
});

describe("index verify", () => {
  it("reports a file the manifest does not list", () => {
    const out = join(dir, "index-extra");
    expect(tartan("index", "build", "--kind", "bm25", "--pages", pages, "--out", out).code).toBe(0);
    expect(tartan("index", "verify", out).code).toBe(0);
    writeFileSync(join(out, "segment-99.bin"), "left by another build");
    const v = tartan("index", "verify", out);
    expect(v.code).not.toBe(0);
    expect(v.stdout + v.stderr).toContain(`${join(out, "segment-99.bin")}: not listed in manifest.json (a stray file, e.g. from another build into the same directory; rebuild the index)`);
    expect(readFileSync(join(out, "manifest.json"), "utf8")).not.toContain("segment-99");
  });
});

describe("an interrupted writer", () => {
  it("removes its lock on SIGTERM and still dies of the signal", async () => {
    const out = join(dir, "interrupted");
    const child = spawn(process.execPath, ["--input-type=module", "-e", `const { lockOutput } = await import(${JSON.stringify(LOCK)}); lockOutput(${JSON.stringify(out)}); console.log("locked"); setInterval(() => {}, 1000);`]);
    await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
    expect(existsSync(`${out}.lock`)).toBe(true);
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    child.kill("SIGTERM");
    expect(await exited).toBe("SIGTERM");
    expect(existsSync(`${out}.lock`)).toBe(false);
  });
});
