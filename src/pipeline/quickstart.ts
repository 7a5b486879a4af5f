// The main job of the quick start, end to end on the small real knowledge source: SQuAD v1.1 dev
// becomes KILT pages and KILT records, the paragraphs are indexed with BM25, an extractive reader is
// trained on the first half of the articles (passages retrieved by the same index), the questions of
// the other half are answered through the pipeline (retrieve, read, write KILT predictions with
// provenance), and the predictions are scored with the KILT evaluator at page and paragraph level.
// Every step says what it does on standard error; the results go to a table, report.md and report.html.

import { rmSync } from "node:fs";
import { join } from "node:path";
import { evaluate, type EvalResult } from "../eval/evaluate.js";
import { readJsonlAll, writeJsonl } from "../records/jsonl.js";
import type { KiltRecord } from "../records/types.js";
import { ExtractiveReader } from "../readers/extractive/reader.js";
import { loadSquad, splitByArticle } from "../readers/extractive/squad-data.js";
import { trainReader } from "../readers/extractive/train.js";
import type { ReaderPassage } from "../readers/types.js";
import { buildBm25Index } from "../retrieval/bm25/build.js";
import { openBm25 } from "../retrieval/bm25/search.js";
import { ingest } from "../knowledge/ingest.js";
import { provenanceText } from "../knowledge/span.js";
import { KnowledgeSource } from "../knowledge/store.js";
import { unitsFrom } from "../retrieval/sources.js";
import { unitProvenance } from "../retrieval/units/unit.js";
import { headlineTable, htmlReport, markdownReport, type SystemResult } from "./report.js";
import { runPipeline, runSidecar, type TextMode } from "./run.js";
import { compareRuns } from "../compare/compare.js";
import { formatP, renderComparison } from "../compare/render.js";
import { scorePredictions } from "../compare/scores.js";
import { openRunsStore } from "../runs/open.js";
import { makeRun } from "../runs/record.js";
import { progressDrawer, type OnProgress, type ProgressOptions } from "../util/progress.js";
import { makeDirs, writeFileSafe } from "../util/safe-output.js";

/** Options of {@link quickstart}. */
export interface QuickstartOptions {
  squad: string;
  work: string;
  /** Passages retrieved per question. Default 20. */
  topK?: number;
  /** Passages the reader reads. Default 5. */
  readerK?: number;
  /** Answer only the first N held-out questions (all by default). */
  limit?: number;
  /** Train on only the first N training questions (all by default; for quick checks). */
  trainLimit?: number;
  /** Passage text in the predictions' provenance (see `tartan run --text`); default cited. */
  text?: TextMode;
  /** Called with each line saying what the quick start does; default: silent. */
  log?: (line: string) => void;
  /**
   * Where the long steps (retrieval for training, features, training epochs, answering) report their
   * progress, one count line each (questions done of the step's total); absent: nothing is reported.
   */
  onProgress?: OnProgress;
  /**
   * Without `onProgress`: draw those lines (items, rate, ETA), on a terminal only (`enabled` forces it);
   * none when left out.
   */
  progress?: Pick<ProgressOptions, "enabled" | "stream">;
}

/** One long step's count line. */
interface StepProgress {
  update(items: number): void;
  done(): void;
}

/** What {@link quickstart} produced: the evaluated system, the paragraph-level evaluation, the printed table, the files written and the seconds per step. */
export interface QuickstartResult {
  systems: SystemResult[];
  paragraphLevel: EvalResult;
  table: string;
  reportMd: string;
  reportHtml: string;
  predictions: string;
  seconds: Record<string, number>;
}

/** Runs the quick start end to end (see the module comment) and returns its results, report paths and the seconds per step. */
export async function quickstart(options: QuickstartOptions): Promise<QuickstartResult> {
  const log = options.log ?? (() => {});
  const topK = options.topK ?? 20;
  const readerK = options.readerK ?? 5;
  const seconds: Record<string, number> = {};
  let t = Date.now();
  const step = (name: string) => {
    const now = Date.now();
    seconds[name] = (now - t) / 1000;
    t = now;
  };
  makeDirs(options.work);
  // one progress line per long step; nothing unless options.onProgress or options.progress is given
  const onProgress = options.onProgress ?? (options.progress ? progressDrawer(options.progress) : null);
  const bar = (label: string, unit: string, totalItems: number): StepProgress | null => {
    if (!onProgress) return null;
    const line = { label, unit, totalItems, countItems: true };
    return { update: (items) => onProgress({ ...line, items }), done: () => onProgress({ ...line, items: 0, done: true }) };
  };

  log(`1/6 converting SQuAD (${options.squad}) into KILT pages and records`);
  const squad = loadSquad(options.squad);
  const pagesFile = join(options.work, "pages.jsonl");
  await writeJsonl(pagesFile, squad.pages);
  const { train: allTrain, test: allTest, half } = splitByArticle(squad.records, squad.articles);
  const train = options.trainLimit ? allTrain.slice(0, options.trainLimit) : allTrain;
  const test = options.limit ? allTest.slice(0, options.limit) : allTest;
  const goldFile = join(options.work, "test-gold.jsonl");
  await writeJsonl(goldFile, test);
  log(`    ${squad.pages.length} pages, ${squad.records.length} questions; training on articles 0-${half - 1} (${train.length} questions), testing on ${half}-${squad.articles - 1} (${test.length} questions)`);
  step("data");

  log("2/6 building the knowledge source (tartan ks ingest) and indexing its paragraphs with BM25 (Lucene's EnglishAnalyzer, k1 0.9, b 0.4)");
  const ksDir = join(options.work, "ks");
  const ingested = await ingest(pagesFile, { out: ksDir, force: true, workers: 0 });
  if (ingested.pages !== squad.pages.length) throw new Error(`the store holds ${ingested.pages} pages, expected ${squad.pages.length}`);
  const indexDir = join(options.work, "index-bm25");
  rmSync(indexDir, { recursive: true, force: true });
  const built = await buildBm25Index(unitsFrom({ ks: ksDir }, { unit: "paragraph" }), indexDir, { unit: "paragraph", source: ksDir });
  const retriever = await openBm25(indexDir);
  log(`    ${ingested.pages} pages in ${ksDir}; ${built.units} paragraphs indexed, ${built.terms} terms`);
  step("index");

  log(`3/6 training the extractive reader on the training articles (top ${readerK} retrieved passages per question)`);
  const items: { record: KiltRecord; passages: ReaderPassage[] }[] = [];
  const retrieving = bar("    retrieving", "questions", train.length);
  for (const record of train) {
    const hits = await retriever.search(record.input ?? "", readerK);
    const passages = hits.map((h) => {
      const u = retriever.units.get(h.unit);
      return { text: u.text, provenance: unitProvenance(u, h.score, false), score: h.score };
    });
    items.push({ record, passages });
    retrieving?.update(items.length);
  }
  retrieving?.done();
  const featuring = bar("    candidates and features", "questions", train.length);
  let training: StepProgress | null = null;
  const { model, stats } = trainReader(items, {
    seed: 1,
    onFeatures: (done) => featuring?.update(done),
    onBatch: (done, total) => {
      if (training === null) {
        featuring?.done();
        training = bar("    training (10 epochs)", "questions", total);
      }
      training?.update(done);
    },
  });
  const trained = training as StepProgress | null; // (assigned in the callback)
  if (trained) trained.done();
  else featuring?.done();
  const modelFile = join(options.work, "reader-model.json");
  writeFileSafe(modelFile, JSON.stringify(model.toJSON()));
  log(`    trained on ${stats.used} questions (${stats.noPositive} without the answer among their candidates)`);
  step("train");

  log(`4/6 answering the ${test.length} held-out questions: BM25 top ${topK}, reader on the top ${readerK}`);
  const predictions = join(options.work, "test-predictions.jsonl");
  rmSync(predictions, { force: true });
  rmSync(runSidecar(predictions), { force: true });
  const reader = new ExtractiveReader(model);
  const answering = bar("    answering", "questions", test.length);
  const run = await runPipeline(goldFile, predictions, retriever, reader, {
    topK,
    readerK,
    text: options.text ?? "cited",
    onProgress: (written) => answering?.update(written),
  });
  answering?.done();
  if (run.failed.length > 0) throw new Error(`${run.failed.length} records failed, first: ${run.failed[0].id}: ${run.failed[0].error}`);
  // BM25 alone (its ranking, no reader) for the comparison in the report
  const bm25Alone: KiltRecord[] = [];
  for (const record of test) {
    const hits = await retriever.search(record.input ?? "", topK);
    bm25Alone.push({ id: record.id, output: [{ provenance: hits.map((h) => unitProvenance(retriever.units.get(h.unit), h.score, false)) }] } as KiltRecord);
  }
  await retriever.close();
  step("answer");

  log("5/6 evaluating with the KILT evaluator (page level, then paragraph level)");
  // The file keeps only the cited passages' text (--text cited): the context metrics are computed with
  // every retrieved passage's text, so answer_in_context@20 means the top 20, as `tartan run --text full`.
  const scored = await withPassageTexts(predictions, ksDir);
  const pageLevel = await evaluate(goldFile, scored, { ks: [1, 5, 20] });
  const paragraphLevel = await evaluate(goldFile, scored, { ks: [1, 5, 20], rankKeys: ["wikipedia_id", "start_paragraph_id"], mode: "retrieval" });
  const comparison = await compareWithBm25(goldFile, bm25Alone, predictions, options.work, indexDir, { topK, readerK });
  step("evaluate");

  log("6/6 writing the report");
  const systems: SystemResult[] = [{ name: "BM25 + extractive reader", result: pageLevel }];
  const notes = [
    `Knowledge source: SQuAD v1.1 dev (${squad.pages.length} Wikipedia articles, 2,067 paragraphs) as KILT pages.`,
    `Reader trained on ${train.length} questions of articles 0-${half - 1}; evaluated on ${test.length} questions of articles ${half}-${squad.articles - 1} (never the same articles).`,
    `Retrieval: BM25 over paragraphs (title + text), top ${topK}; the reader reads the top ${readerK}.`,
    `Paragraph-level retrieval: R-precision ${fmt(paragraphLevel.eval_retrieval?.Rprec)}, recall@5 ${fmt(paragraphLevel.eval_retrieval?.["recall@5"])}, recall@20 ${fmt(paragraphLevel.eval_retrieval?.["recall@20"])}.`,
    ...comparison,
    `Time: ${Object.entries(seconds)
      .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
      .join(", ")}.`,
  ];
  const report = { title: "tartan quick start: SQuAD as a KILT task", notes, systems };
  const reportMd = join(options.work, "report.md");
  const reportHtml = join(options.work, "report.html");
  writeFileSafe(reportMd, markdownReport(report));
  writeFileSafe(reportHtml, htmlReport(report));
  return { systems, paragraphLevel, table: headlineTable(systems), reportMd, reportHtml, predictions, seconds };
}

/** The predictions of `file` with the text of every provenance entry that has none, read from the store. */
async function withPassageTexts(file: string, ksDir: string): Promise<KiltRecord[]> {
  const ks = KnowledgeSource.open(ksDir);
  try {
    const records = await readJsonlAll<KiltRecord>(file);
    for (const r of records)
      for (const o of r.output ?? [])
        for (const p of o.provenance ?? []) {
          if (p.text !== undefined) continue;
          const page = ks.getPageById(String(p.wikipedia_id));
          if (page) p.text = provenanceText(page, p);
        }
    return records;
  } finally {
    ks.close();
  }
}

function fmt(v: number | undefined): string {
  return v === undefined ? "-" : (100 * v).toFixed(2);
}

/**
 * BM25 alone against BM25 + reader at paragraph level (the reader moves its evidence to rank 1), with
 * the significance of the difference; the pipeline's run is recorded in `work/runs` so the first
 * `tartan leaderboard --runs work/runs` is not empty. Returns the report's lines.
 */
async function compareWithBm25(gold: string, bm25Alone: KiltRecord[], predictions: string, work: string, indexDir: string, settings: { topK: number; readerK: number }): Promise<string[]> {
  const rankKeys = ["wikipedia_id", "start_paragraph_id"];
  const alone = await scorePredictions(gold, bm25Alone, { rankKeys, mode: "retrieval" });
  const read = await scorePredictions(gold, predictions, { rankKeys, mode: "retrieval" });
  const table = compareRuns(
    [
      { name: "BM25 alone", ...alone.scores },
      { name: "BM25 + extractive reader", ...read.scores },
    ],
    { metrics: ["Rprec", "recall@5"] },
  );
  const store = await openRunsStore(join(work, "runs"));
  try {
    const run = await makeRun({ gold, guess: predictions, name: "quickstart", system: "BM25 + extractive reader", dataset: "squad", notes: "tartan quickstart", indexes: [indexDir], reader: settings });
    await store.add(run, { replace: true });
  } finally {
    await store.close();
  }
  writeFileSafe(join(work, "comparison.md"), `${renderComparison(table, "markdown")}\n`);
  const parts = table.metrics.map((m) => {
    const c = table.runs[1].comparisons![m];
    return `${m} ${(100 * table.runs[0].cells[m].mean).toFixed(2)} → ${(100 * table.runs[1].cells[m].mean).toFixed(2)} (Δ ${(100 * c.difference).toFixed(2)}, p ${formatP(c.adjusted)}${c.significant ? ", significant" : ""}, wins/ties/losses ${c.wins}/${c.ties}/${c.losses})`;
  });
  return [
    `BM25 alone → BM25 + reader, paragraph level (Fisher's randomization test, 10,000 sign flips, Holm): ${parts.join("; ")}. Table: ${join(work, "comparison.md")}; the run is recorded in ${join(work, "runs")} (tartan leaderboard --runs ${join(work, "runs")}).`,
  ];
}
