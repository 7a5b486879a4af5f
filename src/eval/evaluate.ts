// The KILT evaluator: everything `kilt.eval_downstream.evaluate` and `kilt.eval_retrieval.evaluate`
// compute, bit for bit, in one streaming pass over the guesses. Gold records are prepared once
// (answers normalized, id lists and evidence sets built); each guess is scored the moment it is
// read and dropped; per-datapoint scores are summed in gold order at the end, as the official code
// does, so the floating-point results are identical. Where the official code crashes, the problem
// is reported with file, line and id instead (docs/eval.md lists each case).

import { NESTING_REASON, OBJECTS_REASON } from "../records/record-limits.js";
import { invalidUtf8At, parseJsonObject, type ScanStats } from "../records/jsonl.js";
import { forEachLine } from "./lines.js";
import { pyStrip } from "../records/python-str.js";
import type { KiltRecord } from "../records/types.js";
import { AnswerScorer } from "./answers.js";
import { normalizeAnswer } from "./normalize.js";
import { Problems, type Problem, type ProblemPlace } from "./problems.js";
import { ContextMatcher, GoldProvenance } from "./provenance.js";
import { Kind, scanFailure, scanRecord, scanSawNonAscii, viewOfValue, type OutputView, type ProvEntry, type PyValue, type RecordView, type ScanSpec } from "./scan.js";
import { RougeScorer } from "./rouge.js";

/** Which evaluators run: both, `eval_downstream` only, or `eval_retrieval` only. */
export type EvalMode = "all" | "downstream" | "retrieval";

/** Options of {@link evaluate}. */
export interface EvalOptions {
  /** Cut-offs for the retrieval metrics; default [1, 5, 10, 20] as the official CLI. */
  ks?: number[];
  /** Provenance keys that identify a retrieved unit; default ["wikipedia_id"] (page level). */
  rankKeys?: string[];
  /** Which evaluator(s) to run; default both. */
  mode?: EvalMode;
  /** Evaluate only the gold records that have a prediction (the official code raises on a missing one). */
  onlyPredicted?: boolean;
  /** Places shown per problem kind; default 5. */
  maxExamples?: number;
  /** Called as the prediction file is read: records scored so far and bytes read (for a progress line). */
  onProgress?: (records: number, bytes: number) => void;
  /**
   * Called once per evaluated gold record, in gold-file order, after the summary is computed: the
   * record's own scores under the summary's keys. The mean of each value over the rows is the summary's.
   */
  perQuery?: (row: PerQueryRow) => void;
}

/**
 * One gold record's scores: each section holds the same keys, in the same order, as the summary
 * section of that name (null where the summary is null). `eval_downstream.retrieval` is page level
 * with k = 5, as the official code computes it; `eval_retrieval` uses the run's ks and rank keys.
 */
export interface PerQueryRow {
  id: string;
  eval_downstream: DownstreamResult | null;
  eval_retrieval: RetrievalResult | null;
}

/** `kilt.eval_downstream.evaluate`'s result. */
export interface DownstreamResult {
  kilt: { "KILT-accuracy": number; "KILT-em": number; "KILT-f1": number; "KILT-rougel": number };
  downstream: { accuracy: number; em: number; f1: number; rougel: number };
  retrieval: { Rprec: number; "recall@5": number };
}

/** `kilt.eval_retrieval.evaluate`'s result: keys in the official order. */
export type RetrievalResult = Record<string, number>;

/** What {@link evaluate} computed: the official sections (or null), the problems noticed and the counts. */
export interface EvalResult {
  /** Null when the downstream evaluation could not be done (see `problems`) or was not asked for. */
  eval_downstream: DownstreamResult | null;
  /** Null when the retrieval evaluation could not be done or was not asked for. */
  eval_retrieval: RetrievalResult | null;
  /** Everything noticed, grouped by kind; errors explain a null section. */
  problems: Problem[];
  counts: {
    goldRecords: number;
    guessRecords: number;
    /** Gold records scored (the denominator of every metric). */
    evaluated: number;
    extraGuesses: number;
  };
  options: { ks: number[]; rankKeys: string[]; mode: EvalMode };
}

/**
 * The gold records reduced to what scoring needs, in flat arrays indexed by record number (no object
 * per record: they would all survive to the old generation, copied by each young-generation collection).
 */
class GoldTable {
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
  get length(): number {
    return this.keys.length;
  }
  answersOf(i: number): string[] {
    return this.answers.slice(this.answerAt[i], this.answerAt[i + 1]);
  }
  titlesOf(i: number): string[] {
    return this.titles.slice(this.titleAt[i], this.titleAt[i + 1]);
  }
}

/** Adds the stripped text of `v` to `list` from `from` on, unless empty or already there (few per record: a linear scan). */
function addDistinct(list: string[], from: number, text: string): void {
  const t = pyStrip(text);
  if (t.length === 0) return;
  for (let i = from; i < list.length; i++) if (list[i] === t) return;
  list.push(t);
}

const PAGE_KEYS = ["wikipedia_id"];

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** A source of records: a JSONL path, or records in memory. */
export type RecordSource = string | readonly KiltRecord[];

interface Column {
  name: string;
  values: Float64Array;
}

const isComposite = (v: PyValue) => v.kind === Kind.Array || v.kind === Kind.Object;

/** The per-datapoint columns of `eval_downstream`. */
interface DownColumns {
  accuracy: Column;
  em: Column;
  f1: Column;
  rougel: Column;
  kiltAccuracy: Column;
  kiltEm: Column;
  kiltF1: Column;
  kiltRougel: Column;
  rprec: Column;
  recall5: Column;
}

/** The per-datapoint columns of `eval_retrieval` (one column per k for the @k metrics). */
interface RetColumns {
  rprec: Column;
  entityInInput: Column;
  precision: Column[];
  recall: Column[];
  success: Column[];
  answerInContext: Column[];
  answerAndEnt: Column[];
  entityInContext: Column[];
}

/** `eval_downstream`'s dict with each value taken by `v` (a mean, or one datapoint's value). */
function downstreamSection(down: DownColumns, v: (c: Column) => number): DownstreamResult {
  return {
    kilt: {
      "KILT-accuracy": v(down.kiltAccuracy),
      "KILT-em": v(down.kiltEm),
      "KILT-f1": v(down.kiltF1),
      "KILT-rougel": v(down.kiltRougel),
    },
    downstream: { accuracy: v(down.accuracy), em: v(down.em), f1: v(down.f1), rougel: v(down.rougel) },
    retrieval: { Rprec: v(down.rprec), "recall@5": v(down.recall5) },
  };
}

/** `eval_retrieval`'s OrderedDict (official key order) with each value taken by `v`. */
function retrievalSection(ret: RetColumns, ks: readonly number[], withEntityInInput: boolean, v: (c: Column) => number): RetrievalResult {
  const r: RetrievalResult = {};
  r.Rprec = v(ret.rprec);
  if (withEntityInInput) r.entity_in_input = v(ret.entityInInput);
  ks.forEach((k, j) => {
    r[`precision@${k}`] = v(ret.precision[j]);
    r[`answer_in_context@${k}`] = v(ret.answerInContext[j]);
    r[`answer_and_ent_in_context@${k}`] = v(ret.answerAndEnt[j]);
    r[`entity_in_context@${k}`] = v(ret.entityInContext[j]);
    if (k > 1) {
      r[`recall@${k}`] = v(ret.recall[j]);
      r[`success_rate@${k}`] = v(ret.success[j]);
    }
  });
  return r;
}

/** Sums a column in gold order over the evaluated datapoints, then divides once (the official arithmetic). */
function mean(values: Float64Array, evaluated: Uint8Array, total: number): number {
  if (total === 0) return 0;
  let s = 0;
  for (let i = 0; i < values.length; i++) if (evaluated[i]) s += values[i];
  return s / total;
}

/**
 * Runs the evaluation. `gold` and `guess` are JSONL paths (plain or .gz) or arrays of records.
 * Never throws on bad data: problems come back in `result.problems`.
 */
export async function evaluate(gold: RecordSource, guess: RecordSource, options: EvalOptions = {}): Promise<EvalResult> {
  const ks = (options.ks ?? [1, 5, 10, 20]).map((k) => Math.trunc(k)).sort((a, b) => a - b);
  if (ks.length === 0 || ks.some((k) => !(k > 0))) throw new Error(`ks must be positive integers, got ${ks.join(",")}`);
  if (new Set(ks).size !== ks.length)
    throw new Error(`ks must not repeat a value, got ${ks.join(",")} (the official code would add that k's scores twice)`);
  const rankKeys = options.rankKeys ?? PAGE_KEYS;
  if (rankKeys.length === 0) throw new Error("rank keys must not be empty");
  const mode = options.mode ?? "all";
  const wantDown = mode !== "retrieval";
  const wantRet = mode !== "downstream";
  const maxK = ks[ks.length - 1];
  const pageLevel = sameKeys(rankKeys, PAGE_KEYS);
  const problems = new Problems(options.maxExamples ?? 5);
  const goldName = typeof gold === "string" ? gold : "<gold>";
  const guessName = typeof guess === "string" ? guess : "<guess>";

  // ---- 1. gold records -------------------------------------------------------------------
  const golds = new GoldTable();
  const goldProv = new GoldProvenance();
  const goldIndex = new Map<string, number>();
  // Provenance keys the scanner keeps: the rank keys, the page id and the title (gold); rank keys and page id (guess).
  // bleu_score (KILT's mapping writes it on gold evidence, predictions lack it) tells a swapped pair apart.
  const goldKeys = [...new Set([...rankKeys, "wikipedia_id", "title", "bleu_score"])];
  const guessKeys = [...new Set([...rankKeys, "wikipedia_id", "bleu_score"])];
  // Views are consumed in the callback (reduced to strings), so provenance entries are recycled.
  // Without eval_retrieval, gold titles and the input are only checked for their type, never decoded.
  const goldSpec: ScanSpec = {
    provKeys: goldKeys,
    texts: false,
    reuse: true,
    kindOnly: wantRet ? [] : ["input", ...(rankKeys.includes("title") ? [] : ["title"])],
  };
  const guessSpec: ScanSpec = { provKeys: guessKeys, texts: wantRet || wantDown, reuse: true };
  const goldRank = rankKeys.map((k) => goldKeys.indexOf(k));
  const goldPage = [goldKeys.indexOf("wikipedia_id")];
  const goldTitle = goldKeys.indexOf("title");
  const guessRank = rankKeys.map((k) => guessKeys.indexOf(k));
  const guessPage = [guessKeys.indexOf("wikipedia_id")];

  /** Reports a list or object where a scalar is needed (its Python repr is not reproduced); true if one was found. */
  const composite = (v: PyValue | undefined, what: string, place: ProblemPlace): boolean => {
    if (v === undefined || !isComposite(v)) return false;
    problems.add(
      "value-not-scalar",
      "error",
      "input",
      "a list or object where the metrics need a string or number (tartan does not imitate Python's repr of it)",
      { ...place, detail: what },
    );
    return true;
  };
  /** Reports provenance that is not a list of objects (the official code iterates it anyway, with odd results or a crash). */
  const badProvenance = (o: OutputView, place: ProblemPlace): boolean => {
    if (!o.hasProvenance) return false;
    if (o.provenanceList && o.provenance.every((p) => p.object)) return false;
    problems.add("bad-provenance", "error", "input", "provenance must be a list of objects", place);
    return true;
  };
  /** Rank-key values must be scalars. */
  const compositeKeys = (outputs: readonly OutputView[], place: ProblemPlace): boolean => {
    for (const o of outputs)
      for (const p of o.provenance)
        for (const v of p.vals)
          if (v !== undefined && isComposite(v)) {
            composite(v, "provenance key value", place);
            return true;
          }
    return false;
  };

  /**
   * A gold answer or title (truthy): false after reporting a list or object; a non-string is used as
   * Python str() of it, with a warning; the stripped text, when not empty, goes into `into`.
   */
  const goldText = (v: PyValue, what: "answer" | "title", into: string[] | null, from: number, place: ProblemPlace): boolean => {
    if (composite(v, what, place)) return false;
    if (v.kind !== Kind.Str)
      problems.add(
        `gold-${what}-not-string`,
        "warning",
        what === "answer" ? "downstream" : "input",
        `gold ${what === "answer" ? "answer" : "provenance title"} is not a string; used as Python str() of it (the official code raises AttributeError)`,
        place,
      );
    if (into !== null) addDistinct(into, from, v.str);
    return true;
  };

  const prepareGold = (rec: RecordView, line: number) => {
    if (!rec.hasId) {
      problems.add("gold-no-id", "error", "input", "gold record has no id", { file: goldName, line });
      return;
    }
    if (composite(rec.id, "id", { file: goldName, line })) return;
    const key = pyStrip(rec.id!.str);
    const idPlace = { file: goldName, line, id: key };
    if (!rec.outputList) {
      problems.add("gold-bad-output", "error", "input", "gold record's output is not a list", idPlace);
      return;
    }
    const firstAt = goldIndex.get(key);
    if (firstAt !== undefined) {
      problems.add("gold-duplicate-id", "error", "input", `gold ids must be unique (first seen on line ${golds.lines[firstAt]})`, idPlace);
      return;
    }
    const outputs = rec.outputs;
    // Answers and (for eval_retrieval) titles go straight into the shared lists; dropped again if the record is refused.
    const answers = golds.answers;
    const answersFrom = answers.length;
    const titles = wantRet ? golds.titles : null;
    const titlesFrom = golds.titles.length;
    const refuse = () => {
      answers.length = answersFrom;
      golds.titles.length = titlesFrom;
    };
    for (const o of outputs) {
      if (!o.object) {
        problems.add("gold-bad-output-item", "error", "input", "gold output item is not an object", idPlace);
        return refuse();
      }
      if (badProvenance(o, idPlace)) return refuse();
      const a = o.answer;
      if (o.hasAnswer && a !== undefined && !a.falsy && !goldText(a, "answer", answers, answersFrom, idPlace)) return refuse();
      for (const p of o.provenance) {
        const t = p.vals[goldTitle];
        if (t !== undefined && !t.falsy && !goldText(t, "title", titles, titlesFrom, idPlace)) return refuse();
      }
    }
    if (rec.compositeVals && compositeKeys(outputs, idPlace)) return refuse();
    // Titles and the input are read by eval_retrieval only (entity_in_input, entity_in_context).
    if (wantRet) for (let i = titlesFrom; i < golds.titles.length; i++) golds.titles[i] = normalizeAnswer(golds.titles[i]);
    const hasInput = rec.hasInput;
    let entityInInput = 0;
    if (hasInput) {
      if (composite(rec.input, "input", idPlace)) return refuse();
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
        for (let i = titlesFrom; i < golds.titles.length; i++)
          if (input.includes(golds.titles[i])) {
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
    const pageAt = goldProv.add(outputs, goldPage);
    goldIndex.set(key, golds.length);
    golds.keys.push(key);
    golds.lines.push(line);
    golds.answerAt.push(answers.length);
    golds.titleAt.push(golds.titles.length);
    golds.entityInInput.push(entityInInput);
    golds.hasInput.push(hasInput);
    golds.outputCount.push(outputs.length);
    golds.pageAt.push(pageAt);
    // Rank-key provenance is read by eval_retrieval only (eval_downstream is page level).
    golds.rankAt.push(pageLevel ? pageAt : wantRet ? goldProv.add(outputs, goldRank) : -1);
  };
  const goldShape = { records: 0, withInput: 0, severalOutputs: 0, withBleu: 0 };
  const goldBleu = goldKeys.indexOf("bleu_score");
  const guessBleu = guessKeys.indexOf("bleu_score");
  const tally = (shape: typeof goldShape, rec: RecordView, bleu: number) => {
    shape.records++;
    if (rec.hasInput) shape.withInput++;
    if (rec.outputs.length > 1) shape.severalOutputs++;
    if (rec.outputs.some((o) => o.provenance.some((p) => p.object && p.vals[bleu] !== undefined))) shape.withBleu++;
  };
  const goldStats = await readViews(gold, goldName, goldSpec, (rec, line) => (tally(goldShape, rec, goldBleu), prepareGold(rec, line)), problems);

  // ---- 2. per-datapoint score columns --------------------------------------------------------
  const n = golds.length;
  const col = (name: string): Column => ({ name, values: new Float64Array(n) });
  const down: DownColumns = {
    accuracy: col("accuracy"),
    em: col("em"),
    f1: col("f1"),
    rougel: col("rougel"),
    kiltAccuracy: col("KILT-accuracy"),
    kiltEm: col("KILT-em"),
    kiltF1: col("KILT-f1"),
    kiltRougel: col("KILT-rougel"),
    rprec: col("Rprec"),
    recall5: col("recall@5"),
  };
  const ret: RetColumns = {
    rprec: col("Rprec"),
    entityInInput: col("entity_in_input"),
    precision: ks.map((k) => col(`precision@${k}`)),
    recall: ks.map((k) => col(`recall@${k}`)),
    success: ks.map((k) => col(`success_rate@${k}`)),
    answerInContext: ks.map((k) => col(`answer_in_context@${k}`)),
    answerAndEnt: ks.map((k) => col(`answer_and_ent_in_context@${k}`)),
    entityInContext: ks.map((k) => col(`entity_in_context@${k}`)),
  };
  const seen = new Uint8Array(n);
  const seenLine = new Int32Array(n);
  const extraKeys = new Map<string, number>();
  let guessesWithAnswer = 0;
  let guessesWithProvenance = 0;
  // Whether any retrieved passage has each rank key, and any has text (else the metrics they feed are
  // all 0 for a reason worth a note).
  const rankKeySeen = rankKeys.map(() => false);
  let passagesWithText = 0;
  const answerScorer = new AnswerScorer(new RougeScorer());

  // ---- 3. stream the guesses ------------------------------------------------------------------
  const context = new ContextMatcher();
  const scoreGuess = (rec: RecordView, line: number) => {
    if (!rec.hasId) {
      problems.add("guess-no-id", "error", "input", "prediction has no id", { file: guessName, line });
      return;
    }
    if (composite(rec.id, "id", { file: guessName, line })) return;
    const key = pyStrip(rec.id!.str);
    const idPlace = { file: guessName, line, id: key };
    const gi = goldIndex.get(key);
    if (gi === undefined) {
      const firstLine = extraKeys.get(key);
      if (firstLine !== undefined) problems.add("guess-duplicate-id", "error", "input", "prediction ids must be unique", idPlace);
      else {
        extraKeys.set(key, line);
        problems.add(
          "guess-extra-id",
          "warning",
          "input",
          "prediction for an id not in the gold file, ignored (the official code prints WARNING: DIFFERENT SIZE)",
          idPlace,
        );
      }
      return;
    }
    if (seen[gi]) {
      problems.add("guess-duplicate-id", "error", "input", `prediction ids must be unique (first on line ${seenLine[gi]})`, idPlace);
      return;
    }
    seen[gi] = 1;
    seenLine[gi] = line;
    const gAnswers = golds.answersOf(gi);
    const gLine = golds.lines[gi];
    if (!rec.outputList) {
      problems.add("guess-bad-output", "error", "input", "prediction's output is not a list", idPlace);
      return;
    }
    const outputs = rec.outputs;
    for (const o of outputs) {
      if (!o.object) {
        problems.add("guess-bad-output-item", "error", "input", "prediction output item is not an object", idPlace);
        return;
      }
      if (badProvenance(o, idPlace)) return;
    }
    if (rec.compositeVals && compositeKeys(outputs, idPlace)) return;
    if (outputs.some((o) => o.hasAnswer)) guessesWithAnswer++;
    const provOutputs = outputs.filter((o) => o.hasProvenance);
    if (provOutputs.length > 0) guessesWithProvenance++;
    if (golds.outputCount[gi] === 0) {
      problems.add(
        "gold-no-output",
        "error",
        "input",
        "gold record has an empty output list: R-precision is undefined (the official code raises ValueError: max() arg is an empty sequence)",
        { file: goldName, line: gLine, id: key },
      );
      return;
    }
    // Passage texts the context metrics read must be strings (the official code raises AttributeError on others).
    const first = outputs[0];
    const textCheck = provOutputs.length === 1 ? provOutputs[0] : first;
    if (textCheck) {
      const upTo = Math.min(textCheck.provenance.length, Math.max(maxK, 5));
      for (let i = 0; i < upTo; i++) {
        const p = textCheck.provenance[i];
        if (p.hasText && !p.text) {
          problems.add("text-not-string", "error", "input", "passage text is not a string (the official code raises AttributeError)", idPlace);
          return;
        }
      }
    }
    answerScorer.begin();
    const goldAnswers = wantDown ? gAnswers.map((a) => answerScorer.gold(a)) : [];

    // Downstream (eval_downstream): exactly one output, holding an answer.
    if (wantDown) {
      if (outputs.length !== 1 || !first.hasAnswer) {
        problems.add(
          "guess-not-one-answer",
          "error",
          "downstream",
          "prediction must have exactly one output with an answer (the official code raises AssertionError)",
          idPlace,
        );
      } else if (isComposite(first.answer!)) {
        problems.add(
          "guess-answer-not-scalar",
          "error",
          "downstream",
          "prediction answer is a list or object (the official code scores Python's repr of it; tartan does not imitate it)",
          idPlace,
        );
      } else {
        if (first.answer!.kind !== Kind.Str)
          problems.add(
            "guess-answer-not-string",
            "warning",
            "downstream",
            'prediction answer is not a string; scored as Python str() of it (null becomes "None"), as the official code does',
            idPlace,
          );
        const answer = pyStrip(first.answer!.str);
        const pageAt = golds.pageAt[gi];
        const guessPageIds = goldProv.guessIds(first, guessPage, pageAt);
        const pageRprec = goldProv.rprecision(pageAt);
        down.rprec.values[gi] = pageRprec;
        if (guessPageIds > 0) {
          const sets = goldProv.evidenceSets(pageAt);
          if (sets > 0) {
            goldProv.evidenceRank();
            down.recall5.values[gi] = goldProv.trueInTop(5) / sets;
          }
        }
        if (answer.length === 0) {
          problems.add(
            "guess-empty-answer",
            "note",
            "downstream",
            "empty prediction answer: scored 0, still counted in the denominator (as the official code does)",
            idPlace,
          );
        } else if (gAnswers.length === 0) {
          problems.add(
            "gold-no-answer",
            "error",
            "downstream",
            "gold record has no answer to compare with (the official code raises ValueError: max() arg is an empty sequence)",
            { file: goldName, line: gLine, id: key },
          );
        } else {
          const s = answerScorer.score(answer, goldAnswers);
          if (s.rougeOverflow)
            problems.add(
              "rouge-recursion",
              "warning",
              "downstream",
              "ROUGE-L needs a backtrack longer than pltrdy's recursion allows: the official code raises RecursionError here; tartan gives the exact value",
              idPlace,
            );
          down.accuracy.values[gi] = s.accuracy;
          down.em.values[gi] = s.em;
          down.f1.values[gi] = s.f1;
          down.rougel.values[gi] = s.rougel;
          if (pageRprec === 1) {
            down.kiltAccuracy.values[gi] = s.accuracy;
            down.kiltEm.values[gi] = s.em;
            down.kiltF1.values[gi] = s.f1;
            down.kiltRougel.values[gi] = s.rougel;
          }
        }
      }
    }

    // Retrieval (eval_retrieval): the one output holding provenance.
    if (wantRet) {
      if (provOutputs.length !== 1) {
        problems.add(
          "guess-not-one-provenance",
          "error",
          "retrieval",
          "prediction must have exactly one output with provenance (the official code raises AssertionError)",
          idPlace,
        );
      } else {
        const out = provOutputs[0];
        const rankAt = golds.rankAt[gi];
        const upTo = Math.min(out.provenance.length, maxK);
        for (let i = 0; i < upTo; i++) {
          const p = out.provenance[i];
          if (!p.object) continue;
          if (p.hasText) passagesWithText++;
          for (let j = 0; j < guessRank.length; j++) if (!rankKeySeen[j] && p.vals[guessRank[j]] !== undefined) rankKeySeen[j] = true;
        }
        const ids = goldProv.guessIds(out, guessRank, rankAt);
        ret.rprec.values[gi] = goldProv.rprecision(rankAt);
        ret.entityInInput.values[gi] = golds.entityInInput[gi];
        const sets = ids > 0 ? goldProv.evidenceSets(rankAt) : 0;
        if (sets > 0) {
          goldProv.evidenceRank();
          for (let j = 0; j < ks.length; j++) {
            const k = ks[j];
            const hits = goldProv.trueInTop(k);
            ret.precision[j].values[gi] = hits / k;
            ret.recall[j].values[gi] = hits / sets;
            ret.success[j].values[gi] = hits > 0 ? 1 : 0;
          }
        }
        const prov = out.provenance;
        if (prov.length > 0) {
          context.match(prov, maxK, wantDown ? goldAnswers.map((a) => a.normalized) : gAnswers.map(normalizeAnswer), golds.titlesOf(gi));
          for (let j = 0; j < ks.length; j++) {
            const top = Math.min(ks[j], context.length);
            ret.answerInContext[j].values[gi] = context.firstAnswer < top ? 1 : 0;
            ret.answerAndEnt[j].values[gi] = context.firstBoth < top ? 1 : 0;
            ret.entityInContext[j].values[gi] = context.firstTitle < top ? 1 : 0;
          }
        }
      }
    }
  };
  const guessShape = { records: 0, withInput: 0, severalOutputs: 0, withBleu: 0 };
  const guessStats = await readViews(guess, guessName, guessSpec, (rec, line) => (tally(guessShape, rec, guessBleu), scoreGuess(rec, line)), problems, options.onProgress);

  // Files given the official scripts' way round (GUESS first): gold without inputs, "predictions" with
  // inputs or with several outputs each; or, whatever the inputs say, "gold" of one output per record
  // with no mapped evidence (bleu_score) while most "predictions" carry some, as KILT's gold files do.
  // Said once, before the thousands of problems it causes. Only for files of 20 records or more: a
  // handful of hand-made records proves nothing.
  if (
    goldShape.records >= 20 &&
    guessShape.records >= 20 &&
    ((goldShape.withInput === 0 && guessShape.withInput * 2 > guessShape.records) ||
      (goldShape.severalOutputs === 0 && guessShape.severalOutputs * 2 > guessShape.records) ||
      (goldShape.severalOutputs === 0 && goldShape.withBleu === 0 && guessShape.withBleu * 2 > guessShape.records))
  )
    problems.add(
      "swapped-files",
      "error",
      "input",
      `did you swap GOLD and GUESS? ${goldName} looks like predictions and ${guessName} like gold records (tartan takes GOLD first; the official scripts take GUESS first)`,
    );

  // ---- 4. alignment checks ----------------------------------------------------------------------
  let evaluatedCount = 0;
  for (let i = 0; i < n; i++) {
    if (seen[i]) evaluatedCount++;
    else if (!options.onlyPredicted)
      problems.add(
        "missing-prediction",
        "error",
        "input",
        "no prediction for this gold id (the official code raises ValueError)",
        { file: goldName, line: golds.lines[i], id: golds.keys[i] },
      );
  }
  if (options.onlyPredicted && evaluatedCount < n)
    problems.add(
      "unpredicted-gold",
      "note",
      "input",
      `--only-predicted: ${n - evaluatedCount} of ${n} gold records have no prediction and are left out`,
    );
  if (goldStats.blankLines > 0 || guessStats.blankLines > 0)
    problems.add(
      "blank-lines",
      "note",
      "input",
      `blank lines skipped (gold ${goldStats.blankLines}, guess ${guessStats.blankLines}); the official code raises JSONDecodeError on them`,
    );

  // A guess file without any answer (a pure retrieval run) or without any provenance (closed-book
  // answers) is not an error: the section it cannot feed is skipped with a note.
  if (wantDown && guessesWithAnswer === 0 && guessStats.records > 0 && problems.has("guess-not-one-answer")) {
    problems.remove("guess-not-one-answer");
    problems.add("downstream-skipped", "note", "downstream", "no prediction carries an answer: downstream metrics skipped");
  }
  if (wantRet && guessesWithProvenance === 0 && guessStats.records > 0 && problems.has("guess-not-one-provenance")) {
    problems.remove("guess-not-one-provenance");
    problems.add("retrieval-skipped", "note", "retrieval", "no prediction carries provenance: retrieval metrics skipped");
  }

  // Only for files of 20 predictions or more, as the swap check: hand-made cases often leave both out.
  if (wantRet && guessesWithProvenance > 0 && guessStats.records >= 20 && !problems.has("retrieval-skipped")) {
    const absent = rankKeys.filter((_, j) => !rankKeySeen[j]);
    if (absent.length > 0)
      problems.add(
        "rank-key-absent",
        "note",
        "retrieval",
        `no prediction's provenance has ${absent.join(", ")} (--rank-keys ${rankKeys.join(",")}): no retrieved passage can match the gold, so Rprec, precision@k, recall@k and success_rate@k are 0`,
      );
    if (passagesWithText === 0)
      problems.add(
        "no-passage-text",
        "note",
        "retrieval",
        "no prediction's provenance carries text: answer_in_context@k, answer_and_ent_in_context@k and entity_in_context@k are 0 (they look in the passages' text; tartan retrieve --text full writes it)",
      );
  }

  // ---- 5. aggregate in gold order ---------------------------------------------------------------
  const inputFailed = problems.errors("input").length > 0;
  const total = evaluatedCount;
  let evalDownstream: DownstreamResult | null = null;
  if (wantDown && !inputFailed && problems.errors("downstream").length === 0 && !problems.has("downstream-skipped")) {
    evalDownstream = downstreamSection(down, (c) => mean(c.values, seen, total));
  }
  let evalRetrieval: RetrievalResult | null = null;
  const allInputs = golds.hasInput.every((has, i) => !seen[i] || has);
  if (wantRet && !inputFailed && problems.errors("retrieval").length === 0 && !problems.has("retrieval-skipped")) {
    evalRetrieval = retrievalSection(ret, ks, allInputs, (c) => mean(c.values, seen, total));
  }
  if (options.perQuery) {
    const wantDownRows = evalDownstream !== null;
    const wantRetRows = evalRetrieval !== null;
    for (let i = 0; i < n; i++) {
      if (!seen[i]) continue;
      const at = (c: Column) => c.values[i];
      options.perQuery({
        id: golds.keys[i],
        eval_downstream: wantDownRows ? downstreamSection(down, at) : null,
        eval_retrieval: wantRetRows ? retrievalSection(ret, ks, allInputs, at) : null,
      });
    }
  }

  return {
    eval_downstream: evalDownstream,
    eval_retrieval: evalRetrieval,
    problems: problems.list(),
    counts: { goldRecords: n, guessRecords: guessStats.records, evaluated: evaluatedCount, extraGuesses: extraKeys.size },
    options: { ks, rankKeys: [...rankKeys], mode },
  };
}

/** Scans a JSONL file (or converts records in memory) into RecordViews; malformed lines become problems. */
async function readViews(
  source: RecordSource,
  name: string,
  spec: ScanSpec,
  onRecord: (rec: RecordView, line: number) => void,
  problems: Problems,
  onProgress?: (records: number, bytes: number) => void,
): Promise<ScanStats> {
  if (typeof source !== "string") {
    source.forEach((r, i) => onRecord(viewOfValue(r, spec), i + 1));
    return { records: source.length, blankLines: 0, badLines: 0, bytes: 0 };
  }
  const stats: ScanStats = { records: 0, blankLines: 0, badLines: 0, bytes: 0 };
  const progress = onProgress ? (bytes: number) => onProgress(stats.records, bytes) : undefined;
  await forEachLine(
    source,
    (buf, start, end, line) => {
      const view = scanRecord(buf, start, end, spec);
      // A line the scanner took without a non-ASCII string is ASCII, hence valid UTF-8.
      const badByte = scanSawNonAscii ? invalidUtf8At(buf, start, end) : -1;
      if (badByte >= 0)
        problems.add(
          "invalid-utf8",
          "warning",
          "input",
          "invalid UTF-8, decoded as U+FFFD (the official code raises UnicodeDecodeError)",
          { file: source, line, detail: `at byte ${badByte} of the line` },
        );
      if (view === null) {
        // The strict reader says what is wrong (the scanner only knows that something is).
        const reason = scanFailure === NESTING_REASON || scanFailure === OBJECTS_REASON ? scanFailure : strictReason(buf.toString("utf8", start, end));
        if (reason === undefined) {
          // Never expected: the scanner refused a line JSON.parse takes. Use the parsed value (numbers lose their spelling).
          problems.add("scanner-fallback", "note", "input", "line read with JSON.parse (please report)", { file: source, line });
          stats.records++;
          onRecord(viewOfValue(JSON.parse(buf.toString("utf8", start, end)), spec), line);
          return;
        }
        stats.badLines++;
        problems.add("invalid-json", "error", "input", "malformed line", { file: source, line, detail: reason });
        return;
      }
      stats.records++;
      onRecord(view, line);
    },
    stats,
    progress,
  );
  return stats;
}

/** JSON.parse's reason for refusing a line, or undefined when it parses as an object. */
function strictReason(text: string): string | undefined {
  const r = parseJsonObject(text);
  return "reason" in r ? r.reason : undefined;
}
