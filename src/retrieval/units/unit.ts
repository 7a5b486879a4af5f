// What a unit is: its KILT provenance (UnitInfo), its text and where that text is in a store (UnitRef);
// the interfaces a retriever's hits point into (UnitSource, UnitStore); a unit as KILT provenance; the page
// as one unit. The leaf of the units folder: ./table.ts and ./store.ts build on it.

import type { KiltPage, Provenance } from "../../records/types.js";

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

/** Where a unit's text is in a knowledge-source store. */
export interface UnitRef {
  /** The store directory (absolute). */
  store: string;
  /** The page's rowid in the store. */
  row: number;
  /** The paragraph pieces the text is made of (code points, end exclusive), joined by single spaces; null = the whole page (page units). */
  sources: readonly { paragraph_id: number; start: number; end: number }[] | null;
}

/** What a retriever's hits point into: the units by number (a UnitStore on disk, or a backend's). */
export interface UnitSource {
  readonly count: number;
  /** Unit number `i`. */
  get(i: number): Unit;
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

/** Throws a RangeError unless `i` is a unit number of a store of `count` units. */
export function checkUnitNumber(i: number, count: number): void {
  if (!Number.isInteger(i) || i < 0 || i >= count) throw new RangeError(`unit ${i} out of range 0..${count - 1}`);
}

/** The page as one unit. */
export function pageUnit(page: KiltPage): Unit {
  const body = page.text
    .slice(1)
    .map((t) => String(t).replace(/\s+$/u, ""))
    .filter((t) => t.length > 0);
  return { wikipedia_id: String(page.wikipedia_id), wikipedia_title: String(page.wikipedia_title ?? ""), text: body.join("\n") };
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
