// The `learned` reranker: a linear model over features tartan already computes (./features.ts: the
// first stage's rank and score, title match, term, idf and bigram overlap, entity overlap, the passage's
// position in its page, the page's other hits), trained on KILT-format data by `tartan reranker train`
// (./learned-model.ts, src/pipeline/reranker-train.ts). Spec: `learned:MODEL.json` (= `learned:model=MODEL.json`).
// The model file is read and checked when it opens; a passage that lacks what a feature of the model
// needs (a first-stage score, a paragraph) is refused naming the feature.

import { resolve } from "node:path";
import { readModel, scoreItem, type LearnedModel } from "./learned-model.js";
import { checkOutput, opt, type Reranker, type RerankerDescriptor, type RerankItem, type RerankOutput } from "./reranker.js";

const NAME = "learned";

/** A learned reranker over one model file. */
export class LearnedReranker implements Reranker {
  /** Its registered name, `learned`. */
  readonly name = NAME;
  /** What a run records: the model file, its version, objective, features and weights. */
  readonly settings: Record<string, unknown>;

  constructor(
    /** The checked model. */
    readonly model: LearnedModel,
    /** Where it was read from. */
    readonly file: string,
  ) {
    this.settings = { reranker: NAME, model: file, version: model.version, objective: model.objective, features: model.features, weights: model.weights };
  }

  /** The model's scores of each item's passages; throws naming the model file when a passage lacks a feature's input. */
  async rerank(items: readonly RerankItem[]): Promise<RerankOutput[]> {
    return items.map((it) => {
      let scores: number[];
      try {
        scores = scoreItem(this.model, it);
      } catch (e) {
        throw new Error(`reranker learned (${this.file}): ${(e as Error).message}`);
      }
      return checkOutput(NAME, it, { scores });
    });
  }

  /** Nothing to release. */
  async close(): Promise<void> {}
}

/** The learned reranker's descriptor. */
export const learnedReranker: RerankerDescriptor = {
  name: NAME,
  version: 1,
  summary: "a linear model over first-stage, title, overlap, entity, position and page features, trained by tartan reranker train (model=MODEL.json)",
  needs: ["model"],
  async open(options) {
    opt.known(NAME, options, ["model"]);
    const file = resolve(opt.string(NAME, options, "model"));
    return new LearnedReranker(readModel(file), file);
  },
};
