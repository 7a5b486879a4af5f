// What an index kind is to the rest of tartan: one descriptor per kind (its name, default unit, how it
// is built, opened and verified, whether its searches spread over the cores themselves, whether it
// reads KILT inputs with entity markers), registered in ./index.ts. Building (../build.ts), opening
// (../open.ts), `tartan index verify` and `tartan retrieve` ask the registry instead of naming kinds.

import type { PageFeed } from "../entity/source.js";
import type { IndexManifest, Retriever, UnitKind } from "../types.js";
import type { Descriptor } from "../../util/registry.js";
import type { Unit } from "../units/unit.js";
import type { OnProgress } from "../../util/progress.js";

/** What a kind's build gets from {@link buildIndex} (../build.ts). */
export interface KindBuildInput {
  /** The directory to build into (the kind's own: a resumable kind finds a killed build's state here). */
  dir: string;
  unit: UnitKind;
  /** Where the units come from (pages file, store directory, unit table or URL), for the manifest. */
  source: string;
  /** Kind-specific parameters (tfidf: ngram, hashBits, title; entity: titleCount; dense: encoder, …). */
  params: Record<string, unknown>;
  /** A fresh pass over the units (cut from the pages, or read from the unit table). */
  units(): AsyncIterable<Unit>;
  /** The pages themselves, with how far reading them has got (kinds built from pages, not units). */
  pages(): PageFeed;
  /** A unit table directory when the units come from one (`--units DIR`): its store holds the texts. */
  table?: string;
  /** Bytes the build may use (BM25, entity; default 3 GiB). */
  memory?: number;
  /** Analysis threads (BM25; default the number of cores). */
  threads?: number;
  /** Dense: precomputed vectors. */
  vectors?: VectorsInput;
  /** The knowledge-source location given (dense from a DPR passage file looks titles up there). */
  ks?: string;
  /** Opens `ks` through its backend (`IndexBuildOptions.openKs`); absent: `ks` is a store directory. */
  openKs?: () => Promise<import("../../knowledge/source.js").KnowledgeSourceReader>;
  /** Where the build reports its progress (`IndexBuildOptions.onProgress`); absent: it reports nothing. */
  onProgress?: OnProgress;
}

/** Precomputed vectors and what their rows are (`IndexBuildOptions.vectors`, ../build.ts). */
export interface VectorsInput {
  file: string;
  ids?: string;
  dprPassages?: string;
  /** Raw files: dimension and element type. */
  dim?: number;
  dtype?: "float32" | "float16";
  /** Impact: `file` is a BM25 index whose scores are quantized as impacts (`--from-bm25 INDEX`), its units kept. */
  fromBm25?: boolean;
}

/** How an index is opened. */
export interface OpenOptions {
  /** Threads one search may spread over (a kind with searchThreads 1 has its own pool; 1: the calling thread only, as in a search worker). Default: the number of cores. */
  threads?: number;
}

/** What a kind's build reports: units indexed and a line of detail for the summary. */
export interface KindBuildResult {
  units: number;
  detail: string;
}

/** One kind of index directory: a descriptor whose `version` is the format version its manifests carry. */
export interface IndexKind extends Descriptor {
  /** The manifest's `kind`. */
  readonly name: string;
  /** The index format version this tartan reads and writes (the manifest's `formatVersion`; an artefact of another is refused). */
  readonly version: number;
  /** What it indexes when no unit is given (DrQA's TF-IDF and the entity retriever: pages). */
  defaultUnit: UnitKind;
  /** The units it can index (default: every unit). */
  units?: readonly UnitKind[];
  /** Whether it builds from a unit table (`index build --units DIR`); default true. */
  fromTable?: boolean;
  /** Whether it builds from precomputed vectors (`index build --vectors FILE`: dense vectors, sparse term weights). */
  vectors?: boolean;
  /** Whether a killed build resumes from its building directory (else the build starts afresh). */
  resumes: boolean;
  /** Whether its queries are KILT inputs with entity markers to strip (text retrievers; entity reads the markers). */
  stripMarkers: boolean;
  /** Search threads `tartan retrieve` uses by default (1: one search already spreads over every core); default the number of cores. */
  searchThreads?: number;
  /** Builds the index into `input.dir` (the caller seals it and swaps it into place). */
  build(input: KindBuildInput): Promise<KindBuildResult>;
  /** Opens the index in `dir` whose manifest is `manifest` (files already size-checked). */
  open(dir: string, manifest: IndexManifest, options?: OpenOptions): Promise<Retriever>;
  /** What `tartan index verify` checks beyond the files' checksums and opening (throws on a problem). */
  verify?(dir: string): Promise<void>;
}
