// SPLADE encoding from a local ONNX graph: a BERT masked-language-model head (BertForMaskedLM exported
// with optimum or torch.onnx; output `logits` [batch, sequence, vocabulary]) run with onnxruntime-node's
// CPU binary (an optional package, loaded on demand; no network). A text is tokenized by BERT's WordPiece
// from the model's vocab.txt (../dense/wordpiece.ts), padded per batch with an attention mask
// (../dense/bert.ts's runPadded), and its term weights are SPLADE's pooling of the logits: for each
// vocabulary entry v, w_v = max over the text's tokens ([CLS] and [SEP] included, padding excluded) of
// log(1 + ReLU(logit_v)), computed as log1p(max(0, max logit)) (the same: log1p∘ReLU is monotone) and
// held as float32. The term of v is line v of vocab.txt; weights of 0 are left out, and a top-k option
// keeps the k largest (ties to the lower id) of queries and of documents separately. What an impact
// index records in its manifest (`params.encoder`) to encode text queries as its documents were.

import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type * as Ort from "onnxruntime-node";
import { importOptional } from "../../util/optional.js";
import { openGraph, runPadded, type Graph } from "../dense/bert.js";
import { WordPieceTokenizer } from "../dense/wordpiece.js";
import { termProblem } from "./collection.js";

/** The encoder's type name, as a manifest's `params.encoder.type` gives it. */
export const SPLADE_TYPE = "splade-onnx";

/** A SPLADE encoder: its graph, vocabulary and settings (recorded in an impact index's manifest, paths absolute). */
export interface SpladeSpec {
  type: typeof SPLADE_TYPE;
  /** The ONNX graph of a BERT masked-language model (inputs input_ids and attention_mask; token_type_ids and position_ids optional). */
  model: string;
  /** The WordPiece vocabulary (one token a line; line v is the term of logit column v). */
  vocab: string;
  /** The graph output holding the logits; default "logits". */
  output?: string;
  /** Tokens per text, [CLS] and [SEP] included; longer texts are truncated. Default 512. */
  maxLength?: number;
  /** Uncased model: lower-case and strip accents before WordPiece. Default true. */
  lowercase?: boolean;
  /** Keep a query's k largest weights (default: all non-zero). */
  queryTopK?: number;
  /** Keep a document's k largest weights (default: all non-zero). */
  docTopK?: number;
  /** Texts per graph call; default 16. */
  batchSize?: number;
  /** onnxruntime intra-op threads of one encoder; default 1 (builds spread over the cores with one encoder a worker). */
  threads?: number;
}

/** One text's term weights, the largest first (ties: the lower vocabulary id first). */
export interface SparseWeights {
  terms: string[];
  weights: number[];
}

const KEYS = ["type", "model", "vocab", "output", "maxLength", "lowercase", "queryTopK", "docTopK", "batchSize", "threads"];

function describeError(err: unknown): string {
  return (err as NodeJS.ErrnoException | null)?.code === "ENOENT" ? "no such file" : err instanceof Error ? err.message : String(err);
}

/**
 * The spec of the SPLADE model in directory `dir`: its graph (model.onnx, else onnx/model.onnx, as
 * optimum exports it) and vocab.txt, with `extra` settings; refuses a directory missing either, naming it.
 */
export function spladeSpecFromDir(dir: string, extra: Partial<SpladeSpec> = {}): SpladeSpec {
  const d = resolve(dir);
  try {
    if (!statSync(d).isDirectory()) throw new Error("not a directory");
  } catch (e) {
    throw new Error(`SPLADE encoder directory ${d}: cannot read (${describeError(e)})`);
  }
  const model = [join(d, "model.onnx"), join(d, "onnx", "model.onnx")].find((f) => existsSync(f));
  if (model === undefined) throw new Error(`SPLADE encoder directory ${d}: no model.onnx (nor onnx/model.onnx): export the masked-language model there (docs/retrieval.md#splade-encoding-from-onnx)`);
  const vocab = join(d, "vocab.txt");
  if (!existsSync(vocab)) throw new Error(`SPLADE encoder directory ${d}: no vocab.txt (the WordPiece vocabulary the model's logits are columns of)`);
  return checkSpladeSpec({ ...extra, type: SPLADE_TYPE, model, vocab }, `SPLADE encoder directory ${d}`);
}

/**
 * The spec an impact build's `params.encoder` gives (`where` names it in errors): a model directory (a
 * string, `index build --encoder DIR`), `{dir, …settings}`, or a full spec `{type: "splade-onnx", model, vocab, …}`.
 */
export function spladeSpecFrom(param: unknown, where: string): SpladeSpec {
  if (typeof param === "string") return spladeSpecFromDir(param);
  if (param !== null && typeof param === "object" && !Array.isArray(param) && typeof (param as { dir?: unknown }).dir === "string") {
    const { dir, ...rest } = param as Record<string, unknown>;
    for (const k of Object.keys(rest)) if (!KEYS.includes(k) || k === "model" || k === "vocab") throw new Error(`${where}: unknown field ${JSON.stringify(k)} beside dir (fields: ${KEYS.filter((x) => x !== "model" && x !== "vocab").join(", ")})`);
    return spladeSpecFromDir(dir as string, rest as Partial<SpladeSpec>);
  }
  return checkSpladeSpec(param, where);
}

/** Checks a spec's fields (`where` names its source in errors: a manifest field, a flag); returns it with absolute paths. */
export function checkSpladeSpec(spec: unknown, where: string): SpladeSpec {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) throw new Error(`${where}: the encoder must be an object {type: "${SPLADE_TYPE}", model, vocab, …}`);
  const s = spec as Record<string, unknown>;
  if (s.type !== SPLADE_TYPE) throw new Error(`${where}: field type: ${JSON.stringify(s.type)} is not an impact encoder type (known: ${SPLADE_TYPE})`);
  for (const k of Object.keys(s)) if (!KEYS.includes(k)) throw new Error(`${where}: unknown field ${JSON.stringify(k)} (fields: ${KEYS.join(", ")})`);
  for (const k of ["model", "vocab"]) if (typeof s[k] !== "string" || s[k] === "") throw new Error(`${where}: field ${k}: the path of ${k === "model" ? "the ONNX graph" : "vocab.txt"} is required`);
  if (s.output !== undefined && (typeof s.output !== "string" || s.output === "")) throw new Error(`${where}: field output must be a graph output's name`);
  if (s.lowercase !== undefined && typeof s.lowercase !== "boolean") throw new Error(`${where}: field lowercase must be true or false`);
  for (const [k, min] of [["maxLength", 2], ["queryTopK", 1], ["docTopK", 1], ["batchSize", 1], ["threads", 1]] as const) {
    const v = s[k];
    if (v !== undefined && (typeof v !== "number" || !Number.isInteger(v) || v < min)) throw new Error(`${where}: field ${k} must be an integer of at least ${min}, not ${JSON.stringify(v)}`);
  }
  return { ...(s as unknown as SpladeSpec), model: resolve(s.model as string), vocab: resolve(s.vocab as string) };
}

/** The k largest of `w` (Float32Array over the vocabulary; 0 left out), the largest first, ties to the lower id. */
function topTerms(w: Float32Array, tokens: readonly string[], k: number): SparseWeights {
  const ids: number[] = [];
  for (let v = 0; v < w.length; v++) if (w[v] > 0 && tokens[v] !== "") ids.push(v);
  ids.sort((a, b) => w[b] - w[a] || a - b);
  if (ids.length > k) ids.length = k;
  return { terms: ids.map((v) => tokens[v]), weights: ids.map((v) => w[v]) };
}

/** A SPLADE encoder over one ONNX graph; see the module comment. */
export class SpladeEncoder {
  private constructor(
    /** The spec (absolute paths), as a manifest records it. */
    readonly spec: SpladeSpec,
    readonly tokenizer: WordPieceTokenizer,
    /** The term of each logit column (line v of vocab.txt). */
    readonly terms: readonly string[],
    private readonly ort: typeof Ort,
    private readonly graph: Graph,
  ) {}

  /** Loads the vocabulary and graph of `spec` (`where`: what named it, for errors) and checks the graph's inputs and output. */
  static async load(spec: SpladeSpec, where = "SPLADE encoder"): Promise<SpladeEncoder> {
    const s = checkSpladeSpec(spec, where);
    let tokenizer: WordPieceTokenizer;
    try {
      tokenizer = WordPieceTokenizer.fromFile(s.vocab, { lowercase: s.lowercase ?? true, maxLength: s.maxLength ?? 512 });
    } catch (e) {
      throw new Error(`${where}: ${(e as Error).message}`);
    }
    const terms = tokenizer.tokens();
    terms.forEach((t, v) => {
      const why = t === "" ? null : termProblem(t);
      if (why !== null) throw new Error(`vocab file ${s.vocab}:${v + 1}: ${why}`);
    });
    try {
      if (!statSync(s.model).isFile()) throw new Error("not a file");
    } catch (e) {
      throw new Error(`${where}: model file ${s.model}: cannot read (${describeError(e)})`);
    }
    const ort = await importOptional<typeof Ort>("onnxruntime-node", "the SPLADE encoder (impact encoder type splade-onnx)");
    const output = s.output ?? "logits";
    const graph = await openGraph(ort, s.model, output, s.threads ?? 1);
    try {
      const meta = graph.session.outputMetadata.find((m) => m.name === output);
      if (meta?.isTensor && meta.shape.length !== 3) throw new Error(`model file ${s.model}: output "${output}" has shape [${meta.shape.join(", ")}]; a masked-language model's logits [batch, sequence, vocabulary] are needed`);
      if (graph.dim !== 0 && graph.dim !== terms.length) throw new Error(`model file ${s.model}: output "${output}" has ${graph.dim} columns, vocab file ${s.vocab} ${terms.length} tokens`);
    } catch (e) {
      await graph.session.release();
      throw e;
    }
    return new SpladeEncoder(s, tokenizer, terms, ort, graph);
  }

  /** Term weights of queries (top `queryTopK` when set). */
  encodeQueries(texts: readonly string[]): Promise<SparseWeights[]> {
    return this.encode(texts, this.spec.queryTopK);
  }

  /** Term weights of documents (top `docTopK` when set). */
  encodePassages(texts: readonly string[]): Promise<SparseWeights[]> {
    return this.encode(texts, this.spec.docTopK);
  }

  /** The raw pooled weights of texts, one Float32Array over the vocabulary each (no pruning). */
  async pooled(texts: readonly string[]): Promise<Float32Array[]> {
    const batch = this.spec.batchSize ?? 16;
    const out: Float32Array[] = [];
    for (let s = 0; s < texts.length; s += batch) out.push(...(await this.run(texts.slice(s, s + batch).map((t) => this.tokenizer.encode(t).ids))));
    return out;
  }

  private async encode(texts: readonly string[], k: number | undefined): Promise<SparseWeights[]> {
    return (await this.pooled(texts)).map((w) => topTerms(w, this.terms, k ?? Infinity));
  }

  /** One padded batch through the graph; each row's pooled weights. */
  private async run(rows: number[][]): Promise<Float32Array[]> {
    if (rows.length === 0) return [];
    const out = await runPadded(this.ort, this.graph, rows, this.tokenizer.padId, this.tokenizer.maxLength);
    const b = rows.length;
    const t = Math.max(...rows.map((r) => r.length));
    const dims = out.dims;
    const file = this.spec.model;
    if (out.type !== "float32") throw new Error(`model file ${file}: output "${this.graph.output}" is ${out.type}; float32 logits are needed`);
    if (dims.length !== 3 || dims[0] !== b || dims[1] !== t) throw new Error(`model file ${file}: output "${this.graph.output}" has shape [${dims.join(", ")}] for a batch of ${b} texts of ${t} tokens; [batch, sequence, vocabulary] is needed`);
    const v = dims[2];
    if (v !== this.terms.length) throw new Error(`model file ${file}: output "${this.graph.output}" has ${v} columns, vocab file ${this.spec.vocab} ${this.terms.length} tokens`);
    const data = out.data as Float32Array;
    const result: Float32Array[] = [];
    for (let i = 0; i < b; i++) {
      const m = new Float32Array(v); // the max of 0 and every logit: ReLU before the max
      const n = rows[i].length;
      for (let j = 0; j < n; j++) {
        const base = (i * t + j) * v;
        for (let c = 0; c < v; c++) {
          const x = data[base + c];
          if (x > m[c]) m[c] = x;
        }
      }
      for (let c = 0; c < v; c++) if (m[c] > 0) m[c] = Math.log1p(m[c]);
      result.push(m);
    }
    return result;
  }

  /** Releases the ONNX session. */
  async close(): Promise<void> {
    await this.graph.session.release();
  }
}
