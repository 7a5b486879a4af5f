// BM25 builds at scale: many small segments merge into the same bytes as one segment; a build killed
// (SIGKILL) mid-way resumes from its finished segments to the same bytes; truncated, zeroed, mixed and
// corrupt index files are refused naming the file (at open and by `tartan index verify`); rankings on
// the SQuAD source equal those of the format-1 index this format replaced.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cutPassages } from "../../../src/knowledge/passages.js";
import { readSquadFile, squadQuestionsToKilt, squadToPages } from "../../../src/knowledge/squad.js";
import { buildBm25Index } from "../../../src/retrieval/bm25/build.js";
import { openBm25 } from "../../../src/retrieval/bm25/search.js";
import { sealIndex, verifyIndex } from "../../../src/retrieval/manifest.js";
import { openIndex } from "../../../src/retrieval/open.js";
import { unitsFrom } from "../../../src/retrieval/sources.js";
import type { Unit } from "../../../src/retrieval/units/unit.js";

const SQUAD = new URL("../../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const CLI = new URL("../../../dist/src/cli/main.js", import.meta.url).pathname;
const tmp = () => mkdtempSync(join(tmpdir(), "tartan-bm25-build-"));
const bm25Files = (dir: string) => readdirSync(dir).filter((f) => f.startsWith("bm25.")).sort();

/** SQuAD dev as KILT pages, `copies` times (page ids made distinct), written as a pages file. */
function squadPages(copies: number): string {
  const pages = squadToPages(readSquadFile(SQUAD));
  const lines: string[] = [];
  for (let c = 0; c < copies; c++) for (const p of pages) lines.push(JSON.stringify({ ...p, wikipedia_id: `${p.wikipedia_id}#${c}` }));
  const file = join(tmp(), "pages.jsonl");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

describe("segmented builds", () => {
  it("an index merged from 500+ segments on two threads equals one built in one segment, byte for byte", async () => {
    const pages = squadPages(1);
    const one = tmp();
    const many = tmp();
    const a = await buildBm25Index(unitsFrom({ pages }, { unit: "passage" }), one, {}, undefined, { threads: 1 });
    const b = await buildBm25Index(unitsFrom({ pages }, { unit: "passage" }), many, {}, undefined, { threads: 2, memory: 1 << 20, batchUnits: 7 });
    expect(a).toMatchObject({ units: 3580, terms: 16785, postings: 147308, segments: 1 });
    expect(b).toMatchObject({ units: 3580, terms: 16785, postings: 147308 });
    expect(b.segments).toBeGreaterThan(500);
    expect(bm25Files(one)).toEqual(["bm25.norms", "bm25.postings", "bm25.termindex", "bm25.terms"]);
    for (const f of bm25Files(one)) expect(readFileSync(join(many, f)).equals(readFileSync(join(one, f))), f).toBe(true);
    // No build leftovers.
    expect(readdirSync(many).filter((f) => f.includes("seg") || f.includes("partial") || f.includes("build"))).toEqual([]);
  });

  it("a build killed with SIGKILL resumes from its finished segments to the same bytes", async () => {
    const pages = squadPages(6);
    const root = tmp();
    const args = (out: string) => [CLI, "index", "build", "--kind", "bm25", "--pages", pages, "--out", out, "--memory", "1M", "--threads", "2"];
    const whole = join(root, "whole");
    const r0 = spawnSync(process.execPath, args(whole), { encoding: "utf8" });
    expect(r0.status, r0.stderr).toBe(0);

    const out = join(root, "resumed");
    const state = join(root, ".resumed.building", "bm25.build.json");
    const child = spawn(process.execPath, args(out), { stdio: "ignore" });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    // Kill once at least two segments are recorded.
    for (;;) {
      await new Promise((r) => setTimeout(r, 5));
      if (existsSync(state) && (JSON.parse(readFileSync(state, "utf8")) as { segments: unknown[] }).segments.length >= 2) break;
    }
    child.kill("SIGKILL");
    await exited;
    expect(existsSync(out)).toBe(false);
    const r1 = spawnSync(process.execPath, args(out), { encoding: "utf8" });
    expect(r1.status, r1.stderr).toBe(0);
    expect(r1.stderr).toMatch(/resumed after [\d,]+ units/);
    for (const f of bm25Files(whole)) expect(readFileSync(join(out, f)).equals(readFileSync(join(whole, f))), f).toBe(true);
    expect(existsSync(join(root, ".resumed.building"))).toBe(false);
  }, 300_000);
});

describe("integrity", () => {
  const units: Unit[] = ["cat sat mat", "cat cat dog", "dog barks loudly today", "The cat's dog and the cats"].map((text, i) => ({ wikipedia_id: `d${i}`, wikipedia_title: `Doc ${i}`, text }));
  async function built(lastWord = "mat"): Promise<string> {
    const dir = tmp();
    const us = units.map((u, i) => (i === 0 ? { ...u, text: `cat sat ${lastWord}` } : u));
    await buildBm25Index(us, dir, {}, undefined, { threads: 1 });
    sealIndex(dir);
    return dir;
  }
  const copy = (dir: string) => {
    const c = tmp();
    cpSync(dir, c, { recursive: true });
    return c;
  };

  it("opens and verifies an intact index", async () => {
    const dir = await built();
    expect(verifyIndex(dir).problems).toEqual([]);
    const r = await openIndex(dir);
    expect((await r.search("cat", 2)).map((h) => h.unit)).toEqual([1, 3]);
    await r.close();
  });

  it("refuses a truncated file at open, naming it", async () => {
    const good = await built();
    for (const f of bm25Files(good)) {
      const dir = copy(good);
      truncateSync(join(dir, f), readFileSync(join(dir, f)).length - 1);
      await expect(openIndex(dir)).rejects.toThrow(`${join(dir, f)}: `);
      expect(verifyIndex(dir).problems).toEqual([expect.stringContaining(`${join(dir, f)}: `)]);
    }
  });

  it("refuses a zeroed header at open and a corrupt body in verify, naming the file", async () => {
    const good = await built();
    for (const f of bm25Files(good)) {
      const dir = copy(good);
      const bytes = readFileSync(join(dir, f));
      bytes.fill(0, 0, 32);
      writeFileSync(join(dir, f), bytes);
      await expect(openBm25(dir)).rejects.toThrow(`${join(dir, f)}: not a tartan BM25 file`);
      const corrupt = copy(good);
      const body = readFileSync(join(corrupt, f));
      body[body.length - 1] ^= 0x55;
      writeFileSync(join(corrupt, f), body);
      expect(verifyIndex(corrupt).problems).toEqual([`${join(corrupt, f)}: checksum ${verifyIndex(corrupt).problems[0].match(/checksum (\w+)/)![1]}, manifest.json says ${JSON.parse(readFileSync(join(good, "manifest.json"), "utf8")).files.find((x: { name: string }) => x.name === f).crc32} (corrupt)`]);
    }
  });

  it("refuses a file from another build of the same size", async () => {
    const a = await built("mat");
    const b = await built("map");
    expect(readFileSync(join(b, "bm25.postings")).length).toBe(readFileSync(join(a, "bm25.postings")).length);
    const mixed = copy(a);
    copyFileSync(join(b, "bm25.postings"), join(mixed, "bm25.postings"));
    await expect(openIndex(mixed)).rejects.toThrow(`${join(mixed, "bm25.postings")}: from another build`);
    expect(verifyIndex(mixed).problems[0]).toContain(join(mixed, "bm25.postings"));
  });

  it("tartan index verify prints OK or the bad file, with exit code 1", async () => {
    const dir = await built();
    const ok = spawnSync(process.execPath, [CLI, "index", "verify", dir], { encoding: "utf8" });
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^${dir}: OK \\(6 files, `));
    truncateSync(join(dir, "units.jsonl"), 10);
    const bad = spawnSync(process.execPath, [CLI, "index", "verify", dir], { encoding: "utf8" });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain(`${dir}: BAD ${join(dir, "units.jsonl")}: 10 bytes, manifest.json says`);
  });
});

describe("rankings on the SQuAD source", () => {
  it("equal the format-1 index's top 100 for all 10,570 questions (digest of units and scores)", async () => {
    const squad = readSquadFile(SQUAD);
    const pages = squadToPages(squad);
    const units: Unit[] = pages.flatMap((p) => cutPassages(p, { unit: "paragraph" }).map((ps) => ({ wikipedia_id: ps.wikipedia_id, wikipedia_title: ps.wikipedia_title, start_paragraph_id: ps.start_paragraph_id, text: ps.text })));
    const questions = squadQuestionsToKilt(squad, { pages }).records.map((r) => r.input as string);
    // Computed with tartan 0.1.0's format-1 index (bm25.index) before this format replaced it.
    const want = { english: "4eb86a83075421f594bba786524f74f6a68ffd2c5d08e693e4e613e91c81a224", lowercase: "e8f63f7929785ee4527bdd2af538bcd24936a950b33e9168152963a3df7b942b" };
    for (const analyzer of ["english", "lowercase"] as const) {
      const dir = tmp();
      await buildBm25Index(units, dir, { analyzer, unit: "paragraph" });
      const r = await openBm25(dir);
      const h = createHash("sha256");
      for (const q of questions) for (const x of await r.search(q, 100)) h.update(`${x.unit}:${x.score};`), h.update("\n");
      expect(h.digest("hex")).toBe(want[analyzer]);
      await r.close();
    }
  }, 300_000);
});
