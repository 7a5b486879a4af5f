// The text encoder a dense index is built and searched with, picked by its spec (./encoder-types.ts):
// one descriptor per encoder type in ENCODERS, whose factory loads the model code only for the type
// asked for. A new encoder is its module plus one line here.

import { Registry } from "../../util/registry.js";
import type { BertOnnxSpec, Encoder, EncoderDescriptor, EncoderSpec, OnnxSpec, OpenAISpec, UseLiteSpec } from "./encoder-types.js";

// The types and normalizeRows live in ./encoder-types.ts and ./vectors.ts (the encoders import them from
// there, not from this module that loads them).
export type { BertOnnxSpec, Encoder, EncoderDescriptor, EncoderSpec, OnnxSpec, OpenAISpec, UseLiteSpec } from "./encoder-types.js";
export { normalizeRows } from "./vectors.js";

/** Every encoder type, by the name a spec's `type` gives. */
export const ENCODERS = new Registry<EncoderDescriptor>("encoder type", [
  { name: "use-lite", version: 1, summary: "Universal Sentence Encoder lite (512-d, offline)", create: async (s) => (await import("./use-lite.js")).UseLiteEncoder.load(s as UseLiteSpec) },
  { name: "onnx", version: 1, summary: "a local ONNX sentence-embedding model (transformers.js)", create: async (s) => (await import("./onnx.js")).OnnxEncoder.load(s as OnnxSpec) },
  { name: "bert-onnx", version: 1, summary: "a BERT-style ONNX graph and its WordPiece vocab.txt (onnxruntime-node)", create: async (s) => (await import("./bert.js")).BertOnnxEncoder.load(s as BertOnnxSpec) },
  { name: "openai", version: 1, summary: "an OpenAI-compatible /embeddings endpoint", create: async (s) => new (await import("./openai.js")).OpenAIEncoder(s as OpenAISpec) },
]);

/** An encoder for a spec; model code is loaded only for the type asked for. */
export async function createEncoder(spec: EncoderSpec): Promise<Encoder> {
  const type = (spec as { type?: unknown }).type;
  const d = typeof type === "string" ? ENCODERS.find(type) : undefined;
  if (d === undefined) throw new Error(`unknown encoder type ${JSON.stringify(type)}`);
  return d.create(spec);
}
