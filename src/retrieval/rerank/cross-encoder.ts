// The `cross-encoder` reranker: a BERT-style sequence classifier exported to ONNX (e.g. an ms-marco
// MiniLM cross-encoder) scoring each (query, passage) pair. A pair is tokenized by BERT's WordPiece from
// the model's vocab.txt (../dense/wordpiece.ts) as `[CLS] query [SEP] passage [SEP]` with token_type_ids
// 0 for the query part and 1 for the passage part, cut to `maxLength` tokens Hugging Face's way
// (`longest_first`: a token off the longer side until it fits, off the passage on a tie); pairs are padded
// per batch with an attention mask and run through the graph with onnxruntime-node's CPU binary (an
// optional package, loaded on demand). The score is the output's chosen column (`label`, default the last)
// as it is (`score=logit`), or its probability (`score=softmax`: a softmax over the columns, or the
// sigmoid of a single column). The passage is given as `title: text` unless `title=false`.

import { statSync } from "node:fs";
import { resolve } from "node:path";
import type * as Ort from "onnxruntime-node";
import { importOptional } from "../../util/optional.js";
import { WordPieceTokenizer } from "../dense/wordpiece.js";
import { checkOutput, opt, type Reranker, type RerankerDescriptor, type RerankItem, type RerankOutput } from "./reranker.js";

const NAME = "cross-encoder";
const OPTIONS = ["model", "vocab", "score", "label", "maxLength", "batchSize", "lowercase", "output", "title", "threads"] as const;
type InputName = "input_ids" | "attention_mask" | "token_type_ids" | "position_ids";
const KNOWN_INPUTS: readonly string[] = ["input_ids", "attention_mask", "token_type_ids", "position_ids"];

/** One encoded pair: token ids and their segment (0: [CLS] query [SEP]; 1: passage [SEP]). */
export interface EncodedPair {
  ids: number[];
  types: number[];
}

/** `[CLS] a [SEP] b [SEP]` in at most `maxLength` tokens, cut as Hugging Face's `longest_first` truncation. */
export function encodePair(tokenizer: WordPieceTokenizer, a: string, b: string, maxLength: number): EncodedPair {
  const pieces = (t: string) => {
    const out: number[] = [];
    for (const w of tokenizer.basicTokens(t)) tokenizer.wordPieces(w, out);
    return out;
  };
  const qa = pieces(a);
  const pb = pieces(b);
  let over = qa.length + pb.length + 3 - maxLength;
  while (over > 0) {
    if (qa.length > pb.length) qa.pop();
    else pb.pop();
    over--;
  }
  const ids = [tokenizer.clsId, ...qa, tokenizer.sepId, ...pb, tokenizer.sepId];
  const types = ids.map((_, i) => (i < qa.length + 2 ? 0 : 1));
  return { ids, types };
}

function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** A cross-encoder over one ONNX graph; see the module comment. */
export class CrossEncoderReranker implements Reranker {
  readonly name = NAME;

  private constructor(
    readonly settings: Record<string, unknown>,
    readonly tokenizer: WordPieceTokenizer,
    private readonly ort: typeof Ort,
    private readonly session: Ort.InferenceSession,
    private readonly inputs: ReadonlyMap<InputName, "int64" | "int32">,
    private readonly output: string,
    private readonly o: { file: string; score: "logit" | "softmax"; label: number | undefined; maxLength: number; batchSize: number; title: boolean },
  ) {}

  /** Opens the graph and vocabulary a spec's options name; refuses a graph whose inputs are not BERT's. */
  static async open(options: Record<string, unknown>, threads: number | undefined): Promise<CrossEncoderReranker> {
    opt.known(NAME, options, OPTIONS);
    const file = resolve(opt.string(NAME, options, "model"));
    const vocab = resolve(opt.string(NAME, options, "vocab"));
    const score = opt.choice(NAME, options, "score", ["logit", "softmax"] as const, "logit");
    const label = options.label === undefined ? undefined : opt.int(NAME, options, "label", 0, 0);
    const maxLength = opt.int(NAME, options, "maxLength", 512, 4);
    const batchSize = opt.int(NAME, options, "batchSize", 32);
    const title = opt.bool(NAME, options, "title", true);
    const t = opt.int(NAME, options, "threads", threads ?? 1);
    const tokenizer = WordPieceTokenizer.fromFile(vocab, { lowercase: opt.bool(NAME, options, "lowercase", true), maxLength });
    try {
      if (!statSync(file).isFile()) throw new Error("not a file");
    } catch (e) {
      throw new Error(`model file ${file}: cannot read (${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message})`);
    }
    const ort = await importOptional<typeof Ort>("onnxruntime-node", "the cross-encoder reranker");
    let session: Ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(file, { executionProviders: ["cpu"], intraOpNumThreads: t, interOpNumThreads: 1 });
    } catch (e) {
      throw new Error(`model file ${file}: onnxruntime cannot load it as an ONNX graph (${e instanceof Error ? e.message : String(e)})`);
    }
    try {
      const inputs = new Map<InputName, "int64" | "int32">();
      for (const meta of session.inputMetadata) {
        if (!KNOWN_INPUTS.includes(meta.name)) throw new Error(`model file ${file}: graph input "${meta.name}" is not a BERT input (inputs: ${session.inputNames.join(", ")}; expected input_ids, attention_mask, optionally token_type_ids and position_ids)`);
        const type = meta.isTensor ? meta.type : "not a tensor";
        if (type !== "int64" && type !== "int32") throw new Error(`model file ${file}: graph input "${meta.name}" is ${type}; int64 or int32 token ids are expected`);
        inputs.set(meta.name as InputName, type);
      }
      for (const need of ["input_ids", "attention_mask"] as const)
        if (!inputs.has(need)) throw new Error(`model file ${file}: the graph has no "${need}" input (inputs: ${session.inputNames.join(", ")})`);
      const wanted = opt.optionalString(NAME, options, "output");
      const output = wanted ?? (session.outputNames.includes("logits") ? "logits" : session.outputNames[0]);
      if (!session.outputNames.includes(output)) throw new Error(`model file ${file}: the graph has no output "${output}" (outputs: ${session.outputNames.join(", ")})`);
      const settings = { reranker: NAME, model: file, vocab, score, ...(label === undefined ? {} : { label }), maxLength, title, output, tokenTypeIds: inputs.has("token_type_ids") };
      return new CrossEncoderReranker(settings, tokenizer, ort, session, inputs, output, { file, score, label, maxLength, batchSize, title });
    } catch (e) {
      await session.release();
      throw e;
    }
  }

  /** The pair the graph is given for a query and a passage. */
  encode(query: string, passage: { title: string; text: string }): EncodedPair {
    return encodePair(this.tokenizer, query, this.o.title && passage.title !== "" ? `${passage.title}: ${passage.text}` : passage.text, this.o.maxLength);
  }

  async rerank(items: readonly RerankItem[]): Promise<RerankOutput[]> {
    const pairs: EncodedPair[] = [];
    for (const it of items) for (const p of it.passages) pairs.push(this.encode(it.query, p));
    const scores: number[] = [];
    for (let s = 0; s < pairs.length; s += this.o.batchSize) scores.push(...(await this.run(pairs.slice(s, s + this.o.batchSize))));
    let at = 0;
    return items.map((it) => checkOutput(NAME, it, { scores: scores.slice(at, (at += it.passages.length)) }));
  }

  /** One padded batch of pairs through the graph: a score per pair. */
  private async run(rows: readonly EncodedPair[]): Promise<number[]> {
    const b = rows.length;
    const t = Math.max(...rows.map((r) => r.ids.length));
    const values: Record<InputName, number[]> = {
      input_ids: new Array<number>(b * t).fill(this.tokenizer.padId),
      attention_mask: new Array<number>(b * t).fill(0),
      token_type_ids: new Array<number>(b * t).fill(0),
      position_ids: new Array<number>(b * t),
    };
    rows.forEach((r, i) => {
      for (let j = 0; j < t; j++) values.position_ids[i * t + j] = j;
      r.ids.forEach((id, j) => {
        values.input_ids[i * t + j] = id;
        values.attention_mask[i * t + j] = 1;
        values.token_type_ids[i * t + j] = r.types[j];
      });
    });
    const feeds: Record<string, Ort.Tensor> = {};
    for (const [name, type] of this.inputs)
      feeds[name] = type === "int64" ? new this.ort.Tensor("int64", BigInt64Array.from(values[name], BigInt), [b, t]) : new this.ort.Tensor("int32", Int32Array.from(values[name]), [b, t]);
    let result: Ort.InferenceSession.OnnxValueMapType;
    try {
      result = await this.session.run(feeds, [this.output]);
    } catch (e) {
      throw new Error(`model file ${this.o.file}: onnxruntime failed on ${b} pairs of up to ${t} tokens (${e instanceof Error ? e.message : String(e)}); is maxLength (${this.o.maxLength}) within the model's position embeddings?`);
    }
    const out = result[this.output] as Ort.Tensor;
    if (out.type !== "float32") throw new Error(`model file ${this.o.file}: output "${this.output}" is ${out.type}; float32 logits are needed`);
    const dims = out.dims;
    if (dims[0] !== b || dims.length > 2) throw new Error(`model file ${this.o.file}: output "${this.output}" has shape [${dims.join(", ")}] for ${b} pairs; [batch, labels] or [batch] is needed`);
    const c = dims.length === 2 ? dims[1] : 1;
    const label = this.o.label ?? c - 1;
    if (label >= c) throw new Error(`model file ${this.o.file}: label ${label} asked for, the output has ${c} column${c === 1 ? "" : "s"}`);
    const data = out.data as Float32Array;
    const scores: number[] = [];
    for (let i = 0; i < b; i++) {
      const row = data.subarray(i * c, (i + 1) * c);
      if (this.o.score === "logit") scores.push(row[label]);
      else if (c === 1) scores.push(sigmoid(row[0]));
      else {
        let max = -Infinity;
        for (const v of row) max = Math.max(max, v);
        let sum = 0;
        for (const v of row) sum += Math.exp(v - max);
        scores.push(Math.exp(row[label] - max) / sum);
      }
    }
    return scores;
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

/** The cross-encoder's descriptor. */
export const crossEncoderReranker: RerankerDescriptor = {
  name: NAME,
  version: 1,
  summary: "a BERT-style cross-encoder from a local ONNX graph and its vocab.txt (model=, vocab=, score=logit|softmax)",
  needs: ["model", "vocab"],
  open: (options, context) => CrossEncoderReranker.open(options, context.threads),
};
