// `tartan reader train` and `tartan reader eval`: the extractive span ranker trained on SQuAD-style
// KILT records and scored with the KILT evaluator, split by article so train and test never share one.

import type { Command } from "commander";
import { openRetriever } from "../../backends/open.js";
import { evalReaderOn, trainReaderOn, type ReaderDataOptions } from "../../readers/extractive/experiment.js";

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

/** Runs `work` on the data options of the flags, with the --index retriever open for its length. */
async function withData<T>(f: DataFlags, work: (data: ReaderDataOptions) => Promise<T>): Promise<T> {
  const data: ReaderDataOptions = {
    squad: f.squad,
    pages: f.pages,
    records: f.records,
    articles: f.articles,
    passages: int("--passages", f.passages),
    limit: f.limit !== undefined ? int("--limit", f.limit) : undefined,
    retriever: f.index ? await openRetriever(f.index) : undefined,
  };
  try {
    return await work(data);
  } finally {
    await data.retriever?.close();
  }
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
      const train = { epochs: int("--epochs", f.epochs), seed: int("--seed", f.seed, 0), negatives: int("--negatives", f.negatives), maxWords: int("--max-words", f.maxWords) };
      const { stats, range } = await withData(f, (data) => trainReaderOn({ ...data, out: f.out, train, index: f.index }));
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
      const { records, range, result: d } = await withData(f, (data) => evalReaderOn({ ...data, model: f.model, out: f.out }));
      if (f.json) {
        process.stdout.write(`${JSON.stringify(d)}\n`);
        return;
      }
      const pct = (x: number) => (100 * x).toFixed(2);
      process.stdout.write(
        `${records} questions (articles ${range[0]}-${range[1] - 1}), ${((performance.now() - t0) / 1000).toFixed(1)} s\n` +
          `EM ${pct(d.downstream.em)}  F1 ${pct(d.downstream.f1)}  accuracy ${pct(d.downstream.accuracy)}\n` +
          `KILT-EM ${pct(d.kilt["KILT-em"])}  KILT-F1 ${pct(d.kilt["KILT-f1"])}  R-prec ${pct(d.retrieval.Rprec)}  recall@5 ${pct(d.retrieval["recall@5"])}\n`,
      );
    });
}
