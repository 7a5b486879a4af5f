// tartan's library entry point: records, evaluation, datasets (knowledge source and retrieval live in their own folders).
export * from "./records/types.js";
export { readJsonl, readJsonlAll, scanJsonl, writeJsonl, JsonlWriter, LineError } from "./records/jsonl.js";
export * from "./eval/index.js";
export { DATASETS, findDataset, datasetForFile } from "./datasets/catalogue.js";
