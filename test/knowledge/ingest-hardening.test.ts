// `tartan ks ingest` where it used to go wrong: --force on a store another ingest holds (the lock now
// holds against --force too), a file that holds no pages (KILT task records), a store directory that
// cannot be created, and SQLite errors ("malformed", "full") that did not name the store file.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { ingest, IngestError } from "../../src/knowledge/ingest.js";
import { namingStoreFile, storeFile } from "../../src/knowledge/format.js";
import { KnowledgeSource } from "../../src/knowledge/store.js";
import { loadSquad } from "../../src/readers/extractive/squad-data.js";
import { writeJsonl } from "../../src/records/jsonl.js";

const SQUAD = fileURLToPath(new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url));
const HOTPOT = fileURLToPath(new URL("../../../shared/data/kilt-dev/hotpotqa-dev-kilt.jsonl", import.meta.url));
const NQ = fileURLToPath(new URL("../../../shared/data/kilt-samples/nq-dev-kilt.jsonl", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-ingest-hard-"));
const pagesFile = join(dir, "pages.jsonl");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(async () => {
  await writeJsonl(pagesFile, loadSquad(SQUAD).pages);
});

/** A process that holds the store's lock as a running ingest does (exclusive locking mode, a write lock taken). */
async function holdLock(store: string): Promise<ChildProcess> {
  const script = `const Database = require("better-sqlite3");
const db = new Database(${JSON.stringify(storeFile(store))});
db.pragma("locking_mode = EXCLUSIVE");
db.exec("BEGIN IMMEDIATE; COMMIT");
process.stdout.write("locked\\n");
setInterval(() => {}, 1000);`;
  const child = spawn("node", ["-e", script], { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((ok) => child.stdout!.once("data", () => ok()));
  return child;
}

describe("ks ingest --force", () => {
  it("refuses a store another ingest holds instead of deleting it under it", async () => {
    const store = join(dir, "held");
    const first = await ingest(pagesFile, { out: store, workers: 0 });
    expect(first.pages).toBe(48);
    const holder = await holdLock(store);
    try {
      await expect(ingest(pagesFile, { out: store, force: true, workers: 0 })).rejects.toThrow(`${store}: another process is using this store (an ingest still running?)`);
    } finally {
      holder.kill("SIGKILL");
      await new Promise((r) => holder.once("exit", r));
    }
    const ks = KnowledgeSource.open(store);
    expect(ks.count()).toBe(48);
    ks.close();
    // Free again: --force starts over.
    const again = await ingest(pagesFile, { out: store, force: true, workers: 0 });
    expect([again.pages, again.alreadyComplete, again.resumedAt]).toEqual([48, false, null]);
  });
});

describe("a file with no pages", () => {
  it("stops after the first 1,000 lines of KILT task records with a clear message", async () => {
    const store = join(dir, "tasks");
    await expect(ingest(HOTPOT, { out: store, workers: 0 })).rejects.toThrow(
      `${HOTPOT}: no knowledge-source page in the first 1000 non-blank lines (first problem: `,
    );
    await expect(ingest(HOTPOT, { out: join(dir, "tasks2"), workers: 0 })).rejects.toThrow("is this a KILT task file? Nothing was stored");
  });

  it("stops at the end of a short file that held no page", async () => {
    await expect(ingest(NQ, { out: join(dir, "nq"), workers: 0 })).rejects.toThrow(`${NQ}: no knowledge-source page in the first 5 non-blank lines`);
  });
});

describe("errors name the file", () => {
  it("a store directory whose parent cannot hold it", async () => {
    const out = "/proc/tartan-no-such/ks";
    await expect(ingest(pagesFile, { out, workers: 0 })).rejects.toThrow(`${out}: cannot create the store directory: its parent /proc does not allow it (ENOENT)`);
  });

  it("a malformed store, when opened and when read", async () => {
    const store = join(dir, "corrupt");
    await ingest(pagesFile, { out: store, workers: 0 });
    const file = storeFile(store);
    const fd = openSync(file, "r+");
    const size = statSync(file).size;
    for (let at = 4096; at < size; at += 4096) writeSync(fd, Buffer.alloc(64, 0xa5), 0, 64, at);
    closeSync(fd);
    let err: unknown;
    try {
      const ks = KnowledgeSource.open(store);
      for (const _ of ks.pages()) void _;
      ks.close();
    } catch (e) {
      err = e;
    }
    expect(String(err)).toContain(`${file}: database disk image is malformed`);
    expect(String(err)).toContain("rebuild it with tartan ks ingest --force");
  });

  it('"database or disk is full"', () => {
    const file = join(dir, "full.sqlite");
    const db = new Database(file);
    db.pragma("max_page_count = 2");
    let raw: unknown;
    try {
      db.exec("CREATE TABLE t (x); CREATE TABLE u (y); CREATE TABLE v (z)");
    } catch (e) {
      raw = e;
    }
    db.close();
    expect((raw as Error).message).toBe("database or disk is full");
    expect((namingStoreFile(file, raw) as Error).message).toBe(`${file}: database or disk is full (free some space, then re-run: the ingest resumes)`);
    expect(namingStoreFile(file, new IngestError("x"))).toBeInstanceOf(IngestError);
  });
});
