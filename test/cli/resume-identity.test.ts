// Resume checks what it resumes: a killed BM25 build whose pages file was replaced (same size, same
// modification time, other content) starts over, saying so, and builds exactly what a fresh build of the
// new pages builds; `tartan run`'s predictions for a changed input start over; an ingest refuses to
// continue over a changed file even when size and time are kept.

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ingest } from "../../src/knowledge/ingest.js";
import { readSquadFile, squadToPages } from "../../src/knowledge/squad.js";
import { resumeOutput } from "../../src/pipeline/run.js";
import { fileIdentity, identityChange, inputIdentity } from "../../src/util/input-identity.js";

const SQUAD = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), "tartan-resume-id-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const bm25Files = (dir: string) => readdirSync(dir).filter((f) => f.startsWith("bm25.")).sort();

/** Replaces `file`'s content with `text` of the same length, keeping its modification time to the nanosecond. */
function replaceKeepingSizeAndTime(file: string, text: string): void {
  const st = statSync(file, { bigint: true });
  expect(BigInt(Buffer.byteLength(text))).toBe(st.size);
  writeFileSync(file, text);
  const ns = st.mtimeNs;
  execFileSync("touch", ["-m", "-d", `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, "0")}`, file]);
  expect(statSync(file, { bigint: true }).mtimeNs).toBe(ns);
}

describe("input identity", () => {
  it("sees size, time and content changes, and nothing else", () => {
    const f = join(root, "id.txt");
    writeFileSync(f, "x".repeat(3_000_000));
    const a = inputIdentity(f)!;
    expect(identityChange(a, inputIdentity(f))).toBe(null);
    replaceKeepingSizeAndTime(f, `${"x".repeat(1_500_000)}y${"x".repeat(1_499_999)}`);
    expect(identityChange(a, inputIdentity(f))).toBe(`${f} has other content (same size and time)`);
    appendFileSync(f, "z");
    expect(identityChange(a, inputIdentity(f))).toBe(`${f} is 3000001 bytes, was 3000000`);
    expect(inputIdentity("-")).toBe(null);
    expect(inputIdentity("clickhouse://host/db")).toBe(null);
    expect(fileIdentity(f).size).toBe(3_000_001);
  });
});

describe("a killed BM25 build over a replaced pages file", () => {
  it("starts over, saying so, and equals a fresh build of the new pages", async () => {
    const pages = squadToPages(readSquadFile(SQUAD));
    const lines = (tag: string) => Array.from({ length: 6 }, (_, c) => pages.map((p) => JSON.stringify({ ...p, wikipedia_id: `${p.wikipedia_id}#${c}${tag}` }))).flat();
    const file = join(root, "pages.jsonl");
    writeFileSync(file, `${lines("a").join("\n")}\n`);
    const args = (out: string) => [CLI, "index", "build", "--kind", "bm25", "--pages", file, "--out", out, "--memory", "1M", "--threads", "2"];
    const out = join(root, "index");
    const state = join(root, ".index.building", "bm25.build.json");
    const child = spawn(process.execPath, args(out), { stdio: "ignore" });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    for (let i = 0; i < 6000; i++) {
      await new Promise((r) => setTimeout(r, 5));
      if (existsSync(state) && (JSON.parse(readFileSync(state, "utf8")) as { segments: unknown[] }).segments.length >= 2) break;
    }
    child.kill("SIGKILL");
    await exited;
    expect(existsSync(out)).toBe(false);
    // Other page ids, same bytes count, same modification time.
    replaceKeepingSizeAndTime(file, `${lines("b").join("\n")}\n`);
    const r = spawnSync(process.execPath, args(out), { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`tartan: bm25 build in ${join(root, ".index.building")}: ${file} has other content (same size and time) since the build began: starting over\n`);
    expect(r.stderr).not.toMatch(/resumed after/);
    const fresh = join(root, "fresh");
    expect(spawnSync(process.execPath, args(fresh), { encoding: "utf8" }).status).toBe(0);
    for (const f of bm25Files(fresh)) expect(readFileSync(join(out, f)).equals(readFileSync(join(fresh, f))), f).toBe(true);
    expect(readFileSync(join(out, "units.jsonl")).equals(readFileSync(join(fresh, "units.jsonl")))).toBe(true);
    expect(spawnSync(process.execPath, [CLI, "index", "verify", out], { encoding: "utf8" }).status).toBe(0);
  }, 300_000);
});

describe("a killed entity build over a replaced pages file", () => {
  it("starts over, saying so, and equals a fresh build of the new pages", async () => {
    const pages = squadToPages(readSquadFile(SQUAD));
    const lines = (tag: string) => Array.from({ length: 6 }, (_, c) => pages.map((p) => JSON.stringify({ ...p, wikipedia_id: `${p.wikipedia_id}#${c}${tag}`, wikipedia_title: `${p.wikipedia_title} ${c}${tag}` }))).flat();
    const file = join(root, "entity-pages.jsonl");
    writeFileSync(file, `${lines("a").join("\n")}\n`);
    const args = (out: string) => [CLI, "index", "build", "--kind", "entity", "--pages", file, "--out", out, "--memory", "1M"];
    const out = join(root, "entity");
    const state = join(root, ".entity.building", "entity.build.json");
    const child = spawn(process.execPath, args(out), { stdio: "ignore" });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    for (let i = 0; i < 6000; i++) {
      await new Promise((r) => setTimeout(r, 5));
      if (existsSync(state) && (JSON.parse(readFileSync(state, "utf8")) as { runs: unknown[] }).runs.length >= 1) break;
    }
    child.kill("SIGKILL");
    await exited;
    expect(existsSync(out)).toBe(false);
    replaceKeepingSizeAndTime(file, `${lines("b").join("\n")}\n`);
    const r = spawnSync(process.execPath, args(out), { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`tartan: entity build in ${join(root, ".entity.building")}: ${file} has other content (same size and time) since the build began: starting over\n`);
    expect(r.stderr).not.toMatch(/resumed after/);
    const fresh = join(root, "entity-fresh");
    expect(spawnSync(process.execPath, args(fresh), { encoding: "utf8" }).status).toBe(0);
    const files = readdirSync(fresh).filter((f) => f !== "manifest.json").sort();
    expect(readdirSync(out).filter((f) => f !== "manifest.json").sort()).toEqual(files);
    for (const f of files) expect(readFileSync(join(out, f)).equals(readFileSync(join(fresh, f))), f).toBe(true);
  }, 300_000);
});

describe("tartan run's predictions", () => {
  it("for a changed input start over, saying so", async () => {
    const input = join(root, "questions.jsonl");
    writeFileSync(input, '{"id": "1", "input": "who?"}\n{"id": "2", "input": "why?"}\n');
    const out = join(root, "preds.jsonl");
    expect([...(await resumeOutput(out, input))]).toEqual([]);
    appendFileSync(out, '{"id": "1", "output": [{"answer": "me"}]}\n');
    const logged: string[] = [];
    expect([...(await resumeOutput(out, input, (l) => logged.push(l)))]).toEqual(["1"]);
    expect(logged).toEqual([]);
    replaceKeepingSizeAndTime(input, '{"id": "3", "input": "who?"}\n{"id": "4", "input": "why?"}\n');
    expect([...(await resumeOutput(out, input, (l) => logged.push(l)))]).toEqual([]);
    expect(logged).toEqual([`tartan run: ${input} has other content (same size and time) since the predictions in ${out} were begun: starting over`]);
    expect(readFileSync(out, "utf8")).toBe("");
  });
});

describe("ks ingest", () => {
  it("refuses to continue over a file with other content of the same size and time", async () => {
    const file = join(root, "ks-pages.jsonl");
    const page = (id: string) => JSON.stringify({ wikipedia_id: id, wikipedia_title: `T${id}`, text: [`T${id}\n`, "Some text.\n"] });
    writeFileSync(file, `${page("10")}\n${page("11")}\n`);
    const out = join(root, "ks");
    await ingest(file, { out, workers: 0 });
    replaceKeepingSizeAndTime(file, `${page("12")}\n${page("13")}\n`);
    await expect(ingest(file, { out, workers: 0 })).rejects.toThrow(`${file} changed since the ingest in ${out} began (same size and modification time, other content): pass --force to start over`);
  });
});
