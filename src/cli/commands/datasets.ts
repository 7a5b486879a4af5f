// `tartan datasets`: the dataset catalogue as an aligned table (or JSON with --json); `datasets convert
// parquet`: a Hugging Face kilt_tasks/kilt_wikipedia Parquet file as the KILT JSONL it was made from.
import type { Command } from "commander";
import { datasetsConvertCommand } from "../subcommand.js";
import { catalogueRows, DATASETS, SPLITS } from "../../datasets/catalogue.js";
import { byteLineBatches, isParquetPath, JsonlWriter, type LineError } from "../../records/jsonl.js";
import { Progress } from "../../util/progress.js";
import { assertOutputsNotInputs } from "../../util/safe-output.js";
import { registerQrels } from "./qrels.js";

/** Left-aligned text columns, right-aligned count columns, two spaces apart, no trailing blanks. */
export function formatTable(rows: string[][], rightAligned: ReadonlySet<number>): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows
    .map((r) => r.map((cell, c) => (rightAligned.has(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join("  ").trimEnd())
    .join("\n");
}

/**
 * `datasets convert parquet FILE --out OUT`: the rows as KILT JSON lines (records or pages), written to a
 * temporary file renamed into place. A row that cannot be converted stops the conversion (nothing
 * written) unless `skipBad`, which reports it and writes the others. Returns the rows written and skipped.
 */
export async function convertParquet(
  file: string,
  o: { out: string; skipBad?: boolean },
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<{ rows: number; skipped: number }> {
  if (!isParquetPath(file)) throw new Error(`${file}: expected a .parquet file (a Hugging Face kilt_tasks or kilt_wikipedia export)`);
  assertOutputsNotInputs([o.out], [file]);
  const writer = new JsonlWriter(o.out);
  const progress = new Progress({ label: "convert", unit: "rows" });
  let skipped = 0;
  const onError = o.skipBad
    ? (e: LineError) => {
        skipped++;
        progress.clear();
        log(`${e.message}; skipped`);
      }
    : undefined;
  try {
    let bytes = 0;
    for await (const batch of byteLineBatches(file, { onError, onProgress: (b) => (bytes = b) })) {
      for (const l of batch) await writer.writeLine(l.buf.toString("utf8", l.start, l.end));
      progress.update(writer.count, bytes);
    }
  } catch (e) {
    progress.clear();
    await writer.abort();
    throw e;
  }
  await writer.close();
  progress.done();
  return { rows: writer.count, skipped };
}

export function registerDatasets(program: Command): void {
  const datasets = program
    .command("datasets")
    .description("list the KILT datasets (and the extra ones): files, record counts per split, headline metric")
    .option("--json", "print the catalogue as JSON")
    .action((opts: { json?: boolean }) => {
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(DATASETS, null, 2)}\n`);
        return;
      }
      const countColumns = new Set(SPLITS.map((_, i) => 3 + i));
      process.stdout.write(`${formatTable(catalogueRows(), countColumns)}\n`);
      for (const d of DATASETS.filter((x) => x.pending)) process.stdout.write(`* ${d.name}: ${d.pending}\n`);
    });
  registerQrels(datasets);
  datasetsConvertCommand(program)
    .command("parquet")
    .description("Hugging Face Parquet (facebook/kilt_tasks or facebook/kilt_wikipedia layout) → the KILT JSONL records or pages it was made from")
    .argument("<file>", "a .parquet file of either dataset (one split or shard)")
    .requiredOption("--out <file.jsonl>", "KILT JSONL to write (.gz to compress)")
    .option("--skip-bad", "report rows that cannot be converted and write the others (default: stop, write nothing)")
    .action(async (file: string, o: { out: string; skipBad?: boolean }) => {
      const r = await convertParquet(file, o);
      process.stdout.write(`${o.out}: ${r.rows.toLocaleString("en-US")} rows${r.skipped ? `, ${r.skipped} skipped` : ""}\n`);
      if (r.skipped > 0) process.exitCode = 1;
    });
}
