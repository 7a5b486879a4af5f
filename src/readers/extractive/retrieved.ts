// Passages from a tartan retriever (BM25, TF-IDF, dense, entity, hybrid) for the readers: the top-k
// hits of a query as ReaderPassages carrying the unit's text, its KILT provenance and the hit score.

import type { Retriever } from "../../retrieval/types.js";
import { unitProvenance } from "../../retrieval/units/unit.js";
import type { ReaderPassage } from "../types.js";

/** The `k` best units for `query` as reader passages, best first. */
export async function retrievedPassages(retriever: Retriever, query: string, k: number): Promise<ReaderPassage[]> {
  const hits = await retriever.search(query, k);
  return hits.map((h) => {
    const unit = retriever.units.get(h.unit);
    return { text: unit.text, provenance: unitProvenance(unit, h.score, false), score: h.score };
  });
}
