// Builds a dense index directory: units stream in, go to the unit store with their provenance, and are
// encoded in batches (title + separator + text by default); the unit-length vectors are appended to
// `vectors.f32` (row-major little-endian float32, written to an exclusive unique temporary name and
// renamed when complete; its size and CRC-32 recorded in the manifest for the open to check), an HNSW graph is added when asked for, and `manifest.json` is written last,
// so a directory with a manifest is complete.

import { closeSync, writeSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import type { IndexManifest, UnitKind } from "../types.js";
import type { Unit } from "../units/unit.js";
import { UnitWriter } from "../units/store.js";
import { crcHex, writeManifest } from "../manifest.js";
import { HNSW_FILE, HnswIndex, type HnswParams } from "./ann.js";
import { createEncoder, normalizeRows, type Encoder, type EncoderSpec } from "./encoder.js";
import { readVectorsShared } from "./exact.js";
import { commitTemp, createTempFor, discardTemp, makeDirs } from "../../util/safe-output.js";

export const VECTORS_FILE = "vectors.f32";
export { DENSE_FORMAT_VERSION } from "./format.js";
import { DENSE_FORMAT_VERSION } from "./format.js";

/** What a dense index is built with (recorded in its manifest). */
export interface DenseBuildParams {
  encoder: EncoderSpec;
  /** What the units are; default "passage". */
  unit?: UnitKind;
  /** Where the units came from (recorded in the manifest). */
  source?: string;
  /** Encode `title + titleSeparator + text` (default) or the text alone. */
  title?: boolean;
  /** Default ". ". */
  titleSeparator?: string;
  /** Units per encoder call; default 256. */
  batchSize?: number;
  /** Also build an HNSW graph (searched instead of the exact scan when `search` is "hnsw"). */
  hnsw?: HnswParams;
  /** What `openDense` searches with by default; "hnsw" needs `hnsw`. Default "exact". */
  search?: "exact" | "hnsw";
}

/** Options of {@link buildDenseIndex} that are not recorded in the manifest. */
export interface DenseBuildOptions {
  /** An encoder already loaded for `params.encoder` (it is not closed). */
  encoder?: Encoder;
}

/** Where a dense build is: units encoded so far, or rows added to the HNSW graph. */
export interface DenseProgress {
  phase: "encode" | "hnsw";
  done: number;
}

/** The text a unit is encoded from. */
export function unitText(unit: Unit, params: Pick<DenseBuildParams, "title" | "titleSeparator">): string {
  return params.title === false ? unit.text : `${unit.wikipedia_title}${params.titleSeparator ?? ". "}${unit.text}`;
}

/** Builds a dense index directory from `units` (see the module comment); `onProgress` hears each encoded batch and the HNSW additions. Returns the manifest written. */
export async function buildDenseIndex(
  units: AsyncIterable<Unit> | Iterable<Unit>,
  outDir: string,
  params: DenseBuildParams,
  onProgress?: (p: DenseProgress) => void,
  options: DenseBuildOptions = {},
): Promise<IndexManifest> {
  if (params.search === "hnsw" && !params.hnsw) throw new Error("search: \"hnsw\" needs hnsw parameters");
  makeDirs(outDir);
  const encoder = options.encoder ?? (await createEncoder(params.encoder));
  const writer = new UnitWriter(outDir);
  const vectorsFile = join(outDir, VECTORS_FILE);
  // O_EXCL under a unique name: a link planted at any name is never followed; a killed build's file is removed by the next
  const temp = createTempFor(vectorsFile);
  const fd = temp.fd;
  const batchSize = Math.max(1, params.batchSize ?? 256);
  let dim = 0;
  let count = 0;
  let crc = 0;
  let batch: string[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const v = await encoder.encodePassages(batch);
    const d = v.length / batch.length;
    if (dim !== 0 && d !== dim) throw new Error(`encoder returned ${d}-d vectors after ${dim}-d ones`);
    dim = d;
    normalizeRows(v, dim);
    const bytes = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    crc = crc32(bytes, crc);
    count += batch.length;
    batch = [];
    onProgress?.({ phase: "encode", done: count });
  };
  let complete = false;
  try {
    for await (const unit of units as AsyncIterable<Unit>) {
      await writer.add(unit);
      batch.push(unitText(unit, params));
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    complete = true;
  } finally {
    closeSync(fd);
    if (!complete) discardTemp(temp);
    await writer.close();
    if (!options.encoder) await encoder.close();
  }
  commitTemp(temp, vectorsFile);
  if (params.hnsw && count > 0) {
    const hnsw = HnswIndex.build(readVectorsShared(vectorsFile, dim), dim, params.hnsw, (done) => onProgress?.({ phase: "hnsw", done }));
    hnsw.save(join(outDir, HNSW_FILE));
  }
  return writeManifest(outDir, {
    kind: "dense",
    unit: params.unit ?? "passage",
    units: count,
    params: {
      encoder: encoder.spec,
      dim,
      title: params.title !== false,
      titleSeparator: params.titleSeparator ?? ". ",
      vectors: VECTORS_FILE,
      hnsw: params.hnsw ? { M: 16, efConstruction: 128, ef: 128, seed: 100, ...params.hnsw } : null,
      search: params.search ?? "exact",
      vectorsIdentity: { bytes: count * dim * 4, crc32: crcHex(crc) },
    },
    source: params.source ?? "",
    formatVersion: DENSE_FORMAT_VERSION,
  });
}
