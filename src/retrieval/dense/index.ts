// Dense retrieval: `buildDenseIndex` encodes units into an index directory (units, unit vectors, optional
// HNSW graph, manifest); `buildIvfIndex` (./ivf-build.ts) compresses precomputed vectors into an inverted
// file of binary, PQ or int8 codes; `openDense` reopens either as a Retriever that encodes queries with the
// encoder the manifest names (or takes query vectors) and searches every vector exactly (WebAssembly SIMD,
// both cores), the HNSW graph, or the compressed lists (./ivf-search.ts).

import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Hit, IndexManifest, Retriever } from "../types.js";
import { UnitStore } from "../units/store.js";
import { HNSW_FILE, HnswIndex } from "./ann.js";
import { VECTORS_FILE } from "./build.js";
import { readManifest } from "../manifest.js";
import { createEncoder, type Encoder, type EncoderSpec } from "./encoder.js";
import { ExactIndex, readVectorsShared, type VectorsIdentity } from "./exact.js";
import { IvfIndex, type IvfSearchOptions } from "./ivf-search.js";
import { NO_ENCODER, queryMatrix } from "./query-vectors.js";
import { mergeSearchOptions, type QueryInput, type SearchOptions } from "../query.js";

export { buildDenseIndex, unitText, VECTORS_FILE, type DenseBuildParams, type DenseBuildOptions, type DenseProgress } from "./build.js";
export { createEncoder, normalizeRows, type Encoder, type EncoderSpec, type UseLiteSpec, type OnnxSpec, type BertOnnxSpec, type OpenAISpec } from "./encoder.js";
export { ExactIndex, readVectorsShared, type ExactOptions } from "./exact.js";
export { HnswIndex, HNSW_FILE, type HnswParams } from "./ann.js";
export { openVectorFile, arraySource, type VectorSource, type VectorFileOptions, type VectorDtype } from "./vector-files.js";
export { buildIvfIndex, type IvfBuildParams, type IvfBuildOptions, type IvfProgress } from "./ivf-build.js";
export { IvfIndex, type IvfSearchOptions, type IvfOpenOptions, type IvfShare } from "./ivf-search.js";
export type { HammingShare } from "./hamming.js";
export type { FastScanShare } from "./fastscan.js";
export type { WasmMemory } from "./simd.js";
export { QUANTIZE_KINDS, type QuantizeKind } from "./quantizer.js";

/** Options of {@link openDense}. */
export interface DenseOpenOptions {
  /** "exact" scans every vector; "hnsw" uses the graph (built with the index). Default: the manifest's choice. */
  search?: "exact" | "hnsw";
  /** HNSW candidate list size; default: the manifest's. */
  ef?: number;
  /** Threads a search spreads over (exact search, and batches of a compressed index); default: the number of cores; 0 or 1: the calling thread only. */
  threads?: number;
  /** An encoder to use instead of loading the manifest's (e.g. an OpenAI encoder with an explicit key). */
  encoder?: Encoder;
  /** Compressed indexes: lists probed, candidates rescored, … (default: the manifest's). */
  ivf?: IvfSearchOptions;
  /** Compressed indexes: hold the int8 rescoring rows in memory (see {@link IvfOpenOptions.rowsInMemory}). */
  rowsInMemory?: boolean;
}

interface DenseParams {
  /** null for an index built from precomputed vectors with no encoder named. */
  encoder: EncoderSpec | null;
  dim: number;
  hnsw: { ef?: number } | null;
  search?: "exact" | "hnsw";
  /** The vectors file's size and CRC-32 at build (absent in indexes built before it was recorded). */
  vectorsIdentity?: VectorsIdentity;
}

/** A dense index opened for search: queries are encoded, then scored against every vector (exact) or through the HNSW graph. */
export class DenseRetriever implements Retriever {
  readonly kind = "dense" as const;
  private encoder: Promise<Encoder> | null;
  private readonly ownEncoder: boolean;

  constructor(
    readonly units: UnitStore,
    readonly manifest: IndexManifest,
    private readonly exact: ExactIndex | null,
    private readonly hnsw: HnswIndex | null,
    encoder?: Encoder,
    private readonly ivf: IvfIndex | null = null,
    private readonly ivfOptions: IvfSearchOptions = {},
  ) {
    this.encoder = encoder ? Promise.resolve(encoder) : null;
    this.ownEncoder = !encoder;
  }

  private get params(): DenseParams {
    return this.manifest.params as unknown as DenseParams;
  }

  /** The query encoder (loaded on first use). */
  queryEncoder(): Promise<Encoder> {
    const spec = this.params.encoder;
    if (!spec && !this.encoder) return Promise.reject(new Error(NO_ENCODER));
    this.encoder ??= createEncoder(spec as EncoderSpec);
    return this.encoder;
  }

  async search(query: QueryInput, k: number, options?: SearchOptions): Promise<Hit[]> {
    return (await this.searchBatch([query], k, options))[0];
  }

  /** Queries with a vector search it; the others' texts are encoded. `options` (lists probed, candidates rescored) hold for this call. */
  async searchBatch(queries: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]> {
    if (queries.length === 0) return [];
    if (this.units.count === 0) return queries.map(() => []);
    return this.searchVectors(await queryMatrix(queries, this.params.dim, () => this.queryEncoder()), k, options);
  }

  /** Search with query vectors already encoded (`n × dim`, unit length); `options` over the index's for this call. */
  async searchVectors(vectors: Float32Array, k: number, options: SearchOptions = {}): Promise<Hit[][]> {
    const dim = this.params.dim;
    if (this.units.count === 0) return Array.from({ length: vectors.length / Math.max(1, dim) }, () => []);
    if (vectors.length % dim !== 0) throw new Error(`query vectors are not ${dim}-d (the index's size)`);
    if (this.ivf) return this.ivf.searchBatch(vectors, k, mergeSearchOptions(this.ivfOptions, options));
    if (this.hnsw) return this.hnsw.search(vectors, k);
    return (this.exact as ExactIndex).search(vectors, k);
  }

  /** Closes the vectors and, when it loaded it, the encoder. */
  async close(): Promise<void> {
    await this.exact?.close();
    await this.ivf?.close();
    if (this.ownEncoder && this.encoder) await (await this.encoder).close();
    this.units.close();
  }
}

/** Whether a manifest's `vectorsIdentity` has its shape. */
function isIdentity(x: unknown): x is VectorsIdentity {
  const v = x as Partial<VectorsIdentity> | null;
  return v !== null && typeof v === "object" && Number.isInteger(v.bytes) && (v.bytes as number) >= 0 && typeof v.crc32 === "string" && /^[0-9a-f]{8}$/.test(v.crc32);
}

/** Opens a dense index directory written by {@link buildDenseIndex}. */
export async function openDense(dir: string, options: DenseOpenOptions = {}): Promise<DenseRetriever> {
  const manifest = readManifest(dir);
  if (manifest.kind !== "dense") throw new Error(`${dir}: a ${manifest.kind} index, not a dense one`);
  const params = manifest.params as unknown as DenseParams;
  const units = UnitStore.open(dir);
  if (units.count !== manifest.units) throw new Error(`${dir}: manifest says ${manifest.units} units, the unit store has ${units.count}`);
  const quantize = (manifest.params as { quantize?: string }).quantize;
  if (quantize !== undefined && quantize !== "none") {
    let ivf: IvfIndex;
    try {
      ivf = IvfIndex.open(dir, manifest, { threads: options.threads === 0 ? 1 : options.threads, rowsInMemory: options.rowsInMemory });
    } catch (e) {
      units.close();
      throw e;
    }
    return new DenseRetriever(units, manifest, null, null, options.encoder, ivf, options.ivf ?? {});
  }
  const mode = options.search ?? params.search ?? "exact";
  let exact: ExactIndex | null = null;
  let hnsw: HnswIndex | null = null;
  try {
    if (manifest.units > 0) {
      if (mode === "hnsw") {
        if (!params.hnsw || !existsSync(join(dir, HNSW_FILE))) throw new Error(`${dir}: built without an HNSW graph`);
        hnsw = HnswIndex.load(join(dir, HNSW_FILE), params.dim, options.ef ?? params.hnsw.ef ?? 128);
      } else {
        // the build's record of the file (else the sealed manifest's): another build's file, or a cut one, is refused here
        const listed = manifest.files?.find((f) => f.name === VECTORS_FILE);
        const recorded = params.vectorsIdentity as unknown;
        if (recorded !== undefined && !isIdentity(recorded)) throw new Error(`${join(dir, "manifest.json")}: params.vectorsIdentity must be { bytes, crc32 } (an integer and 8 hex digits), got ${JSON.stringify(recorded)}`);
        const m = readVectorsShared(join(dir, VECTORS_FILE), params.dim, (recorded as VectorsIdentity | undefined) ?? (listed ? { bytes: listed.bytes, crc32: listed.crc32 } : undefined));
        if (m.length !== manifest.units * params.dim) throw new Error(`${dir}: ${VECTORS_FILE} holds ${m.length / params.dim} vectors for ${manifest.units} units`);
        exact = new ExactIndex(m, params.dim, { threads: options.threads !== undefined && options.threads <= 1 ? 0 : options.threads });
      }
    }
  } catch (e) {
    units.close();
    throw e;
  }
  return new DenseRetriever(units, manifest, exact, hnsw, options.encoder);
}
