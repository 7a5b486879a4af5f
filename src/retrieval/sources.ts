// The units an index is built from, read from KILT pages: `passage` (KILT-style chunks of about 100 words,
// cutPassages), `paragraph` (one unit per non-header paragraph) or `page` (one unit per page, the page's
// paragraphs after the title line joined by newlines, no paragraph span). Pages come from a pages JSONL
// file (plain or .gz) or a knowledge-source store (`tartan ks ingest`); unit order is page order, then
// position in the page.

import { resolve } from "node:path";
import { cutPassages, PageError, passageLocation, type Passage } from "../knowledge/passages.js";
import { KnowledgeSource } from "../knowledge/store.js";
import { LineError, readJsonl } from "../records/jsonl.js";
import type { KiltPage } from "../records/types.js";
import type { UnitKind } from "./types.js";
import { pageUnit, type Unit, type UnitRef } from "./units/unit.js";

export { pageUnit };
import { TableUnitStore } from "./units/table.js";

/** What units pages are cut into. */
export interface UnitOptions {
  unit: UnitKind;
  /** Passage size in words (passage units only); default 100. */
  words?: number;
}

function passageUnit(p: Passage, ref?: UnitRef): Unit {
  const u: Unit = { ...passageLocation(p), text: p.text };
  if (ref) u.ref = ref;
  return u;
}

/**
 * The units of one page. With `at` (the page's store directory and rowid) each unit also carries its
 * reference into the store (`unit.ref`), so an index keeps that instead of a copy of the text.
 */
export function unitsOfPage(page: KiltPage, options: UnitOptions, at?: { store: string; row: number }): Unit[] {
  const ref = (sources: Passage["sources"] | null): UnitRef | undefined => (at ? { store: at.store, row: at.row, sources } : undefined);
  switch (options.unit) {
    case "page": {
      if (!Array.isArray(page.text)) throw new PageError(String(page.wikipedia_id), "text", "expected an array of strings");
      const u = pageUnit(page);
      if (at) u.ref = ref(null);
      return [u];
    }
    case "paragraph":
      return cutPassages(page, { unit: "paragraph" }).map((p) => passageUnit(p, ref(p.sources)));
    case "passage":
      return cutPassages(page, { unit: "chunk", words: options.words ?? 100 }).map((p) => passageUnit(p, ref(p.sources)));
    default:
      throw new Error(`unknown unit ${JSON.stringify(options.unit)}: passage, paragraph or page`);
  }
}

/** Pages of a pages JSONL file, with file:line in errors. */
export async function* pagesFromFile(file: string): AsyncGenerator<KiltPage> {
  for await (const { value } of readJsonl<KiltPage>(file)) yield value;
}

/** Units of every page in `pages`; errors name the page file and line when reading from a file. */
export async function* unitsFromPages(pages: AsyncIterable<KiltPage> | Iterable<KiltPage>, options: UnitOptions): AsyncGenerator<Unit> {
  for await (const page of pages as AsyncIterable<KiltPage>) yield* unitsOfPage(page, options);
}

/** Units of the pages JSONL `file`. */
export async function* unitsFromPagesFile(file: string, options: UnitOptions): AsyncGenerator<Unit> {
  for await (const { value, line } of readJsonl<KiltPage>(file)) {
    let units: Unit[];
    try {
      units = unitsOfPage(value, options);
    } catch (e) {
      if (e instanceof PageError) throw new LineError(file, line, e.message);
      throw e;
    }
    yield* units;
  }
}

/** Pages of a knowledge-source store directory, in input order (the store is closed at the end). */
export async function* pagesFromStore(dir: string): AsyncGenerator<KiltPage> {
  const ks = KnowledgeSource.open(dir);
  try {
    yield* ks.pages();
  } finally {
    ks.close();
  }
}

/**
 * Units of every page of a knowledge-source store, streamed page by page, each with its reference into
 * the store (an index built from them stores references, not text). Errors name the page.
 */
export async function* unitsFromStore(dir: string, options: UnitOptions): AsyncGenerator<Unit> {
  const ks = KnowledgeSource.open(dir);
  const store = resolve(dir);
  try {
    for (const { rowid, page } of ks.rows()) {
      let units: Unit[];
      try {
        units = unitsOfPage(page, options, { store, row: rowid });
      } catch (e) {
        if (e instanceof PageError) throw new Error(`${dir}: ${e.message}`);
        throw e;
      }
      yield* units;
    }
  } finally {
    ks.close();
  }
}

/** The units of a unit table (`tartan ks passages --table DIR`), in order, with their text read from its store. */
export async function* unitsFromTable(dir: string): AsyncGenerator<Unit> {
  const table = TableUnitStore.open(dir);
  try {
    yield* table.scan();
  } finally {
    table.close();
  }
}

/** Pages from a pages JSONL file or a knowledge-source directory. */
export function pagesFrom(source: { pages?: string; ks?: string }): AsyncGenerator<KiltPage> {
  if (!source.pages === !source.ks) throw new Error("give the pages with --pages FILE or a knowledge source with --ks DIR");
  return source.ks ? pagesFromStore(source.ks) : pagesFromFile(source.pages!);
}

/**
 * Units from a pages JSONL file (errors name its line; the index keeps their text) or a knowledge-source
 * directory (the index keeps references into the store).
 */
export function unitsFrom(source: { pages?: string; ks?: string; units?: string }, options: UnitOptions): AsyncGenerator<Unit> {
  if (source.units !== undefined) {
    if (source.pages || source.ks) throw new Error("give one source: --pages FILE, --ks DIR or --units DIR");
    return unitsFromTable(source.units);
  }
  if (!source.pages === !source.ks) throw new Error("give the pages with --pages FILE or a knowledge source with --ks DIR");
  if (source.pages) return unitsFromPagesFile(source.pages, options);
  return unitsFromStore(source.ks!, options);
}
