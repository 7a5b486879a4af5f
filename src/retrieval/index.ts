// Public exports of tartan's retrieval (`tartan/retrieval`). At the top level, the contract every kind
// shares: the Retriever interface and unit store, opening indexes (one, or several fused), building an
// index of any kind, batch search on several threads, units from KILT pages, hybrid fusion, and each
// kind's build and open functions. Each kind's own classes, parameters and helpers are a namespace
// named after it (`bm25`, `tfidf`, `entity`, `dense`); hashing, top-k selection and kernels stay internal.

export type { Hit, IndexFile, IndexManifest, Retriever, RetrieverKind, UnitKind } from "./types.js";
export { queryText, queryVector, mergeSearchOptions, type Query, type QueryInput, type SearchOptions } from "./query.js";
export type { OpenOptions } from "./kinds/kind.js";
export { UnitStore, UnitWriter } from "./units/store.js";
export { unitProvenance, type Unit, type UnitInfo, type UnitRef } from "./units/unit.js";
export { TableUnitStore, TableUnitWriter, type TableMeta, type StoreIdentity } from "./units/table.js";
export type { UnitStore as UnitStoreInterface } from "./units/unit.js";
export { openIndex, openIndexes, openRaw, defaultSearchThreads, readsEntityMarkers } from "./open.js";
export { buildIndex, buildingDir, defaultUnit, type IndexBuildOptions, type IndexBuildResult, type VectorsInput } from "./build.js";
export { verifyIndexDir, type IndexVerifyResult } from "./verify.js";
export { passagesFrom, passagesFromPages, type PassagesOptions } from "./passages.js";
export { KINDS, INDEX_KINDS, indexKind, type IndexKind, type KindBuildInput, type KindBuildResult } from "./kinds/index.js";
export { Registry, type Descriptor } from "../util/registry.js";
export { readManifest, writeManifest, MANIFEST_FILE, TARTAN_VERSION } from "./manifest.js";
export { stripEntityMarkers, ENT_START, ENT_END } from "./markers.js";
export { renderHits, trecId, SearchPool, type ParallelOptions, type RenderSpec } from "./pool.js";
export { pageUnit, unitsOfPage, unitsFrom, unitsFromPages, unitsFromPagesFile, unitsFromStore, unitsFromTable, pagesFrom, pagesFromFile, pagesFromStore, type UnitOptions } from "./sources.js";
export { HybridRetriever, checkSameUnits, DEFAULT_RRF_K, type HybridOptions } from "./hybrid.js";
export { FUSION_METHODS, FUSION_NORMS, fuseLists, normaliseScores, resolveFusion, fusionStage, fusionMethod, fusionNorm, parseWeights, type FusionMethod, type FusionNorm, type FusionSpec, type ResolvedFusion, type RankedList, type FusionRequest } from "./fusion.js";
export { highlight, matchedRanges, queryMatcher } from "./highlight.js";

// Each kind's build and open functions.
export { buildBm25Index } from "./bm25/build.js";
export { openBm25 } from "./bm25/search.js";
export { buildTfidfIndex } from "./tfidf/build.js";
export { openTfidf } from "./tfidf/search.js";
export { buildEntityIndex } from "./entity/build.js";
export { openEntity } from "./entity/search.js";
export { buildDenseIndex, openDense } from "./dense/index.js";
export { buildDenseFromVectors, type VectorsBuildOptions, type VectorsBuildResult } from "./dense/from-vectors.js";

// Each kind's classes, parameters and helpers.
export * as bm25 from "./bm25/public.js";
export * as tfidf from "./tfidf/public.js";
export * as entity from "./entity/public.js";
export * as dense from "./dense/public.js";
export { STAGES, applyStage, applyStages, type Stage, type StageContext, type StageOptions, type StageSpec } from "./stages/index.js";
export { RERANKERS, openReranker, parseRerankerSpec, describeSpec, rerankOrder, type Reranker, type RerankerDescriptor, type RerankerOpenContext, type RerankerSpec, type RerankItem, type RerankOutput, type RerankPassage } from "./rerank/index.js";
export { FEATURES, FEATURE_NAMES, computeFeatures, queryEntities, trainLinearRanker, scoreItem, readModel, checkModel, LEARNED_MODEL_FORMAT, LEARNED_MODEL_VERSION, type FeatureDefinition, type FeatureNeed, type LearnedModel, type TrainingExample, type TrainOptions, type TrainResult } from "./rerank/index.js";
export { LearnedReranker } from "./rerank/learned.js";
export { RerankPool, type RerankPoolOptions } from "./rerank/pool.js";
export { RerankingRetriever } from "./rerank/retriever.js";
export { FEEDBACK_METHODS, RM3_DEFAULTS, ROCCHIO_DEFAULTS, checkFeedback, parseFeedback, type FeedbackSpec, type Rm3Params, type RocchioParams } from "./feedback/params.js";
export { rm3Expansion, rocchioExpansion, type ExpandedTerm, type FeedbackCorpus, type FeedbackDoc } from "./feedback/expand.js";
export { FeedbackRetriever } from "./feedback/retriever.js";
