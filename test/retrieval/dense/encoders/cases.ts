// One line per registered encoder type: its name → the spec of its contract case (./contract.ts), from
// what the existing encoder tests use: USE lite's real weights, the tiny BERT-like ONNX model written byte
// by byte (../tiny-encoder.ts) for both ONNX encoders, and a local OpenAI-compatible /embeddings server.

import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HIDDEN, tinyWeights, VOCAB, writeTinyModel } from "../tiny-encoder.js";
import type { EncoderCase } from "./contract.js";

/** The tiny model's directory (config, tokenizer, onnx/model.onnx) with its vocab.txt beside. */
function tinyModel(): string {
  const dir = mkdtempSync(join(tmpdir(), "tartan-encoder-case-"));
  writeTinyModel(dir, tinyWeights(1));
  writeFileSync(join(dir, "vocab.txt"), `${VOCAB.join("\n")}\n`);
  return dir;
}

/** A local /embeddings endpoint whose model is [length, vowels, 1] of each text (test/retrieval/dense/openai.test.ts). */
async function openai(): Promise<EncoderCase> {
  const server = createServer(async (req, res) => {
    let s = "";
    for await (const chunk of req) s += chunk;
    const input = (JSON.parse(s) as { input: string[] }).input;
    const data = input.map((t, index) => ({ object: "embedding", index, embedding: [t.length, (t.match(/[aeiou]/g) ?? []).length, 1] })).reverse();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
  return { spec: { type: "openai", baseUrl, model: "fake" }, dim: 3, tolerance: 0, close: () => new Promise((r) => server.close(() => r())) };
}

/** Each registered encoder type's case, by name. */
export const ENCODER_CASES: Record<string, () => Promise<EncoderCase>> = {
  "use-lite": async () => ({ spec: { type: "use-lite", threads: 1 }, dim: 512, tolerance: 1e-6 }),
  onnx: async () => ({ spec: { type: "onnx", model: tinyModel() }, dim: HIDDEN, tolerance: 2e-6 }),
  "bert-onnx": async () => { const d = tinyModel(); return { spec: { type: "bert-onnx", model: join(d, "onnx", "model.onnx"), vocab: join(d, "vocab.txt"), threads: 1 }, dim: HIDDEN, tolerance: 2e-6 }; },
  openai: async () => openai(),
};
