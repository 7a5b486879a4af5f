// Builds an impact index from a SPLADE encoder (./splade.ts) run over the units, as Anserini's SPLADE
// indexes are made: the units are encoded in windows spread over the cores (./encode-pool.ts), each
// unit's weights written as one line of a JsonVectorCollection (`{"id": unit number, "vector": …}`) in the
// build directory, then that collection is indexed as `--vectors` is (./build.ts: quantized, in bounded
// memory, resumable) with the encoder recorded in the manifest, and removed. Memory is bounded by the
// window (a few hundred texts), the model and the indexing budget. Resumable: after each window the
// collection's length and line count are recorded in a state file (written atomically); a killed build
// re-run with the same encoder, units and settings cuts the collection back to the recorded length and
// encodes from the next unit on (the inputs' identities — the unit source, the graph and vocab.txt —
// must be unchanged, else it starts over); once encoded, the indexing resumes as ./build.ts does.

import { closeSync, ftruncateSync, mkdirSync, openSync, readdirSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { UnitKind } from "../types.js";
import type { Unit } from "../units/unit.js";
import { unitText } from "../dense/build.js";
import { inputIdentity, type FileIdentity } from "../../util/input-identity.js";
import { readBuildState, writeBuildState } from "../../util/build-state.js";
import { buildImpactIndex, type ImpactBuildStats } from "./build.js";
import type { QuantizationSpec } from "./collection.js";
import { SpladePool } from "./encode-pool.js";
import type { SpladeSpec } from "./splade.js";

/** The encoded collection, inside the build directory until the index is built. */
export const ENCODED_FILE = "splade.encoded.jsonl";
/** The encoding's state file. */
export const ENCODE_STATE_FILE = "splade.encode.json";

/** What {@link buildImpactFromEncoder} encodes and how it quantizes. */
export interface EncoderBuildInput {
  /** A fresh pass over the units, in order (called twice: encoding, then the unit store). */
  units: () => AsyncIterable<Unit> | Iterable<Unit>;
  unit: UnitKind;
  /** Where the units come from (a pages file, store or unit table), for the manifest and the resume key. */
  source: string;
  encoder: SpladeSpec;
  /** Encode `title. text` (default) or the text alone. */
  title?: boolean;
  /** Default: 8 bits by the largest weight. */
  quantization?: QuantizationSpec;
}

/** How the build runs; none of these changes the index it writes. */
export interface EncoderBuildOptions {
  /** Encoding threads (default: the number of cores). */
  threads?: number;
  /** Bytes the indexing may use (./build.ts; default 3 GiB). */
  memory?: number;
  /** Units encoded so far (phase "encode"), then ./build.ts's phases. */
  onProgress?: (p: { phase: "encode" | "units" | "index" | "merge"; done: number }) => void;
  /** Called after each encoded window is recorded (tests stop a build here as a kill would). */
  onWindow?: (units: number) => void;
  log?: (line: string) => void;
}

/** What the build did: the impact build's statistics and the units encoded by this run (not before a resume). */
export interface EncoderBuildStats extends ImpactBuildStats {
  encoded: number;
  /** Units a resumed build did not encode again. */
  resumedUnits: number;
}

interface EncodeState {
  key: string;
  inputs: FileIdentity[] | null;
  /** Units encoded and the collection's bytes holding them. */
  lines: number;
  bytes: number;
  done: boolean;
}

/** Builds an impact index into `outDir` (the build's own directory) by encoding every unit; see the module comment. */
export async function buildImpactFromEncoder(input: EncoderBuildInput, outDir: string, options: EncoderBuildOptions = {}): Promise<EncoderBuildStats> {
  mkdirSync(outDir, { recursive: true });
  const log = options.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const title = input.title !== false;
  const key = JSON.stringify({ encoder: input.encoder, unit: input.unit, source: input.source, title });
  const inputs = [input.source, input.encoder.model, input.encoder.vocab].flatMap((f) => inputIdentity(f) ?? []);
  const resumed = readBuildState<EncodeState>(outDir, ENCODE_STATE_FILE, key, () => [], { inputs, onChanged: (why) => log(`tartan: impact build in ${outDir}: ${why} since the encoding began: starting over`) });
  const file = join(outDir, ENCODED_FILE);
  let state: EncodeState;
  if (resumed && statSync(file, { throwIfNoEntry: false })?.isFile() && statSync(file).size >= resumed.bytes) state = resumed;
  else {
    for (const f of readdirSync(outDir)) rmSync(join(outDir, f), { recursive: true, force: true });
    state = { key, inputs, lines: 0, bytes: 0, done: false };
    writeBuildState(outDir, ENCODE_STATE_FILE, state);
  }
  const resumedUnits = state.lines;
  let encoded = 0;
  if (!state.done) {
    const fd = openSync(file, state.bytes === 0 ? "w" : "r+");
    const pool = await SpladePool.open(input.encoder, { threads: options.threads });
    try {
      ftruncateSync(fd, state.bytes);
      const window = Math.max(1, pool.threads) * (input.encoder.batchSize ?? 16) * 4;
      let at = 0;
      let batch: string[] = [];
      const flush = async () => {
        const weights = await pool.encodePassages(batch);
        let text = "";
        weights.forEach((w, i) => {
          const vector: Record<string, number> = {};
          w.terms.forEach((t, j) => (vector[t] = w.weights[j]));
          text += `${JSON.stringify({ id: String(state.lines + i), vector })}\n`;
        });
        const buf = Buffer.from(text, "utf8");
        for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off, state.bytes + off);
        state.lines += batch.length;
        state.bytes += buf.length;
        encoded += batch.length;
        batch = [];
        writeBuildState(outDir, ENCODE_STATE_FILE, state);
        options.onProgress?.({ phase: "encode", done: state.lines });
        options.onWindow?.(state.lines);
      };
      for await (const u of input.units()) {
        if (at++ < resumedUnits) continue;
        batch.push(unitText(u, { title }));
        if (batch.length >= window) await flush();
      }
      if (batch.length > 0) await flush();
    } finally {
      closeSync(fd);
      await pool.close();
    }
    state.done = true;
    writeBuildState(outDir, ENCODE_STATE_FILE, state);
  }
  const stats = await buildImpactIndex(
    { collection: file, units: input.units(), unit: input.unit, quantization: input.quantization, encoder: input.encoder, source: input.source },
    outDir,
    { memory: options.memory, ownDir: false, log, onProgress: options.onProgress },
  );
  rmSync(join(outDir, ENCODE_STATE_FILE), { force: true });
  rmSync(file, { force: true });
  return { ...stats, encoded, resumedUnits };
}
