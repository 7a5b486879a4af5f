// What an update of a live BM25 index reads: pages to add or replace (a KILT pages JSONL file, cut into
// units as the index's units are, or a unit table from `tartan ks passages --table`) and page ids to
// delete (a text file, an id a line). Updates name pages by their wikipedia_id: a page's units come and
// go together. Every page keeps where it was read (file:line, or the table and its unit number), so a
// refusal names it.

import { existsSync, readFileSync, statSync } from "node:fs";
import { readJsonl } from "../../../records/jsonl.js";
import { LineError } from "../../../records/lines.js";
import type { KiltPage } from "../../../records/types.js";
import { PageError } from "../../../knowledge/passages.js";
import { unitsOfPage } from "../../sources.js";
import { TableUnitStore } from "../../units/table.js";
import type { Unit } from "../../units/unit.js";
import type { UnitKind } from "../../types.js";

/** One page of an update, with its units and where it was read. */
export interface PageInput {
  id: string;
  units: Unit[];
  /** `FILE:LINE`, or `TABLE: unit N`. */
  where: string;
}

/** One id of a delete file. */
export interface IdInput {
  id: string;
  where: string;
}

/** The pages of `path` (a pages JSONL file, or a unit table directory), cut as `unit` and `words` say. */
export async function readPages(path: string, unit: UnitKind, words: number): Promise<PageInput[]> {
  if (!existsSync(path)) throw new Error(`${path}: no such file or directory`);
  if (statSync(path).isDirectory()) return readTable(path, unit);
  const out: PageInput[] = [];
  for await (const { value, line } of readJsonl<KiltPage>(path)) {
    const where = `${path}:${line}`;
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new LineError(path, line, "expected a KILT page object");
    const id = (value as { wikipedia_id?: unknown }).wikipedia_id;
    if ((typeof id !== "string" && typeof id !== "number") || String(id) === "") throw new LineError(path, line, "wikipedia_id: expected a non-empty string or number");
    let units: Unit[];
    try {
      units = unitsOfPage(value, { unit, words });
    } catch (e) {
      if (e instanceof PageError) throw new LineError(path, line, e.message);
      throw e;
    }
    out.push({ id: String(id), units, where });
  }
  return out;
}

/** A unit table's units grouped by page (a page's units are consecutive in a table). */
function readTable(dir: string, unit: UnitKind): PageInput[] {
  const t = TableUnitStore.open(dir);
  try {
    const tableUnit = t.description.unit as UnitKind | undefined;
    if (tableUnit !== undefined && tableUnit !== unit) throw new Error(`${dir}: the unit table holds ${tableUnit} units, the index ${unit} units`);
    const out: PageInput[] = [];
    let i = 0;
    for (const u of t.scan(0, t.count, true)) {
      const last = out[out.length - 1];
      if (last !== undefined && last.id === u.wikipedia_id) last.units.push(u);
      else out.push({ id: u.wikipedia_id, units: [u], where: `${dir}: unit ${i}` });
      i++;
    }
    return out;
  } finally {
    t.close();
  }
}

/** The ids of a delete file: one a line, blank lines skipped, surrounding spaces trimmed. */
export function readIds(path: string): IdInput[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
  const out: IdInput[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const id = lines[i].trim();
    if (id === "") continue;
    out.push({ id, where: `${path}:${i + 1}` });
  }
  return out;
}
