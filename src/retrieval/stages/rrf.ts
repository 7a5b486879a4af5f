// The `rrf` stage: reciprocal-rank fusion of several retrievers (../hybrid.ts), with its options `k0`
// (default 60), `depth` (default max(k, 100)) and `weights` (one per member, default 1). Opening several
// indexes together applies it unless another fusion stage is asked for (./score-fusion.ts).

import { HybridRetriever, type HybridOptions } from "../hybrid.js";
import type { Stage } from "./stage.js";

/** Fuses its inputs by reciprocal rank. */
export const rrfStage: Stage = {
  name: "rrf",
  version: 1,
  summary: "reciprocal-rank fusion of several retrievers (k0, depth, weights)",
  takes: "many",
  async wrap(inputs, options, context) {
    return new HybridRetriever(inputs, { ...(options as HybridOptions), method: "rrf" }, context.names);
  },
};
