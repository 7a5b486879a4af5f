// `tartan datasets download NAME… [--out DIR] [--mirror URL]`: KILT's files (task files, knowledge
// source, DPR passages) from the catalogue in src/datasets/downloads.ts, resumable and verified, with a
// progress line (files, bytes, rate, ETA) on a terminal; `--list` prints the catalogue.

import type { Command } from "commander";
import { subcommand } from "../subcommand.js";
import { CHECKSUM_NOTE, DOWNLOADS, TRIVIAQA_STEP, downloadDatasets, downloadSource, resolveDownloads, type DownloadItem } from "../../datasets/downloads.js";
import { Progress, formatBytes } from "../../util/progress.js";
import { makeDirs } from "../../util/safe-output.js";
import { positiveInt } from "../options.js";

const log = (s: string) => process.stderr.write(`${s}\n`);

interface Flags {
  out: string;
  mirror?: string;
  list?: boolean;
  json?: boolean;
  retries: number;
}

/** The catalogue as text lines: name, file, what, URL, checksum. */
export function downloadListing(items: readonly DownloadItem[] = DOWNLOADS, mirror?: string): string[] {
  const w = Math.max(...items.map((i) => i.name.length));
  const lines = items.map((i) => `${i.name.padEnd(w)}  ${downloadSource(i, mirror)}  ${i.sha256 ? `sha256 ${i.sha256}` : "sha256 not known yet"}  (${i.what})`);
  return [...lines, "", CHECKSUM_NOTE];
}

export function registerDatasetsDownload(program: Command): void {
  const datasets = subcommand(program, "datasets", "KILT datasets: list, download and convert");
  datasets
    .command("download")
    .description("download KILT's files (datasets' train/dev/test, knowledge-source, dpr-passages) from their published URLs or a mirror: resumable, verified, renamed into place only when complete")
    .argument("[names...]", "datasets (nq, fever, …: all their splits), DATASET:SPLIT, items (knowledge-source, dpr-passages, triviaqa-rc) or all, dev, train, test")
    .option("--out <dir>", "directory to write into", "data")
    .option("--mirror <url>", "take the same file names from a mirror: http(s)://BASE, file:///DIR or a directory")
    .option("--retries <n>", "network failures retried per file (each resumes)", positiveInt, 3)
    .option("--list", "print the catalogue (name, URL, checksum) and stop")
    .option("--json", "with --list: as JSON; else: a JSON summary of the files on stdout")
    .action(async (names: string[], _flags: Flags, cmd: Command) => {
      // `--json` is also an option of `datasets`, which commander gives it first
      const o: Flags = cmd.optsWithGlobals<Flags>();
      if (o.list || names.length === 0) {
        if (o.json) process.stdout.write(`${JSON.stringify(DOWNLOADS, null, 2)}\n`);
        else process.stdout.write(`${downloadListing(DOWNLOADS, o.mirror).join("\n")}\n`);
        if (!o.list && names.length === 0) log("give names to download (tartan datasets download --help)");
        return;
      }
      const items = resolveDownloads(names);
      makeDirs(o.out);
      let bar: Progress | null = null;
      let current: DownloadItem | null = null;
      const results = await downloadDatasets(items, {
        out: o.out,
        mirror: o.mirror,
        retries: o.retries,
        log: (l) => {
          bar?.clear();
          log(l);
        },
        onProgress: (item, done, total, start) => {
          if (item !== current) {
            current = item;
            bar = new Progress({ label: `download ${item.file}`, unit: `of ${items.length} files`, totalBytes: total, startBytes: start });
          }
          bar!.update(items.indexOf(item) + 1, done); // "2 of 5 files": the file being downloaded
        },
        onItem: (item, r) => {
          if (current === item) bar?.done();
          current = null;
          bar = null;
          const how = r.present
            ? r.verified === "none"
              ? "already there (nothing known to verify it against)"
              : `already there, ${r.verified} verified`
            : `${r.resumedFrom > 0 ? `resumed after ${formatBytes(r.resumedFrom)}, ` : ""}${r.verified === "server-size" ? "size verified (no checksum known)" : `${r.verified} verified`}`;
          log(`${r.file}: ${r.bytes.toLocaleString("en-US")} bytes, ${how}; sha256 ${r.sha256}${r.redirectedTo ? `; from ${r.redirectedTo} (redirected)` : ""}`);
        },
      });
      if (o.json) process.stdout.write(`${JSON.stringify(results.map((r, i) => ({ name: items[i].name, ...r })), null, 2)}\n`);
      if (items.some((i) => i.dataset === "triviaqa")) log(TRIVIAQA_STEP);
      if (results.some((r) => r.verified !== "sha256")) log(`note: ${CHECKSUM_NOTE}`);
    });
}
