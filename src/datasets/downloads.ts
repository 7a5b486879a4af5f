// The catalogue of KILT's downloadable files, in one place: the eleven datasets' train/dev/test JSONL
// (the list of the KILT repository's scripts/download_all_kilt_data.py), the knowledge source
// kilt_knowledgesource.json and the DPR passage file kilt_w100_title.tsv (KILT's DPR instructions), and
// TriviaQA's original archive that KILT's get_triviaqa_input.py reads. Also: resolving the names
// `tartan datasets download` takes, where each file comes from with a mirror, and downloading them.
//
// Checksums: KILT publishes none and none has been measured here yet (the files could not be reached
// from this machine), so every `sha256` below is undefined and no size is recorded: a download is then
// verified by the size the server reports and by its format (downloadFormat: an HTML page served in
// its place is refused), and its sha256 is printed so that it can be recorded here.
// Never fill in a checksum that was not computed from the published file.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DATASETS, KILT_URL_BASE, SPLITS, type Split } from "./catalogue.js";
import { downloadFile, localSource, type DownloadFormat, type DownloadOptions, type DownloadResult } from "../util/download.js";
import { writeFileSafe } from "../util/safe-output.js";

/** One downloadable file. */
export interface DownloadItem {
  /** Name on the command line: `nq-dev`, `knowledge-source`, `dpr-passages`, `triviaqa-rc`. */
  name: string;
  /** File name as published (and as written under --out). */
  file: string;
  url: string;
  /** sha256 of the published file; undefined: not known yet (see the module comment). */
  sha256?: string;
  /** Size in bytes; undefined: not known yet. */
  bytes?: number;
  /** What it is, in a few words. */
  what: string;
  /** The catalogue dataset (`DATASETS` name) and split of a task file. */
  dataset?: string;
  split?: Split;
}

/** Said wherever a checksum is missing. */
export const CHECKSUM_NOTE =
  "KILT publishes no checksums and none is recorded here yet: files are verified by the size the server reports, and their sha256 is printed so it can be added to src/datasets/downloads.ts";

/** Where TriviaQA's questions come from (KILT ships ids only). */
export const TRIVIAQA_RC_URL = "http://nlp.cs.washington.edu/triviaqa/data/triviaqa-rc.tar.gz";

/** The extra step TriviaQA needs, printed after its files are downloaded (docs/datasets.md). */
export const TRIVIAQA_STEP = [
  "TriviaQA: KILT distributes ids only (triviaqa-*_id-kilt.jsonl, no questions). Add the questions with KILT's script:",
  "  tartan datasets download triviaqa-rc --out DIR      # TriviaQA's own archive (triviaqa-rc.tar.gz)",
  "  cd DIR/.. && python scripts/get_triviaqa_input.py   # from a KILT checkout, with the files under data/",
  "It writes triviaqa-{train,dev}-kilt.jsonl and triviaqa-test_without_answers-kilt.jsonl and deletes the _id files.",
].join("\n");

const SPLIT_NAME: Record<Split, string> = { train: "train", dev: "dev", test: "test" };

/** Every downloadable file: the KILT task files (dataset by dataset), then the knowledge source, DPR passages and TriviaQA's archive. */
export const DOWNLOADS: readonly DownloadItem[] = [
  ...DATASETS.filter((d) => d.kilt).flatMap((d) =>
    SPLITS.flatMap((split) => {
      const f = d.splits[split];
      if (!f || !f.url) return [];
      return [{ name: `${d.name}-${SPLIT_NAME[split]}`, file: f.file, url: f.url, sha256: f.sha256, what: `${d.displayName} ${split} (${f.records.toLocaleString("en-US")} records)`, dataset: d.name, split }];
    }),
  ),
  { name: "knowledge-source", file: "kilt_knowledgesource.json", url: `${KILT_URL_BASE}kilt_knowledgesource.json`, what: "KILT's Wikipedia (2019-08-01), 5,903,530 pages, 34.76 GiB" },
  { name: "dpr-passages", file: "kilt_w100_title.tsv", url: `${KILT_URL_BASE}kilt_w100_title.tsv`, what: "KILT's 100-word DPR passages (22,220,793), TSV id/text/title" },
  { name: "triviaqa-rc", file: "triviaqa-rc.tar.gz", url: TRIVIAQA_RC_URL, what: "TriviaQA's original archive (questions for KILT's TriviaQA ids)" },
];

/** Names that stand for several files. */
const GROUPS: Record<string, (i: DownloadItem) => boolean> = {
  all: (i) => i.dataset !== undefined,
  dev: (i) => i.split === "dev",
  train: (i) => i.split === "train",
  test: (i) => i.split === "test",
};

const ALIASES: Record<string, string> = { ks: "knowledge-source", kilt_knowledgesource: "knowledge-source", dpr: "dpr-passages", kilt_w100_title: "dpr-passages" };

/**
 * The files a list of names stands for, in catalogue order without repeats: an item name (`nq-dev`,
 * `knowledge-source`), a dataset name or alias (all its splits: `nq`, `zsre`), `NAME:SPLIT`, a
 * published file name, or a group (`all`: every task file; `dev`, `train`, `test`). Throws naming the
 * unknown names.
 */
export function resolveDownloads(names: readonly string[]): DownloadItem[] {
  const chosen = new Set<DownloadItem>();
  const unknown: string[] = [];
  for (const raw of names) {
    const name = raw.trim().toLowerCase();
    const key = ALIASES[name] ?? name;
    const [base, split] = key.includes(":") ? key.split(":", 2) : [key, undefined];
    const dataset = DATASETS.find((d) => d.kilt && (d.name === base || d.aliases.includes(base) || d.configName?.toLowerCase() === base));
    let found: DownloadItem[] = [];
    if (GROUPS[key]) found = DOWNLOADS.filter(GROUPS[key]);
    else if (dataset) found = DOWNLOADS.filter((i) => i.dataset === dataset.name && (split === undefined || i.split === split));
    else found = DOWNLOADS.filter((i) => i.name === key || i.file.toLowerCase() === key);
    if (found.length === 0) unknown.push(raw);
    for (const f of found) chosen.add(f);
  }
  if (unknown.length > 0)
    throw new Error(`unknown download name${unknown.length > 1 ? "s" : ""} ${unknown.map((u) => JSON.stringify(u)).join(", ")}: give a dataset (${DATASETS.filter((d) => d.kilt).map((d) => d.name).join(", ")}), DATASET:SPLIT, an item (${DOWNLOADS.filter((i) => !i.dataset).map((i) => i.name).join(", ")}), or all, dev, train, test (tartan datasets download --list)`);
  return DOWNLOADS.filter((i) => chosen.has(i));
}

/**
 * Where `item` comes from: its published URL, or the same file name under a mirror (an http(s)://
 * base URL, a file:// URL or a plain directory).
 */
export function downloadSource(item: DownloadItem, mirror?: string): string {
  if (mirror === undefined || mirror === "") return item.url;
  if (/^https?:\/\//iu.test(mirror)) return `${mirror.replace(/\/+$/u, "")}/${encodeURIComponent(item.file)}`;
  const dir = localSource(mirror);
  return join(dir ?? mirror, item.file);
}

/**
 * What a catalogue file must look like, by its name (KILT's .json knowledge source is JSON lines): an
 * HTML error or login page served in its place is refused, never installed.
 */
export function downloadFormat(file: string): DownloadFormat | undefined {
  if (/\.jsonl?$/iu.test(file)) return "jsonl";
  if (/\.tsv$/iu.test(file)) return "tsv";
  if (/\.(tar\.gz|tgz|gz)$/iu.test(file)) return "gzip";
  if (/\.tar$/iu.test(file)) return "tar";
  return undefined;
}

/** Options of {@link downloadDatasets}. */
export interface DownloadDatasetsOptions extends Omit<DownloadOptions, "sha256" | "bytes" | "format" | "onProgress"> {
  out: string;
  mirror?: string;
  /** Called as bytes arrive: the item, its bytes so far, its total when known, the bytes there before this run. */
  onProgress?: (item: DownloadItem, done: number, total: number | undefined, startBytes: number) => void;
  /** Called when an item is done. */
  onItem?: (item: DownloadItem, result: DownloadResult, index: number) => void;
}

/** The checksum file every download into a directory records its file's sha256 in (`sha256sum -c` reads it). */
export const SHA256SUMS = "SHA256SUMS";

/** `DIR/SHA256SUMS` as file name → sha256 (empty when there is none); a malformed line is refused with `file:line`. */
export function readSha256Sums(dir: string): Map<string, string> {
  const path = join(dir, SHA256SUMS);
  const sums = new Map<string, string>();
  if (!existsSync(path)) return sums;
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (line.trim() === "") return;
      const m = /^([0-9a-f]{64}) [ *](.+)$/u.exec(line);
      if (!m) throw new Error(`${path}:${i + 1}: not a "SHA256  FILE" line (as sha256sum writes them): ${JSON.stringify(line.slice(0, 80))}`);
      sums.set(m[2], m[1]);
    });
  return sums;
}

function writeSha256Sums(dir: string, sums: ReadonlyMap<string, string>): void {
  const lines = [...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([file, sum]) => `${sum}  ${file}\n`);
  writeFileSafe(join(dir, SHA256SUMS), lines.join(""));
}

/**
 * Downloads `items` into `options.out`, one after another (the first failure stops, naming URL and file).
 * Every file's sha256 is recorded in `out/SHA256SUMS`; a later download or mirror copy of a file recorded
 * there (or a file already present) must match it, so a second copy is as trustworthy as the first even
 * though KILT publishes no checksums.
 */
export async function downloadDatasets(items: readonly DownloadItem[], options: DownloadDatasetsOptions): Promise<DownloadResult[]> {
  const results: DownloadResult[] = [];
  const sums = readSha256Sums(options.out);
  for (const [index, item] of items.entries()) {
    const source = downloadSource(item, options.mirror);
    const recorded = sums.get(item.file);
    if (item.sha256 !== undefined && recorded !== undefined && item.sha256 !== recorded)
      throw new Error(`${join(options.out, SHA256SUMS)} records sha256 ${recorded} for ${item.file}, the catalogue ${item.sha256}: one of them is wrong; check the file and fix the record`);
    const r = await downloadFile(source, join(options.out, item.file), {
      ...options,
      sha256: item.sha256 ?? recorded,
      bytes: item.bytes,
      format: downloadFormat(item.file),
      onProgress: options.onProgress ? (d, t, s) => options.onProgress!(item, d, t, s) : undefined,
    });
    if (sums.get(item.file) !== r.sha256) {
      sums.set(item.file, r.sha256);
      writeSha256Sums(options.out, sums);
    }
    results.push(r);
    options.onItem?.(item, r, index);
  }
  return results;
}
