// A dense index from precomputed vectors (encoded elsewhere, on GPUs): the vector file (./vector-files.ts),
// what each row is (an ids file, a unit table from `tartan ks passages --table`, or KILT's DPR passage
// file placed through a knowledge source: ./dpr-passages.ts), and how to store it: compressed
// (`quantize: "binary" | "pq" | "int8"`, ./ivf-build.ts) or as plain float32 rows searched exactly
// (`"none"`, the layout `openDense` has always read, its size and CRC-32 recorded for the open to check). Writes into `outDir` (the caller's temporary
// directory: `buildIndex` seals and swaps it into place).

import { closeSync } from "node:fs";
import { crc32 } from "node:zlib";
import { join } from "node:path";
import type { IndexManifest, UnitKind } from "../types.js";
import type { Unit } from "../units/unit.js";
import { TableUnitStore } from "../units/table.js";
import { crcHex, writeManifest } from "../manifest.js";
import { createTempFor, commitTemp, discardTemp, makeDirs } from "../../util/safe-output.js";
import type { KnowledgeSourceReader } from "../../knowledge/source.js";
import type { EncoderSpec } from "./encoder.js";
import { openVectorFile, type VectorFileOptions, type VectorSource } from "./vector-files.js";
import { unitsFromDprPassages, unitsFromIdsFile, type DprStats } from "./dpr-passages.js";
import { buildIvfIndex, writeRowUnits, type IvfBuildOptions, type IvfProgress } from "./ivf-build.js";
import { DENSE_FORMAT_VERSION, VECTORS_FILE } from "./build.js";
import { writeAll } from "./ivf-files.js";
import type { QuantizeKind } from "./quantizer.js";
import { EXACT_BELOW, defaultQuantize } from "./default-depth.js";

/** How a dense index is built from precomputed vectors. */
export interface VectorsBuildOptions extends VectorFileOptions {
  /** The vector file (.npy, .fvecs, raw with `dim`). */
  vectors: string;
  /** Row i is line i of this ids file … */
  ids?: string;
  /** … or unit i of this unit table … */
  units?: string;
  /** … or passage i of KILT's DPR passage file, placed through `ks`. */
  dprPassages?: string;
  ks?: KnowledgeSourceReader;
  /** Compressed (binary, pq, pq4, int8) or exact ("none"); default exact up to 20,000 × 768 values, else pq (./default-depth.ts, docs/decisions.md). */
  quantize?: QuantizeKind | "none";
  /** The encoder text queries are encoded with (null: queries come as vectors). */
  encoder?: EncoderSpec | null;
  unit?: UnitKind;
  /** Training and search parameters of compressed indexes. */
  k1?: number;
  k2?: number;
  pqM?: number;
  sample?: number;
  nprobe?: number;
  refine?: number;
  /** Worker threads of the build (default: the number of cores). */
  threads?: number;
}

/** What the build reports. */
export interface VectorsBuildResult {
  manifest: IndexManifest;
  dpr?: DprStats;
}

function unitSource(o: VectorsBuildOptions, dpr: DprStats): { units: AsyncIterable<Unit> | Iterable<Unit>; unit: UnitKind; files: string[] } {
  const given = [o.ids, o.units, o.dprPassages].filter((x) => x !== undefined).length;
  if (given !== 1) throw new Error("say what each vector is with one of: --ids FILE, --units TABLE, --dpr-passages FILE (with --ks DIR)");
  if (o.ids !== undefined) return { units: unitsFromIdsFile(o.ids), unit: o.unit ?? "passage", files: [o.ids] };
  if (o.units !== undefined) {
    const t = TableUnitStore.open(o.units);
    const unit = (t.description.unit as UnitKind | undefined) ?? o.unit ?? "passage";
    async function* all(): AsyncGenerator<Unit> {
      try {
        yield* t.scan(0, t.count, false);
      } finally {
        t.close();
      }
    }
    return { units: all(), unit, files: [] };
  }
  if (!o.ks) throw new Error("--dpr-passages needs the knowledge source its titles are looked up in (--ks DIR)");
  return { units: unitsFromDprPassages(o.dprPassages!, o.ks, dpr), unit: "passage", files: [o.dprPassages!] };
}

/** Builds a dense index of precomputed vectors in `outDir` (see the module comment). */
export async function buildDenseFromVectors(o: VectorsBuildOptions, outDir: string, progress?: (p: IvfProgress) => void, log?: (line: string) => void): Promise<VectorsBuildResult> {
  const dpr: DprStats = { passages: 0, pageOnly: 0 };
  const src = openVectorFile(o.vectors, o);
  try {
    const { units, unit, files } = unitSource(o, dpr);
    const quantize = o.quantize ?? defaultQuantize(src.count, src.dim);
    if (o.quantize === undefined && quantize === "none")
      log?.(`dense: ${src.count.toLocaleString("en-US")} × ${src.dim} vectors, at most ${(EXACT_BELOW / 768).toLocaleString("en-US")} × 768: exact search by default (as fast as compressed lists at this size; --quantize pq to compress)`);
    if (quantize === "none") return { manifest: await writeExact(src, units, outDir, o, unit), ...(o.dprPassages ? { dpr } : {}) };
    const opts: IvfBuildOptions = { onProgress: progress, log, threads: o.threads, inputFiles: [o.vectors, ...files] };
    // the default depth measured (and deepened, unless the user set it) before the manifest is written
    opts.measureDepth = { tune: o.nprobe === undefined && o.refine === undefined };
    const manifest = await buildIvfIndex(src, units, outDir, { quantize, unit, source: o.vectors, encoder: o.encoder ?? null, k1: o.k1, k2: o.k2, pqM: o.pqM, sample: o.sample, nprobe: o.nprobe, refine: o.refine }, opts);
    return { manifest, ...(o.dprPassages ? { dpr } : {}) };
  } finally {
    src.close();
  }
}

/** `quantize: "none"`: the rows as float32 `vectors.f32` beside the units, searched exactly. */
async function writeExact(src: VectorSource, units: AsyncIterable<Unit> | Iterable<Unit>, outDir: string, o: VectorsBuildOptions, unit: UnitKind): Promise<IndexManifest> {
  makeDirs(outDir);
  await writeRowUnits(units, src, outDir, unit);
  const file = join(outDir, VECTORS_FILE);
  const temp = createTempFor(file);
  let ok = false;
  let crc = 0;
  try {
    for (let r = 0; r < src.count; r += 8192) {
      const v = src.read(r, Math.min(8192, src.count - r));
      const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
      writeAll(temp.fd, bytes, null, file);
      crc = crc32(bytes, crc);
    }
    ok = true;
  } finally {
    closeSync(temp.fd);
    if (!ok) discardTemp(temp);
  }
  commitTemp(temp, file);
  // the file's identity, checked when the index is opened (./exact.ts readVectorsShared)
  const vectorsIdentity = { bytes: src.count * src.dim * 4, crc32: crcHex(crc) };
  return writeManifest(outDir, {
    kind: "dense",
    unit,
    units: src.count,
    params: { encoder: o.encoder ?? null, dim: src.dim, title: true, titleSeparator: ". ", vectors: VECTORS_FILE, hnsw: null, search: "exact", quantize: "none", source: o.vectors, vectorsIdentity },
    source: o.vectors,
    formatVersion: DENSE_FORMAT_VERSION,
  });
}
