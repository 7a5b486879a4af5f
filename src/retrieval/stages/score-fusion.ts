// The score-fusion stages: weighted sum (`wsum`, with Pyserini's `alpha` form for two members), CombSUM,
// CombMNZ, CombMAX and CombANZ over each member's normalised scores, as ranx defines them (../fusion.ts),
// applied by the hybrid retriever (../hybrid.ts). Options: `norm` (min-max by default), `weights` (wsum),
// `alpha` (wsum over two) and `depth`. One descriptor per method, each a stage of its own name.

import { HybridRetriever, type HybridOptions } from "../hybrid.js";
import type { FusionMethod } from "../fusion.js";
import type { Stage } from "./stage.js";

function scoreFusion(method: Exclude<FusionMethod, "rrf">, summary: string): Stage {
  return {
    name: method,
    version: 1,
    summary,
    takes: "many",
    async wrap(inputs, options, context) {
      return new HybridRetriever(inputs, { ...(options as HybridOptions), method }, context.names);
    },
  };
}

/** Σ wᵢ·sᵢ over normalised scores (a missing score 0; with `alpha`, α·s₁ + s₂ and a missing score the member's lowest). */
export const wsumStage = scoreFusion("wsum", "weighted sum of normalised scores (norm, weights or alpha, depth)");
/** Σ sᵢ over the members that retrieved the unit. */
export const combsumStage = scoreFusion("combsum", "CombSUM: sum of normalised scores (norm, depth)");
/** Σ sᵢ times the number of members that retrieved the unit. */
export const combmnzStage = scoreFusion("combmnz", "CombMNZ: sum of normalised scores times how many members retrieved it (norm, depth)");
/** The highest normalised score any member gave. */
export const combmaxStage = scoreFusion("combmax", "CombMAX: highest normalised score (norm, depth)");
/** Σ sᵢ over the members that retrieved the unit, divided by their number. */
export const combanzStage = scoreFusion("combanz", "CombANZ: mean normalised score over the members that retrieved it (norm, depth)");
