// One table model, five renderings: aligned plain text for the terminal, Markdown, CSV, LaTeX
// (booktabs: best value in bold, significance with a dagger) and HTML. Used by `tartan compare` and
// `tartan leaderboard`; cells carry their text plus the two marks a paper table needs.

/** The output formats of a {@link Table}. */
export const TABLE_FORMATS = ["text", "markdown", "csv", "latex", "html"] as const;
/** An output format of a {@link Table}. */
export type TableFormat = (typeof TABLE_FORMATS)[number];

/** One cell of a {@link Table}. */
export interface TableCell {
  text: string;
  /** Shown bold (the best value of its column). */
  bold?: boolean;
  /** Marked with a dagger (significantly different from the baseline). */
  dagger?: boolean;
  /** A confidence interval shown after the value (small in LaTeX). */
  interval?: string;
}

/** A table to render as text, Markdown, CSV, LaTeX or HTML. */
export interface Table {
  caption?: string;
  /** Header groups over the columns (e.g. a dataset name over its metrics): [label, span]. */
  groups?: [string, number][];
  header: string[];
  /** "l" or "r" per column; default: first column left, the others right. */
  align?: ("l" | "r")[];
  rows: TableCell[][];
  /** Lines printed under the table (test, correction, legend). */
  notes?: string[];
}

const DAGGER = "†";

function plain(c: TableCell, withMarks = true): string {
  return `${c.text}${withMarks && c.dagger ? DAGGER : ""}${c.interval ? ` ${c.interval}` : ""}`;
}

function alignOf(t: Table, i: number): "l" | "r" {
  return t.align?.[i] ?? (i === 0 ? "l" : "r");
}

function textTable(t: Table): string {
  const cells = [t.header, ...t.rows.map((r) => r.map((c) => plain(c)))];
  const widths = t.header.map((_, i) => Math.max(...cells.map((r) => [...(r[i] ?? "")].length)));
  if (t.groups) {
    // a group label wider than its columns widens the group's last column
    let col = 0;
    for (const [label, span] of t.groups) {
      const w = widths.slice(col, col + span).reduce((s, x) => s + x, 0) + 2 * (span - 1);
      if (span > 0 && label.length > w) widths[col + span - 1] += label.length - w;
      col += span;
    }
  }
  const line = (r: string[]) =>
    r
      .map((s, i) => (alignOf(t, i) === "l" ? s.padEnd(widths[i]) : s.padStart(widths[i])))
      .join("  ")
      .trimEnd();
  const out: string[] = [];
  if (t.caption) out.push(t.caption, "");
  if (t.groups) {
    const parts: string[] = [];
    let col = 0;
    for (const [label, span] of t.groups) {
      const w = widths.slice(col, col + span).reduce((s, x) => s + x, 0) + 2 * (span - 1);
      parts.push(label.padEnd(w));
      col += span;
    }
    out.push(parts.join("  ").trimEnd());
  }
  out.push(line(t.header), widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of cells.slice(1)) out.push(line(r));
  for (const n of t.notes ?? []) out.push(n);
  return out.join("\n");
}

function mdEscape(s: string): string {
  return s.replace(/\|/gu, "\\|");
}

function markdownTable(t: Table): string {
  const cell = (c: TableCell) => {
    const v = `${mdEscape(c.text)}${c.dagger ? DAGGER : ""}`;
    return `${c.bold ? `**${v}**` : v}${c.interval ? ` ${c.interval}` : ""}`;
  };
  const header = t.groups
    ? t.header.map((h, i) => {
        let col = 0;
        for (const [label, span] of t.groups!) {
          if (i >= col && i < col + span) return label && i > 0 ? `${label} ${h}` : h;
          col += span;
        }
        return h;
      })
    : t.header;
  const out: string[] = [];
  if (t.caption) out.push(`**${mdEscape(t.caption)}**`, "");
  out.push(`| ${header.map(mdEscape).join(" | ")} |`);
  out.push(`|${t.header.map((_, i) => (alignOf(t, i) === "l" ? "---" : "---:")).join("|")}|`);
  for (const r of t.rows) out.push(`| ${r.map(cell).join(" | ")} |`);
  if (t.notes?.length) out.push("", ...t.notes);
  return out.join("\n");
}

function csvField(s: string): string {
  return /[",\n\r]/u.test(s) ? `"${s.replace(/"/gu, '""')}"` : s;
}

/** CSV of the table as shown (marks as their own columns are the caller's job: see each command's CSV). */
export function csvLines(rows: readonly (readonly (string | number | null | undefined)[])[]): string {
  return rows.map((r) => r.map((v) => csvField(v === null || v === undefined ? "" : String(v))).join(",")).join("\n");
}

const LATEX_SPECIAL: Record<string, string> = {
  "\\": "\\textbackslash{}",
  "&": "\\&",
  "%": "\\%",
  $: "\\$",
  "#": "\\#",
  _: "\\_",
  "{": "\\{",
  "}": "\\}",
  "~": "\\textasciitilde{}",
  "^": "\\textasciicircum{}",
};

/** `s` with LaTeX's special characters escaped. */
export function latexEscape(s: string): string {
  return s.replace(/[\\&%$#_{}~^]/gu, (ch) => LATEX_SPECIAL[ch]);
}

function latexTable(t: Table): string {
  const cell = (c: TableCell) => {
    let v = latexEscape(c.text);
    if (c.bold) v = `\\textbf{${v}}`;
    if (c.dagger) v = `${v}$^\\dagger$`;
    if (c.interval) v = `${v}\\,{\\scriptsize ${latexEscape(c.interval)}}`;
    return v;
  };
  const out = [`\\begin{table}[t]`, `\\centering`];
  if (t.caption) out.push(`\\caption{${latexEscape(t.caption)}}`);
  out.push(`\\begin{tabular}{${t.header.map((_, i) => alignOf(t, i)).join("")}}`, "\\toprule");
  if (t.groups) {
    const parts: string[] = [];
    const rules: string[] = [];
    let col = 1;
    for (const [label, span] of t.groups) {
      parts.push(span > 1 ? `\\multicolumn{${span}}{c}{${latexEscape(label)}}` : latexEscape(label));
      if (label && span > 0) rules.push(`\\cmidrule(lr){${col}-${col + span - 1}}`);
      col += span;
    }
    out.push(`${parts.join(" & ")} \\\\`, rules.join(" "));
  }
  out.push(`${t.header.map(latexEscape).join(" & ")} \\\\`, "\\midrule");
  for (const r of t.rows) out.push(`${r.map(cell).join(" & ")} \\\\`);
  out.push("\\bottomrule", "\\end{tabular}");
  if (t.notes?.length) out.push(`\\par\\smallskip{\\footnotesize ${t.notes.map(latexEscape).join(" ").replace(/†/gu, "$^\\dagger$")}}`);
  out.push("\\end{table}");
  return out.join("\n");
}

function htmlEscape(s: string): string {
  return s.replace(/[&<>"]/gu, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]!);
}

function htmlTable(t: Table): string {
  const cell = (c: TableCell, i: number) => {
    let v = htmlEscape(c.text);
    if (c.dagger) v += "<sup>†</sup>";
    if (c.bold) v = `<strong>${v}</strong>`;
    if (c.interval) v += ` <small>${htmlEscape(c.interval)}</small>`;
    return `<td style="text-align:${alignOf(t, i) === "l" ? "left" : "right"}">${v}</td>`;
  };
  const out = ["<table>"];
  if (t.caption) out.push(`<caption>${htmlEscape(t.caption)}</caption>`);
  out.push("<thead>");
  if (t.groups) out.push(`<tr>${t.groups.map(([label, span]) => `<th colspan="${span}">${htmlEscape(label)}</th>`).join("")}</tr>`);
  out.push(`<tr>${t.header.map((h) => `<th>${htmlEscape(h)}</th>`).join("")}</tr>`, "</thead>", "<tbody>");
  for (const r of t.rows) out.push(`<tr>${r.map(cell).join("")}</tr>`);
  out.push("</tbody>", "</table>");
  if (t.notes?.length) out.push(`<p>${t.notes.map(htmlEscape).join("<br>")}</p>`);
  return out.join("\n");
}

/** The table in the given format ("csv" here is the shown text, one column per table column). */
export function renderTable(t: Table, format: TableFormat): string {
  switch (format) {
    case "text":
      return textTable(t);
    case "markdown":
      return markdownTable(t);
    case "latex":
      return latexTable(t);
    case "html":
      return htmlTable(t);
    case "csv":
      return csvLines([t.header, ...t.rows.map((r) => r.map((c) => plain(c)))]);
    default:
      throw new Error(`format must be one of ${TABLE_FORMATS.join(", ")}, got "${String(format)}"`);
  }
}
