// A tiny BERT-like ONNX encoder written byte by byte (ONNX's protobuf wire format, no onnx package):
// last_hidden_state = tanh((word_emb[input_ids] + type_emb[token_type_ids]) · W), with seeded random
// weights, plus a WordPiece tokenizer over a 12-word vocabulary. `expectedHidden` computes the same
// hidden states in plain JavaScript, so pooling, normalisation and prefixes can be checked exactly.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "query", ":", "passage", "dog", "mat"];
export const HIDDEN = 8;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296 - 0.5;
  };
}

export interface TinyWeights {
  word: Float32Array; // VOCAB.length × HIDDEN
  type: Float32Array; // 2 × HIDDEN
  w: Float32Array; // HIDDEN × HIDDEN
}

export function tinyWeights(seed = 1): TinyWeights {
  const r = rng(seed);
  return {
    word: Float32Array.from({ length: VOCAB.length * HIDDEN }, r),
    type: Float32Array.from({ length: 2 * HIDDEN }, r),
    w: Float32Array.from({ length: HIDDEN * HIDDEN }, r),
  };
}

// ---- protobuf wire format ----
function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}
const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, n: number) => [...key(field, 0), ...varint(n)];
const bytes = (field: number, data: ArrayLike<number>) => [...key(field, 2), ...varint(data.length), ...Array.from(data)];
const str = (field: number, s: string) => bytes(field, Buffer.from(s, "utf8"));
const msg = (field: number, parts: number[][]) => bytes(field, parts.flat());

const FLOAT = 1;
const INT64 = 7;

/** ValueInfoProto {name (1), type (2): TypeProto {tensor_type (1): {elem_type (1), shape (2): {dim (1): {dim_value (1) | dim_param (2)}}}}}. */
function valueInfo(field: number, name: string, elemType: number, dims: (string | number)[]): number[] {
  const dim = dims.map((d) => msg(1, [typeof d === "number" ? int(1, d) : str(2, d)]));
  return msg(field, [str(1, name), msg(2, [msg(1, [int(1, elemType), msg(2, dim)])])]);
}

/** TensorProto {dims (1), data_type (2), name (8), raw_data (9)} as a graph initializer (5). */
function initializer(name: string, dims: number[], values: Float32Array): number[] {
  return msg(5, [...dims.map((d) => int(1, d)), int(2, FLOAT), str(8, name), bytes(9, new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength)))]);
}

/** NodeProto {input (1), output (2), name (3), op_type (4)}. */
function node(inputs: string[], outputs: string[], opType: string, name: string): number[] {
  return msg(1, [...inputs.map((s) => str(1, s)), ...outputs.map((s) => str(2, s)), str(3, name), str(4, opType)]);
}

export function tinyModelBytes(w: TinyWeights): Uint8Array {
  const graph = [
    node(["word_emb", "input_ids"], ["we"], "Gather", "word"),
    node(["type_emb", "token_type_ids"], ["te"], "Gather", "type"),
    node(["we", "te"], ["e"], "Add", "add"),
    node(["e", "W"], ["m"], "MatMul", "proj"),
    node(["m"], ["last_hidden_state"], "Tanh", "act"),
    str(2, "tiny_bert"),
    initializer("word_emb", [VOCAB.length, HIDDEN], w.word),
    initializer("type_emb", [2, HIDDEN], w.type),
    initializer("W", [HIDDEN, HIDDEN], w.w),
    valueInfo(11, "input_ids", INT64, ["batch", "seq"]),
    valueInfo(11, "attention_mask", INT64, ["batch", "seq"]),
    valueInfo(11, "token_type_ids", INT64, ["batch", "seq"]),
    valueInfo(12, "last_hidden_state", FLOAT, ["batch", "seq", HIDDEN]),
  ];
  // ModelProto {ir_version (1), producer_name (2), graph (7), opset_import (8): {domain (1), version (2)}}
  return Uint8Array.from([...int(1, 8), ...str(2, "tartan-test"), ...msg(7, graph), ...msg(8, [str(1, ""), int(2, 14)])]);
}

/** Writes config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx into `dir`. */
export function writeTinyModel(dir: string, w: TinyWeights): void {
  mkdirSync(join(dir, "onnx"), { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_type: "bert", architectures: ["BertModel"], hidden_size: HIDDEN, vocab_size: VOCAB.length }));
  writeFileSync(
    join(dir, "tokenizer_config.json"),
    JSON.stringify({ tokenizer_class: "BertTokenizer", do_lower_case: true, model_max_length: 512, pad_token: "[PAD]", unk_token: "[UNK]", cls_token: "[CLS]", sep_token: "[SEP]" }),
  );
  const special = (c: string) => ({ SpecialToken: { id: c, type_id: 0 } });
  writeFileSync(
    join(dir, "tokenizer.json"),
    JSON.stringify({
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: VOCAB.slice(0, 4).map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
      normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: "BertPreTokenizer" },
      post_processor: {
        type: "TemplateProcessing",
        single: [special("[CLS]"), { Sequence: { id: "A", type_id: 0 } }, special("[SEP]")],
        pair: [special("[CLS]"), { Sequence: { id: "A", type_id: 0 } }, special("[SEP]"), { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: "[SEP]", type_id: 1 } }],
        special_tokens: { "[CLS]": { id: "[CLS]", ids: [2], tokens: ["[CLS]"] }, "[SEP]": { id: "[SEP]", ids: [3], tokens: ["[SEP]"] } },
      },
      decoder: { type: "WordPiece", prefix: "##", cleanup: true },
      model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab: Object.fromEntries(VOCAB.map((t, i) => [t, i])) },
    }),
  );
  writeFileSync(join(dir, "onnx", "model.onnx"), tinyModelBytes(w));
}

/** The model's hidden states for token ids (all of type 0), computed in JavaScript. */
export function expectedHidden(w: TinyWeights, ids: number[]): number[][] {
  return ids.map((id) => {
    const e = Array.from({ length: HIDDEN }, (_, j) => w.word[id * HIDDEN + j] + w.type[j]);
    return Array.from({ length: HIDDEN }, (_, c) => Math.tanh(e.reduce((s, x, j) => s + x * w.w[j * HIDDEN + c], 0)));
  });
}

export function meanPool(h: number[][]): number[] {
  return Array.from({ length: HIDDEN }, (_, c) => h.reduce((s, row) => s + row[c], 0) / h.length);
}

export function unit(v: number[]): number[] {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

/** Token ids as the tokenizer gives them: [CLS] words [SEP], unknown words as [UNK]. */
export function ids(words: string[]): number[] {
  return [2, ...words.map((t) => (VOCAB.indexOf(t) >= 0 ? VOCAB.indexOf(t) : 1)), 3];
}
