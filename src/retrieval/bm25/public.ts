// The BM25 names tartan/retrieval exports as its `bm25` namespace: the retriever and searcher classes,
// parameters, defaults and analyzers. buildBm25Index and openBm25 are at the top level beside the other
// kinds' build and open functions; the codec, postings and dictionary stay internal. Live indexes
// (./live/): updates, merges and the retriever over a commit.
export { Bm25Retriever, Bm25Searcher, type Bm25IndexParams, type QueryTerm, type SearchStats } from "./search.js";
export { bm25IndexedText, DEFAULT_BM25_PARAMS, type Bm25Params, type Bm25BuildParams, type Bm25BuildStats, type Bm25BuildOptions } from "./build.js";
export { englishAnalyzer, lowercaseAnalyzer, getAnalyzer, type Analyzer, type AnalyzerName } from "./analyzer.js";
export type { TokenSink } from "./word-break.js";
export { parseBm25Params, checkBm25Params, type Bm25SearchParams } from "./search-params.js";
export type { TermInfo } from "./dictionary.js";
export { updateLiveIndex, mergeLiveIndex, type LiveUpdateFiles, type LiveWriteOptions, type LiveCommitReport } from "./live/writer.js";
export { LiveBm25Retriever, LiveUnits, openLiveBm25 } from "./live/search.js";
export { DEFAULT_MERGE_POLICY, type MergePolicy } from "./live/policy.js";
