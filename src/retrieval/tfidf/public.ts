// The TF-IDF names tartan/retrieval exports as its `tfidf` namespace: the retriever, its parameters and
// DrQA's tokenization. buildTfidfIndex and openTfidf are at the top level; the feature hashing
// (hash.ts) and top-k selection (topk.ts) stay internal.
export { TfidfRetriever } from "./search.js";
export { DEFAULT_TFIDF_PARAMS, type TfidfParams, type TfidfBuildStats, type TfidfBuildOptions } from "./build.js";
export { drqaTokens, drqaNgrams } from "./tokenize.js";
