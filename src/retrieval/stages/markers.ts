// The `markers` stage: KILT inputs reach a text retriever with their entity markers removed, by KILT's
// rule (../markers.ts). Opening applies it to every kind that strips markers (the kind's `stripMarkers`).

import { MarkerStripping } from "../markers.js";
import type { Stage } from "./stage.js";

/** Removes `[START_ENT]`/`[END_ENT]` from query texts before the wrapped retriever searches them. */
export const markersStage: Stage = {
  name: "markers",
  version: 1,
  summary: "remove KILT's entity markers from query texts",
  takes: "one",
  async wrap([inner]) {
    return new MarkerStripping(inner);
  },
};
