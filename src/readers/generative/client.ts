// The OpenAI-compatible client the generative reader calls: it lives in src/util/openai-client.ts, so that
// the LLM rerankers (src/retrieval/rerank/, a lower layer) call the same client; re-exported here.

export * from "../../util/openai-client.js";
