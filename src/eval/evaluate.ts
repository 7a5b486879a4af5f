// The KILT evaluator: everything `kilt.eval_downstream.evaluate` and `kilt.eval_retrieval.evaluate`
// compute, bit for bit, in one streaming pass over the guesses. Gold records are prepared once
// (answers normalized, id lists and evidence sets built); each guess is scored the moment it is
// read and dropped; per-datapoint scores are summed in gold order at the end, as the official code
// does, so the floating-point results are identical. Where the official code crashes, the problem
// is reported with file, line and id instead (docs/eval.md lists each case).

import { GoldTable, PAGE_KEYS } from "./gold-table.js";
import { GuessScorer } from "./guess-scorer.js";
import { Problems, type Problem } from "./problems.js";
import { readViews, type RecordSource } from "./read-views.js";
import { RecordChecks } from "./record-checks.js";
import type { ScanStats } from "../records/jsonl.js";
import type { RecordView } from "./scan.js";
import { downstreamSection, mean, retrievalSection, type Column, type DownstreamResult, type RetrievalResult } from "./sections.js";

export type { DownstreamResult, RetrievalResult } from "./sections.js";
export type { RecordSource } from "./read-views.js";

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

/** How many records of a file look like gold records or like predictions (the swapped-files check). */
interface FileShape {
  records: number;
  withInput: number;
  severalOutputs: number;
  withBleu: number;
}

const newShape = (): FileShape => ({ records: 0, withInput: 0, severalOutputs: 0, withBleu: 0 });

function tally(shape: FileShape, rec: RecordView, bleu: number): void {
  shape.records++;
  if (rec.hasInput) shape.withInput++;
  if (rec.outputs.length > 1) shape.severalOutputs++;
  for (const o of rec.outputs)
    for (const p of o.provenance)
      if (p.object && p.vals[bleu] !== undefined) {
        shape.withBleu++;
        return;
      }
}

/**
 * Files given the official scripts' way round (GUESS first): gold without inputs, "predictions" with
 * inputs or with several outputs each; or, whatever the inputs say, "gold" of one output per record
 * with no mapped evidence (bleu_score) while most "predictions" carry some, as KILT's gold files do.
 * Only for files of 20 records or more: a handful of hand-made records proves nothing.
 */
function looksSwapped(gold: FileShape, guess: FileShape): boolean {
  return (
    gold.records >= 20 &&
    guess.records >= 20 &&
    ((gold.withInput === 0 && guess.withInput * 2 > guess.records) ||
      (gold.severalOutputs === 0 && guess.severalOutputs * 2 > guess.records) ||
      (gold.severalOutputs === 0 && gold.withBleu === 0 && guess.withBleu * 2 > guess.records))
  );
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
  const problems = new Problems(options.maxExamples ?? 5);
  const checks = new RecordChecks(problems);
  const goldName = typeof gold === "string" ? gold : "<gold>";
  const guessName = typeof guess === "string" ? guess : "<guess>";

  // ---- 1. gold records, reduced to the gold table ----------------------------------------------
  const golds = new GoldTable({ name: goldName, rankKeys, wantRet }, problems, checks);
  const goldShape = newShape();
  const goldStats = await readViews(gold, goldName, golds.spec, (rec, line) => (tally(goldShape, rec, golds.bleuKey), golds.add(rec, line)), problems);

  // ---- 2. stream the guesses, each scored the moment it is read ---------------------------------
  const scorer = new GuessScorer(golds, { name: guessName, ks, rankKeys, wantDown, wantRet }, problems, checks);
  const guessShape = newShape();
  const guessStats = await readViews(
    guess,
    guessName,
    scorer.spec,
    (rec, line) => (tally(guessShape, rec, scorer.bleuKey), scorer.score(rec, line)),
    problems,
    options.onProgress,
  );
  // Said once, before the thousands of problems it causes.
  if (looksSwapped(goldShape, guessShape))
    problems.add(
      "swapped-files",
      "error",
      "input",
      `did you swap GOLD and GUESS? ${goldName} looks like predictions and ${guessName} like gold records (tartan takes GOLD first; the official scripts take GUESS first)`,
    );

  // ---- 3. alignment checks ----------------------------------------------------------------------
  const evaluated = alignmentChecks(golds, scorer, goldStats, guessStats, problems, { mode, rankKeys, onlyPredicted: options.onlyPredicted === true });

  // ---- 4. aggregate in gold order ---------------------------------------------------------------
  const n = golds.length;
  const { seen, down, ret } = scorer;
  const inputFailed = problems.errors("input").length > 0;
  let evalDownstream: DownstreamResult | null = null;
  if (wantDown && !inputFailed && problems.errors("downstream").length === 0 && !problems.has("downstream-skipped")) {
    evalDownstream = downstreamSection(down, (c) => mean(c.values, seen, evaluated));
  }
  let evalRetrieval: RetrievalResult | null = null;
  const allInputs = golds.hasInput.every((has, i) => !seen[i] || has);
  if (wantRet && !inputFailed && problems.errors("retrieval").length === 0 && !problems.has("retrieval-skipped")) {
    evalRetrieval = retrievalSection(ret, ks, allInputs, (c) => mean(c.values, seen, evaluated));
    noteNoMatch(evalRetrieval, scorer, guessStats.records, rankKeys, problems);
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
    counts: { goldRecords: n, guessRecords: guessStats.records, evaluated, extraGuesses: scorer.extraKeys.size },
    options: { ks, rankKeys: [...rankKeys], mode },
  };
}

/**
 * A note when no retrieved passage of 20 predictions or more matched any gold provenance although every
 * rank key was present: the guesses' and the gold's values of a key never agree (a section written
 * `Section::::Abstract` on one side and `Section::::Abstract.` on the other), which would otherwise read as
 * a retriever that found nothing.
 */
function noteNoMatch(r: RetrievalResult, scorer: GuessScorer, records: number, rankKeys: readonly string[], problems: Problems): void {
  if (records < 20 || scorer.guessesWithProvenance === 0 || problems.has("rank-key-absent") || !scorer.rankKeySeen.every(Boolean)) return;
  const anyMatch = Object.entries(r).some(([key, v]) => (key === "Rprec" || key.startsWith("precision@") || key.startsWith("success_rate@")) && v > 0);
  if (anyMatch) return;
  problems.add(
    "rank-key-no-match",
    "note",
    "retrieval",
    `no retrieved passage matched any gold provenance on --rank-keys ${rankKeys.join(",")}: check that the predictions and the gold write these keys' values alike (e.g. a section "Section::::Abstract" against "Section::::Abstract."); Rprec, precision@k, recall@k and success_rate@k are 0`,
  );
}

/**
 * After the guesses: gold records without a prediction, blank lines, sections no prediction can feed
 * (skipped with a note), rank keys or texts no prediction has. Returns the number of records evaluated.
 */
function alignmentChecks(
  golds: GoldTable,
  scorer: GuessScorer,
  goldStats: ScanStats,
  guessStats: ScanStats,
  problems: Problems,
  options: { mode: EvalMode; rankKeys: readonly string[]; onlyPredicted: boolean },
): number {
  const { mode, rankKeys, onlyPredicted } = options;
  const wantDown = mode !== "retrieval";
  const wantRet = mode !== "downstream";
  const n = golds.length;
  let evaluatedCount = 0;
  for (let i = 0; i < n; i++) {
    if (scorer.seen[i]) evaluatedCount++;
    else if (!onlyPredicted)
      problems.add(
        "missing-prediction",
        "error",
        "input",
        "no prediction for this gold id (the official code raises ValueError)",
        { file: golds.name, line: golds.lines[i], id: golds.keys[i] },
      );
  }
  if (onlyPredicted && evaluatedCount < n && evaluatedCount > 0)
    problems.add(
      "unpredicted-gold",
      "note",
      "input",
      `--only-predicted: ${n - evaluatedCount} of ${n} gold records have no prediction and are left out`,
    );
  // Nothing to score is never a table of zeros: an empty gold file, or --only-predicted matching no id.
  if (evaluatedCount === 0 && problems.errors().length === 0)
    problems.add(
      "nothing-scored",
      "error",
      "input",
      n === 0
        ? `the gold file ${golds.name} holds no records: nothing to score`
        : `--only-predicted: no prediction has the id of one of the ${n} gold records of ${golds.name} (predictions: ${guessStats.records}): is this the right gold file?`,
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
  if (wantDown && scorer.guessesWithAnswer === 0 && guessStats.records > 0 && problems.has("guess-not-one-answer")) {
    problems.remove("guess-not-one-answer");
    problems.add("downstream-skipped", "note", "downstream", "no prediction carries an answer: downstream metrics skipped");
  }
  if (wantRet && scorer.guessesWithProvenance === 0 && guessStats.records > 0 && problems.has("guess-not-one-provenance")) {
    problems.remove("guess-not-one-provenance");
    problems.add("retrieval-skipped", "note", "retrieval", "no prediction carries provenance: retrieval metrics skipped");
  }

  // Only for files of 20 predictions or more, as the swap check: hand-made cases often leave both out.
  if (wantRet && scorer.guessesWithProvenance > 0 && guessStats.records >= 20 && !problems.has("retrieval-skipped")) {
    const absent = rankKeys.filter((_, j) => !scorer.rankKeySeen[j]);
    if (absent.length > 0)
      problems.add(
        "rank-key-absent",
        "note",
        "retrieval",
        `no prediction's provenance has ${absent.join(", ")} (--rank-keys ${rankKeys.join(",")}): no retrieved passage can match the gold, so Rprec, precision@k, recall@k and success_rate@k are 0`,
      );
    if (scorer.passagesWithText === 0)
      problems.add(
        "no-passage-text",
        "note",
        "retrieval",
        "no prediction's provenance carries text: answer_in_context@k, answer_and_ent_in_context@k and entity_in_context@k are 0 (they look in the passages' text; tartan retrieve --text full writes it)",
      );
  }
  return evaluatedCount;
}
