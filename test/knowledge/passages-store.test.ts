import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { passagesFrom } from "../../src/retrieval/passages.js";
import { buildIndex } from "../../src/retrieval/build.js";
import { storePassageSpans } from "../../src/knowledge/passage-pool.js";
import { ingest } from "../../src/knowledge/ingest.js";
import type { Passage } from "../../src/knowledge/passages.js";
import { readSquadFile, squadToPages } from "../../src/knowledge/squad.js";
import { readJsonlAll, writeJsonl } from "../../src/records/jsonl.js";
import { unitsFrom } from "../../src/retrieval/sources.js";
import { UnitStore } from "../../src/retrieval/units/store.js";
import { TableUnitStore } from "../../src/retrieval/units/table.js";
import { watchingPools } from "../fixtures/pools.js";

const SQUAD_V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const quiet = () => {};

let dir: string;
let pagesFile: string;
let ksDir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tartan-passages-ks-"));
  pagesFile = join(dir, "pages.jsonl");
  await writeJsonl(pagesFile, squadToPages(readSquadFile(SQUAD_V11)));
  ksDir = join(dir, "ks");
  await ingest(pagesFile, { out: ksDir, workers: 0 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ks passages streamed from a knowledge-source store", () => {
  for (const unit of ["chunk", "paragraph"] as const) {
    it(`${unit}: the same passages, byte for byte, as from the pages file`, async () => {
      const a = join(dir, `${unit}-pages.jsonl`);
      const b = join(dir, `${unit}-ks.jsonl`);
      const fromPages = await passagesFrom({ pages: pagesFile }, { out: a, words: 100, unit }, quiet);
      const fromKs = await passagesFrom({ ks: ksDir }, { out: b, words: 100, unit }, quiet);
      expect(fromKs).toEqual(fromPages);
      expect(fromKs).toEqual({ pages: 48, passages: unit === "chunk" ? 3580 : 2067 });
      expect(readFileSync(b).equals(readFileSync(a))).toBe(true);
    });
  }

  it("a unit table (--table) holds every passage's span and gives back its text from the store", async () => {
    const table = join(dir, "table");
    expect(await passagesFrom({ ks: ksDir }, { table, words: 100, unit: "chunk" }, quiet)).toEqual({ pages: 48, passages: 3580 });
    expect(readdirSync(dir).filter((f) => f.startsWith("table.partial"))).toEqual([]);
    const passages = await readJsonlAll<Passage>(join(dir, "chunk-pages.jsonl"));
    const store = UnitStore.open(table);
    expect(store.count).toBe(3580);
    let merged = 0;
    for (let i = 0; i < passages.length; i++) {
      const p = passages[i];
      const u = store.get(i);
      expect([u.wikipedia_id, u.wikipedia_title, u.section, u.start_paragraph_id, u.start_character, u.end_paragraph_id, u.end_character, u.text]).toEqual([
        p.wikipedia_id, p.wikipedia_title, p.section, p.start_paragraph_id, p.start_character, p.end_paragraph_id, p.end_character, p.text,
      ]);
      if (p.sources.length > 1) merged++;
    }
    expect(merged).toBe(69);
    store.close();
    // Indexing the table gives the units an index built from the store directly has.
    const direct: string[] = [];
    for await (const u of unitsFrom({ ks: ksDir }, { unit: "passage" })) direct.push(JSON.stringify([u.wikipedia_id, u.start_paragraph_id, u.start_character, u.end_character, u.text, u.ref]));
    const viaTable: string[] = [];
    for await (const u of unitsFrom({ units: table }, { unit: "passage" })) viaTable.push(JSON.stringify([u.wikipedia_id, u.start_paragraph_id, u.start_character, u.end_character, u.text, u.ref]));
    expect(viaTable).toEqual(direct);
  });

  it("a table's scans (pages read in ranges, heap read ahead) give every unit as random access does, before and after", async () => {
    const passages = await readJsonlAll<Passage>(join(dir, "chunk-pages.jsonl"));
    const row = (u: { wikipedia_id: string; section?: string; start_paragraph_id?: number; start_character?: number; end_character?: number; text: string }) =>
      JSON.stringify([u.wikipedia_id, u.section, u.start_paragraph_id, u.start_character, u.end_character, u.text]);
    const want = passages.map(row);
    const store = TableUnitStore.open(join(dir, "table"));
    const scanned = [...store.scan()].map(row);
    expect(scanned).toEqual(want);
    expect([...store.scan(1000, 1500)].map(row)).toEqual(want.slice(1000, 1500));
    // Random access after scans (windows in place), backwards and without texts read ahead.
    for (let i = passages.length - 1; i >= 0; i -= 7) expect(row(store.get(i))).toBe(want[i]);
    store.close();
  });

  it("writes a unit table through a new, exclusively created directory: a planted link is not followed", async () => {
    const victim = join(dir, "victim");
    mkdirSync(victim);
    const table = join(dir, "nested", "table");
    mkdirSync(join(dir, "nested"));
    // What the command used to write through: DIR.partial-PID, a name anyone could plant beforehand.
    symlinkSync(victim, `${table}.partial-${process.pid}`);
    expect(await passagesFrom({ ks: ksDir }, { table, words: 100, unit: "paragraph" }, quiet)).toEqual({ pages: 48, passages: 2067 });
    expect(readdirSync(victim)).toEqual([]);
    expect(UnitStore.open(table).count).toBe(2067);
    expect(readdirSync(join(dir, "nested")).sort()).toEqual(["table", `table.partial-${process.pid}`]);
  });

  it("cuts the same spans on one thread and on worker threads, in store order", async () => {
    const collect = async (threads: number) => {
      const out: string[] = [];
      for await (const c of storePassageSpans(ksDir, { threads, chunkRows: 5 })) out.push(JSON.stringify(c));
      return out;
    };
    const one = await collect(1);
    expect(one.length).toBe(48);
    expect(one.reduce((n, l) => n + (JSON.parse(l) as { passages: unknown[] }).passages.length, 0)).toBe(3580);
    expect(await collect(2)).toEqual(one);
  });

  it("a passage worker that dies mid-cut fails the cut naming the store, instead of waiting forever", async () => {
    await watchingPools(async (started) => {
      let pages = 0;
      const cut = async () => {
        for await (const _ of storePassageSpans(ksDir, { threads: 2, chunkRows: 1 })) if (++pages === 1) await started[0].stopWorker(0);
      };
      await expect(cut()).rejects.toThrow(`${ksDir}: passage worker exited with code 1`);
      expect(pages).toBeGreaterThan(0);
      expect(pages).toBeLessThan(48);
    });
  });

  it("a BM25 index built from the table (workers read the texts from the store) equals one built from the store, byte for byte", async () => {
    const log = () => {};
    const table = join(dir, "table");
    const a = join(dir, "bm25-ks");
    const b = join(dir, "bm25-table");
    await buildIndex({ kind: "bm25", ks: ksDir, unit: "passage", words: 100, out: a, threads: 2 }, log);
    await buildIndex({ kind: "bm25", units: table, words: 100, out: b, threads: 2, memory: 1100 * 1024 ** 2 }, log);
    for (const f of ["bm25.postings", "bm25.terms", "bm25.termindex", "bm25.norms", "units.table", "units.strings"])
      expect(readFileSync(join(b, f)).equals(readFileSync(join(a, f))), f).toBe(true);
  });

  it("refuses --table without a store and an existing table directory", async () => {
    await expect(passagesFrom({ pages: pagesFile }, { table: join(dir, "t2"), words: 100, unit: "chunk" }, quiet)).rejects.toThrow("--table refers to a knowledge-source store: give --ks DIR");
    await expect(passagesFrom({ ks: ksDir }, { table: join(dir, "table"), words: 100, unit: "chunk" }, quiet)).rejects.toThrow(/table: exists/);
    expect(existsSync(join(dir, "t2"))).toBe(false);
  });
});
