// The concurrency limit of the generative reader's batches: it lives in src/util/limit.ts (the LLM
// rerankers use it too); re-exported here.

export * from "../../util/limit.js";
