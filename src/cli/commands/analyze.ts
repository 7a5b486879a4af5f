// `tartan analyze`: closed-book analyses. `overlap` (test–train answer, question and prediction
// overlap, the paper's Tables 3–5), `recite build` (the reciting probe and fine-tuning files from SQuAD)
// and `recite score` (the strict reciting accuracy of a model's outputs).

import { InvalidArgumentError, type Command } from "commander";
import { DEFAULT_DUPLICATE_THRESHOLD, DEFAULT_QUESTION_THRESHOLD, formatOverlapReport, overlapFromFiles, type OverlapFileOptions, type OverlapReport } from "../../analysis/overlap.js";
import { buildReciteFiles, scoreRecitationFiles, type ReciteBuildStats, type ReciteScore } from "../../analysis/recite.js";
import { nonNegativeInt, positiveInt } from "../options.js";

function unitInterval(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new InvalidArgumentError("expected a number in (0, 1]");
  return n;
}
function triple(v: string): [number, number, number] {
  const xs = v.split(",").map((x) => Number(x.trim()));
  if (xs.length !== 3 || xs.some((x) => !Number.isFinite(x) || x < 0)) throw new InvalidArgumentError('expected three numbers, e.g. "16,2,2" or "0.8,0.1,0.1"');
  return [xs[0], xs[1], xs[2]];
}

export interface OverlapCliOptions extends OverlapFileOptions {
  threshold: number;
  duplicateThreshold: number;
  json?: boolean;
}

/** `analyze overlap`: the library does the work (../../analysis/overlap.ts); this prints its report. */
export async function runOverlap(o: OverlapCliOptions, log: (s: string) => void): Promise<OverlapReport> {
  const { report, how, nnPredictions } = await overlapFromFiles(o);
  if (nnPredictions !== undefined) log(`nearest-neighbour predictions (answer of the most similar train question): ${nnPredictions} → ${o.nnPredictions}`);
  if (o.json) log(JSON.stringify({ ...report, pairs: undefined, pairsWritten: o.pairs ?? null }, null, 2));
  else {
    log(how);
    log(formatOverlapReport(report));
    if (o.pairs) log(`${report.pairs.length} pairs to check → ${o.pairs}`);
  }
  return report;
}

export interface ReciteBuildCliOptions {
  out: string;
  passages?: number;
  markers?: boolean;
  qaSplit?: [number, number, number];
}

export function runReciteBuild(squadFile: string, o: ReciteBuildCliOptions, log: (s: string) => void): ReciteBuildStats {
  const st = buildReciteFiles(squadFile, o.out, { passages: o.passages, markers: o.markers, qaSplit: o.qaSplit });
  log(`${st.passages} passages, ${st.masks} masked answer spans, ${st.questions} questions → ${o.out}${o.markers ? " (with <passage>/<question> markers)" : ""}`);
  log(`QA split by passage: train ${st.qa.train.passages} (${st.qa.train.questions} questions), valid ${st.qa.valid.passages} (${st.qa.valid.questions}), test ${st.qa.test.passages} (${st.qa.test.questions})`);
  return st;
}

export interface ReciteScoreCliOptions {
  probe: string;
  predictions: string;
  window: number;
  details?: string;
  json?: boolean;
}

export async function runReciteScore(o: ReciteScoreCliOptions, log: (s: string) => void): Promise<ReciteScore> {
  const score = await scoreRecitationFiles(o);
  if (o.json) log(JSON.stringify(score, null, 2));
  else
    log(
      `reciting accuracy: ${score.correct} / ${score.spans} masked spans = ${(100 * score.accuracy).toFixed(1)}% (mean per passage ${(100 * score.passageMean).toFixed(1)}%) over ${score.passages - score.missing} passages${score.missing ? `, ${score.missing} without a recitation` : ""}; window ${o.window} tokens`,
    );
  return score;
}

export function registerAnalyze(program: Command): void {
  const analyze = program.command("analyze").description("closed-book analyses: test-train overlap, the reciting probe");
  const out = (s: string) => process.stdout.write(`${s}\n`);

  analyze
    .command("overlap")
    .description("answer, question and prediction overlap between a train and a test set (SQuAD JSON, NQ-open/EfficientQA JSONL or KILT JSONL)")
    .requiredOption("--train <file>", "train questions (or the file to split with --split)")
    .option("--test <file>", "test questions")
    .option("--split <k>", "no --test: the first K articles (SQuAD, KILT records with meta.article_index) or first K questions of --train are train, the rest test", nonNegativeInt)
    .option("--predictions <file>", "predictions for the test questions: KILT guesses {id, output:[{answer}]}, {question, prediction} or {id, answer}")
    .option("--threshold <cos>", "question overlap: TF-IDF cosine with a train question that shares an answer", unitInterval, DEFAULT_QUESTION_THRESHOLD)
    .option("--duplicate-threshold <cos>", "near-duplicates: TF-IDF cosine with any train question", unitInterval, DEFAULT_DUPLICATE_THRESHOLD)
    .option("--pairs <file>", "write the matched question pairs (JSONL) for a person to check")
    .option("--nn-predictions <file>", "write the nearest-neighbour baseline's predictions (KILT guesses) and analyze them unless --predictions is given")
    .option("--json", "print the report as JSON")
    .action(async (o: OverlapCliOptions) => {
      if (o.nnPredictions && !o.predictions) o.predictions = o.nnPredictions;
      await runOverlap(o, out);
    });

  const recite = analyze.command("recite").description("the reciting probe of Wang et al. (2021): build the fine-tuning files, score recitations");
  recite
    .command("build")
    .description("SQuAD passages → LM passages, the reciting probe (answer spans masked), QA and QA-bridge source/target files")
    .argument("<squad>", "SQuAD JSON (v1.1 or v2.0)")
    .requiredOption("--out <dir>", "output directory")
    .option("--passages <n>", "only the first N passages (the paper's subsets: 20, 160, 547, …)", positiveInt)
    .option("--markers", "add <passage>/<question> prefixes and </passage>, </question>, </answer> suffixes")
    .option("--qa-split <a,b,c>", "passages for QA train,valid,test: counts or fractions", triple)
    .action((squad: string, o: ReciteBuildCliOptions) => {
      runReciteBuild(squad, o, out);
    });
  recite
    .command("score")
    .description("reciting accuracy: a masked span counts only if it and the words after it (to the next mask, at most --window tokens) are reproduced")
    .requiredOption("--probe <recite.jsonl>", "the probe written by `recite build`")
    .requiredOption("--predictions <file>", "recitations: one per line in probe order, or JSONL {id, prediction}")
    .option("--window <n>", "tokens after a span that must also be right", nonNegativeInt, 10)
    .option("--details <file>", "write per-passage span results (JSONL)")
    .option("--json", "print the score as JSON")
    .action(async (o: ReciteScoreCliOptions) => {
      await runReciteScore(o, out);
    });
}
