// `tartan eval`: the KILT evaluator on the command line (one gold/prediction pair, or two directories),
// and the other tasks of the task registry (--task), whose flags are made from their descriptors.
// Only what one gold/prediction pair needs is imported at start; the directory mode, --per-query, the
// other tasks' evaluations (their descriptors are small) and the trec_eval mode import their modules when
// asked for (each module loaded costs start-up CPU in every run).

import { pythonJson } from "../../util/python-json.js";
import { Option, type Command } from "commander";
import { statSync } from "node:fs";
import { Progress } from "../../util/progress.js";
import { evaluate, type EvalMode } from "../../eval/evaluate.js";
import { formatProblem } from "../../eval/problems.js";
import { formatDatasetTable, formatResult, officialJson } from "../../eval/report.js";
import { EVAL_TASKS, TASKS, evaluateTask } from "../../eval/tasks/registry.js";
import type { TaskDescriptor, TaskOptionsBase } from "../../eval/tasks/task.js";
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
    .option("--task <task>", taskHelp(), KILT);
  addTrecEvalOptions(cmd);
  addTaskOptions(cmd).action(async (gold: string | undefined, guess: string | undefined, flags: EvalFlags) => {
      if (wantsTrecEval(flags)) return runTrecEvalMode(flags);
      if (flags.task !== KILT) {
        if (!EVAL_TASKS.has(flags.task)) throw new Error(`--task must be one of ${TASKS.join(", ")}`);
        if (!gold || !guess) throw new Error("give GOLD and GUESS files");
        const r = await evaluateTask(flags.task, gold, guess, taskOptions(EVAL_TASKS.get(flags.task), flags));
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

/** The task whose options are this command's own flags, scored by the path above (directories, --per-query, progress). */
const KILT = "kilt";

/** `--task`'s help: each task with its summary, and their documentation pages. */
function taskHelp(): string {
  const tasks = EVAL_TASKS.all();
  const named = tasks.map((t) => `${t.name} (${t.summary})`);
  const list = named.length > 1 ? `${named.slice(0, -1).join(", ")} or ${named[named.length - 1]}` : named.join("");
  const docs = tasks.flatMap((t) => (t.docs === undefined ? [] : [t.docs]));
  return docs.length > 0 ? `${list}: see ${docs.join(", ")}` : list;
}

/** Each task flag's option, once per flag: the tasks that declare it, in registration order. */
function taskFlags(): { option: Option; uses: { task: TaskDescriptor; flag: TaskDescriptor["flags"][number] }[] }[] {
  const byLong = new Map<string, { option: Option; uses: { task: TaskDescriptor; flag: TaskDescriptor["flags"][number] }[] }>();
  for (const task of EVAL_TASKS.all())
    for (const flag of task.flags) {
      const option = new Option(flag.flag, flag.description);
      const seen = byLong.get(option.long ?? flag.flag);
      if (seen) seen.uses.push({ task, flag });
      else byLong.set(option.long ?? flag.flag, { option, uses: [{ task, flag }] });
    }
  return [...byLong.values()];
}

/** The task flags of `eval` (one option per flag, its help prefixed by the tasks that take it). */
function addTaskOptions(cmd: Command): Command {
  for (const { option, uses } of taskFlags()) {
    if (cmd.options.some((o) => o.long === option.long)) throw new Error(`task ${uses[0].task.name}: ${option.long} is a flag of tartan eval itself`);
    const o = new Option(uses[0].flag.flag, `${uses.map((u) => u.task.name).join(", ")}: ${uses[0].flag.description}`);
    if (uses[0].flag.choices) o.choices(uses[0].flag.choices);
    cmd.addOption(o);
  }
  return cmd;
}

/**
 * The options of `task` from the flags given. Every task flag given is parsed, whichever task runs (a bad
 * value is refused either way); `task` gets the options its own flags set, and --max-examples.
 */
function taskOptions(task: TaskDescriptor, flags: EvalFlags): TaskOptionsBase {
  const given = flags as unknown as Record<string, unknown>;
  const options: Record<string, unknown> = {};
  for (const { option, uses } of taskFlags()) {
    const value = given[option.attributeName()];
    if (value === undefined || value === false || value === "") continue;
    for (const { task: t, flag } of uses) {
      const parsed = flag.parse ? flag.parse(value === true ? "" : String(value)) : value;
      if (t === task) options[flag.option] = parsed;
    }
  }
  if (flags.maxExamples) options.maxExamples = Number(flags.maxExamples);
  return options;
}
