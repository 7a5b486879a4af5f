// What a stage is: a step between first-stage retrieval and output that wraps retrievers into one
// (fusion of several, the removal of KILT's entity markers, and next a reranker or query feedback), one
// descriptor per stage registered in ./index.ts. A stage is named with its options in a `StageSpec`, plain
// data, so the search pool's workers apply the same stages to the indexes they open as the calling thread.

import type { Retriever } from "../types.js";
import type { Descriptor } from "../../util/registry.js";

/** A stage to apply, by name, with its options (plain JSON: it travels to the search workers). */
export interface StageSpec {
  /** The stage's registered name (`markers`, `rrf`, …). */
  name: string;
  /** The stage's own options. */
  options?: Record<string, unknown>;
}

/** Where the stages go: applied in order over what was opened, the first over the index (or the fusion). */
export interface StageOptions {
  /** The stage that fuses several indexes (`rrf`, `wsum`, `combsum`, `combmnz`, `combmax`, `combanz`); default rrf with the open's `k0` and `depth`. */
  fusion?: StageSpec;
  /** Stages over the opened retriever, in order (each wraps the one before). */
  stages?: readonly StageSpec[];
}

/** What a stage is given besides its inputs. */
export interface StageContext {
  /** The names of its inputs for messages (index directories or URLs, in order). */
  names: readonly string[];
}

/** One stage: how it wraps its inputs into one retriever. */
export interface Stage extends Descriptor {
  /** `one`: it wraps a single retriever (markers, a reranker); `many`: it combines several (fusion). */
  readonly takes: "one" | "many";
  /** The retriever over `inputs` (it owns them: closing it closes them). */
  wrap(inputs: readonly Retriever[], options: Record<string, unknown>, context: StageContext): Promise<Retriever>;
}
