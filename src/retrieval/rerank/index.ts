// The registry of rerankers (RERANKERS, one descriptor per kind: ./reranker.ts says what one is) and how a
// spec opens one. Adding a reranker: its module here with its descriptor, one line in RERANKERS, and one
// line in the contract suite's cases (test/retrieval/rerank/cases.ts). Reranking a retriever's hits is the
// `rerank` stage (../stages/rerank.ts); a run file, `rerankRun` (src/pipeline/rerank.ts); both on every
// core (the search pool's workers, or ./pool.ts).

import { Registry } from "../../util/registry.js";
import { crossEncoderReranker } from "./cross-encoder.js";
import { learnedReranker } from "./learned.js";
import { listwiseReranker } from "./listwise.js";
import { pointwiseReranker } from "./pointwise.js";
import { parseRerankerSpec, type Reranker, type RerankerDescriptor, type RerankerOpenContext, type RerankerSpec } from "./reranker.js";

export { parseRerankerSpec, describeSpec, rerankOrder, checkOutput } from "./reranker.js";
export { FEATURES, FEATURE_NAMES, computeFeatures, queryEntities, type FeatureDefinition, type FeatureNeed } from "./features.js";
export { trainLinearRanker, scoreItem, readModel, checkModel, LEARNED_MODEL_FORMAT, LEARNED_MODEL_VERSION, type LearnedModel, type TrainingExample, type TrainOptions, type TrainResult } from "./learned-model.js";
export type { Reranker, RerankerDescriptor, RerankerOpenContext, RerankerSpec, RerankItem, RerankOutput, RerankPassage } from "./reranker.js";

/** Every reranker, by name. */
export const RERANKERS = new Registry<RerankerDescriptor>("reranker", [crossEncoderReranker, pointwiseReranker, listwiseReranker, learnedReranker]);

/** Opens the reranker a spec names (a spec string as `--reranker` takes it, or a parsed spec). */
export async function openReranker(spec: string | RerankerSpec, context: RerankerOpenContext = {}): Promise<Reranker> {
  const s = parseRerankerSpec(spec);
  return RERANKERS.get(s.name, "--reranker").open(s.options, context);
}
