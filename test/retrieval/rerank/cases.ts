// One line per registered reranker: its name → how its contract case (./contract.ts) is set up: the
// cross-encoder on the random BERT-shaped classifier of test/fixtures/cross-encoder/make.py (Debian's
// python3-onnx), the LLM rerankers behind the deterministic loopback chat-completions server (./llm-model.ts), the learned reranker on a fixed model file (./learned-fixture.ts).

import { join } from "node:path";
import type { RerankerCase } from "./contract.js";
import { makeCrossEncoderFixture } from "./cross-encoder-fixture.js";
import { writeLearnedFixture } from "./learned-fixture.js";
import { startModel } from "./llm-model.js";

async function llm(name: string, options: Record<string, unknown> = {}): Promise<RerankerCase> {
  const server = await startModel();
  return { spec: { name, options: { model: "judge-1", baseUrl: server.baseUrl, ...options } }, close: () => server.close() };
}

export const RERANKER_CASES: Record<string, () => Promise<RerankerCase>> = {
  "cross-encoder": async () => {
    const { dir } = makeCrossEncoderFixture();
    return { spec: { name: "cross-encoder", options: { model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), maxLength: 128 } }, tolerance: 1e-5 };
  },
  "llm-pointwise": () => llm("llm-pointwise"),
  "llm-listwise": () => llm("llm-listwise", { window: 4, stride: 2 }),
  learned: async () => ({ spec: { name: "learned", options: { model: writeLearnedFixture() } } }),
};
