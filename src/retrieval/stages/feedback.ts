// The feedback stages: `rm3` and `rocchio` search the wrapped BM25 retriever with its queries expanded by
// pseudo-relevance feedback as Anserini's Rm3Reranker and RocchioReranker do (../feedback/), their options
// the method's parameters (Anserini's names and defaults). `tartan retrieve --rm3 …` / `--rocchio …` apply
// them; a request's own feedback (serve's and mcp's `rm3`/`rocchio`) takes the `feedback` search option instead.

import { describeKind } from "../manifest.js";
import { checkFeedback, type FeedbackSpec } from "../feedback/params.js";
import { expandsQueries, FeedbackRetriever } from "../feedback/retriever.js";
import type { Stage } from "./stage.js";

function feedbackStage(method: FeedbackSpec["method"], summary: string): Stage {
  return {
    name: method,
    version: 1,
    summary,
    takes: "one",
    async wrap([inner], options) {
      const spec = checkFeedback({ ...options, method }, `stage ${method}`);
      if (!expandsQueries(inner)) throw new Error(`stage ${method}: query feedback needs a BM25 index directory (or a fusion holding one); given ${describeKind(inner.manifest)}${inner.kind === "bm25" ? " on a server" : ""}`);
      return new FeedbackRetriever(inner, spec);
    },
  };
}

/** RM3 feedback (fbDocs, fbTerms, originalQueryWeight, filterTerms). */
export const rm3Stage = feedbackStage("rm3", "RM3 query expansion over BM25, as Anserini's (fbDocs, fbTerms, originalQueryWeight, filterTerms)");
/** Rocchio feedback (topFbTerms, topFbDocs, bottomFbTerms, bottomFbDocs, alpha, beta, gamma, useNegative, depth). */
export const rocchioStage = feedbackStage("rocchio", "Rocchio query expansion over BM25, as Anserini's (topFbTerms, topFbDocs, bottomFbTerms, bottomFbDocs, alpha, beta, gamma, useNegative, depth)");
