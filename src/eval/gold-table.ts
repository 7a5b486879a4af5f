// The evaluator's gold table: each gold record reduced, as it is read, to what scoring needs (its
// key, line, distinct stripped answers, normalized titles, entity_in_input, provenance in the compact
// GoldProvenance store), with the problems that make a record unusable reported by file, line and id.

import { pyStrip } from "../records/python-str.js";
import { Kind, type PyValue } from "./json-scanner.js";
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

/**
 * The gold records reduced to what scoring needs, in flat arrays indexed by record number (no object
 * per record: they would all survive to the old generation, copied by each young-generation collection).
 */
export class GoldTable {
  readonly keys: string[] = [];
  readonly lines: number[] = [];
  /** Distinct stripped answers of record i: `answers[answerAt[i] .. answerAt[i + 1])` (normalized when scored). */
  readonly answers: string[] = [];
  readonly answerAt: number[] = [0];
  /** Normalized distinct titles (eval_retrieval only), the same way. */
  readonly titles: string[] = [];
  readonly titleAt: number[] = [0];
  readonly entityInInput: number[] = [];
  readonly hasInput: boolean[] = [];
  readonly outputCount: number[] = [];
  /** Offsets of the record's provenance in the GoldProvenance store: page level and rank-key level. */
  readonly pageAt: number[] = [];
  readonly rankAt: number[] = [];
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
  answersOf(i: number): string[] {
    return this.answers.slice(this.answerAt[i], this.answerAt[i + 1]);
  }
  titlesOf(i: number): string[] {
    return this.titles.slice(this.titleAt[i], this.titleAt[i + 1]);
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
    // Titles and the input are read by eval_retrieval only (entity_in_input, entity_in_context).
    if (wantRet) for (let i = titlesFrom; i < allTitles.length; i++) allTitles[i] = normalizeAnswer(allTitles[i]);
    const hasInput = rec.hasInput;
    let entityInInput = 0;
    if (hasInput) {
      if (checks.composite(rec.input, "input", idPlace)) return refuse();
      if (rec.input!.kind !== Kind.Str)
        problems.add(
          "gold-input-not-string",
          "warning",
          "input",
          "gold input is not a string; used as str() of it (the official code raises AttributeError)",
          idPlace,
        );
      if (wantRet) {
        const input = normalizeAnswer(rec.input!.str);
        for (let i = titlesFrom; i < allTitles.length; i++)
          if (input.includes(allTitles[i])) {
            entityInInput = 1;
            break;
          }
      }
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
    this.answerAt.push(answers.length);
    this.titleAt.push(allTitles.length);
    this.entityInInput.push(entityInInput);
    this.hasInput.push(hasInput);
    this.outputCount.push(outputs.length);
    this.pageAt.push(pageAt);
    // Rank-key provenance is read by eval_retrieval only (eval_downstream is page level).
    this.rankAt.push(this.pageLevel ? pageAt : wantRet ? this.prov.add(outputs, this.rankKey) : -1);
  }
}
