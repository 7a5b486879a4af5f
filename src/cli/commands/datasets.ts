// `tartan datasets`: the dataset catalogue as an aligned table (or JSON with --json).
import type { Command } from "commander";
import { DATASETS, SPLITS, type Dataset } from "../../datasets/catalogue.js";
import { registerQrels } from "./qrels.js";

/** The catalogue as table rows: a header, one row per dataset; extras still being filled in are marked with `*`. */
export function catalogueRows(datasets: readonly Dataset[] = DATASETS): string[][] {
  const header = ["name", "dataset", "task", ...SPLITS, "metric"];
  const rows = datasets.map((d) => [
    d.pending ? `${d.name}*` : d.name,
    d.displayName,
    d.family,
    ...SPLITS.map((s) => d.splits[s]?.records.toLocaleString("en-US") ?? "-"),
    d.kiltMetric ? `${d.metric} (${d.kiltMetric})` : d.metric,
  ]);
  return [header, ...rows];
}

/** Left-aligned text columns, right-aligned count columns, two spaces apart, no trailing blanks. */
export function formatTable(rows: string[][], rightAligned: ReadonlySet<number>): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows
    .map((r) => r.map((cell, c) => (rightAligned.has(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join("  ").trimEnd())
    .join("\n");
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
}
