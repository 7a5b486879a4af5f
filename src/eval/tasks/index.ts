// Task-specific evaluation behind `tartan eval --task`: Mintaka hits@1 and WikiReading Mean F1 with
// their breakdowns (the KILT evaluator itself stays in ../evaluate.ts, `--task kilt`).

import type { Problem } from "../problems.js";
import { evaluateMintaka, formatMintakaReport, type MintakaEvalOptions, type MintakaReport } from "./mintaka.js";
import { evaluateWikiReading, formatWikiReadingReport, type WikiReadingEvalOptions, type WikiReadingReport } from "./wikireading.js";

export { evaluateMintaka, mintakaHit, scoreMintaka, formatMintakaReport } from "./mintaka.js";
export { evaluateWikiReading, setF1, predictedAnswers, formatWikiReadingReport } from "./wikireading.js";
export { propertyStatsFromFile, PropertyStatsBuilder, ENTROPY_THRESHOLD } from "./wikireading-properties.js";
export { normalizeMultilingual } from "./normalize-multilingual.js";

/** The tasks {@link evaluateTask} scores: KILT, Mintaka (hits@1) and WikiReading (Mean F1). */
export const TASKS = ["kilt", "mintaka", "wikireading"] as const;
/** A task {@link evaluateTask} scores. */
export type Task = (typeof TASKS)[number];

/** Options of {@link evaluateTask} (the Mintaka and WikiReading options). */
export type TaskOptions = MintakaEvalOptions & WikiReadingEvalOptions;

/** The result of a Mintaka or WikiReading evaluation: the task's report, problems and text tables. */
export interface TaskResult {
  task: "mintaka" | "wikireading";
  report: MintakaReport | WikiReadingReport;
  problems: Problem[];
  /** The report as text tables. */
  text: string;
}

/** Evaluates `guess` against `gold` for a task other than `kilt`. */
export async function evaluateTask(task: Exclude<Task, "kilt">, gold: string, guess: string, options: TaskOptions = {}): Promise<TaskResult> {
  if (task === "mintaka") {
    const r = await evaluateMintaka(gold, guess, options);
    return { task, report: r.report, problems: r.problems, text: formatMintakaReport(r.report) };
  }
  if (task === "wikireading") {
    const r = await evaluateWikiReading(gold, guess, options);
    return { task, report: r.report, problems: r.problems, text: formatWikiReadingReport(r.report) };
  }
  throw new Error(`unknown task ${String(task)}: one of ${TASKS.join(", ")}`);
}
