// The provenance a reader cites for a passage: the passage's KILT provenance without the copy of the
// passage text that retrieval outputs carry (the guess file stays small; the span is in `meta`).

import type { Provenance } from "../../records/types.js";
import type { ReaderPassage } from "../types.js";

/** The provenance of a passage as a reader cites it (without the passage text). */
export function citedProvenance(p: ReaderPassage): Provenance {
  const { text: _text, ...rest } = p.provenance;
  return rest;
}
