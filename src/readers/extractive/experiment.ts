// The extractive reader's experiments over files, as `tartan reader train|eval` runs them: questions and
// their pages from a SQuAD file (or KILT pages and records), an article range chosen so train and test
// never share an article, passages from the question's own article or from a retriever's top hits; a
// model trained and written, or a model's answers scored with the KILT evaluator.

import { evaluate } from "../../eval/evaluate.js";
import type { DownstreamResult } from "../../eval/sections.js";
import { readJsonlAll, writeJsonl } from "../../records/jsonl.js";
import type { KiltPage, KiltRecord } from "../../records/types.js";
import type { Retriever } from "../../retrieval/types.js";
import { assertOutputsNotInputs, writeFileSafe } from "../../util/safe-output.js";
import { answerRecord, type ReaderPassage } from "../types.js";
import { ExtractiveReader } from "./reader.js";
import { retrievedPassages } from "./retrieved.js";
import { ArticlePassages, articleIndex, loadSquad } from "./squad-data.js";
import { trainReader, type ReaderTrainOptions, type TrainStats } from "./train.js";

/** Article range [from, to) for "first-half", "second-half", "all" or "A-B" (inclusive indexes). */
export function articleRange(spec: string, articles: number): [number, number] {
  const half = Math.floor(articles / 2);
  if (spec === "first-half") return [0, half];
  if (spec === "second-half") return [half, articles];
  if (spec === "all") return [0, articles];
  const m = /^(\d+)-(\d+)$/.exec(spec);
  if (m) return [Number(m[1]), Number(m[2]) + 1];
  throw new Error(`--articles: first-half, second-half, all or A-B, got "${spec}"`);
}

/** Where a reader experiment's questions and passages come from. */
export interface ReaderDataOptions {
  /** SQuAD JSON (v1.1): pages and records are built from it. */
  squad?: string;
  /** KILT pages, with `records`. */
  pages?: string;
  /** KILT records with meta.article_index, with `pages`. */
  records?: string;
  /** first-half | second-half | all | A-B (article indexes). */
  articles: string;
  /** Passages per question. */
  passages: number;
  /** Only the first n records of the range. */
  limit?: number;
  /** Read the retriever's top hits instead of the question's own article (the caller opens and closes it). */
  retriever?: Retriever;
}

/** The records of an article range and the passages each question is read from. */
export interface ReaderData {
  records: KiltRecord[];
  range: [number, number];
  /** The passages a question is read from: its article's, or the retriever's top hits. */
  passagesFor(record: KiltRecord): Promise<ReaderPassage[]>;
}

/** The input files a data option names (for the outputs-are-not-inputs check). */
function inputsOf(o: ReaderDataOptions): (string | undefined)[] {
  return [o.squad, o.pages, o.records];
}

/** Loads the questions of the article range and how their passages are found. */
export async function readerData(o: ReaderDataOptions): Promise<ReaderData> {
  let pages: KiltPage[];
  let all: KiltRecord[];
  let articles: number;
  if (o.squad) ({ pages, records: all, articles } = loadSquad(o.squad));
  else {
    if (!o.pages || !o.records) throw new Error("give --squad FILE, or --pages PAGES.jsonl and --records RECORDS.jsonl");
    pages = await readJsonlAll<KiltPage>(o.pages);
    all = await readJsonlAll<KiltRecord>(o.records);
    articles = Math.max(pages.length, ...all.map((r) => articleIndex(r) + 1));
  }
  const range = articleRange(o.articles, articles);
  let records = all.filter((r) => articleIndex(r) >= range[0] && articleIndex(r) < range[1]);
  if (o.limit !== undefined) records = records.slice(0, o.limit);
  const k = o.passages;
  const retriever = o.retriever;
  const article = new ArticlePassages(pages, k);
  return { records, range, passagesFor: async (r) => (retriever ? retrievedPassages(retriever, r.input ?? "", k) : article.for(r)) };
}

/** `tartan reader train`: trains the span ranker on the range's questions and writes the model to `out`. */
export async function trainReaderOn(
  o: ReaderDataOptions & { out: string; train?: ReaderTrainOptions; index?: string },
): Promise<{ stats: TrainStats; range: [number, number] }> {
  assertOutputsNotInputs([o.out], inputsOf(o));
  const { records, range, passagesFor } = await readerData(o);
  const items = [];
  for (const record of records) items.push({ record, passages: await passagesFor(record) });
  const { model, stats } = trainReader(items, o.train);
  Object.assign(model.training, { articles: range, passages: o.passages, source: o.squad ?? o.records, index: o.index ?? null });
  writeFileSafe(o.out, `${JSON.stringify(model.toJSON(), null, 1)}\n`);
  return { stats, range };
}

/** `tartan reader eval`: the model's answers to the range's questions, scored (and written to `out` when given). */
export async function evalReaderOn(o: ReaderDataOptions & { model: string; out?: string }): Promise<{ records: number; range: [number, number]; result: DownstreamResult }> {
  assertOutputsNotInputs([o.out], [...inputsOf(o), o.model]);
  const reader = ExtractiveReader.load(o.model);
  const { records, range, passagesFor } = await readerData(o);
  const guesses: KiltRecord[] = [];
  for (const r of records) guesses.push(answerRecord(r, await reader.read(r, await passagesFor(r))));
  if (o.out) await writeJsonl(o.out, guesses);
  const res = await evaluate(records, guesses, {});
  if (!res.eval_downstream) throw new Error(`evaluation failed: ${res.problems.map((p) => p.message).join(", ")}`);
  return { records: records.length, range, result: res.eval_downstream };
}
