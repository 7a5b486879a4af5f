// What a text encoder is: texts in, one unit-length vector per text out (row-major Float32Array), with
// queries and passages encoded separately so models with asymmetric prefixes ("query: ", "passage: ")
// work. `EncoderSpec` is what a manifest records to reopen the encoder; it never holds a secret (an API
// key is named by its environment variable). The encoders import these types from here; ./encoder.ts
// registers one descriptor per spec type and picks one by its spec.

import type { Descriptor } from "../../util/registry.js";

/** Universal Sentence Encoder lite (512-d; installed with the package, runs offline). */
export interface UseLiteSpec {
  type: "use-lite";
  /** Texts per model call; default 32. */
  batchSize?: number;
  /** Worker threads for large batches (each loads the model); default: the number of cores. 1 = in-process only. */
  threads?: number;
}

/** A local ONNX sentence-embedding model (through transformers.js). */
export interface OnnxSpec {
  type: "onnx";
  /** A local model directory (config.json, tokenizer files, onnx/model.onnx) or a Hugging Face model id. */
  model: string;
  /** "mean": mean of the token vectors under the attention mask; "cls": the first token's vector. Default "mean". */
  pooling?: "mean" | "cls";
  /** L2-normalise the pooled vector (the index normalises again either way). Default true. */
  normalize?: boolean;
  /** Prepended to every query (e.g. "query: "); default "". */
  queryPrefix?: string;
  /** Prepended to every passage (e.g. "passage: "); default "". */
  passagePrefix?: string;
  /** Weights file variant: "fp32" = onnx/model.onnx (default), "q8" = onnx/model_quantized.onnx, … */
  dtype?: "fp32" | "fp16" | "q8" | "int8" | "uint8" | "q4";
  /** Texts per model call; default 32. */
  batchSize?: number;
}

/**
 * A BERT-style encoder (DPR, e5, bge, Contriever, …) from a local ONNX graph and its WordPiece `vocab.txt`,
 * run with onnxruntime-node; set pooling, normalisation, casing and prefixes as the model card says.
 */
export interface BertOnnxSpec {
  type: "bert-onnx";
  /** The ONNX graph (inputs input_ids and attention_mask, token_type_ids and position_ids optional). */
  model: string;
  /** The WordPiece vocabulary (one token a line). */
  vocab: string;
  /** A separate query encoder's graph (DPR's question encoder, with `model` its context encoder), same vocabulary and output; default: `model`. */
  queryModel?: string;
  /** "cls": the first ([CLS]) token's vector (DPR, bge); "mean": mean under the attention mask (e5, Contriever). Default "cls". */
  pooling?: "cls" | "mean";
  /** L2-normalise the pooled vector (the index normalises again either way). Default true. */
  normalize?: boolean;
  /** Uncased model: lower-case (and strip accents) before WordPiece. Default true. */
  lowercase?: boolean;
  /** Strip accents; default: as `lowercase`. */
  stripAccents?: boolean;
  /** Tokens per text, [CLS] and [SEP] included; longer texts are truncated. Default 512. */
  maxLength?: number;
  /** Prepended to every query (e5: "query: "; bge: "Represent this sentence for searching relevant passages: "); default "". */
  queryPrefix?: string;
  /** Prepended to every passage (e5: "passage: "); default "". */
  passagePrefix?: string;
  /** The graph output to pool: default "last_hidden_state" when the graph has it, else its first output. A 2-d output ([batch, dim], e.g. "pooler_output") is taken as it is. */
  output?: string;
  /** Texts per model call; default 32. */
  batchSize?: number;
  /** onnxruntime intra-op threads; default: onnxruntime's (the number of cores). */
  threads?: number;
}

/** An OpenAI-compatible `/embeddings` endpoint. */
export interface OpenAISpec {
  type: "openai";
  /** e.g. "https://api.openai.com/v1" or "http://127.0.0.1:8080/v1"; `POST {baseUrl}/embeddings`. */
  baseUrl: string;
  model: string;
  /** Requested output size (sent as `dimensions` when set). */
  dimensions?: number;
  /** Environment variable holding the API key; default OPENAI_API_KEY. No key: no Authorization header. */
  apiKeyEnv?: string;
  queryPrefix?: string;
  passagePrefix?: string;
  /** Texts per request; default 128. */
  batchSize?: number;
}

/** Which encoder, with its settings: recorded in an index's manifest, so queries are encoded as the passages were. */
export type EncoderSpec = UseLiteSpec | OnnxSpec | BertOnnxSpec | OpenAISpec;

/** A text encoder for dense retrieval: texts in, one vector per text out. */
export interface Encoder {
  /** The spec to record in a manifest (no secrets). */
  readonly spec: EncoderSpec;
  /** Vector size; known once the model is loaded or the first text encoded (0 before). */
  readonly dim: number;
  /** `texts.length × dim` values, row by row; unit-length rows unless the spec turns normalisation off (indexes normalise anyway). */
  encodeQueries(texts: readonly string[]): Promise<Float32Array>;
  /** Like {@link Encoder.encodeQueries}, for passages (some models prefix passages and queries differently). */
  encodePassages(texts: readonly string[]): Promise<Float32Array>;
  /** Releases the model, worker threads or connections. */
  close(): Promise<void>;
}

/** An encoder type as a spec's `type` names it: its name, version and factory (which loads the model code only when called). */
export interface EncoderDescriptor extends Descriptor {
  /** Opens the encoder of `spec` (its `type` is this descriptor's name). */
  create(spec: EncoderSpec): Promise<Encoder>;
}
