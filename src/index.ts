// tartan's library entry point. Records and the KILT evaluator are exported at the top level (the
// most used parts); every other subsystem is a namespace named after its folder.
export * from "./records/types.js";
export { readJsonl, readJsonlAll, scanJsonl, writeJsonl, JsonlWriter, LineError } from "./records/jsonl.js";
export { validateFile } from "./records/validate.js";
export * from "./eval/index.js";
export { evaluateTask } from "./eval/tasks/index.js";
export { DATASETS, findDataset, datasetForFile } from "./datasets/catalogue.js";
export * as knowledge from "./knowledge/index.js";
export * as retrieval from "./retrieval/index.js";
export * as readers from "./readers/index.js";
export * as pipeline from "./pipeline/index.js";
export * as mapping from "./mapping/index.js";
export * as analysis from "./analysis/index.js";
export * as mintaka from "./datasets/mintaka.js";
export * as wikireading from "./datasets/wikireading.js";
