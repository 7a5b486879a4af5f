// The units an index retrieves (passages, paragraphs or pages) with their KILT provenance, behind one
// interface (UnitStore) with two layouts on disk:
//   - inline: JSONL with each unit's text plus a table of byte offsets (indexes built from a pages file);
//   - store-backed: a compact binary table of provenance and offsets into the knowledge-source store the
//     units were cut from (./table.ts), no second copy of the text; the text is read from the store
//     only when a caller asks for it (`unit.text`).
// Either way any unit is a few reads away and memory stays small whatever the corpus size. A hit becomes
// KILT provenance with no lookup in the knowledge source.

import { closeSync, existsSync, fstatSync, openSync } from "node:fs";
import { join } from "node:path";
import { BufferedFile, readExactly } from "../buffered-file.js";
import { TABLE_META_FILE, TableUnitStore, TableUnitWriter } from "./table.js";
import { checkUnitNumber, type Unit, type UnitInfo, type UnitStore as UnitStoreShape } from "./unit.js";

export const UNITS_FILE = "units.jsonl";
export const OFFSETS_FILE = "units.offsets";

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

/** Random access to the units of an index directory, whichever layout it has (./unit.ts). */
export interface UnitStore extends UnitStoreShape {}

/** Opens an index directory's units, whichever layout they have. */
export const UnitStore = {
  /** Opens the units of index directory `dir` (either layout). */
  open(dir: string): UnitStore {
    if (existsSync(join(dir, TABLE_META_FILE))) return TableUnitStore.open(dir);
    return InlineUnitStore.open(dir);
  },
};

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
