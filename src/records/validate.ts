// Checks KILT files against the format rules (kilt-spec.md §1–2), one record at a time: task records
// (gold and guess files) and knowledge-source pages. Memory stays constant apart from the set of ids
// seen. Problems are grouped by kind, each with a severity, a record count and the first line numbers.
// A Hugging Face Parquet file is read as the JSON lines it was made from (./parquet.ts); its report counts
// rows instead of lines, and a row that cannot be read as KILT is reported with its row and field.

import { NESTING_REASON, OBJECTS_REASON } from "./record-limits.js";
import { basename } from "node:path";
import { isParquetPath, scanJsonl, type LineError } from "./jsonl.js";
import type { ParquetRowError } from "./parquet.js";
import { pyStrip, pythonIdKey } from "./python-str.js";

/** How bad a validation problem is. */
export type Severity = "error" | "warning";
/** What a file holds: task records or knowledge-source pages. */
export type FileKind = "task" | "page";

/** Options of {@link validateFile}. */
export interface ValidateOptions {
  /** Task records or knowledge-source pages; default: guessed from the first record. */
  kind?: FileKind;
  /** Line numbers kept per problem kind; default 5. */
  maxExamples?: number;
  /** Missing or empty `output` is then only a warning; default: the file name contains `without_answers`. */
  withoutAnswers?: boolean;
}

/** All occurrences of one kind of problem in a file. */
export interface ProblemSummary {
  severity: Severity;
  problem: string;
  /** Records (lines) with this problem. */
  records: number;
  /** Occurrences; more than `records` when one record has the problem several times. */
  occurrences: number;
  /** The first `maxExamples` line numbers. */
  lines: number[];
  /** What the first occurrence looked like. */
  example: { line: number; detail: string };
}

/** What {@link validateFile} found: counts and the problems grouped by kind with line numbers. */
export interface ValidationReport {
  file: string;
  /** What the numbers in `problems` count: lines of a JSONL file, or rows of a Parquet file (1-based). */
  unit: "line" | "row";
  kind: FileKind;
  kindGuessed: boolean;
  withoutAnswers: boolean;
  /** JSON objects read. */
  records: number;
  blankLines: number;
  /** Lines that are not JSON objects, or Parquet rows that cannot be read as KILT (also reported as problems). */
  badLines: number;
  /** Records with an error / with a warning, summed over problem kinds. */
  errors: number;
  warnings: number;
  /** Errors first, then warnings, each in order of first appearance. */
  problems: ProblemSummary[];
  /** True when there is no error. */
  valid: boolean;
}

export const DEFAULT_MAX_EXAMPLES = 5;

/** Collects problems grouped by severity and kind. */
class ProblemLog {
  private readonly groups = new Map<string, { summary: ProblemSummary; lastLine: number }>();

  constructor(private readonly maxExamples: number) {}

  add(severity: Severity, problem: string, line: number, detail: string): void {
    const key = `${severity}:${problem}`;
    const group = this.groups.get(key);
    if (!group) {
      const lines = this.maxExamples > 0 ? [line] : [];
      this.groups.set(key, { summary: { severity, problem, records: 1, occurrences: 1, lines, example: { line, detail } }, lastLine: line });
      return;
    }
    const s = group.summary;
    s.occurrences++;
    if (group.lastLine === line) return;
    group.lastLine = line;
    s.records++;
    if (s.lines.length < this.maxExamples) s.lines.push(line);
  }

  summaries(): ProblemSummary[] {
    const all = [...this.groups.values()].map((g) => g.summary);
    return [...all.filter((s) => s.severity === "error"), ...all.filter((s) => s.severity === "warning")];
  }
}

type Json = Record<string, unknown>;
type Report = (severity: Severity, problem: string, detail: string) => void;

const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const isNonNegativeInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;

/** A short JSON rendering of a value for problem details. */
function show(v: unknown): string {
  const s = v === undefined ? "undefined" : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** Guesses the kind of a file from its first record: pages have a title and a list of paragraphs, no input or output. */
export function guessKind(first: Json): FileKind {
  const pageLike = "wikipedia_title" in first || Array.isArray(first.text);
  return pageLike && !("output" in first) && !("input" in first) ? "page" : "task";
}

/** Checks one task record (gold or guess line). `ids` maps Python id keys to the line they were first seen on. */
function checkTask(rec: Json, raw: string, line: number, ids: Map<string, number>, withoutAnswers: boolean, unit: string, report: Report): void {
  if (!("id" in rec)) {
    report("error", "id missing", "no id field");
  } else {
    const id = rec.id;
    const key = pythonIdKey(id, raw);
    const isInt = typeof id === "number" && /^-?\d+$/.test(key);
    if (typeof id !== "string" && !isInt) report("error", "id not a string or an int", `id ${show(id)} (Python str: ${show(key)})`);
    if (key === "") report("warning", "empty id", `id ${show(id)}`);
    const first = ids.get(key);
    if (first === undefined) ids.set(key, line);
    else report("error", "duplicate id", `id ${show(key)} first seen on ${unit} ${first}`);
  }

  if (!("input" in rec)) report("warning", "input missing", "no input field");
  else if (typeof rec.input !== "string") report("error", "input not a string", `input ${show(rec.input)}`);
  else if (pyStrip(rec.input) === "") report("warning", "empty input", `input ${show(rec.input)}`);

  const missingOutput: Severity = withoutAnswers ? "warning" : "error";
  const withheld = withoutAnswers ? " (a test file: answers withheld)" : "";
  if (!("output" in rec)) return report(missingOutput, "output missing", `no output field${withheld}`);
  const output = rec.output;
  if (!Array.isArray(output)) return report("error", "output not a list", `output ${show(output)}`);
  if (output.length === 0) return report(missingOutput, "output empty", `output []${withheld}`);

  output.forEach((o: unknown, i: number) => {
    if (!isObject(o)) return report("error", "output element not an object", `output[${i}] ${show(o)}`);
    if ("answer" in o) {
      if (typeof o.answer !== "string") report("error", "answer not a string", `output[${i}].answer ${show(o.answer)}`);
      else if (pyStrip(o.answer) === "") report("warning", "empty answer", `output[${i}].answer ${show(o.answer)}`);
    }
    if (!("provenance" in o)) {
      if (!("answer" in o)) report("warning", "output with neither answer nor provenance", `output[${i}] ${show(o)}`);
      return;
    }
    if (!Array.isArray(o.provenance)) return report("error", "provenance not a list", `output[${i}].provenance ${show(o.provenance)}`);
    o.provenance.forEach((p: unknown, j: number) => checkProvenance(p, `output[${i}].provenance[${j}]`, report));
  });
}

/** Checks one provenance entry: a page id, paragraph and character offsets in order, BLEU in [0, 1]. */
function checkProvenance(p: unknown, where: string, report: Report): void {
  if (!isObject(p)) return report("error", "provenance element not an object", `${where} ${show(p)}`);
  if (!("wikipedia_id" in p)) report("error", "provenance without wikipedia_id", `${where} ${show(p)}`);
  else if (typeof p.wikipedia_id !== "string" && !Number.isInteger(p.wikipedia_id))
    report("error", "wikipedia_id not a string or an int", `${where}.wikipedia_id ${show(p.wikipedia_id)}`);
  if ("title" in p && typeof p.title !== "string") report("error", "provenance title not a string", `${where}.title ${show(p.title)}`);

  const paragraph = (field: "start_paragraph_id" | "end_paragraph_id"): number | undefined => {
    if (!(field in p)) return undefined;
    const v = p[field];
    if (isNonNegativeInt(v)) return v;
    if (typeof v === "string" && /^\d+$/.test(v)) {
      report("warning", "paragraph id written as a string", `${where}.${field} ${show(v)}`);
      return Number(v);
    }
    report("error", "paragraph id not a non-negative int", `${where}.${field} ${show(v)}`);
    return undefined;
  };
  const character = (field: "start_character" | "end_character"): number | undefined => {
    if (!(field in p)) return undefined;
    const v = p[field];
    if (isNonNegativeInt(v)) return v;
    report("error", "character offset not a non-negative int", `${where}.${field} ${show(v)}`);
    return undefined;
  };
  const startParagraph = paragraph("start_paragraph_id");
  const endParagraph = paragraph("end_paragraph_id");
  const startChar = character("start_character");
  const endChar = character("end_character");
  if (startParagraph !== undefined && endParagraph !== undefined && startParagraph > endParagraph)
    report("error", "start_paragraph_id > end_paragraph_id", `${where}: paragraphs ${startParagraph} > ${endParagraph}`);
  if (startParagraph !== undefined && startParagraph === endParagraph && startChar !== undefined && endChar !== undefined) {
    if (startChar > endChar) report("error", "start_character > end_character", `${where}: paragraph ${startParagraph}, characters ${startChar} > ${endChar}`);
    else if (startChar === endChar) report("warning", "empty evidence span", `${where}: paragraph ${startParagraph}, characters ${startChar}-${endChar}`);
  }

  if ("bleu_score" in p) {
    const b = p.bleu_score;
    if (typeof b !== "number" || !(b >= 0 && b <= 1)) report("error", "bleu_score not a number in [0, 1]", `${where}.bleu_score ${show(b)}`);
  }
}

/** Checks one knowledge-source page. `ids` maps wikipedia_ids to the line they were first seen on. */
function checkPage(page: Json, line: number, ids: Map<string, number>, unit: string, report: Report): void {
  const id = page.wikipedia_id;
  if (!("wikipedia_id" in page)) report("error", "wikipedia_id missing", "no wikipedia_id field");
  else if (typeof id !== "string") report("error", "wikipedia_id not a string", `wikipedia_id ${show(id)}`);
  else {
    const first = ids.get(id);
    if (first === undefined) ids.set(id, line);
    else report("error", "duplicate wikipedia_id", `wikipedia_id ${show(id)} first seen on ${unit} ${first}`);
  }
  if ("_id" in page && page._id !== id) report("error", "_id differs from wikipedia_id", `_id ${show(page._id)}, wikipedia_id ${show(id)}`);

  if (!("wikipedia_title" in page)) report("error", "wikipedia_title missing", "no wikipedia_title field");
  else if (typeof page.wikipedia_title !== "string") report("error", "wikipedia_title not a string", `wikipedia_title ${show(page.wikipedia_title)}`);

  const text = page.text;
  if (!("text" in page)) report("error", "text missing", "no text field");
  else if (!Array.isArray(text)) report("error", "text not a list", `text ${show(text)}`);
  else if (text.length === 0) report("error", "text empty", "text []");
  else {
    text.forEach((t: unknown, i: number) => {
      if (typeof t !== "string") report("error", "paragraph not a string", `text[${i}] ${show(t)}`);
    });
  }

  if (!("anchors" in page)) return;
  if (!Array.isArray(page.anchors)) return report("error", "anchors not a list", `anchors ${show(page.anchors)}`);
  const paragraphs = Array.isArray(text) ? text.length : 0;
  page.anchors.forEach((a: unknown, i: number) => {
    if (!isObject(a)) return report("error", "anchor not an object", `anchors[${i}] ${show(a)}`);
    if (!isNonNegativeInt(a.paragraph_id) || a.paragraph_id >= paragraphs)
      report("error", "anchor paragraph_id out of range", `anchors[${i}].paragraph_id ${show(a.paragraph_id)} with ${paragraphs} paragraphs`);
    if (!isNonNegativeInt(a.start) || !isNonNegativeInt(a.end) || a.start > a.end)
      report("error", "anchor offsets not 0 <= start <= end", `anchors[${i}] start ${show(a.start)}, end ${show(a.end)}`);
  });
}

/** The problem a Parquet row that cannot be read as KILT is grouped under. */
function parquetProblem(e: ParquetRowError): string {
  if (e.fieldReason === "missing") return "Parquet field missing";
  if (e.fieldReason.startsWith("expected ")) return "Parquet field of the wrong type";
  return "Parquet field malformed";
}

/**
 * Validates one JSONL file (plain or .gz) or Hugging Face Parquet file, reading it once with constant
 * memory apart from the ids.
 */
export async function validateFile(file: string, options: ValidateOptions = {}): Promise<ValidationReport> {
  const log = new ProblemLog(options.maxExamples ?? DEFAULT_MAX_EXAMPLES);
  const withoutAnswers = options.withoutAnswers ?? basename(file).includes("without_answers");
  const ids = new Map<string, number>();
  let kind = options.kind;

  const parquet = isParquetPath(file);
  const unit = parquet ? "row" : "line";
  const onError = (e: LineError) => {
    const field = (e as Partial<ParquetRowError>).field;
    if (parquet && field !== undefined) {
      // The report names the file; the example names the row (`e.g. row 2:`) and here the field.
      const pe = e as ParquetRowError;
      log.add("error", parquetProblem(pe), e.line, `field ${field}: ${pe.fieldReason}`);
      return;
    }
    const problem = e.reason.startsWith("invalid JSON") ? "invalid JSON" : e.reason === NESTING_REASON ? "nested too deep" : e.reason === OBJECTS_REASON ? "record too large" : "not a JSON object";
    log.add("error", problem, e.line, e.reason);
  };
  const stats = await scanJsonl(
    file,
    (rec, line, raw) => {
      kind ??= guessKind(rec);
      const report: Report = (severity, problem, detail) => log.add(severity, problem, line, detail);
      if (kind === "task") checkTask(rec, raw, line, ids, withoutAnswers, unit, report);
      else checkPage(rec, line, ids, unit, report);
    },
    { onError, onInvalidUtf8: (e) => log.add("error", "invalid UTF-8", e.line, e.reason) },
  );
  if (stats.records === 0) log.add("warning", "no records", 0, parquet ? "the file holds no row that reads as a record" : "the file holds no JSON object");

  const problems = log.summaries();
  const sum = (severity: Severity) => problems.filter((p) => p.severity === severity).reduce((n, p) => n + p.records, 0);
  const errors = sum("error");
  return {
    file,
    unit,
    kind: kind ?? "task",
    kindGuessed: options.kind === undefined,
    withoutAnswers,
    records: stats.records,
    blankLines: stats.blankLines,
    badLines: stats.badLines,
    errors,
    warnings: sum("warning"),
    problems,
    valid: errors === 0,
  };
}

/** The line (row) numbers of a problem as text: `line 3`, `lines 12, 40, 77`, `lines 1, 2, 3, ...` when there are more. */
function lineList(p: ProblemSummary, unit: string): string {
  if (p.lines.length === 0 || p.lines[0] === 0) return "";
  const more = p.records > p.lines.length ? ", ..." : "";
  return ` ${p.records === 1 ? unit : `${unit}s`} ${p.lines.join(", ")}${more}`;
}

/** The human-readable report of one file: a header, one line per problem kind, a verdict. */
export function formatReport(r: ValidationReport): string {
  const plural = (n: number, word: string) => `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
  const extras = [r.badLines > 0 ? plural(r.badLines, `malformed ${r.unit}`) : "", r.kind === "task" && r.withoutAnswers ? "answers withheld" : ""].filter(Boolean);
  const out = [`${r.file}: ${plural(r.records, `${r.kind} record`)}${extras.length > 0 ? ` (${extras.join(", ")})` : ""}`];
  for (const p of r.problems) {
    const times = p.occurrences > p.records ? `, ${plural(p.occurrences, "time")}` : "";
    // A problem of the whole file (line 0: no records, say) counts no records.
    const fileLevel = p.example.line === 0 && p.records === 1;
    out.push(`  ${p.severity.padEnd(7)}  ${p.problem}${fileLevel ? "" : ` (${plural(p.records, "record")}${times})`}${lineList(p, r.unit)}`);
    out.push(`           e.g. ${p.example.line > 0 ? `${r.unit} ${p.example.line}: ` : ""}${p.example.detail}`);
  }
  const counts = `${plural(r.errors, "error")}, ${plural(r.warnings, "warning")}`;
  out.push(`  => ${r.valid ? (r.warnings > 0 ? "valid, with warnings" : "valid") : "INVALID"} (${counts})`);
  return out.join("\n");
}
