// The evaluator's gold table: each gold record reduced, as it is read, to what scoring needs (its
// key, line, distinct stripped answers, distinct titles, entity_in_input,
// provenance in the compact GoldProvenance store, the context metrics' needles), with the problems that
// make a record unusable reported by file, line and id.

import { pyStrip } from "../records/python-str.js";
import { Kind, type PyValue } from "./json-scanner.js";
import { NeedleStore, type Needles } from "./needles.js";
import { normalizeAnswer } from "./normalize.js";
import type { Problems, ProblemPlace } from "./problems.js";
import { GoldProvenance } from "./provenance.js";
import type { RecordChecks } from "./record-checks.js";
import type { RecordView, ScanSpec } from "./scan.js";

/** Provenance keys of the page level (eval_downstream's retrieval block, the default rank keys). */
export const PAGE_KEYS = ["wikipedia_id"];

export function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

const NO_ID = { code: "gold-no-id", message: "gold record has no id" };

/** Adds the stripped text of `v` to `list` from `from` on, unless empty or already there (few per record: a linear scan). */
function addDistinct(list: string[], from: number, text: string): void {
  const t = pyStrip(text);
  if (t.length === 0) return;
  for (let i = from; i < list.length; i++) if (list[i] === t) return;
  list.push(t);
}

/** What the gold table is built for. */
export interface GoldTableOptions {
  /** The file's name in problems. */
  name: string;
  rankKeys: readonly string[];
  /** eval_retrieval runs: titles and the input are decoded and normalized, rank-key provenance kept. */
  wantRet: boolean;
}

/** The fields of a record's row in `GoldTable.rows`. */
const PAGE_AT = 0;
const RANK_AT = 1;
const OUTPUTS = 2;
const ENTITY_IN_INPUT = 3;
const NEEDLE_AT = 4;
const ANSWER_AT = 5;
const ANSWERS = 6;
const TITLES = 7;
const ROW = 8;

/**
 * The gold records reduced to what scoring needs, in flat arrays indexed by record number (no object
 * per record: they would all survive to the old generation, copied by each young-generation
 * collection). What a prediction's scoring reads of its record is one row of int32 values (`rows`):
 * predictions come in any order, so one place in memory per record, not one per field.
 */
export class GoldTable {
  readonly keys: string[] = [];
  readonly lines: number[] = [];
  /** Distinct stripped answers, record after record (`answerAt`, `answerCount`). */
  readonly answers: string[] = [];
  /** Distinct stripped titles (eval_retrieval only) of record i: `titles[titleAt[i] .. titleAt[i + 1])`. */
  readonly titles: string[] = [];
  readonly titleAt: number[] = [0];
  /**
   * eval_retrieval: record i's normalized titles, then answers, as the context matcher's needles from
   * its first needle (-1 when one holds a lone surrogate: the record is then matched as strings).
   */
  readonly needles = new NeedleStore();
  readonly hasInput: boolean[] = [];
  /**
   * Per record, `ROW` int32 values: the offsets of its provenance in the GoldProvenance store (page level,
   * rank-key level), its number of outputs, entity_in_input, its first needle, its first answer and
   * number of answers, its number of titles.
   */
  private rows = new Int32Array(ROW * 1024);
  /** Record number by stripped id. */
  readonly index = new Map<string, number>();
  readonly prov = new GoldProvenance();
  /** How gold lines are scanned: the rank keys, the page id, the title and bleu_score (`provKeys`). */
  readonly spec: ScanSpec;
  /** Index of bleu_score in `spec.provKeys` (KILT's mapping writes it on gold evidence; predictions lack it). */
  readonly bleuKey: number;
  private readonly rankKey: number[];
  private readonly pageKey: number[];
  private readonly titleKey: number;
  private readonly pageLevel: boolean;

  constructor(
    private readonly options: GoldTableOptions,
    private readonly problems: Problems,
    private readonly checks: RecordChecks,
  ) {
    const { rankKeys, wantRet } = options;
    const provKeys = [...new Set([...rankKeys, "wikipedia_id", "title", "bleu_score"])];
    // Views are consumed in `add` (reduced to strings), so provenance entries are recycled.
    // Without eval_retrieval, gold titles and the input are only checked for their type, never decoded.
    this.spec = {
      provKeys,
      texts: false,
      reuse: true,
      kindOnly: wantRet ? [] : ["input", ...(rankKeys.includes("title") ? [] : ["title"])],
    };
    this.rankKey = rankKeys.map((k) => provKeys.indexOf(k));
    this.pageKey = [provKeys.indexOf("wikipedia_id")];
    this.titleKey = provKeys.indexOf("title");
    this.bleuKey = provKeys.indexOf("bleu_score");
    this.pageLevel = sameKeys(rankKeys, PAGE_KEYS);
  }

  /** The gold file's name in problems. */
  get name(): string {
    return this.options.name;
  }
  get length(): number {
    return this.keys.length;
  }
  /** Offset of record i's page-level provenance in `prov`. */
  pageAt(i: number): number {
    return this.rows[ROW * i + PAGE_AT];
  }
  /** Offset of record i's rank-key provenance in `prov` (-1 without eval_retrieval). */
  rankAt(i: number): number {
    return this.rows[ROW * i + RANK_AT];
  }
  outputCount(i: number): number {
    return this.rows[ROW * i + OUTPUTS];
  }
  /** entity_in_input of record i (eval_retrieval). */
  entityInInput(i: number): number {
    return this.rows[ROW * i + ENTITY_IN_INPUT];
  }
  /** Record i's answers are `answers[answerAt(i), answerAt(i) + answerCount(i))`. */
  answerAt(i: number): number {
    return this.rows[ROW * i + ANSWER_AT];
  }
  answerCount(i: number): number {
    return this.rows[ROW * i + ANSWERS];
  }
  /** `normalize_answer` of record i's answers. */
  normalizedAnswersOf(i: number): string[] {
    const r: string[] = [];
    for (let k = this.answerAt(i); k < this.answerAt(i) + this.answerCount(i); k++) r.push(normalizeAnswer(this.answers[k]));
    return r;
  }
  /** `normalize_answer` of record i's titles. */
  normalizedTitlesOf(i: number): string[] {
    return this.titles.slice(this.titleAt[i], this.titleAt[i + 1]).map(normalizeAnswer);
  }
  /** Points `into` at record i's needles; false when it has none (a lone surrogate: match its strings). */
  needlesOf(i: number, into: Needles): boolean {
    const row = ROW * i;
    const first = this.rows[row + NEEDLE_AT];
    if (first < 0) return false;
    into.store = this.needles;
    into.first = first;
    into.titles = this.rows[row + TITLES];
    into.answers = this.rows[row + ANSWERS];
    return true;
  }

  /**
   * A gold answer or title (truthy): false after reporting a list or object; a non-string is used as
   * Python str() of it, with a warning; the stripped text, when not empty, goes into `into`.
   */
  private text(v: PyValue, what: "answer" | "title", into: string[] | null, from: number, place: ProblemPlace): boolean {
    if (this.checks.composite(v, what, place)) return false;
    if (v.kind !== Kind.Str)
      this.problems.add(
        `gold-${what}-not-string`,
        "warning",
        what === "answer" ? "downstream" : "input",
        `gold ${what === "answer" ? "answer" : "provenance title"} is not a string; used as Python str() of it (the official code raises AttributeError)`,
        place,
      );
    if (into !== null) addDistinct(into, from, v.str);
    return true;
  }

  /** The normalized input of the record being added, as a needle store's only needle. */
  private readonly input = new NeedleStore();

  /**
   * entity_in_input: 1 when `normalize_answer(input)` holds one of the record's normalized titles
   * `titles[from, to)` (the needles from `needleAt`; compared as strings where there is a lone surrogate).
   */
  private inputHoldsTitle(text: string, needleAt: number, from: number, to: number): number {
    const input = this.input;
    input.truncate(0);
    if (needleAt >= 0 && input.add(text, false)) {
      for (let k = needleAt; k < needleAt + to - from; k++) if (input.holds(0, this.needles, k)) return 1;
      return 0;
    }
    const s = normalizeAnswer(text);
    for (let i = from; i < to; i++) if (s.includes(normalizeAnswer(this.titles[i]))) return 1;
    return 0;
  }

  /** Adds one gold record (the view is read during the call only), or reports why it cannot be used. */
  add(rec: RecordView, line: number): void {
    const { problems, checks } = this;
    const { name: goldName, wantRet } = this.options;
    const key = checks.id(rec, goldName, line, NO_ID);
    if (key === null) return;
    const idPlace = { file: goldName, line, id: key };
    if (!rec.outputList) {
      problems.add("gold-bad-output", "error", "input", "gold record's output is not a list", idPlace);
      return;
    }
    const firstAt = this.index.get(key);
    if (firstAt !== undefined) {
      problems.add("gold-duplicate-id", "error", "input", `gold ids must be unique (first seen on line ${this.lines[firstAt]})`, idPlace);
      return;
    }
    const outputs = rec.outputs;
    // Answers and (for eval_retrieval) titles go straight into the shared lists; dropped again if the record is refused.
    const answers = this.answers;
    const answersFrom = answers.length;
    const allTitles = this.titles;
    const titles = wantRet ? allTitles : null;
    const titlesFrom = allTitles.length;
    const refuse = () => {
      answers.length = answersFrom;
      allTitles.length = titlesFrom;
    };
    for (const o of outputs) {
      if (!o.object) {
        problems.add("gold-bad-output-item", "error", "input", "gold output item is not an object", idPlace);
        return refuse();
      }
      if (checks.badProvenance(o, idPlace)) return refuse();
      const a = o.answer;
      if (o.hasAnswer && a !== undefined && !a.falsy && !this.text(a, "answer", answers, answersFrom, idPlace)) return refuse();
      for (const p of o.provenance) {
        const t = p.vals[this.titleKey];
        if (t !== undefined && !t.falsy && !this.text(t, "title", titles, titlesFrom, idPlace)) return refuse();
      }
    }
    if (rec.compositeVals && checks.compositeKeys(outputs, idPlace)) return refuse();
    // Titles and the input are read by eval_retrieval only (entity_in_input, entity_in_context): the
    // needles are the normalized titles, then the normalized answers.
    const needles = this.needles;
    let needleAt = -1;
    if (wantRet) {
      needleAt = needles.count;
      let utf8 = true;
      for (let i = titlesFrom; i < allTitles.length && utf8; i++) utf8 = needles.add(allTitles[i], false);
      for (let i = answersFrom; i < answers.length && utf8; i++) utf8 = needles.add(answers[i], false);
      if (!utf8) {
        needles.truncate(needleAt);
        needleAt = -1;
      }
    }
    const hasInput = rec.hasInput;
    let entityInInput = 0;
    if (hasInput) {
      if (checks.composite(rec.input, "input", idPlace)) {
        if (needleAt >= 0) needles.truncate(needleAt);
        return refuse();
      }
      if (rec.input!.kind !== Kind.Str)
        problems.add(
          "gold-input-not-string",
          "warning",
          "input",
          "gold input is not a string; used as str() of it (the official code raises AttributeError)",
          idPlace,
        );
      if (wantRet && titlesFrom < allTitles.length) entityInInput = this.inputHoldsTitle(rec.input!.str, needleAt, titlesFrom, allTitles.length);
    } else {
      problems.add(
        "gold-no-input",
        "warning",
        "input",
        "gold record has no input: entity_in_input is left out (the official code raises KeyError: 'input')",
        idPlace,
      );
    }
    const pageAt = this.prov.add(outputs, this.pageKey);
    this.index.set(key, this.length);
    this.keys.push(key);
    this.lines.push(line);
    this.titleAt.push(allTitles.length);
    this.hasInput.push(hasInput);
    if (this.rows.length < ROW * this.keys.length) {
      const bigger = new Int32Array(2 * this.rows.length);
      bigger.set(this.rows);
      this.rows = bigger;
    }
    const row = ROW * (this.keys.length - 1);
    const rows = this.rows;
    rows[row + PAGE_AT] = pageAt;
    // Rank-key provenance is read by eval_retrieval only (eval_downstream is page level).
    rows[row + RANK_AT] = this.pageLevel ? pageAt : wantRet ? this.prov.add(outputs, this.rankKey) : -1;
    rows[row + OUTPUTS] = outputs.length;
    rows[row + ENTITY_IN_INPUT] = entityInInput;
    rows[row + NEEDLE_AT] = needleAt;
    rows[row + ANSWER_AT] = answersFrom;
    rows[row + ANSWERS] = answers.length - answersFrom;
    rows[row + TITLES] = allTitles.length - titlesFrom;
  }
}
