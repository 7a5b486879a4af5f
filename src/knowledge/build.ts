// Building knowledge sources from other formats (`tartan ks from-squad`, `ks from-dump` and `datasets
// convert squad`'s work): SQuAD articles as KILT pages and SQuAD questions as KILT records, a MediaWiki
// XML export as KILT pages (and redirects), each written as JSONL with a summary for `log`.

import { statSync } from "node:fs";
import { convertDump, type Bz2Mode, type DumpError, type DumpStats } from "./dump.js";
import { readSquadFile, squadQuestionsToKilt, squadToPages } from "./squad.js";
import { assertReadableFile, JsonlWriter, readJsonlAll, writeJsonl } from "../records/jsonl.js";
import type { KiltPage } from "../records/types.js";
import { formatCount as fmt, type OnProgress } from "../util/progress.js";
import { assertOutputsNotInputs } from "../util/safe-output.js";

/** SQuAD JSON → KILT pages JSONL (`ks from-squad FILE --out PAGES.jsonl`): one page per article; returns the pages written. */
export async function fromSquad(file: string, out: string, log: (s: string) => void): Promise<number> {
  assertOutputsNotInputs([out], [file]);
  const squad = readSquadFile(file);
  const pages = squadToPages(squad);
  const n = await writeJsonl(out, pages);
  const paragraphs = pages.reduce((s, p) => s + p.text.length - 1, 0);
  log(`${fmt(n)} pages (${fmt(paragraphs)} paragraphs) from ${file} → ${out}`);
  return n;
}

/** A MediaWiki XML export → KILT pages JSONL, redirects apart (`ks from-dump FILE --out PAGES.jsonl [--redirects R.jsonl]`). */
export async function fromDump(
  file: string,
  opts: { out: string; redirects?: string; bz2?: Bz2Mode; onProgress?: OnProgress },
  log: (s: string) => void,
): Promise<DumpStats> {
  assertOutputsNotInputs([opts.out, opts.redirects], [file]);
  assertReadableFile(file);
  const total = statSync(file).size;
  const pagesOut = new JsonlWriter(opts.out);
  const redirectsOut = opts.redirects ? new JsonlWriter(opts.redirects) : null;
  const stats: DumpStats = { pages: 0, articles: 0, redirects: 0, disambiguations: 0, otherNamespaces: 0, anchors: 0, unplacedLinks: 0, failed: 0 };
  const report = opts.onProgress ?? (() => {});
  const progress = { update: (status: () => string) => report({ label: file, status }), done: () => report({ label: file, status: () => "", done: true }) };
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

/** SQuAD questions → KILT records pointing into the SQuAD pages (`datasets convert squad FILE --out RECORDS.jsonl [--pages PAGES.jsonl] [--keep-impossible]`); returns the records written. */
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
