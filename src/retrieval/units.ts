// The units an index retrieves (passages, paragraphs or pages) with their KILT provenance, stored on
// disk as JSONL plus a table of byte offsets, so any unit is one read away and memory stays small
// whatever the corpus size. A hit becomes KILT provenance with no lookup in the knowledge source.

import { closeSync, openSync, readSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { JsonlWriter } from "../records/jsonl.js";
import type { Provenance } from "../records/types.js";

/** A retrievable unit: where it is in the knowledge source, and its text. */
export interface Unit {
  wikipedia_id: string;
  wikipedia_title: string;
  section?: string;
  start_paragraph_id?: number;
  end_paragraph_id?: number;
  start_character?: number;
  end_character?: number;
  text: string;
}

export const UNITS_FILE = "units.jsonl";
export const OFFSETS_FILE = "units.offsets";

/** What a retriever's hits point into: the units by number (a UnitStore on disk, or a backend's). */
export interface UnitSource {
  readonly count: number;
  /** Unit number `i`. */
  get(i: number): Unit;
}

/** Writes units in order (unit number = write order) and their offset table. */
export class UnitWriter {
  private readonly writer: JsonlWriter;
  private offsets: number[] = [0];
  private bytes = 0;

  constructor(private readonly dir: string) {
    this.writer = new JsonlWriter(join(dir, UNITS_FILE));
  }

  get count(): number {
    return this.offsets.length - 1;
  }

  async add(unit: Unit): Promise<number> {
    const line = JSON.stringify(unit);
    this.bytes += Buffer.byteLength(line) + 1;
    this.offsets.push(this.bytes);
    await this.writer.writeLine(line);
    return this.offsets.length - 2;
  }

  async close(): Promise<void> {
    await this.writer.close();
    writeFileSync(join(this.dir, OFFSETS_FILE), Buffer.from(new Float64Array(this.offsets).buffer));
  }
}

/** Random access to the units of an index directory. */
export class UnitStore implements UnitSource {
  private readonly fd: number;
  private readonly offsets: Float64Array;
  private buf = Buffer.allocUnsafe(1 << 16);

  private constructor(readonly dir: string) {
    const file = join(dir, UNITS_FILE);
    if (!existsSync(file)) throw new Error(`${dir}: no ${UNITS_FILE} (not an index directory?)`);
    const raw = readFileSync(join(dir, OFFSETS_FILE));
    this.offsets = new Float64Array(raw.buffer, raw.byteOffset, raw.byteLength / 8);
    this.fd = openSync(file, "r");
  }

  static open(dir: string): UnitStore {
    return new UnitStore(dir);
  }

  get count(): number {
    return this.offsets.length - 1;
  }

  /** Unit number `i`. */
  get(i: number): Unit {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) throw new RangeError(`unit ${i} out of range 0..${this.count - 1}`);
    const start = this.offsets[i];
    const len = this.offsets[i + 1] - start - 1;
    if (this.buf.length < len) this.buf = Buffer.allocUnsafe(len);
    readSync(this.fd, this.buf, 0, len, start);
    return JSON.parse(this.buf.toString("utf8", 0, len)) as Unit;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** KILT provenance for a retrieved unit (what `tartan retrieve` writes and `tartan eval` scores). */
export function unitProvenance(unit: Unit, score: number, withText = true): Provenance {
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
