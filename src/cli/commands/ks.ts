// `tartan ks ingest | get | stats`: build a knowledge-source store from kilt_knowledgesource.json
// (resumable), look pages up by id, title or URL, and show what a store holds; a store directory or a
// clickhouse:// URL either way (src/backends/open.ts chooses). The building commands (`ks from-squad`,
// `ks passages`, ...) are in ./ks-build.ts, on the same `ks` command.

import { InvalidArgumentError, type Command } from "commander";
import type { IngestResult } from "../../knowledge/ingest.js";
import { ingestAt, isClickHouseUrl, knowledgeSourceInfo, openKnowledgeSource } from "../../backends/open.js";
import type { KiltPage } from "../../records/types.js";
import type { LineError } from "../../records/jsonl.js";
import { localPath, nonNegativeInt } from "../options.js";
import { formatBytes, formatCount, formatDuration } from "../../util/progress.js";
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

function summary(r: IngestResult): string {
  if (r.alreadyComplete) {
    return `${r.out} already holds all ${formatCount(r.pages)} pages of ${r.file}: nothing to do (--force rebuilds it)`;
  }
  const skipped: string[] = [];
  if (r.badLines > 0) skipped.push(`${formatCount(r.badLines)} malformed line${r.badLines === 1 ? "" : "s"}`);
  if (r.duplicates > 0) skipped.push(`${formatCount(r.duplicates)} duplicate id${r.duplicates === 1 ? "" : "s"}`);
  const rate = r.seconds > 0 ? r.bytesThisRun / r.seconds / 1e6 : 0;
  return [
    `${formatCount(r.pages)} pages from ${r.file} in ${r.out}`,
    skipped.length > 0 ? ` (skipped ${skipped.join(", ")})` : "",
    r.resumedAt ? `; resumed after line ${formatCount(r.resumedAt.line)}` : "",
    `; ${r.seconds < 10 ? `${r.seconds.toFixed(1)}s` : formatDuration(r.seconds)} at ${rate.toFixed(1)} MB/s`,
    `; store ${formatBytes(r.storeBytes)} (${(r.storeBytes / Math.max(1, r.inputBytes)).toFixed(2)} of the input)`,
  ].join("");
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
      if (o.ks !== undefined && !isClickHouseUrl(o.ks)) throw new Error(`--ks takes a clickhouse:// URL (for a directory use --out), got ${o.ks}`);
      const location = o.ks ?? (isClickHouseUrl(o.out) ? o.out : localPath("--out", o.out, "a store directory or a clickhouse:// URL"));
      const at = await ingestAt(file, location, { strict: o.strict, force: o.force, workers: o.workers, commitBytes, onProblem, onProgress: terminalProgress() });
      if (problems > SHOWN_PROBLEMS) process.stderr.write(`... and ${formatCount(problems - SHOWN_PROBLEMS)} more problems (not shown)\n`);
      if (at.backend === "embedded") return void process.stdout.write(`${summary(at.result)}\n`);
      const r = at.result;
      process.stdout.write(
        r.alreadyComplete
          ? `${location} already holds all ${formatCount(r.pages)} pages of ${file}: nothing to do (--force rebuilds it)\n`
          : `${formatCount(r.pages)} pages from ${file} in ${location} (${r.shards} shard${r.shards === 1 ? "" : "s"})${r.badLines + r.duplicates > 0 ? ` (skipped ${formatCount(r.badLines)} malformed, ${formatCount(r.duplicates)} duplicate)` : ""}${r.resumedAt ? `; resumed after line ${formatCount(r.resumedAt.line)}` : ""}; ${r.seconds.toFixed(1)}s; ${formatBytes(r.storeBytes)} on disk\n`,
      );
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
      const at = await knowledgeSourceInfo(o.ks);
      if (at.backend === "clickhouse") {
        const i = at.info;
        if (o.json) return void process.stdout.write(`${JSON.stringify(i, null, 2)}\n`);
        const m = i.meta;
        const rows: [string, string][] = [
          ["store", `${i.url} (${i.shards} shard${i.shards === 1 ? "" : "s"}, ${formatBytes(i.bytes)})`],
          ["status", m.complete === "1" ? "complete" : `incomplete: stopped after line ${formatCount(Number(m.checkpoint_line))}; re-run \`tartan ks ingest\` to resume`],
          ["pages", formatCount(Number(m.pages))],
          ["malformed lines", formatCount(Number(m.bad_lines))],
          ["duplicate ids", formatCount(Number(m.duplicates))],
          ["input", `${m.input_path} (${formatBytes(Number(m.input_size))})`],
        ];
        return void process.stdout.write(`${rows.map(([k, v]) => `${`${k}:`.padEnd(17)}${v}`).join("\n")}\n`);
      }
      const info = at.info;
      if (o.json) {
        process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
        return;
      }
      const status =
        info.complete === 1
          ? "complete"
          : `incomplete: stopped after line ${formatCount(info.checkpoint_line)} (${formatBytes(info.checkpoint_byte)} of ${formatBytes(info.input_size)}); re-run \`tartan ks ingest\` to resume`;
      const rows: [string, string][] = [
        ["store", `${info.dir} (${formatBytes(info.storeBytes)}, ${(info.storeBytes / Math.max(1, info.input_size)).toFixed(2)} of the input)`],
        ["status", status],
        ["pages", formatCount(info.pages)],
        ["malformed lines", formatCount(info.bad_lines)],
        ["duplicate ids", formatCount(info.duplicates)],
        ["input", `${info.input_path} (${formatBytes(info.input_size)})`],
        ["ingest time", `${formatDuration(info.ingest_seconds)} over ${info.runs} run${info.runs === 1 ? "" : "s"}`],
      ];
      process.stdout.write(`${rows.map(([k, v]) => `${`${k}:`.padEnd(17)}${v}`).join("\n")}\n`);
    });
}
