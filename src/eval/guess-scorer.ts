// The evaluator's guess scorer: each prediction, the moment it is read, checked against its gold
// record (by id) and scored into the per-datapoint columns: eval_downstream's answer metrics (accuracy,
// EM, F1, ROUGE-L) and page-level R-precision/recall@5, eval_retrieval's R-precision, precision,
// recall and success@k and the answer/entity-in-context metrics. Problems are reported by file, line
// and id; what the evaluation needs afterwards (which records were seen, what the file lacked) is kept.

import { pyStrip } from "../records/python-str.js";
import { AnswerScorer } from "./answers.js";
import { Kind } from "./json-scanner.js";
import type { Needles } from "./needles.js";
import type { Problems } from "./problems.js";
import { ContextMatcher } from "./provenance.js";
import { isComposite, type RecordChecks } from "./record-checks.js";
import { RougeScorer } from "./rouge.js";
import type { GoldTable } from "./gold-table.js";
import type { OutputView, RecordView, ScanSpec } from "./scan.js";
import {
  downColumns, downRow, retColumns, retRow, ScoreRows, DOWN_ACCURACY, DOWN_EM, DOWN_F1, DOWN_KILT, DOWN_RECALL5, DOWN_ROUGEL, DOWN_RPREC, RET_ANSWER,
  RET_BOTH, RET_ENTITY, RET_ENTITY_IN_INPUT, RET_K, RET_K_WIDTH, RET_PRECISION, RET_RECALL, RET_RPREC, RET_SUCCESS, type DownColumns, type RetColumns,
} from "./sections.js";

const NO_ID = { code: "guess-no-id", message: "prediction has no id" };

/** What the guesses are scored for. */
export interface GuessScorerOptions {
  /** The file's name in problems. */
  name: string;
  /** Cut-offs, ascending and distinct. */
  ks: readonly number[];
  rankKeys: readonly string[];
  wantDown: boolean;
  wantRet: boolean;
}

/** Scores predictions against a filled gold table, one at a time (`score`), into `down` and `ret`. */
export class GuessScorer {
  /** Per gold record: 1 once its prediction was read. */
  readonly seen: Uint8Array;
  /** Line of that prediction (for the duplicate message). */
  readonly seenLine: Int32Array;
  /** Prediction ids not in the gold file, with their first line. */
  readonly extraKeys = new Map<string, number>();
  guessesWithAnswer = 0;
  guessesWithProvenance = 0;
  /**
   * Whether any retrieved passage has each rank key, and how many have text (else the metrics they
   * feed are all 0 for a reason worth a note).
   */
  readonly rankKeySeen: boolean[];
  passagesWithText = 0;
  private readonly downCols: DownColumns;
  private readonly retCols: RetColumns;
  /** The scores, by gold record, as rows: the downstream columns (`downRow`), then the retrieval ones (`retRow`). */
  private readonly scores: ScoreRows;
  /** Where the retrieval columns start in a row. */
  private readonly retAt: number;
  /** How guess lines are scanned: the rank keys, the page id and bleu_score (`provKeys`), with passage texts. */
  readonly spec: ScanSpec;
  /** Index of bleu_score in `spec.provKeys`. */
  readonly bleuKey: number;
  private readonly rankKey: number[];
  private readonly pageKey: number[];
  private readonly maxK: number;
  private readonly answerScorer = new AnswerScorer(new RougeScorer());
  private readonly context = new ContextMatcher();
  private readonly needles: Needles;

  constructor(
    private readonly golds: GoldTable,
    private readonly options: GuessScorerOptions,
    private readonly problems: Problems,
    private readonly checks: RecordChecks,
  ) {
    const { ks, rankKeys } = options;
    const n = golds.length;
    this.seen = new Uint8Array(n);
    this.seenLine = new Int32Array(n);
    this.rankKeySeen = rankKeys.map(() => false);
    this.downCols = downColumns(n);
    this.retCols = retColumns(n, ks);
    const downCols = options.wantDown ? downRow(this.downCols) : [];
    this.retAt = downCols.length;
    this.scores = new ScoreRows(n, [...downCols, ...(options.wantRet ? retRow(this.retCols) : [])]);
    const provKeys = [...new Set([...rankKeys, "wikipedia_id", "bleu_score"])];
    // The same fields as the gold table's spec (one object shape for the scanner's code).
    this.spec = { provKeys, texts: options.wantRet || options.wantDown, reuse: true, kindOnly: [] };
    this.rankKey = rankKeys.map((k) => provKeys.indexOf(k));
    this.pageKey = [provKeys.indexOf("wikipedia_id")];
    this.bleuKey = provKeys.indexOf("bleu_score");
    this.maxK = ks[ks.length - 1];
    this.needles = { store: golds.needles, first: 0, titles: 0, answers: 0 };
  }

  /** The downstream scores per gold record (0 where not scored); complete once every prediction is scored. */
  get down(): DownColumns {
    this.scores.fill();
    return this.downCols;
  }
  /** The retrieval scores, the same way. */
  get ret(): RetColumns {
    this.scores.fill();
    return this.retCols;
  }

  /** Scores one prediction (the view is read during the call only), or reports why it cannot be. */
  score(rec: RecordView, line: number): void {
    const { problems, checks, golds, maxK } = this;
    const store = golds.prov;
    const { name: guessName, ks, wantDown, wantRet } = this.options;
    const { rows, width } = this.scores;
    const goldName = golds.name;
    const key = checks.id(rec, guessName, line, NO_ID);
    if (key === null) return;
    const idPlace = { file: guessName, line, id: key };
    const gi = golds.index.get(key);
    if (gi === undefined) {
      const firstLine = this.extraKeys.get(key);
      if (firstLine !== undefined) problems.add("guess-duplicate-id", "error", "input", "prediction ids must be unique", idPlace);
      else {
        this.extraKeys.set(key, line);
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
    if (this.seen[gi]) {
      problems.add("guess-duplicate-id", "error", "input", `prediction ids must be unique (first on line ${this.seenLine[gi]})`, idPlace);
      return;
    }
    this.seen[gi] = 1;
    this.seenLine[gi] = line;
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
      if (checks.badProvenance(o, idPlace)) return;
    }
    if (rec.compositeVals && checks.compositeKeys(outputs, idPlace)) return;
    // Outputs holding an answer, and those holding provenance (counted in one pass, no array per line).
    let withAnswer = 0;
    let withProvenance = 0;
    let provOutput: OutputView | undefined;
    for (const o of outputs) {
      if (o.hasAnswer) withAnswer++;
      if (o.hasProvenance) {
        if (withProvenance++ === 0) provOutput = o;
      }
    }
    if (withAnswer > 0) this.guessesWithAnswer++;
    if (withProvenance > 0) this.guessesWithProvenance++;
    if (golds.outputCount(gi) === 0) {
      problems.add(
        "gold-no-output",
        "error",
        "input",
        "gold record has an empty output list: R-precision is undefined (the official code raises ValueError: max() arg is an empty sequence)",
        { file: goldName, line: golds.lines[gi], id: key },
      );
      return;
    }
    // Passage texts the context metrics read must be strings (the official code raises AttributeError on others).
    const first = outputs[0];
    const textCheck = withProvenance === 1 ? provOutput : first;
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
        const pageAt = golds.pageAt(gi);
        const guessPageIds = store.guessIds(first, this.pageKey, pageAt);
        const pageRprec = store.rprecision(pageAt);
        const row = gi * width;
        rows[row + DOWN_RPREC] = pageRprec;
        if (guessPageIds > 0) {
          const sets = store.evidenceSets(pageAt);
          if (sets > 0) {
            store.evidenceRank();
            rows[row + DOWN_RECALL5] = store.trueInTop(5) / sets;
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
        } else if (golds.answerCount(gi) === 0) {
          problems.add(
            "gold-no-answer",
            "error",
            "downstream",
            "gold record has no answer to compare with (the official code raises ValueError: max() arg is an empty sequence)",
            { file: goldName, line: golds.lines[gi], id: key },
          );
        } else {
          const scorer = this.answerScorer;
          scorer.begin();
          const a0 = golds.answerAt(gi);
          for (let a = a0; a < a0 + golds.answerCount(gi); a++) scorer.gold(golds.answers[a]);
          const s = scorer.score(answer);
          if (s.rougeOverflow)
            problems.add(
              "rouge-recursion",
              "warning",
              "downstream",
              "ROUGE-L needs a backtrack longer than pltrdy's recursion allows: the official code raises RecursionError here; tartan gives the exact value",
              idPlace,
            );
          rows[row + DOWN_ACCURACY] = s.accuracy;
          rows[row + DOWN_EM] = s.em;
          rows[row + DOWN_F1] = s.f1;
          rows[row + DOWN_ROUGEL] = s.rougel;
          if (pageRprec === 1) {
            rows[row + DOWN_KILT + DOWN_ACCURACY] = s.accuracy;
            rows[row + DOWN_KILT + DOWN_EM] = s.em;
            rows[row + DOWN_KILT + DOWN_F1] = s.f1;
            rows[row + DOWN_KILT + DOWN_ROUGEL] = s.rougel;
          }
        }
      }
    }

    // Retrieval (eval_retrieval): the one output holding provenance.
    if (wantRet) {
      if (withProvenance !== 1) {
        problems.add(
          "guess-not-one-provenance",
          "error",
          "retrieval",
          "prediction must have exactly one output with provenance (the official code raises AssertionError)",
          idPlace,
        );
      } else {
        const out = provOutput!;
        const rankAt = golds.rankAt(gi);
        const upTo = Math.min(out.provenance.length, maxK);
        for (let i = 0; i < upTo; i++) {
          const p = out.provenance[i];
          if (!p.object) continue;
          if (p.hasText) this.passagesWithText++;
          for (let j = 0; j < this.rankKey.length; j++) if (!this.rankKeySeen[j] && p.vals[this.rankKey[j]] !== undefined) this.rankKeySeen[j] = true;
        }
        const ids = store.guessIds(out, this.rankKey, rankAt);
        const row = gi * width + this.retAt;
        rows[row + RET_RPREC] = store.rprecision(rankAt);
        rows[row + RET_ENTITY_IN_INPUT] = golds.entityInInput(gi);
        const sets = ids > 0 ? store.evidenceSets(rankAt) : 0;
        if (sets > 0) {
          store.evidenceRank();
          for (let j = 0; j < ks.length; j++) {
            const k = ks[j];
            const hits = store.trueInTop(k);
            const at = row + RET_K + RET_K_WIDTH * j;
            rows[at + RET_PRECISION] = hits / k;
            rows[at + RET_RECALL] = hits / sets;
            rows[at + RET_SUCCESS] = hits > 0 ? 1 : 0;
          }
        }
        const prov = out.provenance;
        if (prov.length > 0) {
          if (golds.needlesOf(gi, this.needles)) this.context.matchNeedles(prov, maxK, this.needles);
          else this.context.match(prov, maxK, golds.normalizedAnswersOf(gi), golds.normalizedTitlesOf(gi));
          for (let j = 0; j < ks.length; j++) {
            const top = Math.min(ks[j], this.context.length);
            const at = row + RET_K + RET_K_WIDTH * j;
            rows[at + RET_ANSWER] = this.context.firstAnswer < top ? 1 : 0;
            rows[at + RET_BOTH] = this.context.firstBoth < top ? 1 : 0;
            rows[at + RET_ENTITY] = this.context.firstTitle < top ? 1 : 0;
          }
        }
      }
    }
  }
}
