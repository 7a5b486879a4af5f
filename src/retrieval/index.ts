// Public exports of tartan's retrieval: the Retriever interface and unit store, opening indexes (one,
// or several fused), batch search on several threads, units from KILT pages, and each retriever's
// build and open functions.

export type { Hit, IndexManifest, Retriever, RetrieverKind, UnitKind } from "./types.js";
export { UnitStore, UnitWriter, unitProvenance, type Unit, type UnitInfo, type UnitRef } from "./units.js";
export { TableUnitStore, TableUnitWriter } from "./unit-table.js";
export type { UnitStore as UnitStoreInterface } from "./units/unit.js";
export { openIndex, openIndexes, openRaw, defaultSearchThreads, readsEntityMarkers } from "./open.js";
export { buildIndex, buildingDir, defaultUnit, type IndexBuildOptions, type IndexBuildResult } from "./build.js";
export { verifyIndexDir, type IndexVerifyResult } from "./verify.js";
export { passagesFrom, passagesFromPages, type PassagesOptions } from "./passages.js";
export { INDEX_KINDS, indexKind, type IndexKind, type KindBuildInput, type KindBuildResult } from "./kinds/index.js";
export { readManifest, writeManifest, MANIFEST_FILE, TARTAN_VERSION } from "./manifest.js";
export { stripEntityMarkers, ENT_START, ENT_END } from "./markers.js";
export { renderHits, trecId, SearchPool, type ParallelOptions, type RenderSpec } from "./pool.js";
export { pageUnit, unitsOfPage, unitsFrom, unitsFromPages, unitsFromPagesFile, unitsFromStore, unitsFromTable, pagesFrom, pagesFromFile, pagesFromStore, type UnitOptions } from "./sources.js";
export { HybridRetriever, checkSameUnits, DEFAULT_RRF_K, type HybridOptions } from "./hybrid.js";
export { buildTfidfIndex, DEFAULT_TFIDF_PARAMS, type TfidfParams, type TfidfBuildStats } from "./tfidf/build.js";
export { openTfidf, TfidfRetriever } from "./tfidf/search.js";
export { highlight, matchedRanges, queryMatcher } from "./highlight.js";
export { drqaTokens, drqaNgrams, isFilteredWord, STOPWORDS } from "./tfidf/tokenize.js";
export { murmur3, hashBucket } from "./tfidf/hash.js";
export { topK } from "./tfidf/topk.js";
export { buildEntityIndex, titleVariants, DEFAULT_ENTITY_PARAMS, type EntityParams, type EntityBuildStats, type EntityBuildOptions, type EntityBuildProgress } from "./entity/build.js";
export { openEntity, EntityRetriever } from "./entity/search.js";
export { mentionKey, findMentions, markedMention } from "./entity/mentions.js";
export { buildBm25Index, openBm25, Bm25Searcher, bm25IndexedText, type Bm25BuildOptions, type QueryTerm, type SearchStats, type Bm25IndexParams, type TokenSink, type TermInfo } from "./bm25/index.js";
export { buildDenseIndex, openDense } from "./dense/index.js";
export {
  DenseRetriever,
  createEncoder,
  normalizeRows,
  unitText,
  type DenseOpenOptions,
  type DenseBuildParams,
  type DenseBuildOptions,
  type DenseProgress,
  type Encoder,
  type EncoderSpec,
  type UseLiteSpec,
  type OnnxSpec,
  type BertOnnxSpec,
  type OpenAISpec,
} from "./dense/index.js";
export {
  openVectorFile,
  arraySource,
  buildIvfIndex,
  IvfIndex,
  type VectorSource,
  type VectorFileOptions,
  type VectorDtype,
  type IvfBuildParams,
  type IvfBuildOptions,
  type IvfProgress,
  type IvfSearchOptions,
  type IvfOpenOptions,
  type IvfShare,
  type HammingShare,
  type WasmMemory,
  type QuantizeKind,
} from "./dense/index.js";
export { buildDenseFromVectors, type VectorsBuildOptions, type VectorsBuildResult } from "./dense/from-vectors.js";
export type { VectorsInput } from "./build.js";
export { withQueryVectors, setDenseSearch } from "./dense/query-vectors.js";
export type { DprStats } from "./dense/dpr-passages.js";
export { UseLiteEncoder } from "./dense/use-lite.js";
export { OnnxEncoder } from "./dense/onnx.js";
export { BertOnnxEncoder } from "./dense/bert.js";
export { WordPieceTokenizer, type WordPieceOptions, type Encoded as WordPieceEncoded } from "./dense/wordpiece.js";
export { OpenAIEncoder } from "./dense/openai.js";
export { Bm25Retriever, DEFAULT_BM25_PARAMS, englishAnalyzer, lowercaseAnalyzer, getAnalyzer, type Bm25Params, type Bm25BuildParams, type Bm25BuildStats, type Analyzer, type AnalyzerName } from "./bm25/index.js";
export type { HnswIndex, HnswParams } from "./dense/ann.js";
export type { ExactIndex } from "./dense/exact.js";
export type { OpenAIOptions } from "./dense/openai.js";
export type { FoundMention } from "./entity/mentions.js";
export type { Candidates } from "./entity/search.js";
export type { PageFeed } from "./entity/source.js";
export type { TfidfBuildOptions } from "./tfidf/build.js";
export type { IndexFile } from "./types.js";
export type { TableMeta } from "./unit-table.js";
export type { StoreIdentity } from "./unit-table.js";
