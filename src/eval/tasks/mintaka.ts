// `tartan eval --task mintaka`: hits@1 as the Mintaka paper defines it — an entity answer is right
// when the prediction's Wikidata id is one of the gold ids (or, for a prediction without an id, its
// normalized label one of the gold labels); any other answer when its normalized string is a gold
// string — overall and by complexity type, category, answer type and language. Gold: the Mintaka
// JSON itself or KILT records made by `tartan datasets convert mintaka`. Formats: docs/mintaka.md.

import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import {
  MINTAKA_ANSWER_TYPES,
  MINTAKA_CATEGORIES,
  MINTAKA_COMPLEXITY_TYPES,
  MINTAKA_LANGUAGES,
  goldAnswers,
  mintakaRecordId,
  parseMintaka,
  type MintakaLanguage,
} from "../../datasets/mintaka.js";
import { readJsonl, LineError } from "../../records/jsonl.js";
import type { KiltRecord } from "../../records/types.js";
import { Problems, type Problem } from "../problems.js";
import { Breakdown, formatBreakdownTable, mean, tallyJson } from "./breakdown.js";
import { normalizeMultilingual } from "./normalize-multilingual.js";

/** One gold question in one language, ready to score. */
export interface MintakaGoldItem {
  /** KILT record id: `<mintaka id>-<lang>`. */
  key: string;
  mintakaId: string;
  language: MintakaLanguage;
  category: string;
  complexityType: string;
  answerType: string;
  strings: string[];
  ids: string[];
  /** The gold strings normalized in `language` (empty ones left out). */
  normalized: Set<string>;
  /** Count questions: the count (v1.0 `answerNum`), normalized: the answer, a number (see {@link mintakaHit}). */
  count?: string;
}

/** A top-1 prediction: its answer string and the Q-ids it names (if any). */
export interface MintakaPrediction {
  answer: string;
  ids: string[];
}

/** How a Mintaka prediction is compared with the gold answer. */
export type MintakaMatch = "exact" | "contains";

/** Options of the Mintaka evaluation. */
export interface MintakaEvalOptions {
  /** Languages to score: one, "all", or undefined (a Mintaka JSON gold: the languages the prediction ids name, else English; KILT gold: every record). */
  lang?: MintakaLanguage | "all";
  /** `exact` (default): normalized strings equal. `contains`: the gold's normalized words appear in order inside the prediction's (evaluate.py's text mode). */
  match?: MintakaMatch;
  /** Count questions also accept the counted entities (the paper's appendix D, Table 9); default: only the count. */
  countEntities?: boolean;
  maxExamples?: number;
}

const QID_RE = /^Q[1-9][0-9]*$/;

function goldItem(
  key: string,
  mintakaId: string,
  language: MintakaLanguage,
  category: string,
  complexityType: string,
  answerType: string,
  strings: string[],
  ids: string[],
  answerNum?: unknown,
): MintakaGoldItem {
  const normalized = new Set<string>();
  for (const s of strings) {
    const n = normalizeMultilingual(s, language);
    if (n.length > 0) normalized.add(n);
  }
  const item: MintakaGoldItem = { key, mintakaId, language, category, complexityType, answerType, strings, ids, normalized };
  if (complexityType === "count" && (typeof answerNum === "number" || typeof answerNum === "string")) {
    const n = normalizeMultilingual(String(answerNum), language);
    if (n.length > 0) item.count = n;
  }
  return item;
}

/** Gold items from a Mintaka JSON file for the given languages. */
export function mintakaGoldFromJson(text: string, file: string, langs: readonly MintakaLanguage[]): MintakaGoldItem[] {
  const out: MintakaGoldItem[] = [];
  for (const q of parseMintaka(text, file))
    for (const l of langs) {
      const g = goldAnswers(q, l);
      out.push(goldItem(mintakaRecordId(q.id, l), q.id, l, q.category, q.complexityType, q.answerType, g.strings, g.ids, q.answerNum));
    }
  return out;
}

const isLang = (s: unknown): s is MintakaLanguage => typeof s === "string" && (MINTAKA_LANGUAGES as readonly string[]).includes(s);

/** A gold item from a KILT record written by `tartan datasets convert mintaka` (its `meta` carries the breakdown keys). */
export function mintakaGoldFromKilt(r: KiltRecord, where: string): MintakaGoldItem {
  const m = r.meta ?? {};
  if (!isLang(m.language) || typeof m.mintaka_id !== "string")
    throw new Error(`${where}: not a Mintaka KILT record (meta.language and meta.mintaka_id missing): convert with tartan datasets convert mintaka`);
  const strings: string[] = [];
  const ids: string[] = [];
  for (const o of r.output ?? []) {
    if (typeof o.answer === "string" && o.answer.trim().length > 0) strings.push(o.answer.trim());
    const id = o.meta?.wikidata_id;
    if (typeof id === "string" && !ids.includes(id)) ids.push(id);
  }
  if (Array.isArray(m.wikidata_ids)) for (const id of m.wikidata_ids) if (typeof id === "string" && !ids.includes(id)) ids.push(id);
  // A count question's record answers the count only; the counted entities (for --count-entities) are in meta.
  if (m.complexity_type === "count")
    for (const list of [m.answer_entities, m.supporting_entities])
      if (Array.isArray(list))
        for (const e of list as { labels?: Record<string, unknown> }[])
          for (const l of [e?.labels?.[m.language], e?.labels?.en]) if (typeof l === "string" && l.trim().length > 0 && !strings.includes(l.trim())) strings.push(l.trim());
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  return goldItem(String(r.id), m.mintaka_id, m.language, str(m.category), str(m.complexity_type), str(m.answer_type), strings, ids, m.answer_num);
}

/** The Q-ids a guess names for its top answer: `output[0].meta.wikidata_id` (a string or a list), else `meta.wikidata_id` of the record. */
export function predictionIds(r: KiltRecord): unknown[] {
  const o = r.output?.[0];
  const v = o?.meta?.wikidata_id ?? r.meta?.wikidata_id;
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

/**
 * Is the top-1 prediction right? `route` says how it was judged. A count question ("How many …?") is
 * answered by a number: the prediction is right when it is the count (compared as normalized numbers,
 * "6", "６", "6.0"); a counted entity is not the answer. `countEntities` also accepts the counted
 * entities, as the paper's appendix D does for its per-type breakdown of knowledge-graph models (Table 9).
 */
export function mintakaHit(
  pred: MintakaPrediction | undefined,
  gold: MintakaGoldItem,
  match: MintakaMatch = "exact",
  countEntities = false,
): { hit: 0 | 1; route: "wikidata_id" | "string" | "none" } {
  if (!pred) return { hit: 0, route: "none" };
  if (gold.count !== undefined && !countEntities) {
    const p = normalizeMultilingual(pred.answer, gold.language);
    return { hit: p === gold.count ? 1 : 0, route: "string" };
  }
  if (pred.ids.length > 0 && gold.ids.length > 0) return { hit: pred.ids.some((id) => gold.ids.includes(id)) ? 1 : 0, route: "wikidata_id" };
  const p = normalizeMultilingual(pred.answer, gold.language);
  if (p.length === 0) return { hit: 0, route: "string" };
  if (match === "exact") return { hit: gold.normalized.has(p) ? 1 : 0, route: "string" };
  const joined = gold.language === "ja";
  for (const g of gold.normalized) {
    if (joined ? p.includes(g) : ` ${p} `.includes(` ${g} `)) return { hit: 1, route: "string" };
  }
  return { hit: 0, route: "string" };
}

/** Mintaka hits@1, overall and by language, complexity type, category and answer type (the paper's breakdowns). */
export interface MintakaReport {
  task: "mintaka";
  metric: "hits@1";
  match: MintakaMatch;
  gold: string;
  guess: string;
  languages: MintakaLanguage[];
  overall: { count: number; hits: number; "hits@1": number };
  by_complexity_type: Record<string, Record<string, number>>;
  by_category: Record<string, Record<string, number>>;
  by_answer_type: Record<string, Record<string, number>>;
  by_language: Record<string, Record<string, number>>;
  /** How the scored predictions were judged. */
  judged_by: { wikidata_id: number; string: number };
  predictions: { scored: number; missing: number; ignored: number };
}

/** The Mintaka report and the problems found in the files. */
export interface MintakaResult {
  report: MintakaReport;
  problems: Problem[];
}

/** Scores `preds` (by gold key) against `golds`. Missing predictions score 0, as in evaluate.py. */
export function scoreMintaka(
  golds: readonly MintakaGoldItem[],
  preds: ReadonlyMap<string, MintakaPrediction>,
  match: MintakaMatch = "exact",
  countEntities = false,
): Pick<MintakaReport, "overall" | "by_complexity_type" | "by_category" | "by_answer_type" | "by_language" | "judged_by"> & { missing: number } {
  const b = new Breakdown(["complexity_type", "category", "answer_type", "language"]);
  const judged = { wikidata_id: 0, string: 0 };
  let missing = 0;
  for (const g of golds) {
    const p = preds.get(g.key);
    if (!p) missing++;
    const { hit, route } = mintakaHit(p, g, match, countEntities);
    if (route !== "none") judged[route]++;
    b.add(hit, { complexity_type: g.complexityType, category: g.category, answer_type: g.answerType, language: g.language });
  }
  return {
    overall: { count: b.overall.count, hits: b.overall.sum, "hits@1": mean(b.overall) },
    by_complexity_type: tallyJson(b.dimension("complexity_type", MINTAKA_COMPLEXITY_TYPES), "hits@1", "hits"),
    by_category: tallyJson(b.dimension("category", MINTAKA_CATEGORIES), "hits@1", "hits"),
    by_answer_type: tallyJson(b.dimension("answer_type", MINTAKA_ANSWER_TYPES), "hits@1", "hits"),
    by_language: tallyJson(b.dimension("language", MINTAKA_LANGUAGES), "hits@1", "hits"),
    judged_by: judged,
    missing,
  };
}

/** Does the file start (after a BOM and blanks) with `[`: a Mintaka JSON array rather than JSONL? */
function looksLikeJsonArray(file: string): boolean {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.toString("utf8", 0, n).replace(/^\ufeff/, "").trimStart().startsWith("[");
  } finally {
    closeSync(fd);
  }
}

/** Evaluates a prediction file (KILT JSONL) against Mintaka gold (the Mintaka JSON, or converted KILT records). */
export async function evaluateMintaka(goldFile: string, guessFile: string, options: MintakaEvalOptions = {}): Promise<MintakaResult> {
  const problems = new Problems(options.maxExamples ?? 5);
  const match = options.match ?? "exact";

  // Predictions first: with a Mintaka JSON gold and no --lang, their ids say which languages to score.
  interface RawGuess {
    id: string;
    line: number;
    pred: MintakaPrediction;
  }
  const guesses: RawGuess[] = [];
  for await (const { value: r, line } of readJsonl<KiltRecord>(guessFile, {
    onError: (e: LineError) => problems.add("bad-line", "error", "input", "malformed prediction line", { file: e.file, line: e.line, detail: e.reason }),
  })) {
    if (r.id === undefined || r.id === null) {
      problems.add("no-id", "error", "input", "prediction without an id", { file: guessFile, line });
      continue;
    }
    const id = String(r.id).trim();
    const answer = typeof r.output?.[0]?.answer === "string" ? r.output[0].answer.trim() : "";
    if (answer.length === 0) problems.add("empty-answer", "warning", "downstream", "prediction without output[0].answer (scored by its Wikidata id only, if any)", { file: guessFile, line, id });
    const ids: string[] = [];
    for (const v of predictionIds(r)) {
      if (typeof v === "string" && QID_RE.test(v.trim())) ids.push(v.trim());
      else problems.add("bad-qid", "warning", "downstream", "not a Wikidata item id (Q<digits>), ignored", { file: guessFile, line, id, detail: JSON.stringify(v) });
    }
    if (ids.length === 0 && r.output?.[0]?.provenance?.some((p) => p.wikidata_id !== undefined || p.meta?.wikidata_id !== undefined))
      problems.add("provenance-qid", "note", "downstream", "provenance wikidata_id is evidence, not the answer: not used (put the answer's id in output[0].meta.wikidata_id)", { file: guessFile, line, id });
    guesses.push({ id, line, pred: { answer, ids } });
  }

  let golds: MintakaGoldItem[];
  let languages: MintakaLanguage[];
  if (looksLikeJsonArray(goldFile)) {
    if (options.lang === "all") languages = [...MINTAKA_LANGUAGES];
    else if (options.lang) languages = [options.lang];
    else {
      const found = new Set<MintakaLanguage>();
      for (const g of guesses) {
        const m = /-([a-z]{2})$/.exec(g.id);
        if (m && isLang(m[1])) found.add(m[1]);
      }
      languages = found.size > 0 ? MINTAKA_LANGUAGES.filter((l) => found.has(l)) : ["en"];
    }
    golds = mintakaGoldFromJson(readFileSync(goldFile, "utf8"), goldFile, languages);
  } else {
    golds = [];
    for await (const { value, line } of readJsonl<KiltRecord>(goldFile)) {
      const g = mintakaGoldFromKilt(value, `${goldFile}:${line}`);
      if (options.lang === undefined || options.lang === "all" || options.lang === g.language) golds.push(g);
    }
    languages = MINTAKA_LANGUAGES.filter((l) => golds.some((g) => g.language === l));
  }

  const byKey = new Map(golds.map((g) => [g.key, g]));
  const preds = new Map<string, MintakaPrediction>();
  let ignored = 0;
  for (const g of guesses) {
    let key = g.id;
    if (!byKey.has(key) && languages.length === 1) key = mintakaRecordId(g.id, languages[0]);
    if (!byKey.has(key)) {
      ignored++;
      problems.add("unknown-id", "warning", "input", "prediction for an id not in the gold (or a language not scored)", { file: guessFile, line: g.line, id: g.id });
      continue;
    }
    if (preds.has(key)) {
      ignored++;
      problems.add("duplicate-id", "warning", "input", "second prediction for the same question and language (the first is scored)", { file: guessFile, line: g.line, id: g.id });
      continue;
    }
    preds.set(key, g.pred);
  }
  const s = scoreMintaka(golds, preds, match, options.countEntities === true);
  if (s.missing > 0)
    problems.add("missing", "warning", "input", `${s.missing} of ${golds.length} gold questions have no prediction (scored 0, as evaluate.py does)`);
  const report: MintakaReport = {
    task: "mintaka",
    metric: "hits@1",
    match,
    gold: goldFile,
    guess: guessFile,
    languages,
    overall: s.overall,
    by_complexity_type: s.by_complexity_type,
    by_category: s.by_category,
    by_answer_type: s.by_answer_type,
    by_language: s.by_language,
    judged_by: s.judged_by,
    predictions: { scored: preds.size, missing: s.missing, ignored },
  };
  return { report, problems: problems.list() };
}

/** The report as aligned text tables. */
export function formatMintakaReport(r: MintakaReport): string {
  const rows = (o: Record<string, Record<string, number>>) =>
    Object.entries(o).map(([k, v]) => [k, { count: v.count, sum: v.hits }] as [string, { count: number; sum: number }]);
  const table = formatBreakdownTable("hits@1", [
    { title: "overall", rows: [["all", { count: r.overall.count, sum: r.overall.hits }]] },
    { title: "complexity type", rows: rows(r.by_complexity_type) },
    { title: "category", rows: rows(r.by_category) },
    { title: "answer type", rows: rows(r.by_answer_type) },
    { title: "language", rows: rows(r.by_language) },
  ]);
  return (
    `${table}\n\n` +
    `${r.overall.count} questions (${r.languages.join(", ")}); ${r.predictions.scored} predictions scored, ${r.predictions.missing} missing, ${r.predictions.ignored} ignored; ` +
    `judged by Wikidata id ${r.judged_by.wikidata_id}, by string ${r.judged_by.string} (match: ${r.match})`
  );
}
