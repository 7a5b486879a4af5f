// `tartan reader train` and `tartan reader eval`: the extractive span ranker trained on SQuAD-style
// KILT records and scored with the KILT evaluator, split by article so train and test never share one.

import { writeFileSafe } from "../../util/safe-output.js";
import type { Command } from "commander";
import { evaluate } from "../../eval/index.js";
import { readJsonlAll, writeJsonl } from "../../records/jsonl.js";
import type { KiltPage, KiltRecord } from "../../records/types.js";
import { openRetriever } from "../../backends/open.js";
import type { Retriever } from "../../retrieval/types.js";
import { ExtractiveReader } from "../../readers/extractive/reader.js";
import { retrievedPassages } from "../../readers/extractive/retrieved.js";
import { ArticlePassages, articleIndex, loadSquad } from "../../readers/extractive/squad-data.js";
import { trainReader } from "../../readers/extractive/train.js";
import { answerRecord, type ReaderPassage } from "../../readers/types.js";

interface DataFlags {
  squad?: string;
  pages?: string;
  records?: string;
  articles: string;
  passages: string;
  index?: string;
  limit?: string;
}

function int(name: string, v: string, min = 1): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${v}"`);
  return n;
}

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

async function loadData(f: DataFlags): Promise<{ pages: KiltPage[]; records: KiltRecord[]; articles: number }> {
  if (f.squad) return loadSquad(f.squad);
  if (!f.pages || !f.records) throw new Error("give --squad FILE, or --pages PAGES.jsonl and --records RECORDS.jsonl");
  const pages = await readJsonlAll<KiltPage>(f.pages);
  const records = await readJsonlAll<KiltRecord>(f.records);
  const articles = Math.max(pages.length, ...records.map((r) => articleIndex(r) + 1));
  return { pages, records, articles };
}

async function selected(f: DataFlags): Promise<{
  records: KiltRecord[];
  range: [number, number];
  passagesFor: (r: KiltRecord) => Promise<ReaderPassage[]>;
  close: () => Promise<void>;
}> {
  const data = await loadData(f);
  const range = articleRange(f.articles, data.articles);
  let records = data.records.filter((r) => articleIndex(r) >= range[0] && articleIndex(r) < range[1]);
  if (f.limit !== undefined) records = records.slice(0, int("--limit", f.limit));
  const k = int("--passages", f.passages);
  let retriever: Retriever | undefined;
  if (f.index) retriever = await openRetriever(f.index);
  const article = new ArticlePassages(data.pages, k);
  const passagesFor = async (r: KiltRecord) => (retriever ? retrievedPassages(retriever, r.input ?? "", k) : article.for(r));
  return { records, range, passagesFor, close: async () => retriever?.close() };
}

function dataOptions(cmd: Command, articles: string): Command {
  return cmd
    .option("--squad <file>", "SQuAD JSON (v1.1): pages and records are built from it")
    .option("--pages <pages.jsonl>", "KILT pages (tartan ks from-squad) …")
    .option("--records <records.jsonl>", "… and their KILT records (tartan datasets convert squad), with meta.article_index")
    .option("--articles <range>", "first-half | second-half | all | A-B (article indexes)", articles)
    .option("--passages <k>", "passages per question", "5")
    .option("--index <dir>", "read from this retrieval index's top hits (a directory or a clickhouse:// BM25 index URL) instead of the record's own article")
    .option("--limit <n>", "only the first n records of the range");
}

export function registerReader(program: Command): void {
  const reader = program.command("reader").description("extractive reader: train the span ranker and evaluate it on held-out articles");

  dataOptions(reader.command("train").description("train the span ranker (deterministic for a seed) and write it as JSON"), "first-half")
    .requiredOption("--out <model.json>", "where to write the model")
    .option("--epochs <n>", "passes over the training questions", "10")
    .option("--seed <n>", "seed for negative sampling and shuffling", "1")
    .option("--negatives <n>", "negative spans kept per question", "100")
    .option("--max-words <n>", "longest candidate span in tokens", "8")
    .action(async (f: DataFlags & { out: string; epochs: string; seed: string; negatives: string; maxWords: string }) => {
      const t0 = performance.now();
      const { records, range, passagesFor, close } = await selected(f);
      const items = [];
      for (const record of records) items.push({ record, passages: await passagesFor(record) });
      await close();
      const { model, stats } = trainReader(items, {
        epochs: int("--epochs", f.epochs),
        seed: int("--seed", f.seed, 0),
        negatives: int("--negatives", f.negatives),
        maxWords: int("--max-words", f.maxWords),
      });
      Object.assign(model.training, { articles: range, passages: Number(f.passages), source: f.squad ?? f.records, index: f.index ?? null });
      writeFileSafe(f.out, `${JSON.stringify(model.toJSON(), null, 1)}\n`);
      process.stdout.write(
        `trained on ${stats.used} of ${stats.records} questions (articles ${range[0]}-${range[1] - 1}; ${stats.noPositive} without the answer among the candidates), ` +
          `${stats.candidates} candidates, loss ${stats.losses.map((l) => l.toFixed(3)).join(" ")}, ${((performance.now() - t0) / 1000).toFixed(1)} s → ${f.out}\n`,
      );
    });

  dataOptions(reader.command("eval").description("answer held-out questions and score them with the KILT evaluator"), "second-half")
    .requiredOption("--model <model.json>", "a model from `tartan reader train`")
    .option("--out <guesses.jsonl>", "also write the KILT guess records here")
    .option("--json", "print the evaluator's downstream result as JSON")
    .action(async (f: DataFlags & { model: string; out?: string; json?: boolean }) => {
      const t0 = performance.now();
      const ex = ExtractiveReader.load(f.model);
      const { records, range, passagesFor, close } = await selected(f);
      const guesses: KiltRecord[] = [];
      for (const r of records) guesses.push(answerRecord(r, await ex.read(r, await passagesFor(r))));
      await close();
      if (f.out) await writeJsonl(f.out, guesses);
      const res = await evaluate(records, guesses, {});
      const d = res.eval_downstream;
      if (!d) throw new Error(`evaluation failed: ${res.problems.map((p) => p.message).join(", ")}`);
      if (f.json) {
        process.stdout.write(`${JSON.stringify(d)}\n`);
        return;
      }
      const pct = (x: number) => (100 * x).toFixed(2);
      process.stdout.write(
        `${records.length} questions (articles ${range[0]}-${range[1] - 1}), ${((performance.now() - t0) / 1000).toFixed(1)} s\n` +
          `EM ${pct(d.downstream.em)}  F1 ${pct(d.downstream.f1)}  accuracy ${pct(d.downstream.accuracy)}\n` +
          `KILT-EM ${pct(d.kilt["KILT-em"])}  KILT-F1 ${pct(d.kilt["KILT-f1"])}  R-prec ${pct(d.retrieval.Rprec)}  recall@5 ${pct(d.retrieval["recall@5"])}\n`,
      );
    });
}
