// The written report of a pipeline run: a KILT-style table (R-precision, recall@5, EM, F1, KILT-EM,
// KILT-F1) per system, as Markdown and as a self-contained HTML page with an SVG bar chart.

import type { EvalResult } from "../eval/evaluate.js";

/** One evaluated system of a report. */
export interface SystemResult {
  /** e.g. "BM25 (english) + extractive reader". */
  name: string;
  result: EvalResult;
}

/** What a report shows: a title, notes and the evaluated systems. */
export interface ReportInput {
  title: string;
  /** One line each: what was run, on what data. */
  notes: string[];
  systems: SystemResult[];
}

export const REPORT_COLUMNS = [
  { key: "Rprec", label: "R-prec" },
  { key: "recall@5", label: "Recall@5" },
  { key: "em", label: "EM" },
  { key: "f1", label: "F1" },
  { key: "KILT-em", label: "KILT-EM" },
  { key: "KILT-f1", label: "KILT-F1" },
] as const;

/** The six headline numbers of one system (undefined where a section was not computed). */
export function headline(r: EvalResult): Record<string, number | undefined> {
  const d = r.eval_downstream;
  const ret = r.eval_retrieval;
  return {
    Rprec: ret?.Rprec ?? d?.retrieval.Rprec,
    "recall@5": ret?.["recall@5"] ?? d?.retrieval["recall@5"],
    em: d?.downstream.em,
    f1: d?.downstream.f1,
    "KILT-em": d?.kilt["KILT-em"],
    "KILT-f1": d?.kilt["KILT-f1"],
  };
}

const pct = (v: number | undefined) => (v === undefined ? "-" : (100 * v).toFixed(2));

/** The table as aligned plain text (for the terminal). */
export function headlineTable(systems: readonly SystemResult[]): string {
  const rows = [["system", ...REPORT_COLUMNS.map((c) => c.label)]];
  for (const s of systems) {
    const h = headline(s.result);
    rows.push([s.name, ...REPORT_COLUMNS.map((c) => pct(h[c.key]))]);
  }
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ")).join("\n");
}

/** The report as Markdown: the notes, then one table row per system. */
export function markdownReport(input: ReportInput): string {
  const lines = [`# ${input.title}`, "", ...input.notes.map((n) => `- ${n}`), ""];
  lines.push(`| system | ${REPORT_COLUMNS.map((c) => c.label).join(" | ")} |`);
  lines.push(`|---|${REPORT_COLUMNS.map(() => "---:").join("|")}|`);
  for (const s of input.systems) {
    const h = headline(s.result);
    lines.push(`| ${s.name} | ${REPORT_COLUMNS.map((c) => pct(h[c.key])).join(" | ")} |`);
  }
  lines.push("", "Scores in percent. KILT-EM and KILT-F1 count an answer only when R-precision of its pages is 1.", "");
  return lines.join("\n");
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}

const COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948"];

/** A grouped bar chart: one group per metric, one bar per system. */
export function svgChart(systems: readonly SystemResult[]): string {
  const groupW = 110;
  const barW = Math.max(8, Math.floor(80 / Math.max(1, systems.length)));
  const h = 220;
  const top = 20;
  const width = 60 + groupW * REPORT_COLUMNS.length;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${h + 70}" role="img" aria-label="KILT metrics per system">`,
  ];
  for (let t = 0; t <= 100; t += 25) {
    const y = top + h - (h * t) / 100;
    parts.push(`<line x1="50" x2="${width}" y1="${y}" y2="${y}" stroke="#ddd"/><text x="44" y="${y + 4}" font-size="11" text-anchor="end">${t}</text>`);
  }
  REPORT_COLUMNS.forEach((c, gi) => {
    const x0 = 60 + gi * groupW;
    systems.forEach((s, si) => {
      const v = headline(s.result)[c.key] ?? 0;
      const bh = h * v;
      parts.push(
        `<rect x="${x0 + si * barW}" y="${top + h - bh}" width="${barW - 2}" height="${bh}" fill="${COLORS[si % COLORS.length]}"><title>${escapeHtml(s.name)}: ${c.label} ${pct(v)}</title></rect>`,
      );
    });
    parts.push(`<text x="${x0 + 40}" y="${top + h + 16}" font-size="12" text-anchor="middle">${c.label}</text>`);
  });
  systems.forEach((s, si) => {
    const y = top + h + 34;
    const x = 60 + si * 200;
    parts.push(`<rect x="${x}" y="${y}" width="10" height="10" fill="${COLORS[si % COLORS.length]}"/><text x="${x + 14}" y="${y + 9}" font-size="11">${escapeHtml(s.name)}</text>`);
  });
  parts.push("</svg>");
  return parts.join("");
}

/** The report as a standalone HTML page with a table and a bar chart (inline SVG). */
export function htmlReport(input: ReportInput): string {
  const rows = input.systems
    .map((s) => {
      const h = headline(s.result);
      return `<tr><td>${escapeHtml(s.name)}</td>${REPORT_COLUMNS.map((c) => `<td>${pct(h[c.key])}</td>`).join("")}</tr>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(input.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse}td,th{padding:.3rem .7rem;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}</style>
</head><body>
<h1>${escapeHtml(input.title)}</h1>
<ul>${input.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>
<table><thead><tr><th>system</th>${REPORT_COLUMNS.map((c) => `<th>${c.label}</th>`).join("")}</tr></thead>
<tbody>
${rows}
</tbody></table>
<p>Scores in percent. KILT-EM and KILT-F1 count an answer only when R-precision of its pages is 1.</p>
${svgChart(input.systems)}
</body></html>
`;
}
