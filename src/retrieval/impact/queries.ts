// Impact queries: sparse vectors of term weights. Text becomes one by the index's query analyzer:
// "pretokenized" splits on spaces, tabs and line breaks and counts repetitions as weight (Pyserini's `--impact
// --pretokenized`); an analyzer name (quantized BM25's) analyzes as the BM25 index did, a repeated term
// again weighing its count. Query files encoded elsewhere: JSONL `{"id": …, "vector": {"term": weight}}`
// (Anserini's format, weights as floats), or TSV `id<TAB>space-separated tokens` (repetition = weight).
// Refusals name the file, the line and the field.

import { lineBatches, LineError } from "../../records/jsonl.js";
import { getAnalyzer, type AnalyzerName } from "../bm25/analyzer.js";
import { termProblem } from "./collection.js";

/** A sparse query vector: term → weight (≥ 0), in the order the terms came. */
export type QueryWeights = ReadonlyMap<string, number>;

/** One query of a query file. */
export interface ImpactQuery {
  id: string;
  weights: QueryWeights;
}

/** Tokens split on white space, a repeated token weighing its count. */
export function pretokenizedWeights(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of text.split(/[ \t\n\r]+/u)) if (t.length > 0) out.set(t, (out.get(t) ?? 0) + 1);
  return out;
}

/** A text query's weights by the index's query analyzer. */
export function textQueryWeights(text: string, analyzer: "pretokenized" | AnalyzerName): Map<string, number> {
  if (analyzer === "pretokenized") return pretokenizedWeights(text);
  const out = new Map<string, number>();
  for (const t of getAnalyzer(analyzer).analyze(text)) {
    const term = (t as unknown as { toWellFormed(): string }).toWellFormed();
    out.set(term, (out.get(term) ?? 0) + 1);
  }
  return out;
}

/** The most terms one query vector given inline may have (`POST /api/search`'s `terms`, MCP's `terms`). */
export const MAX_QUERY_TERMS = 65536;

/**
 * A sparse query vector given inline as a JSON object of term → weight (a request's field, named by
 * `where` in errors, e.g. `terms[2]`): every term indexable, every weight a finite number ≥ 0.
 */
export function parseQueryTerms(value: unknown, where: string): Record<string, number> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error(`${where} must be an object of term weights {"term": weight, …}`);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_QUERY_TERMS) throw new Error(`${where} has ${entries.length} terms, more than ${MAX_QUERY_TERMS}`);
  const out: Record<string, number> = {};
  for (const [term, w] of entries) {
    const why = termProblem(term);
    if (why !== null) throw new Error(`${where}: ${why}`);
    if (typeof w !== "number" || !Number.isFinite(w) || w < 0) throw new Error(`${where}[${JSON.stringify(term)}]: bad weight ${JSON.stringify(w) ?? String(w)} (expected a finite number ≥ 0)`);
    out[term] = w;
  }
  return out;
}

/** Reads a query file: `.tsv` (id, tab, tokens) or JSONL (`{"id", "vector"}`), by its name. */
export async function readImpactQueries(file: string): Promise<ImpactQuery[]> {
  const tsv = /\.tsv(\.gz)?$/iu.test(file);
  const out: ImpactQuery[] = [];
  for await (const batch of lineBatches(file)) {
    for (const l of batch) out.push(tsv ? tsvQuery(file, l.line, l.text) : jsonQuery(file, l.line, l.text));
  }
  return out;
}

function tsvQuery(file: string, line: number, text: string): ImpactQuery {
  const tab = text.indexOf("\t");
  if (tab <= 0) throw new LineError(file, line, "expected id<TAB>tokens");
  const weights = pretokenizedWeights(text.slice(tab + 1));
  for (const term of weights.keys()) {
    const why = termProblem(term);
    if (why !== null) throw new LineError(file, line, `field tokens: ${why}`);
  }
  return { id: text.slice(0, tab), weights };
}

function jsonQuery(file: string, line: number, text: string): ImpactQuery {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    const m = /"((?:[^"\\]|\\.)*)"\s*:\s*(-?(?:NaN|Infinity))/u.exec(text);
    throw new LineError(file, line, m ? `field vector[${JSON.stringify(m[1])}]: weight ${m[2]} is not a finite number` : `not JSON (${(e as Error).message})`);
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new LineError(file, line, "expected a JSON object {id, vector}");
  const o = v as Record<string, unknown>;
  if (typeof o.id !== "string" && typeof o.id !== "number") throw new LineError(file, line, "field id: missing or not a string");
  const vec = o.vector;
  if (vec === null || typeof vec !== "object" || Array.isArray(vec)) throw new LineError(file, line, "field vector: expected an object of term weights");
  const weights = new Map<string, number>();
  for (const [term, w] of Object.entries(vec as Record<string, unknown>)) {
    const why = termProblem(term);
    if (why !== null) throw new LineError(file, line, `field vector: ${why}`);
    if (typeof w !== "number" || !Number.isFinite(w) || w < 0) throw new LineError(file, line, `field vector[${JSON.stringify(term)}]: bad weight ${JSON.stringify(w) ?? String(w)} (expected a finite number ≥ 0)`);
    weights.set(term, w);
  }
  return { id: String(o.id), weights };
}

/**
 * A query's weights written as a pretokenized text query (each term repeated round(weight × scale)
 * times), for pipelines that carry queries as text (`tartan retrieve` over a KILT file). Weights are
 * quantized by it; the vector itself searches exactly (the impact searcher's `search`).
 */
export function weightsAsText(weights: QueryWeights, scale = 1): string {
  const parts: string[] = [];
  for (const [term, w] of weights) {
    const n = Math.round(w * scale);
    for (let i = 0; i < n; i++) parts.push(term);
  }
  return parts.join(" ");
}
