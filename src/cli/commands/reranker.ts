// `tartan reranker train`: the learned reranker trained on KILT task records and a first-stage run of their
// queries (src/pipeline/reranker-train.ts does the work), written as a model file for `--reranker learned:MODEL.json`.

import type { Command } from "commander";
import { trainRerankerFromFiles } from "../../pipeline/reranker-train.js";
import { FEATURE_NAMES } from "../../retrieval/rerank/features.js";
import { log, positiveInt, splitList } from "../options.js";
import { terminalProgress } from "../progress.js";
import { subcommand } from "../subcommand.js";

function finite(name: string): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (v.trim() === "" || !Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number ≥ 0, got "${v}"`);
    return n;
  };
}

/** Adds `reranker train`. */
export function registerReranker(program: Command): void {
  const group = subcommand(program, "reranker", "learned rerankers: train a model for --reranker learned:MODEL.json");
  group
    .command("train")
    .description("train the learned reranker (a linear model, pairwise logistic loss) on KILT records and a first-stage run of their queries (docs/retrieval.md#the-learned-reranker-learnedts-learned-modelts-featurests)")
    .requiredOption("--records <records.jsonl>", "KILT task records: the queries and their gold provenance")
    .requiredOption("--run <guesses.jsonl>", "the first-stage run of the same queries (tartan retrieve's KILT guesses)")
    .option("--ks <dir|url>", "knowledge source the passages' text is read from (when the run's provenance has no text)")
    .requiredOption("--out <model.json>", "the model file to write")
    .option("--depth <n>", "candidates per query taken from the run", positiveInt, 100)
    .option("--features <names>", `features used, comma-separated (default all: ${FEATURE_NAMES.join(",")})`, splitList)
    .option("--epochs <n>", "gradient-descent epochs", positiveInt, 300)
    .option("--learning-rate <x>", "step size", finite("--learning-rate"), 0.5)
    .option("--l2 <x>", "L2 penalty", finite("--l2"), 0.001)
    .option("--seed <n>", "seed of the initial weights", (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n)) throw new Error(`--seed must be an integer, got "${v}"`);
      return n;
    }, 1)
    .action(async (o: { records: string; run: string; ks?: string; out: string; depth: number; features?: string[]; epochs: number; learningRate: number; l2: number; seed: number }) => {
      await trainRerankerFromFiles({ ...o, onProgress: terminalProgress() }, log);
    });
}
