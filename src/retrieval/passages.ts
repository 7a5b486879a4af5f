// Cutting a knowledge source into retrieval passages (`tartan ks passages`' work), KILT's
// create_kilt_data_paragraphs rules with word counts: pages streamed one at a time from a pages file
// or a store, written as passages JSONL, or as a unit table (provenance and offsets into the store, no
// text; the pages cut on every core) that `buildIndex({ units })` indexes.

import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { cutPassages, PageError, type PassageUnit } from "../knowledge/passages.js";
import { storePassageSpans } from "../knowledge/passage-pool.js";
import { KnowledgeSource, readStoreInfo } from "../knowledge/store.js";
import { assertReadableFile, JsonlWriter, LineError, readJsonl } from "../records/jsonl.js";
import type { KiltPage } from "../records/types.js";
import { UnitWriter } from "./units/store.js";
import { formatCount as fmt, formatDuration, type OnProgress } from "../util/progress.js";
import { assertOutputsNotInputs, makeDirs } from "../util/safe-output.js";
import { diskError } from "../util/disk-errors.js";

/** Pages of a pages JSONL file with their line numbers, or of a store with their rowids, one at a time. */
async function* pagesWithPlace(source: { pages?: string; ks?: string }): AsyncGenerator<{ page: KiltPage; line?: number; row?: number }> {
  if (source.pages) {
    for await (const { value, line } of readJsonl<KiltPage>(source.pages)) yield { page: value, line };
    return;
  }
  const ks = KnowledgeSource.open(source.ks!);
  try {
    for (const { rowid, page } of ks.rows()) yield { page, row: rowid };
  } finally {
    ks.close();
  }
}

/** Options of {@link passagesFrom}: where the passages go and how progress is reported. */
export interface PassagesOptions {
  /** Passages JSONL to write (text, provenance, sources, anchors), or… */
  out?: string;
  /** …a unit table directory: provenance and offsets into the store, no text (--ks only; `index build --units DIR` indexes it). */
  table?: string;
  words: number;
  unit: PassageUnit;
  /** Where the cutting reports its progress (a status line labelled with the source); absent: nothing is reported or drawn. */
  onProgress?: OnProgress;
}

/**
 * `ks passages (--pages PAGES.jsonl | --ks DIR) (--out PASSAGES.jsonl | --table DIR) --words N --unit U`:
 * streams pages one at a time, so memory does not grow with the source.
 */
export async function passagesFrom(
  source: { pages?: string; ks?: string },
  opts: PassagesOptions,
  log: (s: string) => void,
): Promise<{ pages: number; passages: number }> {
  if (!source.pages === !source.ks) throw new Error("give the pages with --pages FILE or a knowledge source with --ks DIR");
  if (!opts.out === !opts.table) throw new Error("give --out FILE (passages JSONL) or --table DIR (a unit table referring to the store)");
  if (opts.table && !source.ks) throw new Error("--table refers to a knowledge-source store: give --ks DIR");
  if (opts.out) assertOutputsNotInputs([opts.out], [source.pages ?? source.ks!]);
  if (source.pages) assertReadableFile(source.pages);
  const name = (source.pages ?? source.ks)!;
  const target = (opts.out ?? opts.table)!;
  let out: JsonlWriter | null = null;
  let table: UnitWriter | null = null;
  let tableTmp = "";
  if (opts.out) out = new JsonlWriter(opts.out);
  else {
    if (existsSync(opts.table!)) throw new Error(`${opts.table}: exists; give a new directory (or remove it)`);
    // A new, uniquely named directory beside the table (mkdtemp: created exclusively, never through a
    // planted link or into a killed run's leftovers), renamed into place when complete.
    makeDirs(dirname(resolve(opts.table!)));
    tableTmp = mkdtempSync(`${opts.table}.partial-`);
    table = new UnitWriter(tableTmp, { unit: opts.unit === "chunk" ? "passage" : "paragraph", words: opts.words });
  }
  const store = source.ks ? resolve(source.ks) : "";
  const report = opts.onProgress ?? (() => {});
  const progress = { update: (status: () => string) => report({ label: name, status }), done: () => report({ label: name, status: () => "", done: true }) };
  let pages = 0;
  let passages = 0;
  const t0 = performance.now();
  try {
    if (table) {
      // A unit table: the pages are cut on every core (knowledge/passage-pool.ts), spans come back in order.
      const total = readStoreInfo(store).pages;
      for await (const { row, passages: cut } of storePassageSpans(store, { words: opts.words, unit: opts.unit })) {
        pages++;
        for (const p of cut) await table.add({ ...p, text: "", ref: { store, row, sources: p.sources } });
        passages += cut.length;
        progress.update(() => `${fmt(pages)} / ${fmt(total)} pages, ${fmt(passages)} passages, ${rate(passages, t0)}, ETA ${eta(pages, total, t0)}`);
      }
    } else
      for await (const { page, line } of pagesWithPlace(source)) {
        let cut;
        try {
          cut = cutPassages(page, { words: opts.words, unit: opts.unit });
        } catch (e) {
          if (e instanceof PageError) throw line !== undefined ? new LineError(name, line, e.message) : new Error(`${name}: ${e.message}`);
          throw e;
        }
        pages++;
        for (const p of cut) await out!.write(p);
        passages += cut.length;
        progress.update(() => `${fmt(pages)} pages, ${fmt(passages)} passages, ${rate(passages, t0)}`);
      }
    // Closing writes the last pieces: a full disk may show only now.
    progress.done();
    if (out) await out.close();
    else {
      await table!.close();
      renameSync(tableTmp, opts.table!);
    }
  } catch (e) {
    progress.done();
    await out?.abort();
    if (tableTmp) rmSync(tableTmp, { recursive: true, force: true });
    throw diskError(target, e, { cleanup: `removed ${tableTmp || "the temporary file"}; ${target} ${existsSync(target) ? "is untouched" : "was not created"}` });
  }
  const s = (performance.now() - t0) / 1000;
  log(`${fmt(passages)} passages (${opts.unit}, ${opts.words} words) from ${fmt(pages)} pages → ${target}${table ? " (unit table)" : ""} in ${s.toFixed(1)} s`);
  return { pages, passages };
}

function eta(done: number, total: number, t0: number): string {
  const s = (performance.now() - t0) / 1000;
  return done > 0 && s > 0 ? formatDuration(((total - done) * s) / done) : "?";
}

function rate(n: number, t0: number): string {
  const s = (performance.now() - t0) / 1000;
  return s > 0 ? `${fmt(Math.round(n / s))}/s` : "";
}

/** Passages JSONL from a pages file (`ks passages --pages PAGES.jsonl --words N --unit U --out PASSAGES.jsonl`). */
export async function passagesFromPages(
  pagesFile: string,
  opts: { out: string; words: number; unit: PassageUnit },
  log: (s: string) => void,
): Promise<{ pages: number; passages: number }> {
  return passagesFrom({ pages: pagesFile }, opts, log);
}
