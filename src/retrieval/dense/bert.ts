// A BERT-style dense encoder (DPR, e5, bge, Contriever, …) from a local ONNX graph and its WordPiece
// vocab.txt, run with onnxruntime-node's CPU binary (an optional package, loaded on demand; no network): texts are
// prefixed ("query: " / "passage: ", bge's instruction), tokenized by BERT's WordPiece (wordpiece.ts),
// padded per batch with an attention mask and zero token_type_ids, run through the graph, and the
// chosen output is pooled ([CLS] or mean under the mask; a 2-d output such as pooler_output is taken as
// it is) and optionally L2-normalised. The graph's inputs are checked when it loads: input_ids and
// attention_mask are required, token_type_ids and position_ids are fed when the graph has them, int64
// or int32; anything else is refused naming the file. Queries can go through a second graph with the
// same vocabulary (`queryModel`: DPR's question encoder beside its context encoder).

import { statSync } from "node:fs";
import { resolve } from "node:path";
import type * as Ort from "onnxruntime-node";
import { importOptional } from "../../util/optional.js";
import type { BertOnnxSpec, Encoder } from "./encoder-types.js";
import { normalizeRows } from "./vectors.js";
import { WordPieceTokenizer } from "./wordpiece.js";

const KNOWN_INPUTS = ["input_ids", "attention_mask", "token_type_ids", "position_ids"] as const;
type InputName = (typeof KNOWN_INPUTS)[number];
type IdType = "int64" | "int32";

function describeError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === "ENOENT") return "no such file";
  return err instanceof Error ? err.message : String(err);
}

/** One loaded graph: its session, the inputs it takes and the output pooled. */
export interface Graph {
  file: string;
  session: Ort.InferenceSession;
  inputs: ReadonlyMap<InputName, IdType>;
  output: string;
  /** The output's last dimension when the graph declares it, else 0. */
  dim: number;
}

/** Opens `file` with onnxruntime and checks its inputs and the output `wanted` (default: last_hidden_state, else the first). */
export async function openGraph(ort: typeof Ort, file: string, wanted: string | undefined, threads: number | undefined): Promise<Graph> {
  try {
    if (!statSync(file).isFile()) throw new Error("not a file");
  } catch (err) {
    throw new Error(`model file ${file}: cannot read (${describeError(err)})`);
  }
  let session: Ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(file, { executionProviders: ["cpu"], ...(threads ? { intraOpNumThreads: threads, interOpNumThreads: 1 } : {}) });
  } catch (err) {
    throw new Error(`model file ${file}: onnxruntime cannot load it as an ONNX graph (${describeError(err)})`);
  }
  try {
    const inputs = new Map<InputName, IdType>();
    for (const meta of session.inputMetadata) {
      if (!(KNOWN_INPUTS as readonly string[]).includes(meta.name)) {
        throw new Error(`model file ${file}: graph input "${meta.name}" is not a BERT input (inputs: ${session.inputNames.join(", ")}; expected input_ids, attention_mask, optionally token_type_ids and position_ids)`);
      }
      const type = meta.isTensor ? meta.type : "not a tensor";
      if (type !== "int64" && type !== "int32") throw new Error(`model file ${file}: graph input "${meta.name}" is ${type}; int64 or int32 token ids are expected`);
      inputs.set(meta.name as InputName, type);
    }
    for (const need of ["input_ids", "attention_mask"] as const) {
      if (!inputs.has(need)) throw new Error(`model file ${file}: the graph has no "${need}" input (inputs: ${session.inputNames.join(", ")}; a BERT encoder needs input_ids and attention_mask)`);
    }
    const names = session.outputNames;
    const output = wanted ?? (names.includes("last_hidden_state") ? "last_hidden_state" : names[0]);
    const meta = session.outputMetadata.find((m) => m.name === output);
    if (!meta) throw new Error(`model file ${file}: the graph has no output "${output}" (outputs: ${names.join(", ")})`);
    let dim = 0;
    if (meta.isTensor) {
      if (meta.type !== "float32") throw new Error(`model file ${file}: output "${output}" is ${meta.type}; a float32 output is needed`);
      if (meta.shape.length !== 0 && meta.shape.length !== 2 && meta.shape.length !== 3) throw new Error(`model file ${file}: output "${output}" has shape [${meta.shape.join(", ")}]; [batch, sequence, dim] or [batch, dim] is needed`);
      const last = meta.shape[meta.shape.length - 1];
      if (typeof last === "number" && last > 0) dim = last;
    }
    return { file, session, inputs, output, dim };
  } catch (err) {
    await session.release();
    throw err;
  }
}

/**
 * Runs token-id rows through `graph`, padded to the longest with `padId`, with an attention mask, zero
 * token_type_ids and positions 0… for the inputs the graph has; its chosen output (`graph.output`).
 */
export async function runPadded(ort: typeof Ort, graph: Graph, rows: readonly (readonly number[])[], padId: number, maxLength: number): Promise<Ort.Tensor> {
  const b = rows.length;
  const t = Math.max(...rows.map((r) => r.length));
  const ids = new Array<number>(b * t).fill(padId);
  const mask = new Array<number>(b * t).fill(0);
  const positions = new Array<number>(b * t);
  rows.forEach((r, i) => {
    for (let j = 0; j < t; j++) positions[i * t + j] = j;
    r.forEach((id, j) => {
      ids[i * t + j] = id;
      mask[i * t + j] = 1;
    });
  });
  const values: Record<InputName, number[]> = { input_ids: ids, attention_mask: mask, token_type_ids: new Array<number>(b * t).fill(0), position_ids: positions };
  const feeds: Record<string, Ort.Tensor> = {};
  for (const [name, type] of graph.inputs) {
    feeds[name] = type === "int64" ? new ort.Tensor("int64", BigInt64Array.from(values[name], BigInt), [b, t]) : new ort.Tensor("int32", Int32Array.from(values[name]), [b, t]);
  }
  let result: Ort.InferenceSession.OnnxValueMapType;
  try {
    result = await graph.session.run(feeds, [graph.output]);
  } catch (err) {
    throw new Error(`model file ${graph.file}: onnxruntime failed on ${b} texts of up to ${t} tokens (${describeError(err)}); is maxLength (${maxLength}) within the model's position embeddings?`);
  }
  return result[graph.output] as Ort.Tensor;
}

/** A BERT-style ONNX encoder as an {@link Encoder}; see the module comment. */
export class BertOnnxEncoder implements Encoder {
  private size: number;

  private constructor(
    readonly spec: BertOnnxSpec,
    readonly tokenizer: WordPieceTokenizer,
    private readonly ort: typeof Ort,
    private readonly passageGraph: Graph,
    private readonly queryGraph: Graph,
  ) {
    this.size = passageGraph.dim || queryGraph.dim;
  }

  /** Loads the vocabulary and the graph(s) of `spec` and checks their inputs and output. */
  static async load(spec: BertOnnxSpec): Promise<BertOnnxEncoder> {
    if (typeof spec.model !== "string" || spec.model === "") throw new Error('bert-onnx encoder: "model" (the path of model.onnx) is required');
    if (typeof spec.vocab !== "string" || spec.vocab === "") throw new Error('bert-onnx encoder: "vocab" (the path of vocab.txt) is required');
    if (spec.queryModel !== undefined && (typeof spec.queryModel !== "string" || spec.queryModel === "")) throw new Error('bert-onnx encoder: "queryModel" must be the path of the query encoder\'s ONNX graph');
    if (spec.pooling !== undefined && spec.pooling !== "cls" && spec.pooling !== "mean") throw new Error(`bert-onnx encoder: pooling must be "cls" or "mean", not ${JSON.stringify(spec.pooling)}`);
    const model = resolve(spec.model);
    const vocab = resolve(spec.vocab);
    const queryModel = spec.queryModel === undefined ? undefined : resolve(spec.queryModel);
    const tokenizer = WordPieceTokenizer.fromFile(vocab, { lowercase: spec.lowercase, stripAccents: spec.stripAccents, maxLength: spec.maxLength });
    const ort = await importOptional<typeof Ort>("onnxruntime-node", "the bert-onnx encoder (dense encoder type bert-onnx)");
    const passages = await openGraph(ort, model, spec.output, spec.threads);
    let queries = passages;
    if (queryModel !== undefined) {
      try {
        queries = await openGraph(ort, queryModel, spec.output, spec.threads);
        if (passages.dim && queries.dim && passages.dim !== queries.dim) throw new Error(`model file ${queryModel}: the query encoder's output is ${queries.dim}-d, the passage encoder's (${model}) ${passages.dim}-d`);
      } catch (err) {
        if (queries !== passages) await queries.session.release();
        await passages.session.release();
        throw err;
      }
    }
    return new BertOnnxEncoder({ ...spec, model, vocab, ...(queryModel === undefined ? {} : { queryModel }) }, tokenizer, ort, passages, queries);
  }

  get dim(): number {
    return this.size;
  }

  /** Encodes queries (with the spec's query prefix, through the query graph when the spec has one). */
  encodeQueries(texts: readonly string[]): Promise<Float32Array> {
    return this.encode(this.queryGraph, texts, this.spec.queryPrefix ?? "");
  }

  /** Encodes passages (with the spec's passage prefix). */
  encodePassages(texts: readonly string[]): Promise<Float32Array> {
    return this.encode(this.passageGraph, texts, this.spec.passagePrefix ?? "");
  }

  /** The token ids the graph is given for `text` (prefix included), [CLS] and [SEP] included. */
  tokenize(text: string): number[] {
    return this.tokenizer.encode(text).ids;
  }

  private async encode(graph: Graph, texts: readonly string[], prefix: string): Promise<Float32Array> {
    const batch = Math.max(1, this.spec.batchSize ?? 32);
    const parts: Float32Array[] = [];
    for (let s = 0; s < texts.length; s += batch) {
      parts.push(await this.run(graph, texts.slice(s, s + batch).map((t) => this.tokenize(prefix + t))));
    }
    const out = new Float32Array(texts.length * this.size);
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return this.spec.normalize === false || this.size === 0 ? out : normalizeRows(out, this.size);
  }

  /** One padded batch through the graph; the pooled rows. */
  private async run(graph: Graph, rows: number[][]): Promise<Float32Array> {
    const b = rows.length;
    const t = Math.max(...rows.map((r) => r.length));
    const out = await runPadded(this.ort, graph, rows, this.tokenizer.padId, this.tokenizer.maxLength);
    const dims = out.dims;
    const data = out.data as Float32Array;
    const shapeError = () => new Error(`model file ${graph.file}: output "${graph.output}" has shape [${dims.join(", ")}] for a batch of ${b} texts of ${t} tokens`);
    if (out.type !== "float32") throw new Error(`model file ${graph.file}: output "${graph.output}" is ${out.type}; a float32 output is needed`);
    if (dims[0] !== b) throw shapeError();
    const dim = dims[dims.length - 1];
    if (this.size !== 0 && dim !== this.size) throw new Error(`model file ${graph.file}: output "${graph.output}" is ${dim}-d after ${this.size}-d vectors`);
    if (dims.length === 2) {
      this.size = dim;
      return Float32Array.from(data);
    }
    if (dims.length !== 3 || dims[1] !== t) throw shapeError();
    this.size = dim;
    const pooled = new Float32Array(b * dim);
    const acc = new Float64Array(dim);
    for (let i = 0; i < b; i++) {
      const base = i * t * dim;
      if (this.spec.pooling === "mean") {
        acc.fill(0);
        const n = rows[i].length;
        for (let j = 0; j < n; j++) for (let d = 0; d < dim; d++) acc[d] += data[base + j * dim + d];
        for (let d = 0; d < dim; d++) pooled[i * dim + d] = acc[d] / n;
      } else pooled.set(data.subarray(base, base + dim), i * dim);
    }
    return pooled;
  }

  /** Releases the ONNX session(s). */
  async close(): Promise<void> {
    await this.passageGraph.session.release();
    if (this.queryGraph !== this.passageGraph) await this.queryGraph.session.release();
  }
}
