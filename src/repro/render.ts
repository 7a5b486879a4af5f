// A reproducibility matrix as pages in the style of Pyserini's "2CR" pages: one row per figure with
// the figure, its reference, the difference, the tolerance and ✔/✘, the exact commands of each cell,
// the checksums of the inputs and the sources of the references. Markdown, a self-contained HTML page
// (inline style, no script, nothing fetched) and a plain-text table for the terminal.

import { join } from "node:path";
import { writeFileSafe } from "../util/safe-output.js";
import type { CellResult, FigureResult, MatrixResult } from "./matrix.js";
import { SOURCES } from "./references.js";

/** A fraction with four decimals. */
export function fmtFigure(v: number): string {
  return v.toFixed(4);
}

/** A signed difference with four decimals ("±0.0000" when exactly equal, more digits when it rounds to zero). */
export function fmtDifference(d: number | undefined): string {
  if (d === undefined) return "";
  if (d === 0) return "±0.0000";
  if (Math.abs(d) < 0.00005) return `${d > 0 ? "+" : "−"}${Math.abs(d).toExponential(1)}`;
  return `${d > 0 ? "+" : "−"}${Math.abs(d).toFixed(4)}`;
}

function mark(f: FigureResult): string {
  return f.pass === undefined ? "–" : f.pass ? "✔" : "✘";
}

/** "±0.0001", "exact" (tolerance 0), or nothing without a reference. */
function tolerance(f: FigureResult): string {
  if (!f.reference) return "";
  return f.tolerance === 0 ? "exact" : `±${f.tolerance}`;
}

function metricName(f: FigureResult): string {
  const name = f.metric === "Rprec" ? "R-precision" : f.metric;
  return f.level === "downstream" ? (/^(Rprec|recall@)/u.test(f.metric) ? `page ${name} (pipeline)` : name) : `${f.level} ${name}`;
}

/** The rows of the figures table (header first). */
export function figureRows(m: MatrixResult): string[][] {
  const rows = [["cell", "dataset", "system", "metric", "figure", "reference", "difference", "tolerance", "", "source"]];
  for (const c of m.cells)
    for (const f of c.figures)
      rows.push([
        c.id,
        c.dataset,
        c.system,
        metricName(f),
        fmtFigure(f.value),
        f.reference ? String(f.reference.value) : "none",
        fmtDifference(f.difference),
        tolerance(f),
        mark(f),
        f.reference?.source ?? "",
      ]);
  return rows;
}

function summary(m: MatrixResult): string {
  const resumed = m.cells.filter((c) => c.resumed).length;
  const rerun = m.cells.filter((c) => c.rerun).length;
  const why = rerun ? ` (${rerun} run again: a stored result failed its check)` : "";
  return `${m.passed} of ${m.passed + m.failed} checked figures reproduced${m.failed ? `, ${m.failed} not` : ""}${m.unchecked ? `; ${m.unchecked} reported without a reference` : ""}; ${m.cells.length} cells${resumed ? ` (${resumed} reused from an earlier run)` : ""}${why}; tartan ${m.tartanVersion}, ${m.created}.`;
}

/** What is said of a cell run again because its stored result failed its check. */
const rerunNote = (c: CellResult) => (c.rerun ? ` Run again: ${c.rerun}.` : "");

/** The sources the matrix cites, in first-use order. */
function citedSources(m: MatrixResult): (keyof typeof SOURCES)[] {
  const seen: (keyof typeof SOURCES)[] = [];
  for (const c of m.cells) for (const f of c.figures) if (f.reference && !seen.includes(f.reference.source)) seen.push(f.reference.source);
  if (m.notes.some((n) => n.includes("KILT paper")) && !seen.includes("kilt-paper")) seen.push("kilt-paper");
  return seen;
}

/** A plain-text table of the figures for the terminal. */
export function textTable(m: MatrixResult): string {
  const rows = figureRows(m).map((r) => [r[0], r[3], r[4], r[5], r[6], r[8]]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return [...rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd()), "", summary(m)].join("\n");
}

const mdCell = (s: string) => s.replace(/\|/gu, "\\|");

/** The matrix as Markdown. */
export function matrixMarkdown(m: MatrixResult): string {
  const rows = figureRows(m);
  const out = [`# ${m.title}`, "", ...m.notes.flatMap((n) => [n, ""]), summary(m), ""];
  out.push(`| ${rows[0].map(mdCell).join(" | ")} |`, `|${rows[0].map(() => "---").join("|")}|`);
  for (const r of rows.slice(1)) out.push(`| ${r.map(mdCell).join(" | ")} |`);
  out.push("", "## Commands", "", "Once, before the cells:", "", "```sh", ...m.setup, "```", "");
  for (const c of m.cells) out.push(`### ${c.id}`, "", `${c.system}, ${c.dataset}: ${c.records.toLocaleString("en-US")} queries, ${c.seconds.toFixed(1)} s. Tolerance: ${c.figures[0]?.toleranceNote ?? ""}${rerunNote(c)}`, "", "```sh", ...c.commands, "```", "");
  out.push("## Inputs", "", "| input | checksum |", "|---|---|");
  for (const [path, sum] of Object.entries(m.inputs)) out.push(`| ${mdCell(path)} | \`${sum}\` |`);
  out.push("", "## References", "");
  for (const s of citedSources(m)) {
    const src = SOURCES[s];
    out.push(`- **${s}**: ${src.title}. ${src.where}.${"note" in src && src.note ? ` ${src.note}.` : ""}`);
  }
  return `${out.join("\n")}\n`;
}

const esc = (s: string) => s.replace(/&/gu, "&amp;").replace(/</gu, "&lt;").replace(/>/gu, "&gt;").replace(/"/gu, "&quot;");

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:76em;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border-bottom:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}td.ok{color:#176c2b;font-weight:bold}td.bad{color:#b3261e;font-weight:bold}
pre{background:#f5f5f5;padding:.6em;overflow-x:auto}code{font-size:92%}details{margin:.4em 0}summary{cursor:pointer}`;

/** The matrix as a self-contained HTML page. */
export function matrixHtml(m: MatrixResult): string {
  const body: string[] = [`<h1>${esc(m.title)}</h1>`, ...m.notes.map((n) => `<p>${esc(n)}</p>`), `<p><strong>${esc(summary(m))}</strong></p>`];
  body.push("<table><thead><tr><th>cell</th><th>dataset</th><th>system</th><th>metric</th><th>figure</th><th>reference</th><th>difference</th><th>tolerance</th><th></th><th>source</th></tr></thead><tbody>");
  for (const c of m.cells)
    for (const f of c.figures) {
      const cls = f.pass === undefined ? "" : f.pass ? "ok" : "bad";
      body.push(
        `<tr><td>${esc(c.id)}</td><td>${esc(c.dataset)}</td><td>${esc(c.system)}</td><td>${esc(metricName(f))}</td><td class="n" title="${f.value}">${fmtFigure(f.value)}</td>` +
          `<td class="n">${f.reference ? String(f.reference.value) : "none"}</td><td class="n">${esc(fmtDifference(f.difference))}</td><td class="n" title="${esc(f.toleranceNote ?? "")}">${tolerance(f)}</td>` +
          `<td class="${cls}">${mark(f)}</td><td>${f.reference ? `<a href="#src-${esc(f.reference.source)}">${esc(f.reference.source)}</a>` : ""}</td></tr>`,
      );
    }
  body.push("</tbody></table>", "<h2>Commands</h2>", "<p>Once, before the cells:</p>", `<pre><code>${esc(m.setup.join("\n"))}</code></pre>`);
  for (const c of m.cells) body.push(cellHtml(c));
  body.push("<h2>Inputs</h2><table><thead><tr><th>input</th><th>checksum</th></tr></thead><tbody>");
  for (const [path, sum] of Object.entries(m.inputs)) body.push(`<tr><td>${esc(path)}</td><td><code>${esc(sum)}</code></td></tr>`);
  body.push("</tbody></table>", "<h2>References</h2><ul>");
  for (const s of citedSources(m)) {
    const src = SOURCES[s];
    body.push(`<li id="src-${esc(s)}"><strong>${esc(s)}</strong>: ${esc(src.title)}. ${esc(src.where)}.${"note" in src && src.note ? ` ${esc(src.note)}.` : ""}</li>`);
  }
  body.push("</ul>");
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${esc(m.title)}</title><style>${STYLE}</style></head>\n<body>\n${body.join("\n")}\n</body></html>\n`;
}

function cellHtml(c: CellResult): string {
  const ok = c.figures.every((f) => f.pass !== false);
  return `<details><summary>${ok ? "✔" : "✘"} ${esc(c.id)}: ${esc(c.system)}, ${esc(c.dataset)} (${c.records.toLocaleString("en-US")} queries, ${c.seconds.toFixed(1)} s)</summary><p>Tolerance: ${esc(c.figures[0]?.toleranceNote ?? "")}${esc(rerunNote(c))}</p><pre><code>${esc(c.commands.join("\n"))}</code></pre></details>`;
}

/** Writes `report.md`, `report.html` and `report.json` into `dir` (each atomically); returns their paths. */
export function writeReports(m: MatrixResult, dir: string): { md: string; html: string; json: string } {
  const md = join(dir, "report.md");
  const html = join(dir, "report.html");
  const json = join(dir, "report.json");
  writeFileSafe(md, matrixMarkdown(m));
  writeFileSafe(html, matrixHtml(m));
  writeFileSafe(json, `${JSON.stringify(m, null, 2)}\n`);
  return { md, html, json };
}
