// The registry of index kinds: one descriptor per kind (./kind.ts), looked up by the name a manifest or
// `--kind` gives. Adding a kind: its folder under src/retrieval/ (build and search), its descriptor
// here in kinds/, and one line in KINDS (docs/architecture.md shows an example). Descriptors
// load their kind's modules only when they build or open one.

import { bm25Kind } from "./bm25.js";
import { denseKind } from "./dense.js";
import { entityKind } from "./entity.js";
import { impactKind } from "./impact.js";
import type { IndexKind } from "./kind.js";
import { tfidfKind } from "./tfidf.js";
import { Registry } from "../../util/registry.js";

export type { IndexKind, KindBuildInput, KindBuildResult } from "./kind.js";

/** The registry of index kinds, in `--kind`'s order. */
export const KINDS = new Registry<IndexKind>("index kind", [bm25Kind, tfidfKind, denseKind, entityKind, impactKind]);

/** Every kind of index directory, in `--kind`'s order. */
export const INDEX_KINDS: readonly IndexKind[] = KINDS.all();

/** The kind called `name`, or an error naming `where` (an index directory or flag) and the known kinds. */
export function indexKind(name: string, where = "index"): IndexKind {
  return KINDS.get(name, where);
}
