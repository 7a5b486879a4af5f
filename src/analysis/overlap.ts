// Test–train overlap of QA data sets (Lewis et al. 2021, "Question and answer test-train overlap";
// Wang et al. 2021, Tables 3–5): answer overlap (a test answer is also a train answer, after SQuAD
// normalization), question overlap (a train question with a shared answer and TF-IDF cosine ≥ a
// threshold: Lewis et al.'s candidates for annotation, listed for a person to check), lexical
// near-duplicates (any train question with a high cosine, found through an inverted index with an exact
// pruning bound, never all pairs), and prediction overlap (predictions that are train answers, by correctness).

import { readSquadFile } from "../knowledge/squad.js";
import { normalizeAnswer, normalizedTokens } from "../eval/normalize.js";
import { readJsonl, writeJsonl } from "../records/jsonl.js";
import { assertOutputsNotInputs } from "../util/safe-output.js";

/** One question with its gold answers, from any of the supported files. */
export interface QaItem {
  /** The record's id; for files without ids (NQ-open), the 1-based line number. */
  id: string;
  question: string;
  answers: string[];
  /** SQuAD article index (file order), or KILT records' meta.article_index. */
  article?: number;
  /** 1-based line (JSONL) or question position (SQuAD JSON) in its file. */
  line: number;
}

/** The question-answer file formats the overlap analysis reads: SQuAD JSON, NQ-open JSONL, KILT JSONL. */
export type QaFileKind = "squad" | "nq-open" | "kilt";

/**
 * Questions and answers of a SQuAD JSON file (answerable questions; answers in file order, repeats
 * removed), an NQ-open/EfficientQA JSONL file (`{"question", "answer": [...]}`) or a KILT JSONL file
 * (`input`, `output[].answer`).
 */
export async function loadQaItems(file: string): Promise<{ kind: QaFileKind; items: QaItem[] }> {
  if (/\.json$/i.test(file)) {
    const squad = readSquadFile(file);
    const items: QaItem[] = [];
    squad.data.forEach((article, a) =>
      article.paragraphs.forEach((p) =>
        p.qas.forEach((q) => {
          const answers = [...new Set(q.answers.map((x) => x.text))];
          if (q.is_impossible === true || answers.length === 0) return;
          items.push({ id: String(q.id), question: q.question, answers, article: a, line: items.length + 1 });
        }),
      ),
    );
    return { kind: "squad", items };
  }
  let kind: QaFileKind | null = null;
  const items: QaItem[] = [];
  for await (const { value, line } of readJsonl<Record<string, unknown>>(file)) {
    if (typeof value.question === "string") {
      kind ??= "nq-open";
      const a = value.answer ?? value.answers;
      const answers = (Array.isArray(a) ? a : a === undefined ? [] : [a]).filter((x): x is string => typeof x === "string");
      items.push({ id: value.id !== undefined ? String(value.id) : String(line), question: value.question, answers, line });
    } else if (typeof value.input === "string" || Array.isArray(value.output)) {
      kind ??= "kilt";
      const outputs = Array.isArray(value.output) ? (value.output as Record<string, unknown>[]) : [];
      const answers = [...new Set(outputs.map((o) => o?.answer).filter((x): x is string => typeof x === "string"))];
      const meta = value.meta as Record<string, unknown> | undefined;
      const article = typeof meta?.article_index === "number" ? meta.article_index : undefined;
      items.push({ id: String(value.id), question: String(value.input ?? ""), answers, ...(article !== undefined ? { article } : {}), line });
    } else {
      throw new Error(`${file}:${line}: expected {"question", "answer"} (NQ-open) or {"id", "input", "output"} (KILT)`);
    }
  }
  return { kind: kind ?? "nq-open", items };
}

/**
 * Splits one file's items into train and test: by article when the items have articles (the first `k`
 * articles, in order of first appearance, are train), else by position (the first `k` items are train).
 */
export function splitItems(items: readonly QaItem[], k: number): { train: QaItem[]; test: QaItem[]; by: "article" | "item" } {
  if (items.length > 0 && items.every((x) => x.article !== undefined)) {
    const order: number[] = [];
    const seen = new Set<number>();
    for (const x of items) if (!seen.has(x.article!)) (seen.add(x.article!), order.push(x.article!));
    const trainArticles = new Set(order.slice(0, k));
    return { train: items.filter((x) => trainArticles.has(x.article!)), test: items.filter((x) => !trainArticles.has(x.article!)), by: "article" };
  }
  return { train: items.slice(0, k), test: items.slice(k), by: "item" };
}

/** The normalized, non-empty answers of `items` (SQuAD normalization, as Lewis et al.). */
export function answerSet(items: readonly QaItem[]): Set<string> {
  const s = new Set<string>();
  for (const x of items) for (const a of x.answers) {
    const n = normalizeAnswer(a);
    if (n.length > 0) s.add(n);
  }
  return s;
}

/** True when one of the item's answers, normalized, is in `trainAnswers`. */
export function hasAnswerOverlap(item: QaItem, trainAnswers: ReadonlySet<string>): boolean {
  return item.answers.some((a) => trainAnswers.has(normalizeAnswer(a)));
}

/** Question tokens for similarity: SQuAD-normalized (lower case, no punctuation or articles). */
export function questionTokens(q: string): string[] {
  return normalizedTokens(normalizeAnswer(q));
}

/** A best train match of a test question. */
export interface QuestionMatch {
  train: number;
  score: number;
}

/**
 * TF-IDF vectors of the train questions (raw term counts × smoothed idf ln((1+N)/(1+df)) + 1, unit
 * length) in an inverted index. {@link nearest} returns the most similar train question whose cosine is
 * at least a threshold. Candidates come only from query terms whose remaining upper bound
 * Σ q_t · max_d w_{t,d} can still reach the threshold (prefix filtering), and every candidate is then
 * scored exactly, so the result equals an all-pairs search.
 */
export class QuestionIndex {
  private readonly postings = new Map<string, { docs: Int32Array; weights: Float64Array; max: number }>();
  private readonly df = new Map<string, number>();
  readonly size: number;
  private readonly acc: Float64Array;
  private readonly mark: Uint8Array;
  private readonly vectors: Map<string, number>[];

  constructor(questions: readonly string[]) {
    this.size = questions.length;
    const docs = questions.map((q) => termCounts(questionTokens(q)));
    for (const d of docs) for (const t of d.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
    const lists = new Map<string, { docs: number[]; weights: number[] }>();
    this.vectors = docs.map((d) => this.weigh(d));
    this.vectors.forEach((v, i) => {
      for (const [t, w] of v) {
        let l = lists.get(t);
        if (!l) lists.set(t, (l = { docs: [], weights: [] }));
        l.docs.push(i);
        l.weights.push(w);
      }
    });
    for (const [t, l] of lists) this.postings.set(t, { docs: Int32Array.from(l.docs), weights: Float64Array.from(l.weights), max: Math.max(...l.weights) });
    this.acc = new Float64Array(this.size);
    this.mark = new Uint8Array(this.size);
  }

  /** idf of a term against the train questions (terms unseen in train get the largest idf). */
  idf(t: string): number {
    return Math.log((1 + this.size) / (1 + (this.df.get(t) ?? 0))) + 1;
  }

  /** The unit-length TF-IDF vector of a question's term counts. */
  weigh(counts: Map<string, number>): Map<string, number> {
    const v = new Map<string, number>();
    let norm = 0;
    for (const [t, c] of counts) {
      const w = c * this.idf(t);
      v.set(t, w);
      norm += w * w;
    }
    norm = Math.sqrt(norm);
    if (norm > 0) for (const [t, w] of v) v.set(t, w / norm);
    return v;
  }

  /** The vector of a question (for {@link cosine}). */
  vector(question: string): Map<string, number> {
    return this.weigh(termCounts(questionTokens(question)));
  }

  /** Cosine of a question vector with train question `d`. */
  cosine(q: Map<string, number>, d: number): number {
    const v = this.vectors[d];
    let s = 0;
    for (const [t, w] of q) {
      const w2 = v.get(t);
      if (w2 !== undefined) s += w * w2;
    }
    return s;
  }

  /** The most similar of the train questions `among` (earliest on ties), or null when none has a positive cosine. */
  bestAmong(question: string, among: Iterable<number>): QuestionMatch | null {
    const q = this.vector(question);
    let best: QuestionMatch | null = null;
    for (const d of among) {
      const s = this.cosine(q, d);
      if (s > 0 && (best === null || s > best.score || (s === best.score && d < best.train))) best = { train: d, score: s };
    }
    return best;
  }

  /** The train question most similar to `question` with cosine ≥ `threshold` (> 0 needed), earliest on ties; null if none. */
  nearest(question: string, threshold: number): QuestionMatch | null {
    const q = this.weigh(termCounts(questionTokens(question)));
    const terms: { p: { docs: Int32Array; weights: Float64Array; max: number }; w: number; bound: number }[] = [];
    for (const [t, w] of q) {
      const p = this.postings.get(t);
      if (p) terms.push({ p, w, bound: w * p.max });
    }
    terms.sort((a, b) => b.bound - a.bound);
    let remaining = 0;
    for (const t of terms) remaining += t.bound;
    const touched: number[] = [];
    const eps = 1e-12;
    for (const { p, w, bound } of terms) {
      const open = remaining >= threshold - eps && remaining > 0;
      for (let i = 0; i < p.docs.length; i++) {
        const d = p.docs[i];
        if (this.mark[d] === 0) {
          if (!open) continue;
          this.mark[d] = 1;
          touched.push(d);
        }
        this.acc[d] += w * p.weights[i];
      }
      remaining -= bound;
    }
    let best: QuestionMatch | null = null;
    for (const d of touched) {
      const s = this.acc[d];
      if (s >= threshold - eps && s > 0 && (best === null || s > best.score || (s === best.score && d < best.train))) best = { train: d, score: s };
      this.acc[d] = 0;
      this.mark[d] = 0;
    }
    return best;
  }
}

function termCounts(tokens: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of tokens) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

/** A test question and its most similar train question, for a person to check. */
export interface OverlapPair {
  /** `answer`: the most similar train question among those sharing an answer; `duplicate`: among all. */
  kind: "answer" | "duplicate";
  test_id: string;
  test_question: string;
  test_answers: string[];
  train_id: string;
  train_question: string;
  train_answers: string[];
  /** TF-IDF cosine, rounded to 4 decimals. */
  similarity: number;
  /** One of the train question's answers equals one of the test answers (normalized). */
  same_answer: boolean;
}

/** A prediction for a test question: matched by id, else by question text. */
export interface Prediction {
  id?: string;
  question?: string;
  answer: string;
}

/**
 * Predictions from JSONL: KILT guesses (`{id, output: [{answer}]}`), EfficientQA style
 * (`{question, prediction}`) or `{id, answer}`.
 */
export async function loadPredictions(file: string): Promise<Prediction[]> {
  const out: Prediction[] = [];
  for await (const { value, line } of readJsonl<Record<string, unknown>>(file)) {
    const o = Array.isArray(value.output) ? (value.output as Record<string, unknown>[]).find((x) => typeof x?.answer === "string") : undefined;
    const answer = typeof o?.answer === "string" ? o.answer : typeof value.prediction === "string" ? value.prediction : typeof value.answer === "string" ? value.answer : null;
    if (answer === null) throw new Error(`${file}:${line}: no answer (expected output[].answer, prediction or answer)`);
    out.push({
      ...(value.id !== undefined ? { id: String(value.id) } : {}),
      ...(typeof value.question === "string" ? { question: value.question } : {}),
      answer,
    });
  }
  return out;
}

/** How a system's predictions relate to the overlap (Lewis et al. 2021, Tables 4 and 5). */
export interface PredictionOverlap {
  /** Test questions with a prediction. */
  predicted: number;
  /** Test questions without one (left out of every rate below). */
  missing: number;
  /** Predictions that are train answers (Table 4, O_test ∩ G_train). */
  inTrainAnswers: number;
  /** Predicted test questions whose gold answers overlap train answers (Table 4, G_test ∩ G_train, same questions). */
  goldInTrainAnswers: number;
  /** Normalized exact match with a gold answer. */
  correct: number;
  /** Table 5: correct/incorrect × prediction in train answers or not. */
  table: { correctOverlap: number; correctNonOverlap: number; incorrectOverlap: number; incorrectNonOverlap: number };
  /** Exact match on Lewis et al.'s subsets: question overlap, answer overlap only, neither. */
  bySubset: Record<"questionOverlap" | "answerOverlapOnly" | "noOverlap", { questions: number; correct: number }>;
}

/** What the test–train overlap analysis found (Lewis et al. 2021): answer overlap, question overlap, near-duplicates, the pairs, and the predictions' breakdown when given. */
export interface OverlapReport {
  train: { questions: number; answers: number };
  test: { questions: number };
  answerOverlap: { overlapping: number; total: number };
  /** Test questions with a train question that shares an answer and has cosine ≥ threshold. */
  questionOverlap: { threshold: number; overlapping: number; total: number };
  /** Test questions whose most similar train question (any answer) has cosine ≥ threshold. */
  nearDuplicates: { threshold: number; overlapping: number; withSameAnswer: number; total: number };
  /** Both kinds of pairs, question-overlap pairs first, each by decreasing similarity. */
  pairs: OverlapPair[];
  predictions?: PredictionOverlap;
}

/** Options of the overlap analysis: similarity thresholds and, optionally, a system's predictions to break down. */
export interface OverlapOptions {
  /** Cosine for question overlap (pairs sharing an answer); default {@link DEFAULT_QUESTION_THRESHOLD}. */
  threshold?: number;
  /** Cosine for a lexical near-duplicate (any answer); default {@link DEFAULT_DUPLICATE_THRESHOLD}. */
  duplicateThreshold?: number;
  predictions?: readonly Prediction[];
}

/** Default question-overlap threshold (docs/analysis.md shows the pairs around it on NQ-open). */
export const DEFAULT_QUESTION_THRESHOLD = 0.5;
/** Default near-duplicate threshold. */
export const DEFAULT_DUPLICATE_THRESHOLD = 0.8;

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/** The overlap analyses of a train/test pair of QA sets. */
export function analyzeOverlap(train: readonly QaItem[], test: readonly QaItem[], options: OverlapOptions = {}): OverlapReport {
  const threshold = options.threshold ?? DEFAULT_QUESTION_THRESHOLD;
  const dupThreshold = options.duplicateThreshold ?? DEFAULT_DUPLICATE_THRESHOLD;
  const trainAnswers = answerSet(train);
  const byAnswer = new Map<string, number[]>();
  train.forEach((x, i) => {
    for (const a of new Set(x.answers.map(normalizeAnswer))) {
      if (a.length === 0) continue;
      let l = byAnswer.get(a);
      if (!l) byAnswer.set(a, (l = []));
      l.push(i);
    }
  });
  const index = new QuestionIndex(train.map((x) => x.question));
  let answerOverlapping = 0;
  const answerPairs: OverlapPair[] = [];
  const dupPairs: OverlapPair[] = [];
  const answerOv: boolean[] = [];
  const questionOv: boolean[] = [];
  const pair = (kind: OverlapPair["kind"], item: QaItem, m: QuestionMatch, testNorm: Set<string>): OverlapPair => {
    const t = train[m.train];
    return {
      kind,
      test_id: item.id,
      test_question: item.question,
      test_answers: item.answers,
      train_id: t.id,
      train_question: t.question,
      train_answers: t.answers,
      similarity: round4(m.score),
      same_answer: t.answers.some((a) => testNorm.has(normalizeAnswer(a))),
    };
  };
  for (const item of test) {
    const testNorm = new Set(item.answers.map(normalizeAnswer).filter((a) => a.length > 0));
    const sharing = new Set<number>();
    for (const a of testNorm) for (const i of byAnswer.get(a) ?? []) sharing.add(i);
    answerOv.push(sharing.size > 0);
    if (sharing.size > 0) answerOverlapping++;
    const qa = sharing.size > 0 ? index.bestAmong(item.question, sharing) : null;
    const qo = qa !== null && qa.score >= threshold - 1e-12;
    questionOv.push(qo);
    if (qo) answerPairs.push(pair("answer", item, qa!, testNorm));
    const dup = index.nearest(item.question, dupThreshold);
    if (dup !== null) dupPairs.push(pair("duplicate", item, dup, testNorm));
  }
  const bySimilarity = (a: OverlapPair, b: OverlapPair) => b.similarity - a.similarity;
  answerPairs.sort(bySimilarity);
  dupPairs.sort(bySimilarity);
  const report: OverlapReport = {
    train: { questions: train.length, answers: trainAnswers.size },
    test: { questions: test.length },
    answerOverlap: { overlapping: answerOverlapping, total: test.length },
    questionOverlap: { threshold, overlapping: answerPairs.length, total: test.length },
    nearDuplicates: { threshold: dupThreshold, overlapping: dupPairs.length, withSameAnswer: dupPairs.filter((p) => p.same_answer).length, total: test.length },
    pairs: [...answerPairs, ...dupPairs],
  };
  if (options.predictions) report.predictions = predictionOverlap(test, options.predictions, trainAnswers, answerOv, questionOv);
  return report;
}

function predictionOverlap(
  test: readonly QaItem[],
  predictions: readonly Prediction[],
  trainAnswers: ReadonlySet<string>,
  answerOv: readonly boolean[],
  questionOv: readonly boolean[],
): PredictionOverlap {
  const byId = new Map<string, string>();
  const byQuestion = new Map<string, string>();
  for (const p of predictions) {
    if (p.id !== undefined && !byId.has(p.id)) byId.set(p.id, p.answer);
    if (p.question !== undefined && !byQuestion.has(p.question)) byQuestion.set(p.question, p.answer);
  }
  const r: PredictionOverlap = {
    predicted: 0,
    missing: 0,
    inTrainAnswers: 0,
    goldInTrainAnswers: 0,
    correct: 0,
    table: { correctOverlap: 0, correctNonOverlap: 0, incorrectOverlap: 0, incorrectNonOverlap: 0 },
    bySubset: { questionOverlap: { questions: 0, correct: 0 }, answerOverlapOnly: { questions: 0, correct: 0 }, noOverlap: { questions: 0, correct: 0 } },
  };
  test.forEach((item, i) => {
    const answer = byId.get(item.id) ?? byQuestion.get(item.question);
    if (answer === undefined) {
      r.missing++;
      return;
    }
    r.predicted++;
    const n = normalizeAnswer(answer);
    const overlap = trainAnswers.has(n);
    const correct = item.answers.some((a) => normalizeAnswer(a) === n);
    if (overlap) r.inTrainAnswers++;
    if (answerOv[i]) r.goldInTrainAnswers++;
    if (correct) r.correct++;
    if (correct && overlap) r.table.correctOverlap++;
    else if (correct) r.table.correctNonOverlap++;
    else if (overlap) r.table.incorrectOverlap++;
    else r.table.incorrectNonOverlap++;
    const subset = questionOv[i] ? r.bySubset.questionOverlap : answerOv[i] ? r.bySubset.answerOverlapOnly : r.bySubset.noOverlap;
    subset.questions++;
    if (correct) subset.correct++;
  });
  return r;
}

/**
 * Lewis et al.'s nearest-neighbour baseline: each test question gets the first answer of its most
 * similar train question (any positive cosine), as a KILT guess `{id, input, output: [{answer}]}`;
 * questions sharing no term with any train question get none.
 */
export function nearestNeighbourPredictions(train: readonly QaItem[], test: readonly QaItem[]): { id: string; input: string; output: { answer: string }[] }[] {
  const index = new QuestionIndex(train.map((x) => x.question));
  const out: { id: string; input: string; output: { answer: string }[] }[] = [];
  for (const item of test) {
    const m = index.nearest(item.question, Number.MIN_VALUE);
    if (m === null || train[m.train].answers.length === 0) continue;
    out.push({ id: item.id, input: item.question, output: [{ answer: train[m.train].answers[0] }] });
  }
  return out;
}

const pct = (a: number, b: number) => (b === 0 ? "0.0%" : `${((100 * a) / b).toFixed(1)}%`);
const fmt = (n: number) => n.toLocaleString("en-US");

/** The report as the paper's tables, in plain text. */
export function formatOverlapReport(r: OverlapReport): string {
  const lines = [
    `train: ${fmt(r.train.questions)} questions, ${fmt(r.train.answers)} distinct normalized answers; test: ${fmt(r.test.questions)} questions`,
    `answer overlap (a test answer is a train answer): ${fmt(r.answerOverlap.overlapping)} / ${fmt(r.answerOverlap.total)} = ${pct(r.answerOverlap.overlapping, r.answerOverlap.total)}`,
    `question overlap (a train question sharing an answer, TF-IDF cosine ≥ ${r.questionOverlap.threshold}): ${fmt(r.questionOverlap.overlapping)} / ${fmt(r.questionOverlap.total)} = ${pct(r.questionOverlap.overlapping, r.questionOverlap.total)}`,
    `near-duplicate questions (any train question, cosine ≥ ${r.nearDuplicates.threshold}): ${fmt(r.nearDuplicates.overlapping)} = ${pct(r.nearDuplicates.overlapping, r.nearDuplicates.total)}, ${fmt(r.nearDuplicates.withSameAnswer)} of them with a shared answer`,
  ];
  const p = r.predictions;
  if (p) {
    const n = p.predicted;
    lines.push(
      `predictions: ${fmt(n)} test questions predicted${p.missing ? `, ${fmt(p.missing)} without a prediction (left out)` : ""}; exact match ${pct(p.correct, n)}`,
      `  predictions that are train answers (O_test ∩ G_train): ${pct(p.inTrainAnswers, n)}; gold answers that are (G_test ∩ G_train): ${pct(p.goldInTrainAnswers, n)}`,
      `${" ".repeat(15)}${"in train answers".padEnd(21)}not in train answers`,
      `  correct      ${cell(p.table.correctOverlap, n)}${cell(p.table.correctNonOverlap, n).trimEnd()}`,
      `  incorrect    ${cell(p.table.incorrectOverlap, n)}${cell(p.table.incorrectNonOverlap, n).trimEnd()}`,
      `  exact match: question overlap ${sub(p.bySubset.questionOverlap)}, answer overlap only ${sub(p.bySubset.answerOverlapOnly)}, no overlap ${sub(p.bySubset.noOverlap)}`,
    );
  }
  return lines.join("\n");
}

function cell(a: number, n: number): string {
  return `${pct(a, n)} (${fmt(a)})`.padEnd(21);
}
function sub(s: { questions: number; correct: number }): string {
  return `${pct(s.correct, s.questions)} of ${fmt(s.questions)}`;
}

/** What {@link overlapFromFiles} reads and writes (the options of `tartan analyze overlap`). */
export interface OverlapFileOptions {
  /** Train questions, or the file to split with `split`. */
  train: string;
  /** Test questions (else `split`). */
  test?: string;
  /** No `test`: the first K articles (or questions) of `train` are train, the rest test. */
  split?: number;
  /** Predictions for the test questions (may be `nnPredictions`, read back after it is written). */
  predictions?: string;
  threshold?: number;
  duplicateThreshold?: number;
  /** Write the matched question pairs (JSONL). */
  pairs?: string;
  /** Write the nearest-neighbour baseline's predictions (KILT guesses). */
  nnPredictions?: string;
}

/** The report of {@link overlapFromFiles}, how the sets were made, and what it wrote. */
export interface OverlapFileResult {
  report: OverlapReport;
  /** How train and test were made ("train A, test B", or the split). */
  how: string;
  /** Nearest-neighbour predictions written to `nnPredictions`, when asked. */
  nnPredictions?: number;
}

/** `tartan analyze overlap`: loads the sets (splitting `train` when asked), writes what is asked, analyzes. */
export async function overlapFromFiles(o: OverlapFileOptions): Promise<OverlapFileResult> {
  if ((o.test === undefined) === (o.split === undefined)) throw new Error("analyze overlap: give --test FILE, or --split K to split --train (first K articles, or first K questions) ");
  // nnPredictions may be read back as predictions after it is written.
  assertOutputsNotInputs([o.pairs, o.nnPredictions], [o.train, o.test, o.predictions === o.nnPredictions ? undefined : o.predictions]);
  let train = (await loadQaItems(o.train)).items;
  let test: QaItem[];
  let how: string;
  if (o.test !== undefined) {
    test = (await loadQaItems(o.test)).items;
    how = `train ${o.train}, test ${o.test}`;
  } else {
    const s = splitItems(train, o.split!);
    train = s.train;
    test = s.test;
    how = `${o.train} split by ${s.by}: the first ${o.split} ${s.by}s train, the rest test`;
  }
  let nnPredictions: number | undefined;
  if (o.nnPredictions) {
    const nn = nearestNeighbourPredictions(train, test);
    await writeJsonl(o.nnPredictions, nn);
    nnPredictions = nn.length;
  }
  const predictions = o.predictions ? await loadPredictions(o.predictions) : undefined;
  const report = analyzeOverlap(train, test, { threshold: o.threshold, duplicateThreshold: o.duplicateThreshold, predictions });
  if (o.pairs) await writeJsonl(o.pairs, report.pairs);
  return { report, how, ...(nnPredictions !== undefined ? { nnPredictions } : {}) };
}
