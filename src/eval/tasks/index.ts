// Task-specific evaluation behind `tartan eval --task`: the task descriptors (./task.ts) in one registry
// (./registry.ts), with Mintaka hits@1 and WikiReading Mean F1 and their breakdowns (the KILT evaluator
// itself stays in ../evaluate.ts, `--task kilt`).

import type { MintakaEvalOptions } from "./mintaka.js";
import type { WikiReadingEvalOptions } from "./wikireading.js";

export { evaluateMintaka, mintakaHit, scoreMintaka, formatMintakaReport } from "./mintaka.js";
export { evaluateWikiReading, setF1, predictedAnswers, formatWikiReadingReport } from "./wikireading.js";
export { propertyStatsFromFile, PropertyStatsBuilder, ENTROPY_THRESHOLD } from "./wikireading-properties.js";
export { normalizeMultilingual } from "./normalize-multilingual.js";
export { EVAL_TASKS, TASKS, evaluateTask, type Task, type TaskResult } from "./registry.js";
export type { TaskDescriptor, TaskEvaluation, TaskFlag, TaskOptionsBase } from "./task.js";
export { kiltTask } from "./kilt-task.js";
export { mintakaTask } from "./mintaka-task.js";
export { wikiReadingTask } from "./wikireading-task.js";

/** Options of {@link evaluateTask} for the Mintaka and WikiReading tasks. */
export type TaskOptions = MintakaEvalOptions & WikiReadingEvalOptions;
