// `tartan rerank`: a KILT or TREC run in, the same format out, each query's best entries reranked by a
// reranker (src/pipeline/rerank.ts does the work; the rerankers are src/retrieval/rerank/).

import { Command, Option } from "commander";
import { rerankRun } from "../../pipeline/rerank.js";
import { RERANKERS } from "../../retrieval/rerank/index.js";
import { keyList, log, positiveInt } from "../options.js";
import { terminalProgress } from "../progress.js";

/** Adds `rerank`. */
export function registerRerank(program: Command): void {
  program
    .command("rerank")
    .description("rerank a run (KILT guesses or a TREC run) with a cross-encoder or an LLM: the same format out, each query cut to its reranked top --depth; OUT.settings.json records the reranker, its prompt and the model's answers")
    .requiredOption("--input <run>", "the run: KILT guesses (.jsonl, .jsonl.gz) or a TREC run")
    .option("--records <records.jsonl>", "KILT task records: the query texts by id (for a TREC run, or guesses without input)")
    .option("--ks <dir|url>", "knowledge source the passages' text is read from (when the run's provenance has no text)")
    .requiredOption("--reranker <spec>", `NAME:key=value,… (or a JSON object, or @file.json); NAME one of ${RERANKERS.names().join(", ")} (docs/retrieval.md#reranking)`)
    .option("--depth <n>", "entries of each query reranked and kept", positiveInt, 100)
    .requiredOption("--out <file>", "the reranked run (same format as --input)")
    .addOption(new Option("--format <format>", "the run's format (default: by its first character)").choices(["kilt", "trec"]))
    .option("--trec-keys <keys>", "a TREC run's docid fields joined by + (default: wikipedia_id, or wikipedia_id,start_paragraph_id when docids have a +)", keyList)
    .option("--tag <tag>", "TREC run tag written (default: the input's with -rerank)")
    .option("--threads <n>", "worker threads (default: the number of cores)", positiveInt)
    .action(async (o: { input: string; records?: string; ks?: string; reranker: string; depth: number; out: string; format?: "kilt" | "trec"; trecKeys?: string[]; tag?: string; threads?: number }) => {
      await rerankRun({ ...o, onProgress: terminalProgress() }, log);
    });
}
