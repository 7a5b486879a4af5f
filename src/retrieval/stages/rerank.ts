// The `rerank` stage: the wrapped retriever's best `depth` units (default: the k asked for) reranked by the
// reranker its `reranker` option names (a spec, `NAME:key=value,…`: ../rerank/), the best k returned
// (../rerank/retriever.ts). `tartan retrieve --reranker SPEC --rerank-depth N` applies it; every search
// worker opens its own reranker (on one thread), so batches rerank on every core.

import { openReranker } from "../rerank/index.js";
import { RerankingRetriever } from "../rerank/retriever.js";
import type { RerankerSpec } from "../rerank/reranker.js";
import type { Stage } from "./stage.js";

/** Reranks the hits of the retriever it wraps. */
export const rerankStage: Stage = {
  name: "rerank",
  version: 1,
  summary: "rerank the best depth hits with a reranker (reranker: a spec; depth)",
  takes: "one",
  async wrap([inner], options) {
    const spec = options.reranker as string | RerankerSpec | undefined;
    if (spec === undefined) throw new Error("stage rerank: the reranker option (a reranker spec) is required");
    const depth = options.depth;
    if (depth !== undefined && !(typeof depth === "number" && Number.isInteger(depth) && depth >= 1)) throw new Error(`stage rerank: depth must be a positive integer, not ${JSON.stringify(depth)}`);
    const threads = options.threads;
    const reranker = await openReranker(spec, { threads: typeof threads === "number" ? threads : 1 });
    return new RerankingRetriever(inner, reranker, depth as number | undefined);
  },
};
