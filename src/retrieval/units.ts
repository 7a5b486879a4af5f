// The units an index retrieves (passages, paragraphs or pages) with their KILT provenance, behind one
// interface (UnitStore) with two layouts on disk:
//   - inline: JSONL with each unit's text plus a table of byte offsets (indexes built from a pages file);
//   - store-backed: a compact binary table of provenance and offsets into the knowledge-source store the
//     units were cut from (./unit-table.ts), no second copy of the text; the text is read from the store
//     only when a caller asks for it (`unit.text`).
// Either way any unit is a few reads away and memory stays small whatever the corpus size. A hit becomes
// KILT provenance with no lookup in the knowledge source.

import { closeSync, existsSync, fstatSync, openSync } from "node:fs";
import { join } from "node:path";
import type { Provenance } from "../records/types.js";
import { BufferedFile, readExactly } from "./buffered-file.js";
import { TABLE_META_FILE, TableUnitStore, TableUnitWriter, type UnitRef } from "./unit-table.js";

export type { UnitRef } from "./unit-table.js";

/** Where a unit is in the knowledge source (its KILT provenance without the text). */
export interface UnitInfo {
  wikipedia_id: string;
  wikipedia_title: string;
  section?: string;
  start_paragraph_id?: number;
  end_paragraph_id?: number;
  start_character?: number;
  end_character?: number;
}

/** A retrievable unit: where it is in the knowledge source, and its text. */
export interface Unit extends UnitInfo {
  text: string;
  /** Units cut from a knowledge-source store carry where their text is in it (UnitWriter then stores this, not the text). */
  ref?: UnitRef;
}

export const UNITS_FILE = "units.jsonl";
export const OFFSETS_FILE = "units.offsets";

/** What a retriever's hits point into: the units by number (a UnitStore on disk, or a backend's). */
export interface UnitSource {
  readonly count: number;
  /** Unit number `i`. */
  get(i: number): Unit;
}

/** Writes units in order (unit number = write order): inline, or as references when the units carry `ref`. */
export class UnitWriter {
  private inline: InlineUnitWriter | null = null;
  private table: TableUnitWriter | null = null;

  /** `describe` (unit kind, passage size) goes into a store-backed table's units.json. */
  constructor(
    private readonly dir: string,
    private readonly describe: { unit?: string; words?: number } = {},
  ) {}

  get count(): number {
    return this.inline?.count ?? this.table?.count ?? 0;
  }

  /** Adds one unit; returns its number. All units of one store come from a knowledge-source store, or none do. */
  async add(unit: Unit): Promise<number> {
    if (unit.ref) {
      if (this.inline) throw new Error(`${this.dir}: units with and without a knowledge-source reference mixed in one index`);
      this.table ??= new TableUnitWriter(this.dir, unit.ref.store, this.describe);
      return this.table.add(unit, unit.ref);
    }
    if (this.table) throw new Error(`${this.dir}: units with and without a knowledge-source reference mixed in one index`);
    this.inline ??= new InlineUnitWriter(this.dir);
    return this.inline.add(unit);
  }

  /** Finishes the unit files. */
  async close(): Promise<void> {
    if (this.table) this.table.close();
    else (this.inline ?? new InlineUnitWriter(this.dir)).close();
  }
}

/** units.jsonl + units.offsets (float64 byte offsets, one more than there are units), written as they come. */
class InlineUnitWriter {
  private readonly lines: BufferedFile;
  private readonly offsets: BufferedFile;
  private bytes = 0;
  count = 0;

  constructor(dir: string) {
    this.lines = new BufferedFile(join(dir, UNITS_FILE));
    this.offsets = new BufferedFile(join(dir, OFFSETS_FILE));
    this.offsets.f64(0);
  }

  add(unit: Unit): number {
    const { ref: _, ...plain } = unit;
    const line = `${JSON.stringify(plain)}\n`;
    this.bytes += this.lines.text(line);
    this.offsets.f64(this.bytes);
    return this.count++;
  }

  close(): void {
    this.lines.close();
    this.offsets.close();
  }
}

/** Random access to the units of an index directory, whichever layout it has. */
export interface UnitStore extends UnitSource {
  readonly dir: string;
  readonly count: number;
  /** Unit number `i` with its text (read from the knowledge-source store on first access for store-backed units). */
  get(i: number): Unit;
  /** Unit number `i`'s provenance, without reading any text. */
  info(i: number): UnitInfo;
  /** Closes the unit files. */
  close(): void;
}

/** Opens an index directory's units, whichever layout they have. */
export const UnitStore = {
  /** Opens the units of index directory `dir` (either layout). */
  open(dir: string): UnitStore {
    if (existsSync(join(dir, TABLE_META_FILE))) return TableUnitStore.open(dir);
    return InlineUnitStore.open(dir);
  },
};

/** Throws a RangeError unless `i` is a unit number of a store of `count` units. */
export function checkUnitNumber(i: number, count: number): void {
  if (!Number.isInteger(i) || i < 0 || i >= count) throw new RangeError(`unit ${i} out of range 0..${count - 1}`);
}

/** units.jsonl with its offsets table: each unit's line holds its text. */
class InlineUnitStore implements UnitStore {
  private readonly fd: number;
  private readonly offsets: Float64Array;
  private readonly size: number;
  private buf = Buffer.allocUnsafe(1 << 16);

  private constructor(
    readonly dir: string,
    offsets: Float64Array,
    fd: number,
  ) {
    this.offsets = offsets;
    this.fd = fd;
    this.size = fstatSync(fd).size;
  }

  static open(dir: string): InlineUnitStore {
    const file = join(dir, UNITS_FILE);
    const offsetsFile = join(dir, OFFSETS_FILE);
    if (!existsSync(file)) throw new Error(`${dir}: no ${UNITS_FILE} (not an index directory?)`);
    const ofd = openSync(offsetsFile, "r");
    let offsets: Float64Array;
    try {
      const bytes = fstatSync(ofd).size;
      if (bytes % 8 !== 0 || bytes < 8) throw new Error(`${offsetsFile}: ${bytes} bytes, not a table of 8-byte offsets (corrupt or truncated)`);
      const raw = Buffer.allocUnsafe(bytes);
      readExactly(ofd, raw, 0, bytes, 0, offsetsFile);
      offsets = new Float64Array(raw.buffer, raw.byteOffset, bytes / 8);
    } finally {
      closeSync(ofd);
    }
    const fd = openSync(file, "r");
    const store = new InlineUnitStore(dir, offsets, fd);
    const last = offsets[offsets.length - 1];
    if (offsets[0] !== 0 || last !== store.size) {
      closeSync(fd);
      throw new Error(`${offsetsFile}: offsets end at ${last}, ${file} has ${store.size} bytes (corrupt, truncated or from another build)`);
    }
    return store;
  }

  get count(): number {
    return this.offsets.length - 1;
  }

  get(i: number): Unit {
    checkUnitNumber(i, this.count);
    const start = this.offsets[i];
    const len = this.offsets[i + 1] - start - 1;
    const file = join(this.dir, UNITS_FILE);
    if (!(len >= 0 && start + len < this.size && Number.isInteger(len))) throw new Error(`${join(this.dir, OFFSETS_FILE)}: bad offsets for unit ${i} (corrupt)`);
    if (this.buf.length < len) this.buf = Buffer.allocUnsafe(len);
    readExactly(this.fd, this.buf, 0, len, start, file);
    try {
      return JSON.parse(this.buf.toString("utf8", 0, len)) as Unit;
    } catch {
      throw new Error(`${file}: unit ${i} is not valid JSON (corrupt)`);
    }
  }

  info(i: number): UnitInfo {
    return this.get(i);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** KILT provenance for a retrieved unit (what `tartan retrieve` writes and `tartan eval` scores). */
export function unitProvenance(unit: UnitInfo & { text?: string }, score: number, withText = true): Provenance {
  const p: Provenance = { wikipedia_id: unit.wikipedia_id, title: unit.wikipedia_title };
  if (unit.section !== undefined) p.section = unit.section;
  if (unit.start_paragraph_id !== undefined) p.start_paragraph_id = unit.start_paragraph_id;
  if (unit.start_character !== undefined) p.start_character = unit.start_character;
  if (unit.end_paragraph_id !== undefined) p.end_paragraph_id = unit.end_paragraph_id;
  if (unit.end_character !== undefined) p.end_character = unit.end_character;
  if (withText) p.text = unit.text;
  p.score = score;
  return p;
}
