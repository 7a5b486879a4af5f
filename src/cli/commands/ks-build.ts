// Knowledge-source building commands: `tartan ks from-squad`, `ks from-dump`, `ks passages` (pages JSONL
// in, KILT pages or passages JSONL out) and `tartan datasets convert squad` (SQuAD questions → KILT
// records). The store itself (`ks ingest` and friends) lives in ./ks.ts.

import { diskError } from "../../util/disk-errors.js";
import { existsSync, mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import { datasetsConvertCommand, subcommand } from "../subcommand.js";
import { convertDump, type Bz2Mode, type DumpError, type DumpStats } from "../../knowledge/dump.js";
import { cutPassages, PageError, type PassageUnit } from "../../knowledge/passages.js";
import { storePassageSpans } from "../../knowledge/passage-pool.js";
import { readSquadFile, squadQuestionsToKilt, squadToPages } from "../../knowledge/squad.js";
import { assertReadableFile, JsonlWriter, LineError, readJsonl, readJsonlAll, writeJsonl } from "../../records/jsonl.js";
import type { KiltPage } from "../../records/types.js";
import { KnowledgeSource, readStoreInfo } from "../../knowledge/store.js";
import { UnitWriter } from "../../retrieval/units.js";
import { formatDuration, ProgressLine } from "../../util/progress.js";
import { assertOutputsNotInputs, makeDirs } from "../../util/safe-output.js";

const fmt = (n: number) => n.toLocaleString("en-US");


function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

/** `ks from-squad FILE --out PAGES.jsonl` */
export async function fromSquad(file: string, out: string, log: (s: string) => void): Promise<number> {
  assertOutputsNotInputs([out], [file]);
  const squad = readSquadFile(file);
  const pages = squadToPages(squad);
  const n = await writeJsonl(out, pages);
  const paragraphs = pages.reduce((s, p) => s + p.text.length - 1, 0);
  log(`${fmt(n)} pages (${fmt(paragraphs)} paragraphs) from ${file} → ${out}`);
  return n;
}

/** `ks from-dump FILE --out PAGES.jsonl [--redirects R.jsonl]` */
export async function fromDump(
  file: string,
  opts: { out: string; redirects?: string; bz2?: Bz2Mode },
  log: (s: string) => void,
): Promise<DumpStats> {
  assertOutputsNotInputs([opts.out, opts.redirects], [file]);
  assertReadableFile(file);
  const total = statSync(file).size;
  const pagesOut = new JsonlWriter(opts.out);
  const redirectsOut = opts.redirects ? new JsonlWriter(opts.redirects) : null;
  const stats: DumpStats = { pages: 0, articles: 0, redirects: 0, disambiguations: 0, otherNamespaces: 0, anchors: 0, unplacedLinks: 0, failed: 0 };
  const progress = new ProgressLine(file);
  let bytes = 0;
  const errors: DumpError[] = [];
  try {
    for await (const item of convertDump(file, { bz2: opts.bz2, onProgress: (b) => (bytes = b), onError: (e) => errors.push(e) }, stats)) {
      if (item.kind === "page") await pagesOut.write(item.page);
      else if (redirectsOut) await redirectsOut.write(item.redirect);
      progress.update(() => `${fmt(stats.articles)} pages, ${fmt(stats.redirects)} redirects, ${((100 * bytes) / Math.max(1, total)).toFixed(1)}%`);
    }
  } catch (e) {
    progress.done();
    await pagesOut.abort();
    await redirectsOut?.abort();
    throw e;
  }
  progress.done();
  await pagesOut.close();
  await redirectsOut?.close();
  for (const e of errors.slice(0, 20)) log(`warning: ${e.message}`);
  if (errors.length > 20) log(`warning: ${fmt(errors.length - 20)} more pages failed to parse`);
  log(
    `${fmt(stats.articles)} pages (${fmt(stats.disambiguations)} disambiguation) → ${opts.out}; ` +
      `${fmt(stats.redirects)} redirects${opts.redirects ? ` → ${opts.redirects}` : " (not written: no --redirects)"}; ` +
      `${fmt(stats.otherNamespaces)} pages of other namespaces skipped; ${fmt(stats.anchors)} anchors` +
      (stats.unplacedLinks ? `, ${fmt(stats.unplacedLinks)} links not found in the text` : "") +
      (stats.failed ? `; ${fmt(stats.failed)} pages failed` : ""),
  );
  return stats;
}

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

export interface PassagesOptions {
  /** Passages JSONL to write (text, provenance, sources, anchors), or… */
  out?: string;
  /** …a unit table directory: provenance and offsets into the store, no text (--ks only; `index build --units DIR` indexes it). */
  table?: string;
  words: number;
  unit: PassageUnit;
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
  const progress = new ProgressLine(name);
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

/** `ks passages --pages PAGES.jsonl --words N --unit U --out PASSAGES.jsonl` */
export async function passagesFromPages(
  pagesFile: string,
  opts: { out: string; words: number; unit: PassageUnit },
  log: (s: string) => void,
): Promise<{ pages: number; passages: number }> {
  return passagesFrom({ pages: pagesFile }, opts, log);
}

/** `datasets convert squad FILE --out RECORDS.jsonl [--pages PAGES.jsonl] [--keep-impossible]` */
export async function convertSquad(
  file: string,
  opts: { out: string; pages?: string; keepImpossible?: boolean },
  log: (s: string) => void,
): Promise<number> {
  assertOutputsNotInputs([opts.out], [file, opts.pages]);
  const squad = readSquadFile(file);
  const pages = opts.pages ? await readJsonlAll<KiltPage>(opts.pages) : undefined;
  const { records, stats } = squadQuestionsToKilt(squad, { pages, impossible: opts.keepImpossible ? "keep" : "skip" });
  const n = await writeJsonl(opts.out, records);
  const exc = stats.offsetExceptions;
  log(
    `${fmt(n)} records (${fmt(stats.outputs)} answers) from ${fmt(stats.questions)} questions of ${fmt(stats.articles)} articles → ${opts.out}` +
      (stats.impossible ? `; ${fmt(stats.impossible)} unanswerable ${opts.keepImpossible ? "kept with no output" : "left out"}` : ""),
  );
  const relocated = exc.filter((e) => e.action === "relocated").length;
  log(`offset exceptions: ${fmt(exc.length)} (${fmt(relocated)} relocated, ${fmt(exc.length - relocated)} dropped)`);
  for (const e of exc.slice(0, 10)) log(`  ${e.question_id}: ${JSON.stringify(e.answer)} at ${e.answer_start}: ${e.action}${e.used_start !== undefined ? ` to ${e.used_start}` : ""}`);
  if (stats.unmapped.length > 0) log(`warning: ${fmt(stats.unmapped.length)} questions left out: their paragraph is not in ${opts.pages} (first: ${stats.unmapped[0]})`);
  return n;
}

const log = (s: string) => process.stderr.write(`${s}\n`);

/** The `ks` command of `program`, created (with a description) if no other module made it yet. */
export function ksCommand(program: Command): Command {
  return subcommand(program, "ks", "knowledge sources: build, store and read KILT pages and passages");
}

/** Adds `from-squad`, `from-dump` and `passages` to the `ks` command. */
export function registerKsBuild(ks: Command): void {
  ks.command("from-squad")
    .description("SQuAD JSON (v1.1/v2.0) → KILT pages JSONL: one page per article, paragraph i of the article is text[i+1]")
    .argument("<file>", "SQuAD JSON file")
    .requiredOption("--out <pages.jsonl>", "KILT pages to write (.gz to compress)")
    .action(async (file: string, o: { out: string }) => {
      await fromSquad(file, o.out, log);
    });

  ks.command("from-dump")
    .description("MediaWiki XML export (.xml, .xml.bz2, .xml.gz) → KILT pages JSONL (namespace 0, redirects apart)")
    .argument("<file>", "pages-articles export")
    .requiredOption("--out <pages.jsonl>", "KILT pages to write (.gz to compress)")
    .option("--redirects <redirects.jsonl>", "write the redirects ({wikipedia_id, title, target, fragment?}) here")
    .addOption(new Option("--bz2 <how>", "decompress .bz2 with the bzip2 program or in JavaScript").choices(["auto", "native", "js"]).default("auto"))
    .action(async (file: string, o: { out: string; redirects?: string; bz2: Bz2Mode }) => {
      await fromDump(file, o, log);
    });

  ks.command("passages")
    .description("cut KILT pages into retrieval passages, KILT's create_kilt_data_paragraphs rules with word counts (streamed: memory does not grow with the source)")
    .option("--pages <pages.jsonl>", "KILT pages JSONL (.gz too)")
    .option("--ks <dir>", "knowledge-source store directory (tartan ks ingest)")
    .option("--out <passages.jsonl>", "passages to write (.gz to compress)")
    .option("--table <dir>", "with --ks: write a unit table instead (provenance and offsets into the store, no text) for `tartan index build --units DIR`")
    .option("--words <n>", "chunk size in words", positiveInt, 100)
    .addOption(new Option("--unit <unit>", "chunk: sentence-buffered chunks; paragraph: one passage per paragraph").choices(["chunk", "paragraph"]).default("chunk"))
    .action(async (o: { pages?: string; ks?: string; out?: string; table?: string; words: number; unit: PassageUnit }) => {
      await passagesFrom({ pages: o.pages, ks: o.ks }, o, log);
    });
}

/** Adds `convert squad` under the `datasets` command (creating `datasets` only if no module made it). */
export function registerConvert(program: Command): void {
  datasetsConvertCommand(program)
    .command("squad")
    .description("SQuAD JSON → KILT records: provenance = answer span in the SQuAD pages (see ks from-squad)")
    .argument("<file>", "SQuAD JSON file (v1.1 or v2.0)")
    .requiredOption("--out <records.jsonl>", "KILT records to write (.gz to compress)")
    .option("--pages <pages.jsonl>", "point provenance into these SQuAD pages (default: the pages of FILE itself)")
    .option("--keep-impossible", "keep v2.0 unanswerable questions (with no output) instead of leaving them out")
    .action(async (file: string, o: { out: string; pages?: string; keepImpossible?: boolean }) => {
      await convertSquad(file, o, log);
    });
}
