// `tartan analyze`: closed-book analyses. `overlap` (test–train answer, question and prediction
// overlap, the paper's Tables 3–5), `recite build` (the reciting probe and fine-tuning files from SQuAD)
// and `recite score` (the strict reciting accuracy of a model's outputs).

import { readFileSync } from "node:fs";
import { InvalidArgumentError, type Command } from "commander";
import {
  analyzeOverlap,
  DEFAULT_DUPLICATE_THRESHOLD,
  DEFAULT_QUESTION_THRESHOLD,
  formatOverlapReport,
  loadPredictions,
  loadQaItems,
  nearestNeighbourPredictions,
  splitItems,
  type OverlapReport,
} from "../../analysis/overlap.js";
import { recitePassages, scoreRecitations, writeReciteFiles, type ProbeItem, type ReciteBuildStats, type ReciteScore } from "../../analysis/recite.js";
import { readSquadFile } from "../../knowledge/squad.js";
import { readJsonlAll, writeJsonl } from "../../records/jsonl.js";
import { assertOutputsNotInputs } from "../../util/safe-output.js";
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

export interface OverlapCliOptions {
  train: string;
  test?: string;
  split?: number;
  predictions?: string;
  threshold: number;
  duplicateThreshold: number;
  pairs?: string;
  nnPredictions?: string;
  json?: boolean;
}

/** `analyze overlap`: loads, splits, analyzes, writes the pair list and NN predictions when asked. */
export async function runOverlap(o: OverlapCliOptions, log: (s: string) => void): Promise<OverlapReport> {
  if ((o.test === undefined) === (o.split === undefined)) throw new Error("analyze overlap: give --test FILE, or --split K to split --train (first K articles, or first K questions) ");
  // --nn-predictions may be read back as --predictions after it is written (the CLI does that).
  assertOutputsNotInputs([o.pairs, o.nnPredictions], [o.train, o.test, o.predictions === o.nnPredictions ? undefined : o.predictions]);
  const trainFile = await loadQaItems(o.train);
  let train = trainFile.items;
  let test;
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
  if (o.nnPredictions) {
    const nn = nearestNeighbourPredictions(train, test);
    await writeJsonl(o.nnPredictions, nn);
    log(`nearest-neighbour predictions (answer of the most similar train question): ${nn.length} → ${o.nnPredictions}`);
  }
  const predictions = o.predictions ? await loadPredictions(o.predictions) : undefined;
  const report = analyzeOverlap(train, test, { threshold: o.threshold, duplicateThreshold: o.duplicateThreshold, predictions });
  if (o.pairs) await writeJsonl(o.pairs, report.pairs);
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
  const passages = recitePassages(readSquadFile(squadFile), o.passages ?? Infinity);
  const st = writeReciteFiles(o.out, passages, { markers: o.markers, qaSplit: o.qaSplit });
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

/** Recitations aligned with the probe: plain lines in order, or JSONL `{id, prediction|output|recitation}` matched by id. */
async function loadRecitations(file: string, items: readonly ProbeItem[]): Promise<(string | null)[]> {
  if (/\.jsonl(\.gz)?$/i.test(file)) {
    const byId = new Map<string, string>();
    for (const r of await readJsonlAll<Record<string, unknown>>(file)) {
      const text = [r.prediction, r.recitation, r.output].find((x): x is string => typeof x === "string");
      if (text !== undefined && r.id !== undefined) byId.set(String(r.id), text);
    }
    return items.map((it) => byId.get(it.id) ?? null);
  }
  const lines = readFileSync(file, "utf8").split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  if (lines.length !== items.length) throw new Error(`${file}: ${lines.length} lines for ${items.length} probe passages (one recitation per line, in probe order)`);
  return lines;
}

export async function runReciteScore(o: ReciteScoreCliOptions, log: (s: string) => void): Promise<ReciteScore> {
  assertOutputsNotInputs([o.details], [o.probe, o.predictions]);
  const items = await readJsonlAll<ProbeItem>(o.probe);
  const outputs = await loadRecitations(o.predictions, items);
  const { score, perItem } = scoreRecitations(items, outputs, o.window);
  if (o.details) await writeJsonl(o.details, items.map((it, i) => ({ id: it.id, correct: perItem[i] })));
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
