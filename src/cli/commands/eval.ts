// `tartan eval`: the KILT evaluator on the command line (one gold/prediction pair, or two directories).
// Only what one gold/prediction pair needs is imported at start; the directory mode, --per-query, the
// other tasks (mintaka, wikireading) and the trec_eval mode import their modules when asked for (each
// module loaded costs start-up CPU in every run).

import { pythonJson } from "../../util/python-json.js";
import { Option, type Command } from "commander";
import { statSync } from "node:fs";
import { Progress } from "../../util/progress.js";
import { evaluate, type EvalMode } from "../../eval/evaluate.js";
import { formatProblem } from "../../eval/problems.js";
import { formatDatasetTable, formatResult, officialJson } from "../../eval/report.js";
import type { Task } from "../../eval/tasks/index.js";
import type { PerQueryWriter } from "../../eval/per-query.js";
import { addTrecEvalOptions, runTrecEvalMode, wantsTrecEval, type TrecEvalFlags } from "./trec-eval.js";

interface EvalFlags extends TrecEvalFlags {
  ks: string;
  rankKeys: string;
  mode: string;
  json?: boolean;
  onlyPredicted?: boolean;
  goldDir?: string;
  guessDir?: string;
  maxExamples: string;
  task: string;
  perQuery?: string;
}

function parseKs(s: string): number[] {
  const ks = s.split(",").map((x) => Number(x.trim()));
  if (ks.some((k) => !Number.isInteger(k) || k <= 0)) throw new Error(`--ks must be positive integers, got "${s}"`);
  return ks;
}

export function registerEval(program: Command): void {
  const cmd = program
    .command("eval")
    .description(
      "score KILT predictions against gold records: downstream (accuracy, EM, F1, ROUGE-L), KILT scores and retrieval metrics, exactly as the official evaluator",
    )
    .argument("[gold]", "gold KILT file (.jsonl, .jsonl.gz, or a Hugging Face kilt_tasks .parquet)")
    .argument("[guess]", "prediction file (note: the official scripts take GUESS first; tartan takes GOLD first)")
    .option("--ks <list>", "cut-offs for the retrieval metrics", "1,5,10,20")
    .option("--rank-keys <list>", "provenance keys identifying a retrieved unit (e.g. wikipedia_id,start_paragraph_id)", "wikipedia_id")
    .option("--mode <mode>", "all | downstream (kilt.eval_downstream) | retrieval (kilt.eval_retrieval)", "all")
    .option("--json", "print the official result keys as JSON")
    .option("--only-predicted", "score only gold records that have a prediction (the official code stops at a missing one)")
    .option("--gold-dir <dir>", "evaluate every KILT gold file in this directory...")
    .option("--guess-dir <dir>", "...against the prediction file of the same dataset in this one")
    .option("--per-query <file>", "also write one JSON line of scores per evaluated gold record (docs/eval.md)")
    .option("--max-examples <n>", "places listed per problem", "5")
    .option("--task <task>", "kilt (the KILT evaluator), mintaka (hits@1) or wikireading (Mean F1): see docs/mintaka.md, docs/wikireading.md", "kilt");
  addTrecEvalOptions(cmd);
  addTaskOptions(cmd).action(async (gold: string | undefined, guess: string | undefined, flags: EvalFlags) => {
      if (wantsTrecEval(flags)) return runTrecEvalMode(flags);
      if (flags.task !== "kilt") {
        const [{ evaluateTask, TASKS }, { taskOptions }] = await Promise.all([import("../../eval/tasks/index.js"), import("./tasks.js")]);
        if (!(TASKS as readonly string[]).includes(flags.task)) throw new Error(`--task must be one of ${TASKS.join(", ")}`);
        if (!gold || !guess) throw new Error("give GOLD and GUESS files");
        const r = await evaluateTask(flags.task as Exclude<Task, "kilt">, gold, guess, taskOptions(flags));
        for (const p of r.problems) process.stderr.write(`${formatProblem(p)}\n`);
        process.stdout.write(flags.json ? `${JSON.stringify(r.report, null, 2)}\n` : `${r.text}\n`);
        process.exitCode = r.problems.some((p) => p.severity === "error") ? 1 : 0;
        return;
      }
      const mode = flags.mode as EvalMode;
      if (!["all", "downstream", "retrieval"].includes(mode)) throw new Error(`--mode must be all, downstream or retrieval`);
      const options = {
        ks: parseKs(flags.ks),
        rankKeys: flags.rankKeys.split(",").map((k) => k.trim()).filter(Boolean),
        mode,
        onlyPredicted: flags.onlyPredicted,
        maxExamples: Number(flags.maxExamples),
      };
      if (flags.goldDir || flags.guessDir) {
        if (flags.perQuery) throw new Error("--per-query takes one GOLD GUESS pair, not --gold-dir/--guess-dir");
        if (!flags.goldDir || !flags.guessDir) throw new Error("--gold-dir and --guess-dir go together");
        const { evaluateDirectories } = await import("../../eval/directory.js");
        const rows = await evaluateDirectories(flags.goldDir, flags.guessDir, options);
        if (rows.length === 0) throw new Error(`no KILT gold files with answers in ${flags.goldDir}`);
        for (const row of rows) {
          if (row.failure && !row.result) process.stderr.write(`${row.dataset}: ${row.failure}\n`);
          for (const p of row.result?.problems ?? []) if (p.severity !== "note") process.stderr.write(`${row.dataset}: ${formatProblem(p)}\n`);
        }
        if (flags.json) {
          const out: Record<string, unknown> = {};
          for (const row of rows) out[row.dataset] = row.result ? officialJson(row.result) : { error: row.failure };
          process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
        } else process.stdout.write(`${formatDatasetTable(rows)}\n`);
        process.exitCode = rows.some((r) => r.failure) ? 1 : 0;
        return;
      }
      if (!gold || !guess) throw new Error("give GOLD and GUESS files, or --gold-dir and --guess-dir");
      let rows: PerQueryWriter | undefined;
      if (flags.perQuery) {
        const { PerQueryWriter } = await import("../../eval/per-query.js");
        const { assertOutputsNotInputs } = await import("../../util/safe-output.js");
        assertOutputsNotInputs([flags.perQuery], [gold, guess]);
        rows = new PerQueryWriter(flags.perQuery);
      }
      const progress = new Progress({ label: "eval", unit: "predictions", totalBytes: statSync(guess).size });
      let result;
      try {
        result = await evaluate(gold, guess, {
          ...options,
          onProgress: (n, b) => progress.update(n, b),
          perQuery: rows ? (row) => rows.write(row) : undefined,
        });
      } catch (e) {
        rows?.abort();
        throw e;
      }
      progress.done();
      for (const p of result.problems) process.stderr.write(`${formatProblem(p)}\n`);
      const inputErrors = result.problems.some((p) => p.severity === "error" && p.section === "input");
      if (inputErrors) {
        rows?.abort();
        process.stderr.write("tartan: nothing scored: fix the input errors above\n");
        process.exitCode = 2;
        return;
      }
      rows?.commit();
      process.stdout.write(flags.json ? `${pythonJson(officialJson(result))}\n` : `${formatResult(result)}\n`);
      process.exitCode = result.problems.some((p) => p.severity === "error") ? 1 : 0;
    });
}

/** The options of `eval --task mintaka|wikireading` (parsed by ./tasks.ts's `taskOptions` when that task runs). */
function addTaskOptions(cmd: Command): Command {
  return cmd
    .option("--lang <lang>", "mintaka: language(s) to score: en, ar, …, pt, or all (default: those the prediction ids name)")
    .addOption(new Option("--match <how>", "mintaka: exact normalized strings, or gold words contained in the prediction (evaluate.py)").choices(["exact", "contains"]))
    .option("--count-entities", "mintaka: count questions also accept the counted entities (the paper's appendix D); default: only the count")
    .option("--train <path>", "wikireading: training shards for the categorical/relational/date property classes")
    .option("--property-stats <file.json>", "wikireading: property table written by datasets convert wikireading --property-stats")
    .option("--answer-separator <sep>", "wikireading: split each predicted answer at this string (default: one answer per output)");
}
