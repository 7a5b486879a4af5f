// `tartan eval --task wikireading`: Mean F1 (paper §4: per instance, F1 between the predicted and
// the gold answer sets by exact string match, averaged) overall and for categorical, relational and
// date properties, the classes coming from a training file's answer entropy. Gold: WikiReading shards
// or records of `tartan datasets convert wikireading`; predictions: KILT JSONL (docs/wikireading.md).

import { closeSync, openSync, readSync, statSync } from "node:fs";
import { readWikiReading } from "../../datasets/wikireading.js";
import { readJsonl, type LineError } from "../../records/jsonl.js";
import type { KiltRecord } from "../../records/types.js";
import { Problems, type Problem } from "../problems.js";
import { Breakdown, formatBreakdownTable, mean, tallyJson, type Tally } from "./breakdown.js";
import { PropertyStatsBuilder, propertyStatsFromFile, readPropertyTable, type PropertyTable } from "./wikireading-properties.js";

/** F1 between two answer sets (exact strings): 2PR/(P+R), 0 when they share nothing or either is empty. */
export function setF1(predicted: readonly string[], gold: readonly string[]): number {
  const p = new Set(predicted);
  const g = new Set(gold);
  if (p.size === 0 || g.size === 0) return 0;
  let common = 0;
  for (const a of p) if (g.has(a)) common++;
  if (common === 0) return 0;
  const precision = common / p.size;
  const recall = common / g.size;
  return (2 * precision * recall) / (precision + recall);
}

/** The predicted answer set of a KILT guess: every `output[i].answer`, each split at `separator` if one is given. */
export function predictedAnswers(r: KiltRecord, separator?: string): string[] {
  const out: string[] = [];
  for (const o of r.output ?? []) {
    if (typeof o.answer !== "string") continue;
    const parts = separator ? o.answer.split(separator) : [o.answer];
    for (const p of parts) {
      const t = p.trim();
      if (t.length > 0 && !out.includes(t)) out.push(t);
    }
  }
  return out;
}

export interface WikiReadingGold {
  id: string;
  property: string;
  answers: string[];
}

/** Gold instances of a WikiReading shard/directory/tar, or of a converted KILT file (meta.property, meta.answers). */
export async function* wikiReadingGold(path: string): AsyncGenerator<WikiReadingGold> {
  if (isRawWikiReading(path)) {
    for await (const ex of readWikiReading(path)) yield { id: ex.id, property: ex.property, answers: ex.answers };
    return;
  }
  for await (const { value: r, line } of readJsonl<KiltRecord>(path)) {
    const m = r.meta ?? {};
    if (typeof m.property !== "string" || !Array.isArray(m.answers))
      throw new Error(`${path}:${line}: not a WikiReading KILT record (meta.property and meta.answers missing): convert with tartan datasets convert wikireading`);
    yield { id: String(r.id), property: m.property, answers: m.answers.filter((a): a is string => typeof a === "string") };
  }
}

/** A directory, a tar archive, or a file whose first line has `string_sequence`. */
export function isRawWikiReading(path: string): boolean {
  if (statSync(path).isDirectory() || /\.(tar|tar\.gz|tgz)$/.test(path)) return true;
  if (path.endsWith(".gz")) return !/kilt/i.test(path);
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(1 << 16);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.toString("utf8", 0, n).includes('"string_sequence"');
  } finally {
    closeSync(fd);
  }
}

/** Options of the WikiReading evaluation. */
export interface WikiReadingEvalOptions {
  /** Training data for the property classes (shard, directory or tar). */
  train?: string;
  /** A property table written by `--save-property-stats` (instead of `train`). */
  propertyStats?: string;
  /** Split each predicted answer at this string. */
  separator?: string;
  maxExamples?: number;
}

/** WikiReading Mean F1, overall and by property class (the paper's breakdowns). */
export interface WikiReadingReport {
  task: "wikireading";
  metric: "mean-f1";
  gold: string;
  guess: string;
  overall: { count: number; "mean-f1": number };
  categorical: { count: number; "mean-f1": number };
  relational: { count: number; "mean-f1": number };
  date: { count: number; "mean-f1": number };
  /** Gold properties the training file does not have (neither categorical nor relational). */
  unseen_property: { count: number; "mean-f1": number };
  /** Best Mean F1 a single-answer system can reach on this gold (the paper's 0.963 on test). */
  single_answer_bound: number;
  by_property: Record<string, Record<string, number>>;
  property_classes: { source: string; threshold: number; from_gold: boolean };
  predictions: { scored: number; missing: number; ignored: number };
}

/** The WikiReading report, the problems found, and the property table used for the classes. */
export interface WikiReadingResult {
  report: WikiReadingReport;
  problems: Problem[];
  table: PropertyTable;
}

/** Scores gold instances against predictions (by id) with the given property table. */
export async function scoreWikiReading(
  golds: AsyncIterable<WikiReadingGold> | Iterable<WikiReadingGold>,
  preds: ReadonlyMap<string, string[]>,
  table: PropertyTable,
): Promise<{ breakdown: Breakdown; bound: Tally; missing: number; seen: Set<string> }> {
  const b = new Breakdown(["class", "date", "property"]);
  const bound: Tally = { count: 0, sum: 0 };
  const seen = new Set<string>();
  let missing = 0;
  for await (const g of golds) {
    seen.add(g.id);
    const p = preds.get(g.id);
    if (!p) missing++;
    const f1 = setF1(p ?? [], g.answers);
    const st = table.properties[g.property];
    b.add(f1, { class: st ? st.class : "unseen", date: st?.date ? "date" : undefined, property: g.property });
    bound.count++;
    bound.sum += g.answers.length === 0 ? 0 : 2 / (1 + g.answers.length);
  }
  return { breakdown: b, bound, missing, seen };
}

/** Evaluates KILT predictions against WikiReading gold. */
export async function evaluateWikiReading(goldFile: string, guessFile: string, options: WikiReadingEvalOptions = {}): Promise<WikiReadingResult> {
  const problems = new Problems(options.maxExamples ?? 5);
  const preds = new Map<string, string[]>();
  const lines = new Map<string, number>();
  let ignored = 0;
  for await (const { value: r, line } of readJsonl<KiltRecord>(guessFile, {
    onError: (e: LineError) => problems.add("bad-line", "error", "input", "malformed prediction line", { file: e.file, line: e.line, detail: e.reason }),
  })) {
    if (r.id === undefined || r.id === null) {
      problems.add("no-id", "error", "input", "prediction without an id", { file: guessFile, line });
      continue;
    }
    const id = String(r.id).trim();
    if (preds.has(id)) {
      ignored++;
      problems.add("duplicate-id", "warning", "input", "second prediction for the same id (the first is scored)", { file: guessFile, line, id });
      continue;
    }
    const answers = predictedAnswers(r, options.separator);
    if (answers.length === 0) problems.add("empty-answer", "warning", "downstream", "prediction without any output answer (scored 0)", { file: guessFile, line, id });
    preds.set(id, answers);
    lines.set(id, line);
  }

  let table: PropertyTable;
  let fromGold = false;
  if (options.propertyStats) table = readPropertyTable(options.propertyStats);
  else if (options.train) table = await propertyStatsFromFile(options.train);
  else {
    const b = new PropertyStatsBuilder();
    for await (const g of wikiReadingGold(goldFile)) b.add(g.property, g.answers);
    table = b.finish(goldFile);
    fromGold = true;
    problems.add("classes-from-gold", "note", "downstream", "no --train: property classes computed on the gold file itself, not on training data as in the paper");
  }

  const { breakdown: b, bound, missing, seen } = await scoreWikiReading(wikiReadingGold(goldFile), preds, table);
  for (const [id, line] of lines)
    if (!seen.has(id)) {
      ignored++;
      problems.add("unknown-id", "warning", "input", "prediction for an id not in the gold file", { file: guessFile, line, id });
    }
  if (missing > 0) problems.add("missing", "warning", "input", `${missing} of ${b.overall.count} gold instances have no prediction (scored 0)`);
  const cls = (k: string) => {
    const t = b.dimension("class").find(([key]) => key === k)?.[1] ?? { count: 0, sum: 0 };
    return { count: t.count, "mean-f1": mean(t) };
  };
  const dateT = b.dimension("date").find(([k]) => k === "date")?.[1] ?? { count: 0, sum: 0 };
  const report: WikiReadingReport = {
    task: "wikireading",
    metric: "mean-f1",
    gold: goldFile,
    guess: guessFile,
    overall: { count: b.overall.count, "mean-f1": mean(b.overall) },
    categorical: cls("categorical"),
    relational: cls("relational"),
    date: { count: dateT.count, "mean-f1": mean(dateT) },
    unseen_property: cls("unseen"),
    single_answer_bound: mean(bound),
    by_property: tallyJson(b.dimension("property"), "mean-f1"),
    property_classes: { source: table.source, threshold: table.threshold, from_gold: fromGold },
    predictions: { scored: b.overall.count - missing, missing, ignored },
  };
  return { report, problems: problems.list(), table };
}

/** The report as an aligned table (overall, classes, date; then the 20 most frequent properties). */
export function formatWikiReadingReport(r: WikiReadingReport): string {
  const t = (x: { count: number; "mean-f1": number }): Tally => ({ count: x.count, sum: x["mean-f1"] * x.count });
  const props = Object.entries(r.by_property)
    .sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1))
    .slice(0, 20)
    .map(([k, v]) => [k, { count: v.count, sum: v["mean-f1"] * v.count }] as [string, Tally]);
  const rows: [string, Tally][] = [
    ["all", t(r.overall)],
    ["categorical", t(r.categorical)],
    ["relational", t(r.relational)],
    ["date", t(r.date)],
  ];
  if (r.unseen_property.count > 0) rows.push(["unseen property", t(r.unseen_property)]);
  const table = formatBreakdownTable("mean-f1", [
    { title: "WikiReading", rows },
    { title: "property (most frequent)", rows: props },
  ]);
  return (
    `${table}\n\n` +
    `single-answer bound ${r.single_answer_bound.toFixed(4)}; property classes from ${r.property_classes.source}${r.property_classes.from_gold ? " (the gold file: no --train)" : ""}, ` +
    `categorical below Ĥ ${r.property_classes.threshold}; ${r.predictions.scored} predictions scored, ${r.predictions.missing} missing, ${r.predictions.ignored} ignored`
  );
}
