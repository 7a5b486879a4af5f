// Reading learned-sparse collections and quantizing their weights. The input is Anserini's
// JsonVectorCollection: JSONL, one unit a line, `{"id": …, "contents": …, "vector": {"term": weight, …}}`
// ("contents" is optional and not indexed). A line's `id` names the unit it encodes: its number (0-based)
// in the `--units` table or the `--ids` file. Every refusal names the file, the line and the field: a
// weight that is not a finite number ≥ 0 (NaN and Infinity too, which Python's json.dumps writes), an id
// that names no unit or a unit already given, a term longer than MAX_TERM_BYTES.
//
// Quantization (as Anserini's impact indexes hold integers): with a stated scale s, impact =
// round(w × s); else with b bits (default 8) by the collection's largest weight m, impact =
// round(w / m × (2^b − 1)). A weight whose impact is 0 is dropped (Anserini repeats a term `impact` times).

import { lineBatches, LineError } from "../../records/jsonl.js";

/** Longest term, in UTF-8 bytes (Lucene's StandardAnalyzer's longest token). */
export const MAX_TERM_BYTES = 255;
/** The largest impact a posting may hold (float32 holds every integer up to it exactly). */
export const MAX_IMPACT = 1 << 24;

/** How weights become integer impacts; recorded in the manifest (`params.quantization`). */
export type Quantization = { mode: "scale"; scale: number } | { mode: "bits"; bits: number; max: number };

/** What the caller asks for: a scale, or a number of bits (the maximum is read off the collection). */
export type QuantizationSpec = { scale: number } | { bits: number };

/** One line of a collection, parsed and checked: its unit and its terms with their weights. */
export interface VectorLine {
  line: number;
  unit: number;
  terms: string[];
  weights: number[];
}

/** Checks a quantization request (scale > 0 and finite; bits 1..24). */
export function checkQuantizationSpec(q: QuantizationSpec): void {
  if ("scale" in q) {
    if (typeof q.scale !== "number" || !(q.scale > 0) || !Number.isFinite(q.scale)) throw new Error(`impact: the quantization scale must be a finite number > 0, not ${String(q.scale)}`);
  } else if (!Number.isInteger(q.bits) || q.bits < 1 || q.bits > 24) throw new Error(`impact: quantization bits must be an integer from 1 to 24, not ${String(q.bits)}`);
}

/** The impact of weight `w` (0: dropped); throws past MAX_IMPACT. */
export function quantize(q: Quantization, w: number): number {
  const v = q.mode === "scale" ? Math.round(w * q.scale) : q.max > 0 ? Math.round((w / q.max) * (2 ** q.bits - 1)) : 0;
  if (v > MAX_IMPACT) throw new RangeError(`weight ${w} quantizes to ${v}, above the largest impact ${MAX_IMPACT} (use a smaller --scale)`);
  return v;
}

/** A term's refusal reason, or null when it can be indexed. */
export function termProblem(term: string): string | null {
  if (term.length === 0) return "an empty term";
  const bytes = Buffer.byteLength(term, "utf8");
  if (bytes > MAX_TERM_BYTES) return `term ${JSON.stringify(term.slice(0, 40))}… is ${bytes} UTF-8 bytes, longer than the limit ${MAX_TERM_BYTES}`;
  if (/[ \t\n\r]/u.test(term)) return `term ${JSON.stringify(term)} has a space, tab or line break`;
  return null;
}

/** Why a line that JSON.parse refused is bad: a NaN or Infinity weight named by its term, else the parser's reason. */
function parseFailure(text: string, err: unknown): string {
  const m = /"((?:[^"\\]|\\.)*)"\s*:\s*(-?(?:NaN|Infinity))/u.exec(text);
  if (m) return `field vector[${JSON.stringify(JSON.parse(`"${m[1]}"`) as string)}]: weight ${m[2]} is not a finite number`;
  return `not JSON (${(err as Error).message})`;
}

/** Parses the unit number a line's `id` names, or throws naming the line. */
function unitOf(file: string, line: number, id: unknown, units: number): number {
  const s = typeof id === "number" ? String(id) : id;
  if (typeof s !== "string" || !/^(0|[1-9][0-9]*)$/u.test(s)) throw new LineError(file, line, `field id: ${JSON.stringify(id)} is not a unit number (the 0-based row of the unit table or ids file)`);
  const u = Number(s);
  if (u >= units) throw new LineError(file, line, `field id: unknown id ${s} (the units are 0 to ${units - 1})`);
  return u;
}

/** Parses one collection line (text at `line` of `file`) against `units` units. */
export function parseVectorLine(file: string, line: number, text: string, units: number): VectorLine {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new LineError(file, line, parseFailure(text, e));
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new LineError(file, line, "expected a JSON object {id, contents, vector}");
  const o = v as Record<string, unknown>;
  if (!("id" in o)) throw new LineError(file, line, "field id: missing");
  const unit = unitOf(file, line, o.id, units);
  const vec = o.vector;
  if (vec === null || typeof vec !== "object" || Array.isArray(vec)) throw new LineError(file, line, `field vector: expected an object of term weights, found ${vec === undefined ? "nothing" : JSON.stringify(vec).slice(0, 40)}`);
  const terms: string[] = [];
  const weights: number[] = [];
  for (const [term, w] of Object.entries(vec as Record<string, unknown>)) {
    const why = termProblem(term);
    if (why !== null) throw new LineError(file, line, `field vector: ${why}`);
    if (typeof w !== "number" || !Number.isFinite(w) || w < 0) throw new LineError(file, line, `field vector[${JSON.stringify(term)}]: bad weight ${JSON.stringify(w) ?? String(w)} (expected a finite number ≥ 0)`);
    terms.push(term);
    weights.push(w);
  }
  return { line, unit, terms, weights };
}

/** The lines of a collection, parsed and checked (ids against `units`; a unit given twice is refused); `seen` gets a 1 for each unit given. */
export async function* readVectorCollection(file: string, units: number, seen = new Uint8Array(units)): AsyncGenerator<VectorLine> {
  for await (const batch of lineBatches(file)) {
    for (const l of batch) {
      const v = parseVectorLine(file, l.line, l.text, units);
      if (seen[v.unit]) throw new LineError(file, l.line, `field id: unit ${v.unit} is given twice`);
      seen[v.unit] = 1;
      yield v;
    }
  }
}

/** The collection's largest weight (the first pass of a build quantized by bits); every line is checked. */
export async function maxWeight(file: string, units: number): Promise<number> {
  let max = 0;
  for await (const v of readVectorCollection(file, units)) for (const w of v.weights) if (w > max) max = w;
  return max;
}

/** The quantization a build uses: the spec, with the collection's maximum read for bits. */
export async function resolveQuantization(spec: QuantizationSpec, file: string, units: number): Promise<Quantization> {
  checkQuantizationSpec(spec);
  if ("scale" in spec) return { mode: "scale", scale: spec.scale };
  return { mode: "bits", bits: spec.bits, max: await maxWeight(file, units) };
}
