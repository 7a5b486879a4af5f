// The text encoder a dense index is built and searched with, picked by its spec (./encoder-types.ts):
// model code is loaded only for the type asked for.

import type { Encoder, EncoderSpec } from "./encoder-types.js";

// The types and normalizeRows live in ./encoder-types.ts and ./vectors.ts (the encoders import them from
// there, not from this module that loads them).
export type { BertOnnxSpec, Encoder, EncoderSpec, OnnxSpec, OpenAISpec, UseLiteSpec } from "./encoder-types.js";
export { normalizeRows } from "./vectors.js";

/** An encoder for a spec; model code is loaded only for the type asked for. */
export async function createEncoder(spec: EncoderSpec): Promise<Encoder> {
  switch (spec.type) {
    case "use-lite":
      return (await import("./use-lite.js")).UseLiteEncoder.load(spec);
    case "onnx":
      return (await import("./onnx.js")).OnnxEncoder.load(spec);
    case "bert-onnx":
      return (await import("./bert.js")).BertOnnxEncoder.load(spec);
    case "openai":
      return new (await import("./openai.js")).OpenAIEncoder(spec);
    default:
      throw new Error(`unknown encoder type ${JSON.stringify((spec as { type?: unknown }).type)}`);
  }
}
