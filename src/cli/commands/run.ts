// `tartan run` (retrieve, read, write KILT predictions, evaluate) and `tartan quickstart` (the main job
// on the SQuAD knowledge source). `--workers N` runs N shards as child processes (both cores) and
// merges their outputs in input order; every shard resumes by itself after an interruption.

import type { Command } from "commander";
import { renamedRerank } from "../options.js";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate } from "../../eval/evaluate.js";
import { formatProblem } from "../../eval/problems.js";
import { formatResult } from "../../eval/report.js";
import { quickstart } from "../../pipeline/quickstart.js";
import { runPipeline, type TextMode } from "../../pipeline/run.js";
import { readPipelineConfig, resolvePipelineConfig, TEXT_MODES, type PipelineConfig, type PipelineFlags } from "../../pipeline/config.js";
import { mergeShards, planShards } from "../../pipeline/shards.js";
import { openReader, READER_KINDS } from "../../readers/open.js";
import { canonicalLocation, openRetriever } from "../../backends/open.js";
import { ProgressLine } from "../../util/progress.js";
import { terminalProgress } from "../progress.js";

/** Runs the shards as child processes of this command, then merges their outputs in input order. */
async function runSharded(c: PipelineConfig, argv: string[]): Promise<void> {
  const workers = c.workers ?? 1;
  const cli = fileURLToPath(new URL("../main.js", import.meta.url));
  const plan = planShards(c.input, c.out, workers);
  await Promise.all(
    plan.parts.map(
      (part, i) =>
        new Promise<void>((ok, fail) => {
          // The IPC channel tells a shard when this process dies (it then stops: see the action below).
          const child = spawn(process.execPath, [cli, ...argv, "--shard", `${i}/${workers}`, "--out", part, "--no-evaluate"], {
            stdio: ["ignore", "inherit", "inherit", "ipc"],
          });
          child.on("exit", (code) => (code === 0 ? ok() : fail(new Error(`shard ${i} exited with ${code}`))));
        }),
    ),
  );
  await mergeShards(c.input, c.out, plan);
}

export function registerRun(program: Command): void {
  program
    .command("run")
    .description("retrieve passages, read answers and write KILT predictions with provenance; evaluate when the input has gold answers")
    .option("--config <file>", "PIPELINE.json with the options below")
    .option("--input <file>", "KILT records to answer")
    .option("--out <file>", "predictions (appended; an interrupted run resumes)")
    .option("--index <dirs...>", "index directories (several: reciprocal-rank fusion) or a clickhouse:// BM25 index URL; none: closed-book")
    .option("--reader <name>", `one of ${READER_KINDS.join(", ")}`)
    .option("--model <file|dir|name>", "reader model (extractive: JSON from tartan reader train; onnx: directory; generative: model name)")
    .option("--base-url <url>", "generative reader endpoint (or TARTAN_OPENAI_BASE_URL / OPENAI_BASE_URL)")
    .option("--top-k <n>", "passages retrieved per record", "20")
    .option("--reader-k <n>", "passages given to the reader", "5")
    .option("--workers <n>", "processes (shards) to run", "1")
    .option("--shard <i/n>", "run one shard only (used by --workers)")
    .option("--text <mode>", "passage text in the written provenance: full (every retrieved passage), cited (only those the reader cites), none")
    .option("--reranker <spec>", "rerank the retrieved passages before reading (NAME:key=value,…: cross-encoder, llm-pointwise, llm-listwise, learned:MODEL.json; docs/retrieval.md#reranking)")
    .option("--rerank-depth <n>", "with --reranker: passages reranked per record (default: --top-k)")
    .addOption(renamedRerank("set by tartan index build --refine N (or tartan retrieve --refine N)"))
    .option("--no-evaluate", "do not evaluate at the end")
    .action(async (flags: PipelineFlags & { config?: string; shard?: string }) => {
      const c = resolvePipelineConfig(flags, flags.config ? readPipelineConfig(flags.config) : {}, flags.config);
      if (c.workers! > 1 && !flags.shard) {
        const argv = process.argv.slice(2).filter((a, i, all) => a !== "--workers" && all[i - 1] !== "--workers");
        await runSharded(c, argv);
      } else {
        let shard: { index: number; count: number } | undefined;
        if (flags.shard && process.send) {
          // A shard of --workers: stop when the parent process goes away (its IPC channel closes, or
          // this process is re-parented).
          const parent = process.ppid;
          const orphaned = () => process.exit(129);
          process.channel?.unref();
          process.on("disconnect", orphaned);
          if (!process.connected) orphaned();
          setInterval(() => process.ppid !== parent && orphaned(), 500).unref();
        }
        if (flags.shard) {
          const [i, n] = String(flags.shard).split("/").map(Number);
          if (!(n > 0 && i >= 0 && i < n)) throw new Error(`--shard must be i/n with 0 <= i < n, got ${String(flags.shard)}`);
          shard = { index: i, count: n };
        }
        const retriever = c.index && c.index.length > 0 ? await openRetriever(c.index.map(canonicalLocation), c.reranker === undefined ? {} : { stages: [{ name: "rerank", options: { reranker: c.reranker, depth: c.rerankDepth } }] }) : null;
        const reader = await openReader(c.reader, { model: c.model, baseUrl: c.baseUrl });
        try {
          const progress = new ProgressLine(`run${shard ? ` shard ${shard.index}/${shard.count}` : ""}`);
          const started = Date.now();
          const stats = await runPipeline(c.input, c.out, retriever, reader, {
            topK: c.topK!,
            readerK: c.readerK,
            text: c.text,
            shard,
            onProgress: (done, resumed) =>
              progress.update(() => `${done} answered (${resumed} resumed), ${(done / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1)}/s`),
          });
          progress.done();
          process.stderr.write(`${stats.written} answered, ${stats.resumed} already done, ${stats.failed.length} failed → ${c.out}\n`);
          for (const f of stats.failed.slice(0, 5)) process.stderr.write(`  failed: ${c.input}:${f.line} (id ${f.id}): ${f.error}\n`);
          if (stats.failed.length > 0) process.exitCode = 1;
          if (stats.written === 0 && stats.resumed === 0 && stats.failed.length > 0) {
            process.stderr.write(`nothing was answered: all ${stats.failed.length} records failed (first: ${stats.failed[0].error}); not evaluating\n`);
            return;
          }
        } finally {
          await retriever?.close();
          await reader.close?.();
        }
      }
      if (c.evaluate && !flags.shard) {
        const result = await evaluate(c.input, c.out, { onlyPredicted: true });
        const hasGold = result.eval_downstream !== null || result.eval_retrieval !== null;
        for (const p of result.problems) if (p.severity !== "note") process.stderr.write(`${formatProblem(p)}\n`);
        if (hasGold) process.stdout.write(`${formatResult(result)}\n`);
      }
    });

  program
    .command("quickstart")
    .description("the main job on the bundled small knowledge source: SQuAD pages → BM25 → trained extractive reader → KILT predictions → evaluation and report")
    .option("--squad <file>", "SQuAD v1.1 file", "../shared/data/squad/dev-v1.1.reconstructed.json")
    .option("--work <dir>", "working directory for pages, index, model, predictions and report", ".tartan/quickstart")
    .option("--top-k <n>", "passages retrieved per question", "20")
    .option("--reader-k <n>", "passages the reader reads", "5")
    .option("--limit <n>", "answer only the first N held-out questions")
    .option("--train-limit <n>", "train on only the first N training questions")
    .option("--text <mode>", "passage text in the predictions: cited (the passages the reader cites), full, none", "cited")
    .action(async (flags: { squad: string; work: string; topK: string; readerK: string; limit?: string; trainLimit?: string; text: string }) => {
      if (!TEXT_MODES.includes(flags.text as TextMode)) throw new Error(`--text must be one of ${TEXT_MODES.join(", ")}`);
      if (!existsSync(flags.squad)) throw new Error(`${flags.squad}: no such file (run from the repository with ../shared beside it, or pass --squad)`);
      const r = await quickstart({
        squad: flags.squad,
        work: flags.work,
        topK: Number(flags.topK),
        readerK: Number(flags.readerK),
        limit: flags.limit ? Number(flags.limit) : undefined,
        trainLimit: flags.trainLimit ? Number(flags.trainLimit) : undefined,
        text: flags.text as TextMode,
        log: (l) => process.stderr.write(`${l}\n`),
        onProgress: terminalProgress(), // drawn when stderr is a terminal
      });
      process.stdout.write(`\n${r.table}\n\nparagraph level: ${formatResult(r.paragraphLevel).split("\n\n")[0]}\n\n`);
      process.stdout.write(`predictions: ${r.predictions}\nreport: ${r.reportMd}, ${r.reportHtml}\n`);
      process.stdout.write(`explore the results: ${invokedAs()} serve --ks ${join(flags.work, "ks")} --index ${join(flags.work, "index-bm25")} --runs ${join(flags.work, "runs")}  (then open http://127.0.0.1:8080/)\n`);
    });
}

/** How the user ran tartan, to repeat it: `tartan` (the linked or installed command), else `node PATH` as given. */
export function invokedAs(argv1: string = process.argv[1] ?? "", cwd: string = process.cwd()): string {
  if (basename(argv1) === "tartan") return "tartan";
  const rel = relative(cwd, argv1);
  return `node ${rel.startsWith("..") || rel === "" ? argv1 : rel}`;
}
