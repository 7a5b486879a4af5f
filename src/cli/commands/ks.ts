// `tartan ks ingest | get | stats`: build a knowledge-source store from kilt_knowledgesource.json
// (resumable), look pages up by id, title or URL, and show what a store holds; a store directory or a
// clickhouse:// URL either way (src/backends/open.ts chooses). The building commands (`ks from-squad`,
// `ks passages`, ...) are in ./ks-build.ts, on the same `ks` command.

import { InvalidArgumentError, type Command } from "commander";
import { ingestAt, isRemote, knowledgeSourceStats, openKnowledgeSource, remoteUrlText } from "../../backends/index.js";
import type { KiltPage } from "../../records/types.js";
import type { LineError } from "../../records/jsonl.js";
import { localPath, nonNegativeInt } from "../options.js";
import { formatCount } from "../../util/progress.js";
import { terminalProgress } from "../progress.js";

/** Where `ks ingest` writes and `ks get`/`ks stats` read when no directory is given. */
export const DEFAULT_KS_DIR = ".tartan/ks";
/** Problems printed one by one before the rest are only counted. */
const SHOWN_PROBLEMS = 100;

/** `3` → [3, 3]; `2-5` → [2, 5]; `2-` → [2, ∞). */
export function parseParagraphRange(value: string): [number, number] {
  const m = /^(\d+)(?:(-)(\d*))?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError("expected a paragraph id or range: 3, 2-5 or 2-");
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : m[3] === "" ? Infinity : Number(m[3]);
  if (to < from) throw new InvalidArgumentError(`range ${value} ends before it starts`);
  return [from, to];
}

function printPage(page: KiltPage, range: [number, number] | undefined, json: boolean): void {
  const n = page.text.length;
  let [from, to] = range ?? [0, n - 1];
  if (range) {
    if (from >= n) throw new Error(`--paragraphs ${from}: page ${page.wikipedia_id} has ${n} paragraphs (0-${n - 1})`);
    to = Math.min(to, n - 1);
  }
  if (json) {
    const out = range
      ? { wikipedia_id: page.wikipedia_id, wikipedia_title: page.wikipedia_title, paragraphs: page.text.slice(from, to + 1).map((text, i) => ({ paragraph_id: from + i, text })) }
      : page;
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return;
  }
  const lines = [`wikipedia_id: ${page.wikipedia_id}`, `title: ${page.wikipedia_title}`, `paragraphs: ${n}`];
  if (page.history?.url) lines.push(`url: ${page.history.url}`);
  for (let i = from; i <= to; i++) lines.push(`[${i}] ${page.text[i].replace(/\n$/, "")}`);
  process.stdout.write(`${lines.join("\n")}\n`);
}

export function registerKs(ks: Command): void {
  ks.command("ingest")
    .description("kilt_knowledgesource.json (JSONL, plain or .gz) → a page store; after an interruption, re-run the same command to resume")
    .argument("<file>", "knowledge-source pages, one JSON object per line (- for standard input: not resumable), or a Hugging Face kilt_wikipedia .parquet file")
    .option("--out <dir>", "store directory, or a clickhouse:// URL as --ks takes", DEFAULT_KS_DIR)
    .option("--ks <url>", "ingest into ClickHouse instead: clickhouse://host:port/db[/name]?cluster=C (sharded by wikipedia_id)")
    .option("--strict", "stop at the first malformed line or duplicate wikipedia_id (default: report, skip, count)")
    .option("--force", "discard the store in --out and start over")
    .option("--workers <n>", "threads that parse and compress pages (0: in the main thread; default: one per core, up to 4)", nonNegativeInt)
    .option("--commit-mb <n>", "commit (and move the resume checkpoint) after this many MB of input (default 32)", nonNegativeInt)
    .action(async (file: string, o: { out: string; ks?: string; strict?: boolean; force?: boolean; workers?: number; commitMb?: number }) => {
      let problems = 0;
      const onProblem = (e: LineError) => {
        if (++problems <= SHOWN_PROBLEMS) process.stderr.write(`${e.message}\n`);
      };
      const commitBytes = o.commitMb ? o.commitMb << 20 : undefined;
      if (o.ks !== undefined && !isRemote(o.ks)) throw new Error(`--ks takes ${remoteUrlText()} (for a directory use --out), got ${o.ks}`);
      const location = o.ks ?? (isRemote(o.out) ? o.out : localPath("--out", o.out, `a store directory or ${remoteUrlText()}`));
      const at = await ingestAt(file, location, { strict: o.strict, force: o.force, workers: o.workers, commitBytes, onProblem, onProgress: terminalProgress() });
      if (problems > SHOWN_PROBLEMS) process.stderr.write(`... and ${formatCount(problems - SHOWN_PROBLEMS)} more problems (not shown)\n`);
      process.stdout.write(`${at.summary}\n`);
    });

  ks.command("get")
    .description("print a page of a store, found by wikipedia_id, title (exact, then ignoring case) or Wikipedia URL")
    .option("--ks <dir>", "store directory or clickhouse:// URL", DEFAULT_KS_DIR)
    .option("--id <id>", "wikipedia_id")
    .option("--title <title>", "page title")
    .option("--url <url>", "Wikipedia URL (KILT's rules: ?title= or the last path segment, _ as space)")
    .option("--paragraphs <range>", "only these paragraphs: 3, 2-5 or 2- (0 is the title line)", parseParagraphRange)
    .option("--json", "print JSON (the page, or {wikipedia_id, wikipedia_title, paragraphs} with --paragraphs)")
    .action(async (o: { ks: string; id?: string; title?: string; url?: string; paragraphs?: [number, number]; json?: boolean }) => {
      const keys = [o.id !== undefined, o.title !== undefined, o.url !== undefined].filter(Boolean).length;
      if (keys !== 1) throw new Error("ks get: give exactly one of --id, --title, --url");
      const store = await openKnowledgeSource(o.ks);
      try {
        const page = await (o.id !== undefined ? store.getPageById(o.id) : o.title !== undefined ? store.getPageByTitle(o.title) : store.getPageFromUrl(o.url!));
        if (page === null) {
          const what = o.id !== undefined ? `id ${JSON.stringify(o.id)}` : o.title !== undefined ? `title ${JSON.stringify(o.title)}` : `URL ${o.url}`;
          process.stderr.write(`tartan: no page with ${what} in ${o.ks}\n`);
          process.exitCode = 1;
          return;
        }
        printPage(page, o.paragraphs, o.json === true);
      } finally {
        await store.close();
      }
    });

  ks.command("stats")
    .description("what a store holds: pages, skipped lines, input, size, whether its ingest is complete")
    .option("--ks <dir>", "store directory or clickhouse:// URL", DEFAULT_KS_DIR)
    .option("--json", "print the store's meta data as JSON")
    .action(async (o: { ks: string; json?: boolean }) => {
      const stats = await knowledgeSourceStats(o.ks);
      if (o.json) return void process.stdout.write(`${JSON.stringify(stats.detail, null, 2)}\n`);
      process.stdout.write(`${stats.rows.map(([k, v]) => `${`${k}:`.padEnd(17)}${v}`).join("\n")}\n`);
    });
}
