// Builds an impact index (learned sparse retrieval: SPLADE, uniCOIL, DeepImpact, quantized BM25) from a
// JsonVectorCollection (./collection.ts) in bounded memory, resumably, with the BM25 build's machinery:
// quantized (term, unit, impact) postings go to a BM25 build segment (../bm25/segment.ts) until its
// share of the memory budget is reached, then it is flushed and recorded in a state file (written
// atomically); a killed build re-run with the same arguments skips the lines its recorded segments hold.
// The segments are merged into the BM25 files (../bm25/merge.ts, ../bm25/format.ts) with every unit's
// norm cache entry 1 (k1 = 1, b = 0: x = tf × 1), so a block's bound is its largest impact, as the
// impact scorer (../bm25/impact-scorer.ts) reads it. The units come first, from the unit table or the
// ids file, into the index's unit store.

import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { UnitKind } from "../types.js";
import type { Unit } from "../units/unit.js";
import { UnitWriter } from "../units/store.js";
import { writeManifest } from "../manifest.js";
import { FILES, FORMAT_VERSION } from "../bm25/format.js";
import { mergeSegments } from "../bm25/merge.js";
import { SegmentCollector } from "../bm25/segment.js";
import { inputIdentity, type FileIdentity } from "../../util/input-identity.js";
import { readBuildState, writeBuildState } from "../../util/build-state.js";
import { quantize, readVectorCollection, resolveQuantization, type Quantization, type QuantizationSpec } from "./collection.js";
import type { AnalyzerName } from "../bm25/analyzer.js";
import type { SpladeSpec } from "./splade.js";

/** The manifest's `kind` of an impact index. */
export const IMPACT_KIND = "impact";
/** The impact index format: the BM25 files of format FORMAT_VERSION holding impacts, norms unused. */
export const IMPACT_FORMAT_VERSION = FORMAT_VERSION;
/** The build's state file. */
export const IMPACT_STATE_FILE = "impact.build.json";
/** Memory the process needs besides the segment: heaps, the unit writer, read buffers. */
const BASE_MEMORY = 512 * 1024 ** 2;

/** What an impact index's manifest records in `params`. */
export interface ImpactIndexParams {
  /** How weights became impacts. */
  quantization: Quantization;
  /** How text queries become terms: split on white space, repetition = weight (`"pretokenized"`), or analyzed as BM25 does. */
  queryAnalyzer: "pretokenized" | AnalyzerName;
  buildId: string;
  docCount: number;
  terms: number;
  postings: number;
  /** The sum of all impacts. */
  sumImpacts: number;
  /** The SPLADE encoder the documents were encoded with (./encode.ts): text queries are encoded with it. */
  encoder?: SpladeSpec;
}

/** What {@link buildImpactIndex} reads and how it quantizes. */
export interface ImpactBuildInput {
  /** The JsonVectorCollection JSONL file. */
  collection: string;
  /** The units its ids number, in order (a unit table's scan or an ids file's units). */
  units: AsyncIterable<Unit> | Iterable<Unit>;
  unit: UnitKind;
  /** Default: 8 bits by the collection's largest weight. */
  quantization?: QuantizationSpec;
  /** Default "pretokenized". */
  queryAnalyzer?: ImpactIndexParams["queryAnalyzer"];
  /** The encoder that wrote the collection, recorded in the manifest (text queries are encoded with it). */
  encoder?: SpladeSpec;
  /** The manifest's `source` (default: the collection's path). */
  source?: string;
}

/** How the build runs; none of these changes the index it writes. */
export interface ImpactBuildOptions {
  /** Bytes the build may use (default 3 GiB); the segment is flushed to stay under it. */
  memory?: number;
  /** Resume a killed build found in the directory (default true). */
  resume?: boolean;
  /** The directory is the build's own: a fresh start empties it. */
  ownDir?: boolean;
  /** Lines read so far (phase "index") and terms merged (phase "merge"). */
  onProgress?: (p: { phase: "units" | "index" | "merge"; done: number }) => void;
  /** Called after each segment is recorded (tests stop a build here as a kill would). */
  onSegment?: (segments: number) => void;
  log?: (line: string) => void;
}

/** What the build indexed. */
export interface ImpactBuildStats {
  units: number;
  terms: number;
  postings: number;
  segments: number;
  /** Collection lines a resumed build did not index again. */
  resumedLines: number;
  quantization: Quantization;
  indexBytes: number;
}

interface Segment {
  file: string;
  size: number;
  /** Collection lines read when the segment was flushed. */
  lines: number;
}

interface BuildState {
  key: string;
  inputs: FileIdentity[] | null;
  quantization: Quantization | null;
  segments: Segment[];
  /** The segment of the units no line gives has been recorded. */
  emptiesDone?: boolean;
}

/** Builds an impact index into `outDir` (unit store, BM25-layout files of impacts, manifest.json of kind "impact"). */
export async function buildImpactIndex(input: ImpactBuildInput, outDir: string, options: ImpactBuildOptions = {}): Promise<ImpactBuildStats> {
  const memory = options.memory ?? 3 * 1024 ** 3;
  if (!(memory > 0)) throw new Error(`impact: memory budget must be positive, got ${memory}`);
  const cap = Math.max(1 << 20, memory - BASE_MEMORY);
  const spec = input.quantization ?? { bits: 8 };
  const queryAnalyzer = input.queryAnalyzer ?? "pretokenized";
  mkdirSync(outDir, { recursive: true });
  const key = JSON.stringify({ spec, queryAnalyzer, unit: input.unit, collection: input.collection, memory, format: IMPACT_FORMAT_VERSION });
  const log = options.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const inputs = options.resume !== false ? inputIdentity(input.collection) : null;
  const resumed =
    options.resume !== false
      ? readBuildState<BuildState>(outDir, IMPACT_STATE_FILE, key, (s) => s.segments, { inputs, onChanged: (why) => log(`tartan: impact build in ${outDir}: ${why} since the build began: starting over`) })
      : null;
  if (!resumed && options.ownDir) for (const f of readdirSync(outDir)) rmSync(join(outDir, f), { recursive: true, force: true });
  const state: BuildState = resumed ?? { key, inputs, quantization: null, segments: [] };
  const listed = new Set(state.segments.map((s) => s.file));
  for (const f of readdirSync(outDir)) if ((f.startsWith("impact.seg-") && !listed.has(f)) || f.endsWith(".partial")) rmSync(join(outDir, f), { force: true });
  for (const f of Object.values(FILES)) rmSync(join(outDir, f), { force: true });
  writeBuildState(outDir, IMPACT_STATE_FILE, state);

  // The units, in the order the ids number them.
  const writer = new UnitWriter(outDir);
  let units = 0;
  for await (const u of input.units as AsyncIterable<Unit>) {
    await writer.add(u);
    units++;
    if ((units & 0xffff) === 0) options.onProgress?.({ phase: "units", done: units });
  }
  await writer.close();
  if (units >= 0x7fffffff) throw new Error(`impact: ${units} units exceed this index format (2^31 - 1)`);

  // The quantization: a resumed build keeps the maximum its first pass read.
  const q = state.quantization ?? (await resolveQuantization(spec, input.collection, units));
  if (state.quantization === null) {
    state.quantization = q;
    writeBuildState(outDir, IMPACT_STATE_FILE, state);
  }

  const from = state.segments.length > 0 ? state.segments[state.segments.length - 1].lines : 0;
  const collector = new SegmentCollector("lowercase");
  let lastUnit = -1;
  let lines = from;
  let pending = 0;
  const flush = () => {
    const file = `impact.seg-${String(state.segments.length).padStart(5, "0")}`;
    collector.flush(join(outDir, file)); // and empties it
    state.segments.push({ file, size: statSync(join(outDir, file)).size, lines });
    writeBuildState(outDir, IMPACT_STATE_FILE, state);
    pending = 0;
    lastUnit = -1;
    options.onSegment?.(state.segments.length);
  };
  const terms: string[] = [];
  const values: number[] = [];
  const seen = new Uint8Array(units);
  let at = 0;
  for await (const v of readVectorCollection(input.collection, units, seen)) {
    if (at++ < from) continue;
    // Within a segment units increase: a unit out of order starts the next segment.
    if (v.unit < lastUnit) flush();
    terms.length = 0;
    values.length = 0;
    for (let i = 0; i < v.terms.length; i++) {
      let impact: number;
      try {
        impact = quantize(q, v.weights[i]);
      } catch (e) {
        throw new Error(`${input.collection}:${v.line}: field vector[${JSON.stringify(v.terms[i])}]: ${(e as Error).message}`);
      }
      if (impact === 0) continue;
      terms.push(v.terms[i]);
      values.push(impact);
    }
    collector.addTerms(v.unit, terms, values);
    lastUnit = v.unit;
    lines++;
    pending++;
    if ((lines & 0xfff) === 0) options.onProgress?.({ phase: "index", done: lines });
    if (collector.full(cap)) flush();
  }
  if (pending > 0) flush();
  // Units no line gives have no postings, but the merge needs each unit in a segment: one of them all.
  if (!state.emptiesDone) {
    let empties = 0;
    for (let u = 0; u < units; u++)
      if (!seen[u]) {
        collector.addTerms(u, [], []);
        empties++;
      }
    if (empties > 0) flush();
    state.emptiesDone = true;
    writeBuildState(outDir, IMPACT_STATE_FILE, state);
  }

  const segments = state.segments;
  const merged = mergeSegments(
    segments.map((s) => ({ path: join(outDir, s.file), size: s.size })),
    units,
    outDir,
    1,
    0,
    (t) => options.onProgress?.({ phase: "merge", done: t }),
  );
  const params: ImpactIndexParams = { quantization: q, queryAnalyzer, buildId: merged.buildId, docCount: merged.docCount, terms: merged.terms, postings: merged.postings, sumImpacts: merged.sumTotalTermFreq, ...(input.encoder ? { encoder: input.encoder } : {}) };
  writeManifest(outDir, { kind: IMPACT_KIND, unit: input.unit, units, params: params as unknown as Record<string, unknown>, source: input.source ?? input.collection, formatVersion: IMPACT_FORMAT_VERSION });
  for (const s of segments) rmSync(join(outDir, s.file), { force: true });
  rmSync(join(outDir, IMPACT_STATE_FILE), { force: true });
  return { units, terms: merged.terms, postings: merged.postings, segments: segments.length, resumedLines: from, quantization: q, indexBytes: merged.bytes };
}
