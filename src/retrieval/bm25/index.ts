// BM25 retrieval with Lucene 8.7's scores and analyzers: build an index directory from units, open it
// for search. What matches Lucene and how it was checked: docs/retrieval.md ("BM25").

export { buildBm25Index, bm25IndexedText, DEFAULT_BM25_PARAMS, type Bm25Params, type Bm25BuildParams, type Bm25BuildStats, type Bm25BuildOptions } from "./build.js";
export { openBm25, Bm25Retriever, Bm25Searcher, type QueryTerm, type SearchStats, type Bm25IndexParams } from "./search.js";
export { englishAnalyzer, lowercaseAnalyzer, getAnalyzer, type Analyzer, type AnalyzerName } from "./analyzer.js";
export type { TokenSink } from "./word-break.js";
export type { TermInfo } from "./dictionary.js";
