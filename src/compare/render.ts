// A comparison as a table: one row per run; per metric its mean with the confidence interval, and
// for runs other than the baseline the difference with its p-value (dagger: significant after the
// correction) and win/tie/loss counts. CSV is long and numeric (one line per run and metric), JSON
// the whole result.

import type { CompareResult } from "./compare.js";
import { csvLines, renderTable, type Table, type TableCell, type TableFormat } from "./table.js";

/** The output formats of {@link renderComparison}. */
export const COMPARE_FORMATS = ["text", "json", "markdown", "csv", "latex", "html"] as const;
/** An output format of {@link renderComparison}. */
export type CompareFormat = (typeof COMPARE_FORMATS)[number];

/** Scores in [0, 1] as percentages with two decimals (as the KILT papers print them). */
export function pct(x: number, digits = 2): string {
  return Number.isFinite(x) ? (100 * x).toFixed(digits) : "–";
}

/** A p-value as printed in tables: three decimals, in scientific notation below 0.001, `–` when undefined. */
export function formatP(p: number): string {
  if (Number.isNaN(p)) return "–";
  if (p >= 0.001) return p.toFixed(3);
  return p.toExponential(1);
}

function signed(x: number): string {
  const s = pct(x);
  return x > 0 ? `+${s}` : s;
}

const TEST_NAMES: Record<string, string> = {
  randomization: "Fisher's randomization test",
  t: "paired t test",
  wilcoxon: "Wilcoxon signed-rank test",
  bootstrap: "paired bootstrap test",
};

const CORRECTION_NAMES: Record<string, string> = {
  none: "no correction",
  bonferroni: "Bonferroni",
  holm: "Holm",
  bh: "Benjamini–Hochberg",
};

/** The notes under a comparison table: what the intervals and marks mean. */
export function compareNotes(r: CompareResult): string[] {
  const s = r.settings;
  const test =
    s.test === "randomization" ? `${TEST_NAMES[s.test]} (${s.permutations.toLocaleString("en-US")} sign flips)` : TEST_NAMES[s.test];
  const family = (r.runs.length - 1) * r.metrics.length;
  return [
    `${r.queries.toLocaleString("en-US")} queries; [low, high]: ${Math.round(s.level * 100)}% paired-bootstrap interval (${s.samples.toLocaleString("en-US")} resamples, seed ${s.seed}).`,
    `Δ: difference to ${r.baseline}; p: ${test}, ${CORRECTION_NAMES[s.correction]}${s.correction === "none" ? "" : ` over ${family} comparisons`}; † p < ${s.alpha}.`,
  ];
}

/** The comparison as a Table (for text, Markdown, LaTeX, HTML). `full` adds Δ, p and W/T/L columns. */
export function compareTable(r: CompareResult, full = true): Table {
  const header = ["run"];
  for (const m of r.metrics) {
    header.push(m);
    if (full) header.push("Δ", "p", "W/T/L");
  }
  const rows: TableCell[][] = r.runs.map((run) => {
    const row: TableCell[] = [{ text: run.name }];
    for (const m of r.metrics) {
      const c = run.cells[m];
      const cmp = run.comparisons?.[m];
      row.push({
        text: pct(c.mean),
        bold: r.best[m].includes(run.name) && r.runs.length > 1,
        dagger: !full && cmp?.significant,
        interval: `[${pct(c.interval.low)}, ${pct(c.interval.high)}]`,
      });
      if (full) {
        if (cmp) {
          row.push({ text: signed(cmp.difference) });
          row.push({ text: formatP(cmp.adjusted), dagger: cmp.significant });
          row.push({ text: `${cmp.wins}/${cmp.ties}/${cmp.losses}` });
        } else row.push({ text: "" }, { text: "" }, { text: "" });
      }
    }
    return row;
  });
  return { header, rows, notes: compareNotes(r) };
}

/**
 * The comparison for a terminal: one row per metric and run (the wide table, four columns per metric,
 * ran to ~250 columns with the default metrics), the metric named on its first row.
 */
export function compareLongTable(r: CompareResult): Table {
  const rows: TableCell[][] = [];
  for (const m of r.metrics)
    r.runs.forEach((run, i) => {
      const c = run.cells[m];
      const cmp = run.comparisons?.[m];
      rows.push([
        { text: i === 0 ? m : "" },
        { text: run.name },
        { text: pct(c.mean), bold: r.best[m].includes(run.name) && r.runs.length > 1, interval: `[${pct(c.interval.low)}, ${pct(c.interval.high)}]` },
        { text: cmp ? signed(cmp.difference) : "" },
        { text: cmp ? formatP(cmp.adjusted) : "", dagger: cmp?.significant },
        { text: cmp ? `${cmp.wins}/${cmp.ties}/${cmp.losses}` : "" },
      ]);
    });
  return { header: ["metric", "run", "mean", "Δ", "p", "W/T/L"], align: ["l", "l", "r", "r", "r", "r"], rows, notes: compareNotes(r) };
}

/** Long numeric CSV: one line per run and metric. */
export function compareCsv(r: CompareResult): string {
  const lines: (string | number)[][] = [
    ["run", "metric", "mean", "low", "high", "baseline", "difference", "diff_low", "diff_high", "test", "pvalue", "adjusted", "correction", "significant", "wins", "ties", "losses"],
  ];
  for (const run of r.runs)
    for (const m of r.metrics) {
      const c = run.cells[m];
      const cmp = run.comparisons?.[m];
      lines.push([
        run.name,
        m,
        c.mean,
        c.interval.low,
        c.interval.high,
        r.baseline,
        cmp?.difference ?? "",
        cmp?.interval.low ?? "",
        cmp?.interval.high ?? "",
        cmp ? r.settings.test : "",
        cmp?.pvalue ?? "",
        cmp?.adjusted ?? "",
        cmp ? r.settings.correction : "",
        cmp ? String(cmp.significant) : "",
        cmp?.wins ?? "",
        cmp?.ties ?? "",
        cmp?.losses ?? "",
      ]);
    }
  return csvLines(lines);
}

/** The comparison in one of the output formats. LaTeX is the paper table: means, intervals, † marks. */
export function renderComparison(r: CompareResult, format: CompareFormat): string {
  if (format === "json") return JSON.stringify(r, null, 2);
  if (format === "csv") return compareCsv(r);
  const table = format === "text" ? compareLongTable(r) : compareTable(r, format !== "latex");
  return renderTable(table, format as TableFormat);
}
