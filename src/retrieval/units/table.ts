// The store-backed unit layout: units cut from a knowledge-source store (`tartan ks ingest`) kept as
// provenance plus offsets into that store, not as a second copy of their text. Files of the directory:
//   units.json     what the table refers to: the store's directory and identity, counts (written last);
//   units.table    a 16-byte header ("TUNT", version, units, record size), then one 28-byte record per
//                  unit: page entry, section entry, start paragraph/character, end paragraph/character,
//                  pieces (0: one piece, the span itself; 0xFFFFFFFF: the whole page; else 1 + the u32
//                  position in units.pieces of [count, (paragraph, start, end) × count]);
//   units.strings  UTF-8 heap of entries: a page entry is JSON [store rowid, wikipedia_id, title], a section
//                  entry the section text; units.entries holds their float64 start offsets (+ the end);
//   units.pieces   u32 pieces of units that span several paragraph pieces (merged paragraph tails).
// Character offsets count code points, as KILT's do. Every read is bounds-checked against the file sizes,
// so a corrupt or truncated table is an error naming the file, never a wrong unit or a hang.

import { closeSync, existsSync, fstatSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { OffsetMap } from "../../knowledge/codepoints.js";
import type { PageText } from "../../knowledge/codec.js";
import { KnowledgeSource, readStoreInfo } from "../../knowledge/store.js";
import type { KiltPage } from "../../records/types.js";
import { BufferedFile, ReadWindow, readExactly } from "../buffered-file.js";
import { checkUnitNumber, pageUnit, type Unit, type UnitInfo, type UnitRef, type UnitStore } from "./unit.js";
import { writeFileSafe } from "../../util/safe-output.js";

export const TABLE_META_FILE = "units.json";
export const TABLE_FILE = "units.table";
export const STRINGS_FILE = "units.strings";
export const ENTRIES_FILE = "units.entries";
export const PIECES_FILE = "units.pieces";
export const TABLE_FORMAT = "tartan-units-table/1";

const MAGIC = 0x544e5554; // "TUNT" little-endian
const VERSION = 1;
const HEADER = 16;
const RECORD = 28;
const NONE = 0xffffffff;
const WHOLE_PAGE = 0xffffffff;

/** The identity of a store a table refers to: a store re-ingested from other input is refused. */
export interface StoreIdentity {
  pages: number;
  input_path: string;
  input_size: number;
  input_mtime_ms: number;
}

/** The description of a unit table (`table.json`): format, unit kind and the knowledge-source store it points into. */
export interface TableMeta {
  format: string;
  /** What the units are, when the writer was told (`tartan ks passages --table`): unit kind and passage size. */
  unit?: string;
  words?: number;
  ks: string;
  store: StoreIdentity;
  units: number;
  entries: number;
  stringsBytes: number;
  piecesBytes: number;
}

function identity(dir: string): StoreIdentity {
  const info = readStoreInfo(dir);
  return { pages: info.pages, input_path: info.input_path, input_size: info.input_size, input_mtime_ms: info.input_mtime_ms };
}

/** Writes a store-backed unit table, one unit at a time (memory bounded by its write buffers). */
export class TableUnitWriter {
  private readonly table: BufferedFile;
  private readonly strings: BufferedFile;
  private readonly entries: BufferedFile;
  private readonly pieces: BufferedFile;
  private readonly ks: string;
  private entryCount = 0;
  private lastRow = -1;
  private pageEntry = 0;
  private lastSection: string | undefined = undefined;
  private sectionEntry = NONE;
  private readonly record = Buffer.alloc(RECORD);
  private readonly identity: StoreIdentity;
  /** The last `ref.store` found to be this table's store (resolved once, not per unit). */
  private lastStore: string | undefined;
  count = 0;

  constructor(
    private readonly dir: string,
    ks: string,
    private readonly describe: { unit?: string; words?: number } = {},
  ) {
    this.ks = resolve(ks);
    this.identity = identity(this.ks);
    this.table = new BufferedFile(join(dir, TABLE_FILE));
    this.strings = new BufferedFile(join(dir, STRINGS_FILE));
    this.entries = new BufferedFile(join(dir, ENTRIES_FILE));
    this.pieces = new BufferedFile(join(dir, PIECES_FILE));
    this.table.raw(Buffer.alloc(HEADER)); // filled in by close()
    this.entries.f64(0);
  }

  private entry(s: string): number {
    this.strings.text(s);
    this.entries.f64(this.strings.bytes);
    return this.entryCount++;
  }

  /** Adds a unit that points into the knowledge-source store at `ref`; returns its number. */
  add(unit: Unit, ref: UnitRef): number {
    if (ref.store !== this.lastStore) {
      if (resolve(ref.store) !== this.ks) throw new Error(`${this.dir}: units from two knowledge-source stores (${this.ks}, ${ref.store}) in one index`);
      this.lastStore = ref.store;
    }
    if (ref.row !== this.lastRow) {
      this.pageEntry = this.entry(JSON.stringify([ref.row, unit.wikipedia_id, unit.wikipedia_title]));
      this.lastRow = ref.row;
      this.lastSection = undefined;
      this.sectionEntry = NONE;
    }
    if (unit.section !== this.lastSection) {
      this.sectionEntry = unit.section === undefined ? NONE : this.entry(unit.section);
      this.lastSection = unit.section;
    }
    const r = this.record;
    r.writeUInt32LE(this.pageEntry, 0);
    r.writeUInt32LE(this.sectionEntry, 4);
    r.writeUInt32LE(unit.start_paragraph_id ?? 0, 8);
    r.writeUInt32LE(unit.start_character ?? 0, 12);
    r.writeUInt32LE(unit.end_paragraph_id ?? 0, 16);
    r.writeUInt32LE(unit.end_character ?? 0, 20);
    let pieces = 0;
    const src = ref.sources;
    if (src === null) pieces = WHOLE_PAGE;
    else if (src.length !== 1 || src[0].paragraph_id !== unit.start_paragraph_id || src[0].start !== unit.start_character || src[0].end !== unit.end_character) {
      pieces = 1 + this.pieces.bytes / 4;
      this.pieces.u32(src.length);
      for (const s of src) {
        this.pieces.u32(s.paragraph_id);
        this.pieces.u32(s.start);
        this.pieces.u32(s.end);
      }
    }
    r.writeUInt32LE(pieces, 24);
    this.table.raw(r);
    if (this.count >= NONE - 1) throw new Error(`${this.dir}: more than ${NONE - 1} units`);
    return this.count++;
  }

  /** Finishes the table's files. */
  close(): void {
    this.table.close();
    this.strings.close();
    this.entries.close();
    this.pieces.close();
    const header = Buffer.alloc(HEADER);
    header.writeUInt32LE(MAGIC, 0);
    header.writeUInt32LE(VERSION, 4);
    header.writeUInt32LE(this.count, 8);
    header.writeUInt32LE(RECORD, 12);
    const fd = openSync(join(this.dir, TABLE_FILE), "r+");
    try {
      writeFileSync(fd, header);
    } finally {
      closeSync(fd);
    }
    const meta: TableMeta = {
      format: TABLE_FORMAT,
      ...this.describe,
      ks: this.ks,
      store: this.identity,
      units: this.count,
      entries: this.entryCount,
      stringsBytes: this.strings.bytes,
      piecesBytes: this.pieces.bytes,
    };
    const file = join(this.dir, TABLE_META_FILE);
    writeFileSafe(file, `${JSON.stringify(meta, null, 2)}\n`);
  }
}

/** A page's text as units read it, with the code-point offset maps of the paragraphs sliced so far. */
interface CachedPage {
  text: KiltPage["text"] | undefined;
  maps: OffsetMap[];
}

/** A unit of a table: its provenance at once, its text read from the store when first asked for. */
class TableUnit implements Unit {
  section?: string;
  start_paragraph_id?: number;
  start_character?: number;
  end_paragraph_id?: number;
  end_character?: number;
  private cached: string | undefined;

  constructor(
    private readonly owner: TableUnitStore,
    private readonly row: number,
    private readonly pieces: number,
    readonly wikipedia_id: string,
    readonly wikipedia_title: string,
  ) {}

  get text(): string {
    this.cached ??= this.owner.textOf(this);
    return this.cached;
  }

  /** @internal */ get pageRow(): number {
    return this.row;
  }
  /** @internal */ get piecesRef(): number {
    return this.pieces;
  }
}

/** Random access to a store-backed unit table. */
export class TableUnitStore implements UnitStore {
  private readonly fds: { table: number; strings: number; entries: number; pieces: number };
  /** The files' paths (for error messages; joined once, not per read). */
  private readonly paths: { table: string; strings: string; entries: string; pieces: string };
  private readonly rec = Buffer.alloc(RECORD);
  private readonly pageEntries = new Map<number, [number, string, string]>();
  private readonly sections = new Map<number, string>();
  private readonly pages = new Map<number, CachedPage>();
  /** Pages read ahead by row (decoded when taken), and the last row the scan's current units need. */
  private readonly ahead = new Map<number, () => PageText>();
  private aheadTo = -1;
  /**
   * Readers of the heap and pieces files: exact-size reads at first (random access), read-ahead windows
   * from the first scan on (scans read them in order).
   */
  private heap: { entries: ReadWindow; strings: ReadWindow; pieces: ReadWindow };
  private readingAhead = false;
  private ks: KnowledgeSource | null = null;

  private constructor(
    readonly dir: string,
    private readonly meta: TableMeta,
  ) {
    this.paths = { table: join(dir, TABLE_FILE), strings: join(dir, STRINGS_FILE), entries: join(dir, ENTRIES_FILE), pieces: join(dir, PIECES_FILE) };
    const open = (f: string) => openSync(join(dir, f), "r");
    this.fds = { table: open(TABLE_FILE), strings: open(STRINGS_FILE), entries: open(ENTRIES_FILE), pieces: open(PIECES_FILE) };
    this.heap = this.heapReaders(0, 0);
    try {
      this.checkSizes();
    } catch (e) {
      this.close();
      throw e;
    }
  }

  /** Opens the unit table in `dir` (its store is opened on the first text read). */
  static open(dir: string): TableUnitStore {
    const file = join(dir, TABLE_META_FILE);
    let meta: TableMeta;
    try {
      meta = JSON.parse(readFileSync(file, "utf8")) as TableMeta;
    } catch (e) {
      throw new Error(`${file}: not readable as JSON (${(e as Error).message})`);
    }
    if (meta.format !== TABLE_FORMAT) throw new Error(`${file}: unit table format ${JSON.stringify(meta.format)}; this tartan reads ${TABLE_FORMAT}`);
    for (const k of ["units", "entries", "stringsBytes", "piecesBytes"] as const)
      if (!Number.isSafeInteger(meta[k]) || meta[k] < 0) throw new Error(`${file}: ${k} must be a non-negative integer`);
    if (typeof meta.ks !== "string") throw new Error(`${file}: ks must name the knowledge-source directory`);
    for (const f of [TABLE_FILE, STRINGS_FILE, ENTRIES_FILE, PIECES_FILE]) if (!existsSync(join(dir, f))) throw new Error(`${dir}: ${f} missing (incomplete index)`);
    return new TableUnitStore(dir, meta);
  }

  private checkSizes(): void {
    const size = (fd: number) => fstatSync(fd).size;
    const m = this.meta;
    const tableFile = join(this.dir, TABLE_FILE);
    const expect = (fd: number, file: string, bytes: number) => {
      const got = size(fd);
      if (got !== bytes) throw new Error(`${join(this.dir, file)}: ${got} bytes, ${bytes} expected from ${TABLE_META_FILE} (truncated, corrupt or from another build)`);
    };
    expect(this.fds.table, TABLE_FILE, HEADER + RECORD * m.units);
    expect(this.fds.strings, STRINGS_FILE, m.stringsBytes);
    expect(this.fds.entries, ENTRIES_FILE, 8 * (m.entries + 1));
    expect(this.fds.pieces, PIECES_FILE, m.piecesBytes);
    const h = Buffer.alloc(HEADER);
    readExactly(this.fds.table, h, 0, HEADER, 0, tableFile);
    if (h.readUInt32LE(0) !== MAGIC || h.readUInt32LE(4) !== VERSION || h.readUInt32LE(8) !== m.units || h.readUInt32LE(12) !== RECORD)
      throw new Error(`${tableFile}: bad header (not a tartan unit table of version ${VERSION} with ${m.units} units)`);
  }

  get count(): number {
    return this.meta.units;
  }

  /** What units.json says about the table (store, counts, unit kind). */
  get description(): Readonly<TableMeta> {
    return this.meta;
  }

  /** Entry `e` of the string heap. */
  private entryText(e: number, what: string): string {
    if (!(e < this.meta.entries)) throw new Error(`${this.paths.table}: ${what} entry ${e} out of range 0..${this.meta.entries - 1} (corrupt)`);
    const { entries, strings } = this.heap;
    const o = entries.at(8 * e, 16);
    const start = entries.buffer.readDoubleLE(o);
    const end = entries.buffer.readDoubleLE(o + 8);
    if (!(Number.isSafeInteger(start) && Number.isSafeInteger(end) && start >= 0 && end >= start && end <= this.meta.stringsBytes && end - start < 1 << 26))
      throw new Error(`${this.paths.entries}: bad offsets for entry ${e} (corrupt)`);
    const at = strings.at(start, end - start);
    return strings.buffer.toString("utf8", at, at + end - start);
  }

  /** Readers of the heap and pieces files that read `chunk` (entries and pieces: `small`) bytes ahead; 0 reads exactly what is asked. */
  private heapReaders(chunk: number, small: number): { entries: ReadWindow; strings: ReadWindow; pieces: ReadWindow } {
    return {
      entries: new ReadWindow(this.fds.entries, this.paths.entries, 8 * (this.meta.entries + 1), small),
      strings: new ReadWindow(this.fds.strings, this.paths.strings, this.meta.stringsBytes, chunk),
      pieces: new ReadWindow(this.fds.pieces, this.paths.pieces, this.meta.piecesBytes, small),
    };
  }

  private pageEntry(e: number): [number, string, string] {
    let p = this.pageEntries.get(e);
    if (p === undefined) {
      const text = this.entryText(e, "page");
      try {
        p = JSON.parse(text) as [number, string, string];
      } catch {
        p = undefined;
      }
      if (!Array.isArray(p) || p.length !== 3 || typeof p[0] !== "number" || typeof p[1] !== "string" || typeof p[2] !== "string")
        throw new Error(`${join(this.dir, STRINGS_FILE)}: page entry ${e} is not [row, wikipedia_id, title] (corrupt)`);
      if (this.pageEntries.size >= 4096) this.pageEntries.clear();
      this.pageEntries.set(e, p);
    }
    return p;
  }

  private section(e: number): string {
    let s = this.sections.get(e);
    if (s === undefined) {
      s = this.entryText(e, "section");
      if (this.sections.size >= 4096) this.sections.clear();
      this.sections.set(e, s);
    }
    return s;
  }

  get(i: number): Unit {
    return this.unit(i);
  }

  info(i: number): UnitInfo {
    return this.unit(i);
  }

  private unit(i: number): TableUnit {
    checkUnitNumber(i, this.count);
    const r = this.rec;
    readExactly(this.fds.table, r, 0, RECORD, HEADER + RECORD * i, this.paths.table);
    const [row, id, title] = this.pageEntry(r.readUInt32LE(0));
    const pieces = r.readUInt32LE(24);
    const u = new TableUnit(this, row, pieces, id, title);
    if (pieces === WHOLE_PAGE) return u;
    const section = r.readUInt32LE(4);
    if (section !== NONE) u.section = this.section(section);
    u.start_paragraph_id = r.readUInt32LE(8);
    u.start_character = r.readUInt32LE(12);
    u.end_paragraph_id = r.readUInt32LE(16);
    u.end_character = r.readUInt32LE(20);
    return u;
  }

  /** The store the table refers to, opened on first use and checked to be the one the table was cut from. */
  private store(): KnowledgeSource {
    if (this.ks) return this.ks;
    const want = this.meta.store;
    let have: StoreIdentity;
    try {
      have = identity(this.meta.ks);
    } catch (e) {
      throw new Error(`${this.dir}: the unit texts are in the knowledge-source store ${this.meta.ks}, which cannot be opened: ${(e as Error).message}`);
    }
    if (have.pages !== want.pages || have.input_path !== want.input_path || have.input_size !== want.input_size || have.input_mtime_ms !== want.input_mtime_ms)
      throw new Error(
        `${this.dir}: cut from the knowledge-source store ${this.meta.ks} as ingested from ${want.input_path} (${want.pages} pages); ` +
          `that store now holds ${have.pages} pages from ${have.input_path}: rebuild the index`,
      );
    this.ks = KnowledgeSource.open(this.meta.ks);
    return this.ks;
  }

  private page(row: number, id: string): CachedPage {
    let page = this.pages.get(row);
    if (page === undefined) {
      // Only the id and text are decoded: units need nothing else of their page.
      const p = this.readAhead(row) ?? this.store().getPageTextByRow(row);
      if (p === null || p.wikipedia_id !== id)
        throw new Error(`${this.dir}: page ${id} is not at row ${row} of the knowledge-source store ${this.meta.ks} (the store changed): rebuild the index`);
      page = { text: p.text as KiltPage["text"] | undefined, maps: [] };
      if (this.pages.size >= 64) this.pages.delete(this.pages.keys().next().value as number);
      this.pages.set(row, page);
    }
    return page;
  }

  /**
   * Page `row` from the pages a scan read ahead, reading the next ones (up to the last row the scan's
   * current units need, 128 at most) in one query when it is not among them; null outside a scan.
   */
  private readAhead(row: number): PageText | null {
    let next = this.ahead.get(row);
    if (next === undefined && row <= this.aheadTo) {
      this.ahead.clear();
      for (const r of this.store().pageTextsBetween(row, Math.min(row + 127, this.aheadTo))) this.ahead.set(r.rowid, r.text);
      next = this.ahead.get(row);
    }
    if (next === undefined) return null;
    this.ahead.delete(row);
    return next();
  }

  /** @internal The text of a unit of this table, read from the store. */
  textOf(u: TableUnit): string {
    const page = this.page(u.pageRow, u.wikipedia_id);
    const ref = u.piecesRef;
    if (ref === WHOLE_PAGE) return pageUnit({ wikipedia_id: u.wikipedia_id, wikipedia_title: u.wikipedia_title, text: page.text as KiltPage["text"] }).text;
    // Python's paragraph[start:end] in code points; a paragraph's offset map is built once for all its units.
    const slice = (p: number, start: number, end: number) => {
      const t = page.text?.[p];
      if (typeof t !== "string") throw new Error(`${this.dir}: paragraph ${p} of page ${u.wikipedia_id} missing in ${this.meta.ks} (the store changed): rebuild the index`);
      const m = (page.maps[p] ??= new OffsetMap(t));
      return t.slice(m.toUnit(start), m.toUnit(end));
    };
    if (ref === 0) return slice(u.start_paragraph_id!, u.start_character!, u.end_character!);
    return this.piecesOf(ref)
      .map((s) => slice(s.paragraph_id, s.start, s.end))
      .join(" ");
  }

  /** The pieces stored at reference `ref` (1 + u32 position in units.pieces). */
  private piecesOf(ref: number): { paragraph_id: number; start: number; end: number }[] {
    const file = this.paths.pieces;
    const at = (ref - 1) * 4;
    if (at + 4 > this.meta.piecesBytes) throw new Error(`${this.paths.table}: pieces offset ${at} beyond ${file} (corrupt)`);
    const pieces = this.heap.pieces;
    const h = pieces.at(at, 4); // before reading .buffer: a read may replace it
    const n = pieces.buffer.readUInt32LE(h);
    if (n === 0 || at + 4 + 12 * n > this.meta.piecesBytes) throw new Error(`${file}: bad piece count ${n} at offset ${at} (corrupt)`);
    const b = pieces.at(at + 4, 12 * n);
    const body = pieces.buffer;
    const out: { paragraph_id: number; start: number; end: number }[] = [];
    for (let k = 0; k < n; k++) out.push({ paragraph_id: body.readUInt32LE(b + 12 * k), start: body.readUInt32LE(b + 12 * k + 4), end: body.readUInt32LE(b + 12 * k + 8) });
    return out;
  }

  /**
   * Units `from`..`to` − 1 (default: all) in order with their text and their reference into the store,
   * read sequentially (big reads, each page decoded once): what `tartan index build --units DIR` indexes.
   * With `withText` false the text is left empty and no page is read (a BM25 build's workers read it).
   */
  *scan(from = 0, to = this.count, withText = true): Generator<Unit> {
    if (!(Number.isInteger(from) && Number.isInteger(to) && 0 <= from && from <= to && to <= this.count))
      throw new RangeError(`${this.dir}: units ${from}..${to} out of range 0..${this.count}`);
    const BATCH = 4096;
    const buf = Buffer.allocUnsafe(RECORD * BATCH);
    const file = this.paths.table;
    const ks = resolve(this.meta.ks);
    // Units in order refer to the heap and the pieces in order too: read those files ahead.
    if (!this.readingAhead) {
      this.heap = this.heapReaders(1 << 18, 1 << 16);
      this.readingAhead = true;
    }
    try {
      for (let first = from; first < to; first += BATCH) {
        const n = Math.min(BATCH, to - first);
        readExactly(this.fds.table, buf, 0, RECORD * n, HEADER + RECORD * first, file);
        if (withText) {
          // The pages these units need can be read in a few queries, not one per page.
          this.aheadTo = -1;
          for (let k = 0; k < n; k++) this.aheadTo = Math.max(this.aheadTo, this.pageEntry(buf.readUInt32LE(RECORD * k))[0]);
        }
        for (let k = 0; k < n; k++) {
          const at = RECORD * k;
          const [row, id, title] = this.pageEntry(buf.readUInt32LE(at));
          const pieces = buf.readUInt32LE(at + 24);
          const u = new TableUnit(this, row, pieces, id, title);
          let sources: UnitRef["sources"] = null;
          if (pieces !== WHOLE_PAGE) {
            const section = buf.readUInt32LE(at + 4);
            if (section !== NONE) u.section = this.section(section);
            u.start_paragraph_id = buf.readUInt32LE(at + 8);
            u.start_character = buf.readUInt32LE(at + 12);
            u.end_paragraph_id = buf.readUInt32LE(at + 16);
            u.end_character = buf.readUInt32LE(at + 20);
            sources = pieces === 0 ? [{ paragraph_id: u.start_paragraph_id, start: u.start_character, end: u.end_character }] : this.piecesOf(pieces);
          }
          const plain: Unit =
            pieces === WHOLE_PAGE
              ? { wikipedia_id: id, wikipedia_title: title, text: withText ? u.text : "" }
              : {
                  wikipedia_id: id,
                  wikipedia_title: title,
                  ...(u.section !== undefined ? { section: u.section } : {}),
                  start_paragraph_id: u.start_paragraph_id,
                  start_character: u.start_character,
                  end_paragraph_id: u.end_paragraph_id,
                  end_character: u.end_character,
                  text: withText ? u.text : "",
                };
          plain.ref = { store: ks, row, sources };
          yield plain;
        }
      }
    } finally {
      // Read-ahead is for this scan only.
      this.aheadTo = -1;
      this.ahead.clear();
    }
  }

  /** Closes the table's files. */
  close(): void {
    for (const fd of Object.values(this.fds)) closeSync(fd);
    this.ks?.close();
    this.ks = null;
  }
}
