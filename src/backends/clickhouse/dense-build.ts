// A compressed dense index (binary codes, ../../retrieval/dense/ivf-build.ts) copied into ClickHouse: its
// files are read as they are (headers checked, formats unchanged) and written to tables sharded by
// coarse list (list mod shards), so a query's probed lists are scanned on the shards that hold them:
//   <name>_codes_local  (list, pos, unit, c0 … cW-1 UInt64, row FixedString(dim))  ORDER BY (list, pos)
//       one row per vector at its position in the index's list order: the binary code as W = codeBytes/8
//       little-endian words (ClickHouse 18.16 has no bitCount: ./dense-sql.ts counts bits with
//       arithmetic on UInt64) and the int8 rescoring row;
//   <name>_units_local  (unit, data)  sharded by unit mod shards, as a BM25 index's (./units.ts reads it);
//   <name>_files_local  on every shard: quantizer.bin and lists.bin as they are, in base64 parts (the
//       client loads the coarse quantizer and the list sizes from them);
//   <name>_meta_local   kind, format, the embedded index's manifest, `complete`.
// A build drops what a previous build of the same name left and writes `complete` last.

import { mkdtempSync, readFileSync, rmSync, writeFileSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readManifest } from "../../retrieval/manifest.js";
import { UnitStore } from "../../retrieval/units/store.js";
import { IVF_FILES, openIvfFile, readAll } from "../../retrieval/dense/ivf-files.js";
import { Quantizer } from "../../retrieval/dense/quantizer.js";
import type { IndexManifest } from "../../retrieval/types.js";
import { ClickHouseDatabase, ClickHouseError } from "./client.js";
import { createMeta, DENSE_FORMAT, tableBytes, tsvField, writeMeta } from "./schema.js";

/** The index name when the URL names none. */
export const DEFAULT_DENSE_NAME = "dense";
/** Bytes of TabSeparated text sent per INSERT. */
const FLUSH_BYTES = 32 << 20;
/** Base64 characters per row of the files table. */
const FILE_PART = 1 << 20;

/** What a dense build into ClickHouse wrote. */
export interface ClickHouseDenseStats {
  units: number;
  lists: number;
  shards: number;
  bytes: number;
}

/** The index name of a URL (its second path segment, default "dense"). */
export function denseName(db: ClickHouseDatabase): string {
  return db.u.name ?? DEFAULT_DENSE_NAME;
}

/** The code columns of `codeBytes`-byte binary codes: c0 … c{W-1}. */
export function codeColumns(codeBytes: number): string[] {
  return Array.from({ length: codeBytes / 8 }, (_, i) => `c${i}`);
}

/** The binary code at `o` of `bytes` as unsigned 64-bit words, little-endian (decimal strings). */
export function codeWords(bytes: Uint8Array, o: number, codeBytes: number): string[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset + o, codeBytes);
  return Array.from({ length: codeBytes / 8 }, (_, i) => view.getBigUint64(i * 8, true).toString());
}

/** Raw bytes as a TabSeparated FixedString field (backslash escapes for the bytes TSV reserves). */
function bytesField(b: Uint8Array): Buffer {
  const out = Buffer.alloc(b.length * 2);
  let n = 0;
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    const e = c === 0x5c ? 0x5c : c === 0x09 ? 0x74 : c === 0x0a ? 0x6e : c === 0x0d ? 0x72 : c === 0x00 ? 0x30 : c === 0x27 ? 0x27 : -1;
    if (e >= 0) {
      out[n++] = 0x5c;
      out[n++] = e;
    } else out[n++] = c;
  }
  return out.subarray(0, n);
}

/**
 * Copies the compressed dense index in `dir` (binary codes) into the ClickHouse database of `url`
 * (`clickhouse://host:port/db[/name]?cluster=C`), replacing an index of the same name.
 */
export async function buildDenseClickHouse(dir: string, url: string, onProgress?: (vectors: number) => void): Promise<ClickHouseDenseStats> {
  const m = readManifest(dir);
  const p = m.params as { build?: string; quantize?: string; dim?: number; lists?: number };
  if (m.kind !== "dense" || p.quantize === undefined || p.quantize === "none") throw new Error(`${dir}: not a compressed dense index (manifest.json: kind ${m.kind}, quantize ${p.quantize ?? "none"}); build one with --vectors and --quantize binary`);
  if (p.quantize !== "binary") throw new Error(`${dir}: ${p.quantize} codes; only binary codes are copied into ClickHouse (manifest.json: params.quantize)`);
  const build = p.build as string;
  const q = Quantizer.load(join(dir, IVF_FILES.quantizer), build);
  const n = m.units;
  const units = UnitStore.open(dir);
  const files = {
    lists: openIvfFile(join(dir, IVF_FILES.lists), { file: "lists", build, rows: q.lists + 1, rowBytes: 8 }),
    ids: openIvfFile(join(dir, IVF_FILES.ids), { file: "ids", build, rows: n, rowBytes: 4 }),
    codes: openIvfFile(join(dir, IVF_FILES.codes), { file: "codes", build, rows: n, rowBytes: q.codeBytes }),
    rescore: openIvfFile(join(dir, IVF_FILES.rescore), { file: "rescore", build, rows: n, rowBytes: q.dim }),
  };
  const db = await ClickHouseDatabase.connect(url);
  try {
    if (units.count !== n) throw new Error(`${dir}: manifest says ${n} units, the unit store has ${units.count}`);
    const offsets = new Float64Array(q.lists + 1);
    readAll(files.lists.fd, new Uint8Array(offsets.buffer), files.lists.offset, join(dir, IVF_FILES.lists));
    if (offsets[q.lists] !== n) throw new Error(`${join(dir, IVF_FILES.lists)}: lists hold ${offsets[q.lists]} vectors, the index has ${n}`);
    const name = denseName(db);
    const S = db.shards.length;
    for (const t of ["codes", "units"]) await db.dropTable(`${name}_${t}`);
    for (const s of db.shards) for (const t of ["meta", "files"]) await s.command(`DROP TABLE IF EXISTS ${db.qualified(`${name}_${t}_local`)}`);
    await createMeta(db, name);
    await writeMeta(db, name, { kind: "dense", format: DENSE_FORMAT, complete: 0 });
    const words = codeColumns(q.codeBytes);
    await db.createTable(`${name}_codes`, `list UInt32, pos UInt32, unit UInt32, ${words.map((w) => `${w} UInt64`).join(", ")}, row FixedString(${q.dim})`, "MergeTree ORDER BY (list, pos) SETTINGS index_granularity = 1024");
    await db.createTable(`${name}_units`, "unit UInt32, data String", "MergeTree ORDER BY unit SETTINGS index_granularity = 1024");
    const filesTable = db.qualified(`${name}_files_local`);
    for (const s of db.shards) await s.command(`CREATE TABLE ${filesTable} (file String, part UInt32, data String) ENGINE = MergeTree ORDER BY (file, part)`, filesTable);
    for (const f of [IVF_FILES.quantizer, IVF_FILES.lists]) {
      const b64 = readFileSync(join(dir, f)).toString("base64");
      let rows = "";
      for (let i = 0; i * FILE_PART < b64.length; i++) rows += `${f}\t${i}\t${b64.slice(i * FILE_PART, (i + 1) * FILE_PART)}\n`;
      for (const s of db.shards) await s.insertTsv(filesTable, rows);
    }
    // codes and rows, list by list, to the list's shard
    const codesTable = db.qualified(`${name}_codes_local`);
    const parts: Buffer[][] = db.shards.map(() => []);
    const sizes = db.shards.map(() => 0);
    const flush = async (s: number) => {
      if (parts[s].length === 0) return;
      const body = Buffer.concat(parts[s]);
      parts[s] = [];
      sizes[s] = 0;
      await db.shards[s].insertTsv(codesTable, body);
    };
    const STEP = 4096;
    const ids = new Uint32Array(STEP);
    const codes = new Uint8Array(STEP * q.codeBytes);
    const rows = new Uint8Array(STEP * q.dim);
    let done = 0;
    for (let l = 0; l < q.lists; l++) {
      const s = l % S;
      for (let p0 = offsets[l]; p0 < offsets[l + 1]; p0 += STEP) {
        const c = Math.min(STEP, offsets[l + 1] - p0);
        readAll(files.ids.fd, new Uint8Array(ids.buffer, 0, c * 4), files.ids.offset + p0 * 4, join(dir, IVF_FILES.ids));
        readAll(files.codes.fd, codes.subarray(0, c * q.codeBytes), files.codes.offset + p0 * q.codeBytes, join(dir, IVF_FILES.codes));
        readAll(files.rescore.fd, rows.subarray(0, c * q.dim), files.rescore.offset + p0 * q.dim, join(dir, IVF_FILES.rescore));
        for (let j = 0; j < c; j++) {
          const line = [Buffer.from(`${l}\t${p0 + j}\t${ids[j]}\t${codeWords(codes, j * q.codeBytes, q.codeBytes).join("\t")}\t`), bytesField(rows.subarray(j * q.dim, (j + 1) * q.dim)), Buffer.from("\n")];
          parts[s].push(...line);
          sizes[s] += line[0].length + line[1].length + 1;
        }
        done += c;
        if (sizes[s] >= FLUSH_BYTES) await flush(s);
        onProgress?.(done);
      }
    }
    for (let s = 0; s < S; s++) await flush(s);
    // units, by unit mod shards
    const unitsTable = db.qualified(`${name}_units_local`);
    const unitText: string[][] = db.shards.map(() => []);
    for (let i = 0; i < n; i++) {
      unitText[i % S].push(`${i}\t${tsvField(JSON.stringify(units.get(i)))}\n`);
      if (i % 50_000 === 49_999 || i === n - 1) for (let s = 0; s < S; s++) if (unitText[s].length > 0) await db.shards[s].insertTsv(unitsTable, unitText[s].splice(0).join(""));
    }
    let stored = 0;
    for (const s of db.shards) stored += Number((await s.rows<{ n: string }>(`SELECT count() AS n FROM ${codesTable}`, codesTable))[0].n);
    if (stored !== n) throw new ClickHouseError(`${db.url} (table ${codesTable}): ${stored} vectors stored, the index has ${n}`, db.url, codesTable);
    for (const s of db.shards) await s.command(`OPTIMIZE TABLE ${codesTable} FINAL`, codesTable);
    const manifest: IndexManifest = { ...m, source: m.source, files: undefined };
    delete manifest.files;
    await writeMeta(db, name, { manifest: JSON.stringify(manifest), units: n, shards: S, lists: q.lists, dim: q.dim, codeBytes: q.codeBytes, build, from: dir });
    await writeMeta(db, name, { complete: 1 });
    return { units: n, lists: q.lists, shards: S, bytes: await tableBytes(db, name) };
  } finally {
    for (const f of Object.values(files)) closeSync(f.fd);
    units.close();
    await db.close();
  }
}

/** The files `<name>_files_local` holds, written into a fresh temporary directory (removed by `done`). */
export async function fetchIndexFiles(db: ClickHouseDatabase, name: string): Promise<{ dir: string; done: () => void }> {
  const table = db.qualified(`${name}_files_local`);
  const rows = await db.main.rows<{ file: string; data: string }>(`SELECT file, data FROM ${table} ORDER BY file, part`, table);
  const dir = mkdtempSync(join(tmpdir(), "tartan-dense-ch-"));
  const byFile = new Map<string, string[]>();
  for (const r of rows) (byFile.get(r.file) ?? byFile.set(r.file, []).get(r.file)!).push(r.data);
  for (const [f, parts] of byFile) writeFileSync(join(dir, f), Buffer.from(parts.join(""), "base64"));
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
}
