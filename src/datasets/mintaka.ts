// Mintaka (Sen et al., COLING 2022): load the released JSON (v1.0, and v1.1's per-language answer
// labels, supportingNum and supportingEnt), count it, and turn it into KILT task records, one per
// question and language, with the Wikidata ids kept in `meta`. Layout and decisions: docs/mintaka.md.

import { readFileSync } from "node:fs";
import type { KiltRecord, Output } from "../records/types.js";
import { writeJsonl } from "../records/jsonl.js";
import { assertOutputsNotInputs } from "../util/safe-output.js";

/** Mintaka's languages: English and the eight it was translated into. */
export const MINTAKA_LANGUAGES = ["en", "ar", "de", "es", "fr", "hi", "it", "ja", "pt"] as const;
/** A Mintaka language. */
export type MintakaLanguage = (typeof MINTAKA_LANGUAGES)[number];
/** Mintaka's answer types. */
export const MINTAKA_ANSWER_TYPES = ["entity", "boolean", "numerical", "date", "string"] as const;
/** A Mintaka answer type. */
export type MintakaAnswerType = (typeof MINTAKA_ANSWER_TYPES)[number];
/** Mintaka's complexity types. */
export const MINTAKA_COMPLEXITY_TYPES = [
  "comparative", "count", "difference", "generic", "intersection", "multihop", "ordinal", "superlative", "yesno",
] as const;
/** Mintaka's eight categories. */
export const MINTAKA_CATEGORIES = ["books", "geography", "history", "movies", "music", "politics", "sports", "videogames"] as const;

/** A Wikidata entity of an answer: its Q-id and its label(s); v1.0 has an English label only. */
export interface MintakaEntity {
  id: string;
  labels: Partial<Record<MintakaLanguage, string>>;
}

/** An annotated question entity: a Q-id (entityType "entity") or a value (ordinal, date, cardinal, …). */
export interface MintakaQuestionEntity {
  name: string | number | null;
  entityType: string;
  label?: string;
  mention?: string;
  span?: [number, number];
}

/** A non-entity Mintaka answer value. */
export type MintakaValue = string | number | boolean;

/** One Mintaka question, checked and with the version differences smoothed out. */
export interface MintakaQuestion {
  id: string;
  /** The English question. */
  question: string;
  /** The 8 translations (ar, de, es, fr, hi, it, ja, pt). */
  translations: Partial<Record<MintakaLanguage, string>>;
  questionEntities: MintakaQuestionEntity[];
  answerType: MintakaAnswerType;
  /** Entity answers; null where the annotators linked none (the mention is then the answer). */
  entities: MintakaEntity[] | null;
  /** Non-entity answers: booleans, numbers, dates (ISO strings or years), strings. */
  values: MintakaValue[];
  /** The answer as the crowd worker wrote it (English). */
  mention: string;
  /** v1.0 `answerNum`: the count of a count question, or the supporting value of a superlative one. */
  answerNum?: number | string;
  /** v1.1 `supportingNum`: the number behind a superlative answer (not itself an answer). */
  supportingNum?: unknown;
  /** v1.1 `supportingEnt`: the entities counted by a count question (acceptable answers, as the paper allows). */
  supportingEnt?: MintakaEntity[];
  category: string;
  complexityType: string;
}

/** A Mintaka file that is not in the released format, with where (file, question) and why. */
export class MintakaFormatError extends Error {
  constructor(where: string, reason: string) {
    super(`${where}: ${reason}`);
    this.name = "MintakaFormatError";
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const isLang = (s: string): s is MintakaLanguage => (MINTAKA_LANGUAGES as readonly string[]).includes(s);

/** Labels as v1.0 (a string: English) or v1.1 (an object by language, values possibly null). */
function parseLabels(label: unknown, where: string): Partial<Record<MintakaLanguage, string>> {
  if (label === undefined || label === null) return {};
  if (typeof label === "string") return { en: label };
  if (!isObj(label)) throw new MintakaFormatError(where, "label is neither a string nor an object of labels by language");
  const out: Partial<Record<MintakaLanguage, string>> = {};
  for (const [k, v] of Object.entries(label)) {
    if (isLang(k) && typeof v === "string" && v.length > 0) out[k] = v;
  }
  return out;
}

function parseEntity(e: unknown, where: string): MintakaEntity {
  if (!isObj(e) || typeof e.name !== "string") throw new MintakaFormatError(where, "an answer entity needs a string `name` (a Q-id)");
  return { id: e.name, labels: parseLabels(e.label, where) };
}

function parseAnswerType(t: unknown, where: string): MintakaAnswerType {
  // The README calls it "number"; the files say "numerical".
  if (t === "number") return "numerical";
  if (typeof t === "string" && (MINTAKA_ANSWER_TYPES as readonly string[]).includes(t)) return t as MintakaAnswerType;
  throw new MintakaFormatError(where, `unknown answerType ${JSON.stringify(t)}`);
}

/** Checks one record of a Mintaka file and returns it in tartan's shape. `where` names it in errors. */
export function parseMintakaRecord(r: unknown, where: string): MintakaQuestion {
  if (!isObj(r)) throw new MintakaFormatError(where, "expected an object");
  const id = r.id;
  if (typeof id !== "string" || id.length === 0) throw new MintakaFormatError(where, "missing string `id`");
  where = `${where} (id ${id})`;
  if (typeof r.question !== "string") throw new MintakaFormatError(where, "missing string `question`");
  const translations: Partial<Record<MintakaLanguage, string>> = {};
  if (r.translations !== undefined) {
    if (!isObj(r.translations)) throw new MintakaFormatError(where, "`translations` is not an object");
    for (const [k, v] of Object.entries(r.translations)) if (isLang(k) && k !== "en" && typeof v === "string") translations[k] = v;
  }
  const questionEntities: MintakaQuestionEntity[] = [];
  if (Array.isArray(r.questionEntity)) {
    for (const e of r.questionEntity) {
      if (!isObj(e)) throw new MintakaFormatError(where, "a questionEntity is not an object");
      const qe: MintakaQuestionEntity = {
        name: typeof e.name === "string" || typeof e.name === "number" ? e.name : null,
        entityType: typeof e.entityType === "string" ? e.entityType : "entity",
      };
      if (typeof e.label === "string") qe.label = e.label;
      else if (isObj(e.label) && typeof e.label.en === "string") qe.label = e.label.en;
      if (typeof e.mention === "string") qe.mention = e.mention;
      if (Array.isArray(e.span) && e.span.length === 2 && e.span.every((x) => typeof x === "number")) qe.span = [e.span[0] as number, e.span[1] as number];
      questionEntities.push(qe);
    }
  }
  const a = r.answer;
  if (!isObj(a)) throw new MintakaFormatError(where, "missing `answer` object");
  const answerType = parseAnswerType(a.answerType, where);
  let entities: MintakaEntity[] | null = null;
  let values: MintakaValue[] = [];
  // One train record of the releases holds a bare value instead of a list.
  const payload = a.answer === null || a.answer === undefined ? null : Array.isArray(a.answer) ? a.answer : [a.answer];
  if (answerType === "entity") {
    entities = payload === null || payload.length === 0 ? null : payload.map((e, i) => parseEntity(e, `${where} answer ${i}`));
  } else if (payload !== null) {
    values = payload.map((v, i) => {
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
      throw new MintakaFormatError(`${where} answer ${i}`, `expected a string, number or boolean, found ${JSON.stringify(v)}`);
    });
  }
  const q: MintakaQuestion = {
    id,
    question: r.question,
    translations,
    questionEntities,
    answerType,
    entities,
    values,
    mention: typeof a.mention === "string" ? a.mention : a.mention === null || a.mention === undefined ? "" : String(a.mention),
    category: typeof r.category === "string" ? r.category : "",
    complexityType: typeof r.complexityType === "string" ? r.complexityType : "",
  };
  if (typeof a.answerNum === "number" || typeof a.answerNum === "string") q.answerNum = a.answerNum;
  if (a.supportingNum !== undefined && a.supportingNum !== null) q.supportingNum = a.supportingNum;
  if (Array.isArray(a.supportingEnt) && a.supportingEnt.length > 0)
    q.supportingEnt = a.supportingEnt.map((e, i) => parseEntity(e, `${where} supportingEnt ${i}`));
  return q;
}

/** Parses the text of a Mintaka file: a JSON array of records. `file` names it in errors. */
export function parseMintaka(text: string, file = "mintaka"): MintakaQuestion[] {
  let data: unknown;
  try {
    data = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    throw new MintakaFormatError(file, `invalid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!Array.isArray(data)) throw new MintakaFormatError(file, "expected a JSON array of questions");
  const seen = new Set<string>();
  return data.map((r, i) => {
    const q = parseMintakaRecord(r, `${file}: record ${i}`);
    if (seen.has(q.id)) throw new MintakaFormatError(`${file}: record ${i}`, `duplicate id ${q.id}`);
    seen.add(q.id);
    return q;
  });
}

/** Reads a Mintaka JSON file (mintaka_train.json, mintaka_dev.json, mintaka_test.json). */
export function readMintakaFile(path: string): MintakaQuestion[] {
  return parseMintaka(readFileSync(path, "utf8"), path);
}

/** The question in `lang`: the English original or its translation (undefined if the file lacks it). */
export function questionText(q: MintakaQuestion, lang: MintakaLanguage): string | undefined {
  return lang === "en" ? q.question : q.translations[lang];
}

/** Counts of a Mintaka file: questions by complexity type, category and answer type. */
export interface MintakaCounts {
  questions: number;
  complexityType: Record<string, number>;
  category: Record<string, number>;
  answerType: Record<string, number>;
  /** Entity answers the annotators could not link (`answer: null`). */
  unlinkedEntityAnswers: number;
  /** Answers with more than one entity or value. */
  multiValueAnswers: number;
}

function bump(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}

/** Counts by complexity type, category and answer type (keys sorted). */
export function mintakaCounts(questions: readonly MintakaQuestion[]): MintakaCounts {
  const c: MintakaCounts = { questions: 0, complexityType: {}, category: {}, answerType: {}, unlinkedEntityAnswers: 0, multiValueAnswers: 0 };
  for (const q of questions) {
    c.questions++;
    bump(c.complexityType, q.complexityType);
    bump(c.category, q.category);
    bump(c.answerType, q.answerType);
    if (q.answerType === "entity" && q.entities === null) c.unlinkedEntityAnswers++;
    if ((q.entities?.length ?? 0) > 1 || q.values.length > 1) c.multiValueAnswers++;
  }
  const sorted = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  c.complexityType = sorted(c.complexityType);
  c.category = sorted(c.category);
  c.answerType = sorted(c.answerType);
  return c;
}

/** Words accepted for a yes/no answer, by language (the English ones are accepted in every language). */
export const YES_NO: Record<MintakaLanguage, { yes: string[]; no: string[] }> = {
  en: { yes: ["Yes", "True"], no: ["No", "False"] },
  ar: { yes: ["نعم"], no: ["لا"] },
  de: { yes: ["Ja"], no: ["Nein"] },
  es: { yes: ["Sí", "Si"], no: ["No"] },
  fr: { yes: ["Oui"], no: ["Non"] },
  hi: { yes: ["हाँ", "हां"], no: ["नहीं"] },
  it: { yes: ["Sì", "Si"], no: ["No"] },
  ja: { yes: ["はい"], no: ["いいえ"] },
  pt: { yes: ["Sim"], no: ["Não"] },
};

/** An entity's label in `lang`, else its English label, else undefined. */
export function entityLabel(e: MintakaEntity, lang: MintakaLanguage): string | undefined {
  return e.labels[lang] ?? e.labels.en;
}

/** What counts as a correct answer to a question in one language: answer strings and Wikidata ids. */
export interface MintakaGoldAnswers {
  /** Acceptable answer strings, most canonical first, no duplicates. */
  strings: string[];
  /** Acceptable answer entities (Q-ids). */
  ids: string[];
}

function formatValue(v: MintakaValue, lang: MintakaLanguage): string[] {
  if (typeof v === "boolean") {
    const w = v ? YES_NO[lang].yes : YES_NO[lang].no;
    const en = v ? YES_NO.en.yes : YES_NO.en.no;
    return [...w, ...en];
  }
  return [String(v)];
}

/**
 * The gold answers of `q` in `lang` (docs/mintaka.md, "What counts as correct"): entity labels (the
 * language's label where v1.1 has one, and the English one) and Q-ids; values as strings, booleans as
 * the language's and English yes/no words; the worker's mention for entity, date and string answers;
 * for count questions also the count (v1.0 `answerNum`) and the counted entities (v1.1 `supportingEnt`).
 */
export function goldAnswers(q: MintakaQuestion, lang: MintakaLanguage): MintakaGoldAnswers {
  const strings: string[] = [];
  const ids: string[] = [];
  const addS = (s: string | undefined) => {
    if (s === undefined) return;
    const t = s.trim();
    if (t.length > 0 && !strings.includes(t)) strings.push(t);
  };
  const addEntity = (e: MintakaEntity) => {
    if (!ids.includes(e.id)) ids.push(e.id);
    addS(e.labels[lang]);
    addS(e.labels.en);
  };
  for (const e of q.entities ?? []) addEntity(e);
  for (const v of q.values) for (const s of formatValue(v, lang)) addS(s);
  if (q.answerType === "entity" || q.answerType === "date" || q.answerType === "string") addS(q.mention);
  if (q.complexityType === "count") {
    if (q.answerNum !== undefined) addS(String(q.answerNum));
    for (const e of q.supportingEnt ?? []) addEntity(e);
  }
  return { strings, ids };
}

/** A Mintaka language, or every language. */
export type MintakaLangOption = MintakaLanguage | "all";

/** The KILT record id of `q` in `lang`: `<mintaka id>-<lang>` (docs/mintaka.md). */
export function mintakaRecordId(mintakaId: string, lang: MintakaLanguage): string {
  return `${mintakaId}-${lang}`;
}

/** Options of {@link mintakaToKiltRecord}. */
export interface MintakaKiltOptions {
  /** Count questions: also write the counted entities as answers, after the count (`tartan eval --task mintaka --count-entities` accepts them). Default: the count only, which is what the evaluator accepts by default. */
  countEntities?: boolean;
}

/**
 * `q` in `lang` as a KILT record: `input` the question in that language, one output per acceptable
 * answer string (entity labels carry their Q-id in `output.meta.wikidata_id`), and in `meta` the
 * Mintaka id, language, category, complexity type, answer type, all answer Q-ids, the question
 * entities and the original answer fields. A count question's answer is its count alone (the counted
 * entities stay in `meta`), as `tartan eval --task mintaka` scores it; `countEntities` adds them after
 * the count. Undefined when the file has no question in that language.
 */
export function mintakaToKiltRecord(q: MintakaQuestion, lang: MintakaLanguage, options: MintakaKiltOptions = {}): KiltRecord | undefined {
  const input = questionText(q, lang);
  if (input === undefined) return undefined;
  const gold = goldAnswers(q, lang);
  const count = q.complexityType === "count" && q.answerNum !== undefined ? String(q.answerNum).trim() : undefined;
  if (count !== undefined && count.length > 0) gold.strings = options.countEntities ? [count, ...gold.strings.filter((s) => s !== count)] : [count];
  const labelIds = new Map<string, string>();
  for (const e of [...(q.entities ?? []), ...(q.complexityType === "count" ? (q.supportingEnt ?? []) : [])])
    for (const l of [e.labels[lang], e.labels.en]) if (l !== undefined && !labelIds.has(l.trim())) labelIds.set(l.trim(), e.id);
  const output: Output[] = gold.strings.map((s) => {
    const id = labelIds.get(s);
    return id === undefined ? { answer: s } : { answer: s, meta: { wikidata_id: id } };
  });
  const meta: Record<string, unknown> = {
    mintaka_id: q.id,
    language: lang,
    category: q.category,
    complexity_type: q.complexityType,
    answer_type: q.answerType,
    wikidata_ids: gold.ids,
    question_entities: q.questionEntities,
    answer_mention: q.mention,
  };
  if (q.entities) meta.answer_entities = q.entities.map((e) => ({ wikidata_id: e.id, labels: e.labels }));
  if (q.values.length > 0) meta.answer_values = q.values;
  if (q.answerNum !== undefined) meta.answer_num = q.answerNum;
  if (q.supportingNum !== undefined) meta.supporting_num = q.supportingNum;
  if (q.supportingEnt) meta.supporting_entities = q.supportingEnt.map((e) => ({ wikidata_id: e.id, labels: e.labels }));
  if (lang !== "en") meta.question_en = q.question;
  return { id: mintakaRecordId(q.id, lang), input, output, meta };
}

/** All questions as KILT records in one language, or in all nine (question by question, languages in MINTAKA_LANGUAGES order). */
export function* mintakaToKilt(questions: Iterable<MintakaQuestion>, lang: MintakaLangOption, options: MintakaKiltOptions = {}): Generator<KiltRecord> {
  const langs: readonly MintakaLanguage[] = lang === "all" ? MINTAKA_LANGUAGES : [lang];
  for (const q of questions)
    for (const l of langs) {
      const r = mintakaToKiltRecord(q, l, options);
      if (r) yield r;
    }
}

/** Parses a `--lang` value. */
export function parseMintakaLang(s: string): MintakaLangOption {
  const t = s.trim().toLowerCase();
  if (t === "all" || isLang(t)) return t as MintakaLangOption;
  throw new Error(`--lang must be one of ${MINTAKA_LANGUAGES.join(", ")} or all, got "${s}"`);
}

/** What {@link convertMintakaFile} wrote: the records, and the counts of the questions they came from. */
export interface MintakaConversion {
  records: number;
  counts: MintakaCounts;
}

/**
 * `tartan datasets convert mintaka`: a Mintaka JSON file to KILT records in `out` (.gz to compress),
 * written atomically; an `out` that is the input is refused first.
 */
export async function convertMintakaFile(file: string, out: string, options: MintakaKiltOptions & { lang?: MintakaLangOption } = {}): Promise<MintakaConversion> {
  assertOutputsNotInputs([out], [file]);
  const questions = readMintakaFile(file);
  const records = await writeJsonl(out, mintakaToKilt(questions, options.lang ?? "en", options));
  return { records, counts: mintakaCounts(questions) };
}
