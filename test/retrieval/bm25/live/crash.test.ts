// A live BM25 index under kills, a second writer, readers and a full disk: `tartan index update` and
// `index merge` killed with SIGKILL at each step of a commit leave the last published commit opening,
// verifying and ranking as before (or, killed after the publishing rename, the new one), and the next
// writer removes the debris; a second writer is refused naming the holder; a reader opened before
// updates and merges keeps its snapshot's results while they happen (and after they removed its files);
// a full disk (a small tmpfs) fails the update naming the index and leaves the last commit intact.

import { spawnSync, execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lockOutput } from "../../../../src/util/lock.js";
import { readManifest } from "../../../../src/retrieval/manifest.js";
import { openIndex } from "../../../../src/retrieval/open.js";
import { verifyIndexDir } from "../../../../src/retrieval/verify.js";
import { mergeLiveIndex, updateLiveIndex } from "../../../../src/retrieval/bm25/live/writer.js";
import type { LiveBm25Retriever } from "../../../../src/retrieval/bm25/live/search.js";
import { noteSkip } from "../../../support/skips.js";
import { edited, freshBuild, idsFile, pagesFile, ranked, squad, tmp } from "./fixtures.js";

const CLI = new URL("../../../../dist/src/cli/main.js", import.meta.url).pathname;
const { pages, queries } = squad(20);
const quiet = { log: () => {} };

function tartan(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 120_000 });
  return { status: r.status, signal: r.signal, stderr: r.stderr, stdout: r.stdout };
}

const generation = (dir: string) => (readManifest(dir).params.live as { generation: number } | undefined)?.generation ?? 0;
const listing = (dir: string) => readdirSync(join(dir, "live")).sort();

async function rankings(dir: string): Promise<string[][]> {
  const r = await openIndex(dir);
  try {
    return await ranked(r, queries, 10);
  } finally {
    await r.close();
  }
}

describe("live BM25 index: kills, writers, readers", async () => {
  const root = tmp();
  // A live index of two commits: 12 pages built, 2 added and 1 deleted, then 1 replaced.
  const base = await freshBuild(root, pages.slice(0, 12));
  await updateLiveIndex(base, { add: pagesFile(root, "add1.jsonl", pages.slice(12, 14)), delete: idsFile(root, "del1.txt", [pages[2].wikipedia_id]) }, quiet);
  await updateLiveIndex(base, { replace: pagesFile(root, "rep1.jsonl", [edited(pages[5], 1)]) }, quiet);
  const before = await rankings(base);
  const update = ["--add", pagesFile(root, "add2.jsonl", pages.slice(14, 16)), "--replace", pagesFile(root, "rep2.jsonl", [edited(pages[7], 2)]), "--delete", idsFile(root, "del2.txt", [pages[3].wikipedia_id])];
  // What the update makes when it runs through.
  const whole = join(root, "whole");
  cpSync(base, whole, { recursive: true });
  expect(tartan(["index", "update", whole, ...update]).status).toBe(0);
  const after = await rankings(whole);
  expect(after).not.toEqual(before);

  for (const [command, point] of [
    ["update", "deletions-written"],
    ["update", "segment-built"],
    ["update", "commit-written"],
    ["update", "published"],
    ["merge", "merge-built"],
    ["merge", "commit-written"],
  ] as const) {
    it(`index ${command} killed at ${point}: the last commit opens, verifies and ranks as before; the next writer cleans up`, async () => {
      const dir = join(root, `killed-${command}-${point}`);
      cpSync(base, dir, { recursive: true });
      const clean = listing(dir);
      const r = tartan(command === "update" ? ["index", "update", dir, ...update] : ["index", "merge", dir], { TARTAN_LIVE_KILL: point });
      expect(r.signal).toBe("SIGKILL");
      const published = point === "published";
      expect(generation(dir)).toBe(published ? 3 : 2);
      expect((await verifyIndexDir(dir)).problems).toEqual([]);
      if (command === "update") expect(await rankings(dir)).toEqual(published ? after : before);
      else expect(await rankings(dir)).toEqual(before);
      // Debris: what the killed writer wrote that no commit names.
      if (!published) expect(listing(dir).length).toBeGreaterThan(clean.length);
      // The next writer removes it, then commits.
      const next = tartan(["index", "merge", dir]);
      expect(next.status, next.stderr).toBe(0);
      if (!published) expect(next.stderr).toMatch(/removed \d+ files? no commit names/);
      expect(generation(dir)).toBe(published ? 4 : 3);
      expect((await verifyIndexDir(dir)).problems).toEqual([]);
      expect(listing(dir).filter((f) => /building|partial|\.deleted-/.test(f))).toEqual([]);
      expect(await rankings(dir)).toEqual(published ? after : before);
    });
  }

  it("a second writer is refused, naming the one that holds the index", () => {
    const dir = join(root, "locked");
    cpSync(base, dir, { recursive: true });
    const lock = lockOutput(dir);
    try {
      const r = tartan(["index", "update", dir, ...update]);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`${dir} is being written by another process (pid ${process.pid}; lock file ${dir}.lock)`);
      expect(generation(dir)).toBe(2);
    } finally {
      lock.release();
    }
  });

  it("a reader keeps its snapshot while updates and merges happen, and sees that a newer commit exists", async () => {
    const dir = join(root, "reader");
    cpSync(base, dir, { recursive: true });
    const reader = (await openIndex(dir)) as unknown as { inner?: LiveBm25Retriever } & Awaited<ReturnType<typeof openIndex>>;
    try {
      expect(await ranked(reader, queries, 10)).toEqual(before);
      for (let i = 0; i < 4; i++) {
        await updateLiveIndex(dir, { replace: pagesFile(root, `r-${i}.jsonl`, [edited(pages[8 + i], i)]) }, { ...quiet, mergePolicy: { factor: 2, floorUnits: 50 } });
        expect(await ranked(reader, queries, 10)).toEqual(before);
      }
      await mergeLiveIndex(dir, quiet);
      for (const i of [0, 1]) await updateLiveIndex(dir, { delete: idsFile(root, `d-r${i}.txt`, [pages[i].wikipedia_id]) }, quiet);
      // The reader's files are gone from the directory by now (kept commits: the newest three).
      expect(readdirSync(dir)).not.toContain("bm25.postings");
      expect(await ranked(reader, queries, 10)).toEqual(before);
      const fresh = await openIndex(dir);
      try {
        expect(await ranked(fresh, queries, 10)).not.toEqual(before);
      } finally {
        await fresh.close();
      }
    } finally {
      await reader.close();
    }
  });

  it("LiveBm25Retriever names its generation and tells of a newer commit", async () => {
    const dir = join(root, "generation");
    cpSync(base, dir, { recursive: true });
    const { LiveBm25Retriever } = await import("../../../../src/retrieval/bm25/live/search.js");
    const r = LiveBm25Retriever.open(dir);
    try {
      expect(r.generation).toBe(2);
      expect(r.newerCommit()).toBe(false);
      await updateLiveIndex(dir, { delete: idsFile(root, "d-g.txt", [pages[1].wikipedia_id]) }, quiet);
      expect(r.newerCommit()).toBe(true);
    } finally {
      await r.close();
    }
  });
});

// The disk is mounted (and unmounted) at file level: a describe's afterAll does not run when its tests are filtered out.
const diskRoot = tmp();
const disk = join(diskRoot, "disk");
mkdirSync(disk);
let mounted = false;
try {
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=1200k", "tmpfs", disk], { stdio: "ignore" });
  mounted = true;
} catch {
  noteSkip(import.meta.url, "cannot mount a tmpfs (needs root and a mount namespace)");
}
afterAll(() => {
  if (mounted) execFileSync("umount", [disk]);
  rmSync(diskRoot, { recursive: true, force: true });
});

describe("live BM25 index: a full disk", () => {
  const root = tmp();
  it.skipIf(!mounted)("an update that does not fit fails naming the index, and leaves the last commit intact", async () => {
    // 8 pages (about 700 kB with a first update) on a 1.2 MB disk; the update adds 20 more.
    const built = await freshBuild(root, pages.slice(0, 8));
    await updateLiveIndex(built, { delete: idsFile(root, "del.txt", [pages[0].wikipedia_id]) }, quiet);
    const dir = join(disk, "index");
    cpSync(built, dir, { recursive: true });
    const was = await rankings(dir);
    const files = listing(dir);
    const manifest = readFileSync(join(dir, "manifest.json"), "utf8");
    const r = tartan(["index", "update", dir, "--add", pagesFile(root, "big.jsonl", pages.slice(8, 28))]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^tartan: ${dir}: no space left on the device \\(ENOSPC\\).*; removed this update's files; commit 1 of ${dir} is untouched\\n$`));
    expect(readFileSync(join(dir, "manifest.json"), "utf8")).toBe(manifest);
    expect(listing(dir)).toEqual(files);
    expect((await verifyIndexDir(dir)).problems).toEqual([]);
    expect(await rankings(dir)).toEqual(was);
  });
});
