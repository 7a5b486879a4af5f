// tartan's library entry point. Records and the KILT evaluator are exported at the top level (the
// most used parts); every other subsystem is a namespace named after its folder, and also its own
// entry point (`tartan/retrieval`, `tartan/readers`, …: package.json "exports", docs/architecture.md).
export * from "./records/index.js";
export * from "./eval/index.js";
export { DATASETS, findDataset, datasetForFile } from "./datasets/catalogue.js";
export * as knowledge from "./knowledge/index.js";
export * as retrieval from "./retrieval/index.js";
export * as readers from "./readers/index.js";
export * as pipeline from "./pipeline/index.js";
export * as mapping from "./mapping/index.js";
export * as analysis from "./analysis/index.js";
export * as mintaka from "./datasets/mintaka.js";
export * as wikireading from "./datasets/wikireading.js";
export * as baselines from "./baselines/index.js";
export * as compare from "./compare/index.js";
export * as runs from "./runs/index.js";
export * as trec from "./trec/index.js";
export * as artefacts from "./artefacts/index.js";
export * as repro from "./repro/index.js";
// The one registry shape every plug-in seam uses (index kinds, backends, readers, tasks, encoders, …).
export { Registry, type Descriptor } from "./util/registry.js";
