// `tartan map`: KILT's provenance mapping on the command line. Records in, records with mapped
// provenance (paragraph, code-point offsets, bleu_score) out; pages from a knowledge-source store
// (`--ks DIR`, built by `tartan ks ingest`, or a clickhouse:// URL) or a pages JSONL file loaded into memory (`--pages`).

import { InvalidArgumentError, Option, type Command } from "commander";
import { openKnowledgeSource } from "../../backends/open.js";
import { positiveInt } from "../options.js";
import { assertReadableFile } from "../../records/jsonl.js";
import { assertOutputsNotInputs, writeFileSafe } from "../../util/safe-output.js";
import { fileSize, formatMapReport, mapFile, MemoryPages, splitFromName, type MapReport, type PageLookup, type Split } from "../../mapping/map.js";

export interface MapCliOptions {
  input: string;
  out: string;
  ks?: string;
  pages?: string;
  split?: Split;
  threshold: number;
  candidates: number;
  report?: string;
  maxExamples: number;
}

function unitInterval(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError("expected a number in [0, 1]");
  return n;
}

/** Runs the mapping job; `log` receives the summary lines. Throws on bad usage or unreadable input. */
export async function runMap(o: MapCliOptions, log: (s: string) => void): Promise<MapReport> {
  if ((o.ks === undefined) === (o.pages === undefined)) throw new Error("map: give exactly one of --ks DIR and --pages PAGES.jsonl");
  assertOutputsNotInputs([o.out, o.report], [o.input, o.pages]);
  assertReadableFile(o.input);
  const split = o.split ?? splitFromName(o.input);
  if (split === null) throw new Error(`map: cannot tell the split from ${o.input}; give --split train|dev|test (dev and test drop outputs below --threshold)`);
  let pages: PageLookup;
  let close: () => unknown = () => {};
  if (o.ks !== undefined) {
    const store = await openKnowledgeSource(o.ks);
    pages = store;
    close = () => store.close();
  } else {
    pages = await MemoryPages.load(o.pages!);
  }
  const total = fileSize(o.input);
  const tty = process.stderr.isTTY === true;
  let last = 0;
  const t0 = performance.now();
  try {
    const report = await mapFile(o.input, o.out, pages, {
      split,
      threshold: o.threshold,
      candidates: o.candidates,
      maxExamples: o.maxExamples,
      onProgress: tty
        ? (records, bytes) => {
            const now = performance.now();
            if (now - last < 250) return;
            last = now;
            const pct = total > 0 ? ` ${((100 * bytes) / total).toFixed(1)}%` : "";
            process.stderr.write(`\r\x1b[Kmap: ${records.toLocaleString("en-US")} records${pct}`);
          }
        : undefined,
    });
    if (tty) process.stderr.write("\r\x1b[K");
    if (o.report) writeFileSafe(o.report, `${JSON.stringify(report, null, 2)}\n`);
    log(formatMapReport(report));
    log(`done in ${((performance.now() - t0) / 1000).toFixed(1)} s${o.report ? `; report → ${o.report}` : ""}`);
    return report;
  } finally {
    await close();
  }
}

export function registerMap(program: Command): void {
  program
    .command("map")
    .description(
      "map answers or evidence texts onto knowledge-source pages as KILT did (substring, token match, best-BLEU span) and write provenance with bleu_score; dev/test outputs below the threshold are dropped and reported",
    )
    .requiredOption("--input <records>", "KILT-style records whose provenance names a page (wikipedia_id, title or url) and optionally carries the evidence `text`")
    .requiredOption("--out <mapped>", "output records (JSONL, .gz to compress)")
    .option("--ks <dir>", "knowledge-source store directory (tartan ks ingest) or clickhouse:// URL")
    .option("--pages <pages.jsonl>", "knowledge-source pages loaded into memory (small sources)")
    .addOption(new Option("--split <split>", "train keeps low-BLEU outputs; dev and test drop them (default: from the file name)").choices(["train", "dev", "test"]))
    .option("--threshold <bleu>", "minimum BLEU kept in dev/test", unitInterval, 0.5)
    .option("--candidates <n>", "paragraphs searched by BLEU (KILT's MAX_PARAGRAPH_CANDIDATE)", positiveInt, 3)
    .option("--report <file>", "write the full report (counts, BLEU histogram, dropped items) as JSON")
    .option("--max-examples <n>", "dropped items listed in the report", positiveInt, 20)
    .action(async (o: MapCliOptions) => {
      await runMap(o, (s) => process.stdout.write(`${s}\n`));
    });
}
