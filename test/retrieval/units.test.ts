import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, readdirSync, statSync, writeFileSync, readFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ingest } from "../../src/knowledge/ingest.js";
import { readSquadFile, squadToPages } from "../../src/knowledge/squad.js";
import { writeJsonl } from "../../src/records/jsonl.js";
import { unitsFrom } from "../../src/retrieval/sources.js";
import { unitProvenance, type Unit } from "../../src/retrieval/units/unit.js";
import { UnitStore, UnitWriter } from "../../src/retrieval/units/store.js";
import type { UnitKind } from "../../src/retrieval/types.js";

const SQUAD_V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;

let dir: string;
let pagesFile: string;
let ksDir: string;

async function write(units: AsyncIterable<Unit>, out: string): Promise<number> {
  mkdirSync(out, { recursive: true });
  const w = new UnitWriter(out);
  for await (const u of units) await w.add(u);
  await w.close();
  return w.count;
}

const bytesOf = (d: string) => readdirSync(d).reduce((s, f) => s + statSync(join(d, f)).size, 0);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tartan-units-"));
  pagesFile = join(dir, "pages.jsonl");
  await writeJsonl(pagesFile, squadToPages(readSquadFile(SQUAD_V11)));
  ksDir = join(dir, "ks");
  await ingest(pagesFile, { out: ksDir, workers: 0 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("store-backed units (references into the knowledge-source store)", () => {
  const counts: Record<UnitKind, number> = { passage: 3580, paragraph: 2067, page: 48 };
  for (const unit of ["passage", "paragraph", "page"] as const) {
    it(`${unit}: every SQuAD unit's provenance and text equal the inline store's`, async () => {
      const inlineDir = join(dir, `inline-${unit}`);
      const tableDir = join(dir, `table-${unit}`);
      const n = await write(unitsFrom({ pages: pagesFile }, { unit }), inlineDir);
      const m = await write(unitsFrom({ ks: ksDir }, { unit }), tableDir);
      expect(m).toBe(n);
      expect(n).toBe(counts[unit]);
      expect(readdirSync(tableDir).sort()).toEqual(["units.entries", "units.json", "units.pieces", "units.strings", "units.table"]);
      const inline = UnitStore.open(inlineDir);
      const table = UnitStore.open(tableDir);
      expect(table.count).toBe(n);
      for (let i = 0; i < n; i++) {
        const a = inline.get(i);
        const b = table.get(i);
        expect(unitProvenance(table.info(i), 1, false)).toEqual(unitProvenance(a, 1, false));
        expect(b.text).toBe(a.text);
        expect(unitProvenance(b, 1)).toEqual(unitProvenance(a, 1));
      }
      // No second copy of the text: the table is a fraction of the inline store.
      expect(bytesOf(tableDir)).toBeLessThan(bytesOf(inlineDir) / 4);
      inline.close();
      table.close();
    });
  }

  it("refuses a truncated table, naming the file", async () => {
    const d = join(dir, "table-passage");
    const f = join(d, "units.table");
    const good = readFileSync(f);
    writeFileSync(f, good.subarray(0, good.length - 5));
    expect(() => UnitStore.open(d)).toThrow(/units\.table: \d+ bytes, \d+ expected/);
    writeFileSync(f, good);
    const e = join(d, "units.entries");
    const entries = readFileSync(e);
    const bad = Buffer.from(entries);
    bad.writeDoubleLE(1e15, 8);
    writeFileSync(e, bad);
    const s = UnitStore.open(d);
    expect(() => s.info(0)).toThrow(/units\.entries: bad offsets for entry 0/);
    s.close();
    writeFileSync(e, entries);
  });

  it("refuses to read text from a store re-ingested from other input", async () => {
    const other = join(dir, "other.jsonl");
    await writeJsonl(other, squadToPages(readSquadFile(SQUAD_V11)).slice(0, 3));
    const ks2 = join(dir, "ks2");
    await ingest(pagesFile, { out: ks2, workers: 0 });
    const d = join(dir, "table-ks2");
    await write(unitsFrom({ ks: ks2 }, { unit: "paragraph" }), d);
    rmSync(ks2, { recursive: true, force: true });
    await ingest(other, { out: ks2, workers: 0 });
    const s = UnitStore.open(d);
    expect(s.info(0).wikipedia_id).toBe(s.info(1).wikipedia_id);
    expect(() => s.get(0).text).toThrow(/that store now holds 3 pages from .*other\.jsonl: rebuild the index/);
    s.close();
  });
});
