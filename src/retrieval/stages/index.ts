// The registry of stages (./stage.ts) and how they are applied. Adding a stage (a reranker, query
// feedback): its file here with its descriptor, and one line in STAGES; `openIndexes` (and so every search
// worker) applies the stages an open asks for by name.

import { Registry } from "../../util/registry.js";
import type { Retriever } from "../types.js";
import { markersStage } from "./markers.js";
import { rerankStage } from "./rerank.js";
import { rrfStage } from "./rrf.js";
import { combanzStage, combmaxStage, combmnzStage, combsumStage, wsumStage } from "./score-fusion.js";
import { rm3Stage, rocchioStage } from "./feedback.js";
import type { Stage, StageSpec } from "./stage.js";

export type { Stage, StageContext, StageOptions, StageSpec } from "./stage.js";

/** Every stage, by name. */
export const STAGES = new Registry<Stage>("stage", [markersStage, rrfStage, wsumStage, combsumStage, combmnzStage, combmaxStage, combanzStage, rerankStage, rm3Stage, rocchioStage]);

/** `inputs` wrapped by the stage `spec` names; on an error the inputs are closed. */
export async function applyStage(inputs: readonly Retriever[], spec: StageSpec, names: readonly string[] = inputs.map((r, i) => `index ${i + 1} (${r.kind})`)): Promise<Retriever> {
  try {
    const stage = STAGES.get(spec.name, "--stage");
    if (stage.takes === "one" && inputs.length !== 1) throw new Error(`stage ${stage.name} wraps one retriever, given ${inputs.length}`);
    return await stage.wrap(inputs, spec.options ?? {}, { names });
  } catch (e) {
    for (const r of inputs) await r.close();
    throw e;
  }
}

/** `retriever` wrapped by each of `specs` in turn (each over the one before). */
export async function applyStages(retriever: Retriever, specs: readonly StageSpec[] = []): Promise<Retriever> {
  let r = retriever;
  for (const s of specs) r = await applyStage([r], s);
  return r;
}
