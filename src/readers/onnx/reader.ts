// The extractive ONNX reader: any question-answering model @huggingface/transformers can load
// (BERT, DistilBERT, RoBERTa, DeBERTa, … exported to ONNX), from a local directory or a model id.
// It adds what the library's pipeline lacks: sliding windows over long passages, the best span across
// windows and passages, and answers as exact character offsets of the original passage.

import { assertModelDir } from "../../util/model-dir.js";
import { importOptional } from "../../util/optional.js";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { PreTrainedModel, PreTrainedTokenizer } from "@huggingface/transformers";
import { OffsetMap } from "../../knowledge/codepoints.js";
import type { KiltRecord } from "../../records/types.js";
import type { Reader, ReaderAnswer, ReaderDescriptor, ReaderPassage } from "../types.js";
import { type TokenScheme, type TokenSpan, alignTokens, tokenSchemeOf } from "./align.js";
import { type SpanCandidate, bestSpan } from "./spans.js";
import { type LayoutItem, type PostProcessed, type QaWindow, makeWindows, pairLayout } from "./windows.js";

/** Options of {@link OnnxQaReader.load}. */
export interface OnnxQaReaderOptions {
  /** A local model directory (config.json, tokenizer.json, onnx/model.onnx) or a model id. */
  model: string;
  /**
   * Model ids only: false (default) looks them up in the library's local model path and cache only;
   * true lets the library download them. A local directory is always read locally.
   */
  allowRemote?: boolean;
  /** ONNX weights variant (`fp32` → onnx/model.onnx, `q8` → onnx/model_quantized.onnx, …; default fp32). */
  dtype?: "auto" | "fp32" | "fp16" | "q8" | "int8" | "uint8" | "q4" | "bnb4" | "q4f16";
  /** Tokens per window (default 384, at most the tokenizer's model_max_length). */
  maxLength?: number;
  /** Passage tokens shared by consecutive windows (default 128). */
  stride?: number;
  /** Question tokens kept (default 64). */
  maxQuestionTokens?: number;
  /** Longest answer in tokens (default 30). */
  maxAnswerTokens?: number;
  /** Windows per model call (default 8). */
  batchSize?: number;
  /** Adds `retrievalWeight × passage.score` to a span's logit score (default 0). */
  retrievalWeight?: number;
}

/** A passage tokenized and aligned to its text. */
export interface PreparedPassage {
  ids: number[];
  tokens: string[];
  /** UTF-16 [start, end) of each token in the passage text, or null. */
  spans: TokenSpan[];
}

/** Where an answer came from, in `meta`: offsets count code points of the passage text, [start, end). */
export interface OnnxAnswerMeta {
  passage_index: number;
  start_character: number;
  end_character: number;
  token_start: number;
  token_end: number;
  window: number;
  logit_score: number;
  windows: number;
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

type Tok = PreTrainedTokenizer & {
  _tokenizer: {
    encode(text: string, options: { add_special_tokens: boolean }): { ids: number[]; tokens: string[] };
    post_processor: ((a: string[], b: string[], options?: unknown) => PostProcessed) | null;
    token_to_id(t: string): number | undefined;
  };
  _tokenizerJSON: unknown;
};

/** An extractive reader running a local ONNX question-answering model (start and end logits over token windows). */
export class OnnxQaReader implements Reader {
  readonly name: string;

  private constructor(
    private readonly tokenizer: Tok,
    private readonly model: PreTrainedModel,
    private readonly tensor: typeof import("@huggingface/transformers").Tensor,
    readonly scheme: TokenScheme,
    readonly layout: LayoutItem[],
    private readonly options: Required<Omit<OnnxQaReaderOptions, "allowRemote" | "dtype" | "model">> & { model: string },
  ) {
    this.name = `onnx-qa:${options.model}`;
  }

  /** Loads tokenizer and model. Local directories never touch the network. */
  static async load(options: OnnxQaReaderOptions): Promise<OnnxQaReader> {
    const hf = await importOptional<typeof import("@huggingface/transformers")>("@huggingface/transformers", "the ONNX QA reader");
    const local = isDirectory(options.model);
    const id = local ? resolve(options.model) : options.model;
    const localOnly = local || options.allowRemote !== true;
    if (local) assertModelDir(id, options.dtype ?? "fp32");
    let tokenizer: Tok;
    let model: PreTrainedModel;
    try {
      tokenizer = (await hf.AutoTokenizer.from_pretrained(id, { local_files_only: localOnly })) as Tok;
      model = await hf.AutoModelForQuestionAnswering.from_pretrained(id, { local_files_only: localOnly, dtype: options.dtype ?? "fp32" });
    } catch (err) {
      throw new Error(`cannot load the QA model ${JSON.stringify(options.model)}${local ? "" : localOnly ? " (a model id, looked up locally only: pass allowRemote to download)" : ""}: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    const inner = tokenizer._tokenizer;
    const post = inner.post_processor;
    const layout = pairLayout(post === null ? null : (a, b) => post(a, b, { add_special_tokens: true }), (t) => inner.token_to_id(t));
    const modelMax = Number(tokenizer.model_max_length);
    const maxLength = Math.min(options.maxLength ?? 384, Number.isFinite(modelMax) && modelMax > 0 ? modelMax : Infinity);
    const batchSize = options.batchSize ?? 8;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${batchSize}`);
    return new OnnxQaReader(tokenizer, model, hf.Tensor, tokenSchemeOf(tokenizer._tokenizerJSON), layout, {
      model: options.model,
      maxLength,
      stride: options.stride ?? 128,
      maxQuestionTokens: options.maxQuestionTokens ?? 64,
      maxAnswerTokens: options.maxAnswerTokens ?? 30,
      batchSize,
      retrievalWeight: options.retrievalWeight ?? 0,
    });
  }

  /** A passage's token ids, tokens and their character spans. */
  prepare(text: string): PreparedPassage {
    const { ids, tokens } = this.tokenizer._tokenizer.encode(text, { add_special_tokens: false });
    return { ids, tokens, spans: alignTokens(text, tokens, this.scheme) };
  }

  /** The question's token ids (before truncation to `maxQuestionTokens`). */
  questionIds(question: string): number[] {
    return this.tokenizer._tokenizer.encode(question, { add_special_tokens: false }).ids;
  }

  /** The windows of a question (its token ids) over a prepared passage. */
  windows(questionIds: readonly number[], passage: PreparedPassage): QaWindow[] {
    return makeWindows(this.layout, questionIds, passage.ids, this.options);
  }

  /** Start and end logits of each window (padded batches of `batchSize`). */
  async logits(windows: readonly QaWindow[]): Promise<{ start: Float32Array; end: Float32Array }[]> {
    const out: { start: Float32Array; end: Float32Array }[] = [];
    const pad = Number(this.tokenizer.pad_token_id ?? 0);
    for (let b = 0; b < windows.length; b += this.options.batchSize) {
      const batch = windows.slice(b, b + this.options.batchSize);
      const width = Math.max(...batch.map((w) => w.inputIds.length));
      const ids = new BigInt64Array(batch.length * width).fill(BigInt(pad));
      const mask = new BigInt64Array(batch.length * width);
      const types = new BigInt64Array(batch.length * width);
      batch.forEach((w, r) => {
        w.inputIds.forEach((id, c) => {
          ids[r * width + c] = BigInt(id);
          mask[r * width + c] = 1n;
          types[r * width + c] = BigInt(w.tokenTypeIds[c]);
        });
      });
      const dims = [batch.length, width];
      const result = (await this.model({
        input_ids: new this.tensor("int64", ids, dims),
        attention_mask: new this.tensor("int64", mask, dims),
        token_type_ids: new this.tensor("int64", types, dims),
      })) as { start_logits: { data: ArrayLike<number> }; end_logits: { data: ArrayLike<number> } };
      const s = Float32Array.from(result.start_logits.data);
      const e = Float32Array.from(result.end_logits.data);
      batch.forEach((_, r) => out.push({ start: s.subarray(r * width, (r + 1) * width), end: e.subarray(r * width, (r + 1) * width) }));
    }
    return out;
  }

  /**
   * The best span over all windows of all passages (ties: earlier passage, then earlier window).
   * Answer = that exact slice of the passage text; provenance = the passage; `meta` = {@link OnnxAnswerMeta}.
   * No passage (or none with text) → empty answer and provenance.
   */
  async read(record: KiltRecord, passages: readonly ReaderPassage[]): Promise<ReaderAnswer> {
    if (record.input === undefined) throw new Error(`record ${JSON.stringify(record.id)} has no input`);
    const question = this.questionIds(record.input);
    const prepared = passages.map((p) => this.prepare(p.text));
    const all: { passage: number; window: number; w: QaWindow }[] = [];
    prepared.forEach((pp, k) => this.windows(question, pp).forEach((w, n) => all.push({ passage: k, window: n, w })));
    const logits = await this.logits(all.map((a) => a.w));
    let best: { cand: SpanCandidate; score: number; passage: number; window: number } | undefined;
    all.forEach((a, n) => {
      const spans = prepared[a.passage].spans;
      const cand = bestSpan(logits[n].start, logits[n].end, a.w, (k) => spans[k] !== null, this.options.maxAnswerTokens);
      if (cand === undefined) return;
      const score = cand.score + this.options.retrievalWeight * (passages[a.passage].score ?? 0);
      if (best === undefined || score > best.score) best = { cand, score, passage: a.passage, window: a.window };
    });
    if (best === undefined) return { answer: "", provenance: [], meta: { no_answer: true, windows: all.length } };
    const { cand, passage, window, score } = best;
    const text = passages[passage].text;
    const start = prepared[passage].spans[cand.start]![0];
    const end = prepared[passage].spans[cand.end]![1];
    const map = new OffsetMap(text);
    const meta: OnnxAnswerMeta = {
      passage_index: passage,
      start_character: map.toCodePoint(start),
      end_character: map.toCodePoint(end),
      token_start: cand.start,
      token_end: cand.end,
      window,
      logit_score: cand.score,
      windows: all.length,
    };
    return { answer: text.slice(start, end), provenance: [{ ...passages[passage].provenance }], score, meta: { ...meta } };
  }

  /** Releases the ONNX session. */
  async close(): Promise<void> {
    await this.model.dispose();
  }
}

/** `--reader onnx`: an extractive QA model from the local ONNX directory `--model` names. */
export const onnxReaderKind: ReaderDescriptor = {
  name: "onnx",
  version: 1,
  summary: "a local ONNX question-answering model (start/end logits)",
  needs: [{ option: "model", flag: "--model", what: "a local ONNX QA model directory" }],
  open: (o) => OnnxQaReader.load({ model: o.model! }),
};
