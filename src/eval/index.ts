// The KILT evaluator's public API.
export { evaluate, type EvalOptions, type EvalResult, type EvalMode, type DownstreamResult, type RetrievalResult, type PerQueryRow } from "./evaluate.js";
export { PerQueryWriter } from "./per-query.js";
export { evaluateDirectories, matchGuessFile } from "./directory.js";
export { normalizeAnswer } from "./normalize.js";
export { rougeL } from "./rouge.js";
export { f1Score, prepareGoldAnswer } from "./answers.js";
export { formatResult, formatDatasetTable, officialJson } from "./report.js";
export { formatProblem, type Problem } from "./problems.js";
export { evaluateTask, TASKS, EVAL_TASKS, evaluateMintaka, evaluateWikiReading, type Task, type TaskOptions, type TaskResult } from "./tasks/index.js";
export { kiltTask, mintakaTask, wikiReadingTask, type TaskDescriptor, type TaskEvaluation, type TaskFlag, type TaskOptionsBase } from "./tasks/index.js";
export type { GoldAnswer } from "./answers.js";
export type { ProblemPlace, Section, Severity as ProblemSeverity } from "./problems.js";
export type { DatasetRow } from "./report.js";
export type { MintakaEvalOptions, MintakaReport, MintakaResult } from "./tasks/mintaka.js";
export type { WikiReadingEvalOptions, WikiReadingReport, WikiReadingResult } from "./tasks/wikireading.js";
export type { MintakaMatch } from "./tasks/mintaka.js";
export type { PropertyClass, PropertyStats, PropertyTable } from "./tasks/wikireading-properties.js";
