// The tasks `tartan eval --task` scores, by name: the one place where tasks are registered. Each task's
// descriptor (./task.ts) is a small module that loads its evaluation only when it runs, so reading this
// registry (as `tartan eval` does for its flags) costs no start-up time. A new task is its module plus
// one line here.

import { Registry } from "../../util/registry.js";
import { kiltTask } from "./kilt-task.js";
import { mintakaTask } from "./mintaka-task.js";
import type { TaskDescriptor, TaskEvaluation, TaskOptionsBase } from "./task.js";
import { wikiReadingTask } from "./wikireading-task.js";

/** Every task, by name, in the order `--task`'s help lists them. */
export const EVAL_TASKS = new Registry<TaskDescriptor>("task", [kiltTask, mintakaTask, wikiReadingTask]);

/** The tasks {@link evaluateTask} scores (the names in {@link EVAL_TASKS}): KILT, Mintaka (hits@1) and WikiReading (Mean F1). */
export const TASKS: readonly string[] = EVAL_TASKS.names();
/** The name of a task registered in {@link EVAL_TASKS}. */
export type Task = string;

/** The result of a task's evaluation: the task's name, report, problems and text tables. */
export interface TaskResult extends TaskEvaluation {
  /** The task's name. */
  task: Task;
}

/** Evaluates `guess` against `gold` (file paths) as the task called `task` scores them, with that task's options; throws naming the tasks for an unknown one. */
export async function evaluateTask<O extends TaskOptionsBase>(task: Task, gold: string, guess: string, options?: O): Promise<TaskResult> {
  const d = EVAL_TASKS.find(task);
  if (d === undefined) throw new Error(`unknown task ${String(task)}: one of ${TASKS.join(", ")}`);
  const r = await d.evaluate(gold, guess, options ?? {});
  return { task, report: r.report, problems: r.problems, text: r.text };
}
