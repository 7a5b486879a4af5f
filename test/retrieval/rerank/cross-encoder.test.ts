// The `cross-encoder` reranker against an independent reference (test/fixtures/cross-encoder/make.py, run
// in beforeAll with Debian's python3-onnx and python3-numpy): on 24 SQuAD questions × 8 paragraphs of their
// article, the pair encodings `[CLS] query [SEP] title: passage [SEP]` with token types 0/1 equal the Python
// tokenizer's (cut to 128 and to 40 tokens by longest_first), and the scores of the random BERT-shaped
// classifier run by onnxruntime-node equal NumPy's float64 logits to 1e-5: one logit column, its sigmoid,
// two columns (a chosen label's logit, the softmax), a graph without token_type_ids; batches of any size
// give the same scores; wrong specs are refused naming the option or the file.

import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CrossEncoderReranker } from "../../../src/retrieval/rerank/cross-encoder.js";
import { openReranker } from "../../../src/retrieval/rerank/index.js";
import type { Reranker } from "../../../src/retrieval/rerank/reranker.js";
import { makeCrossEncoderFixture, type CrossEncoderRef } from "./cross-encoder-fixture.js";

let dir = "";
let ref: CrossEncoderRef;
const opened: Reranker[] = [];

beforeAll(() => {
  ({ dir, ref } = makeCrossEncoderFixture());
}, 300_000);

afterAll(async () => {
  for (const r of opened) await r.close();
});

async function open(options: Record<string, unknown> = {}): Promise<Reranker> {
  const r = await openReranker({ name: "cross-encoder", options: { model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), maxLength: 128, ...options } });
  opened.push(r);
  return r;
}

/** Largest |got − want| over every item and passage. */
function worst(got: number[][], want: number[][]): number {
  expect(got.map((r) => r.length)).toEqual(want.map((r) => r.length));
  let w = 0;
  got.forEach((row, i) => row.forEach((x, j) => (w = Math.max(w, Math.abs(x - want[i][j])))));
  return w;
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

describe("cross-encoder against NumPy", () => {
  it("encodes each pair as the Python tokenizer does, at 128 and at 40 tokens (longest_first)", async () => {
    for (const max of ["128", "40"] as const) {
      const r = (await open({ maxLength: Number(max) })) as CrossEncoderReranker;
      ref.items.forEach((it, i) =>
        it.passages.forEach((p, j) => {
          const e = r.encode(it.query, p);
          expect(e.ids).toEqual(ref.maxLength[max].ids[i][j]);
          expect(e.types).toEqual(ref.maxLength[max].types[i][j]);
        }),
      );
    }
    // most SQuAD paragraphs are longer than 128 tokens: 167 of the 192 pairs were cut to 128, all to 40
    expect(ref.maxLength["128"].ids.flat().filter((ids) => ids.length === 128).length).toBe(167);
    expect(ref.maxLength["40"].ids.flat().filter((ids) => ids.length === 40).length).toBe(192);
  });

  it("scores equal NumPy's logits to 1e-5 (logit and sigmoid), in one batch and in batches of 5", async () => {
    expect(ref.items.length).toBe(24);
    for (const max of ["128", "40"] as const) {
      const want = ref.maxLength[max].logit;
      const logit = await open({ maxLength: Number(max) });
      const got = (await logit.rerank(ref.items)).map((o) => o.scores);
      expect(worst(got, want)).toBeLessThan(1e-5);
      const small = await open({ maxLength: Number(max), batchSize: 5 });
      expect(worst((await small.rerank(ref.items)).map((o) => o.scores), want)).toBeLessThan(1e-5);
      const soft = await open({ maxLength: Number(max), score: "softmax" });
      expect(worst((await soft.rerank(ref.items)).map((o) => o.scores), want.map((r) => r.map(sigmoid)))).toBeLessThan(1e-5);
    }
    // the random graph tells the pairs apart: no two scores of a query are equal
    for (const row of ref.maxLength["128"].logit) expect(new Set(row.map((x) => x.toFixed(6))).size).toBe(row.length);
  });

  it("two columns: the last (or the chosen) label's logit, or its softmax probability", async () => {
    const want = ref.maxLength["128"].logits2;
    const two = { model: join(dir, "model-2.onnx") };
    const last = await open(two);
    expect(worst((await last.rerank(ref.items)).map((o) => o.scores), want.map((r) => r.map((c) => c[1])))).toBeLessThan(1e-5);
    const first = await open({ ...two, label: 0 });
    expect(worst((await first.rerank(ref.items)).map((o) => o.scores), want.map((r) => r.map((c) => c[0])))).toBeLessThan(1e-5);
    const soft = await open({ ...two, score: "softmax" });
    const p = (c: number[]) => Math.exp(c[1]) / (Math.exp(c[0]) + Math.exp(c[1]));
    expect(worst((await soft.rerank(ref.items)).map((o) => o.scores), want.map((r) => r.map(p)))).toBeLessThan(1e-5);
  });

  it("a graph without token_type_ids is fed without them", async () => {
    const r = await open({ model: join(dir, "model-no-types.onnx") });
    expect(r.settings.tokenTypeIds).toBe(false);
    expect(worst((await r.rerank(ref.items)).map((o) => o.scores), ref.maxLength["128"].noTypes)).toBeLessThan(1e-5);
  });

  it("records its settings and scores no passages as no scores", async () => {
    const r = await open();
    expect(r.settings).toEqual({ reranker: "cross-encoder", model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), score: "logit", maxLength: 128, title: true, output: "logits", tokenTypeIds: true });
    expect(await r.rerank([{ query: "anything", passages: [] }])).toEqual([{ scores: [] }]);
  });
});

describe("cross-encoder: wrong specs", () => {
  it("are refused naming the option or the file", async () => {
    const vocab = join(dir, "vocab.txt");
    await expect(openReranker("cross-encoder:vocab=" + vocab)).rejects.toThrow("reranker cross-encoder: option model is required (a string)");
    await expect(openReranker(`cross-encoder:model=${join(dir, "nope.onnx")},vocab=${vocab}`)).rejects.toThrow(`model file ${join(dir, "nope.onnx")}: cannot read (no such file)`);
    await expect(openReranker(`cross-encoder:model=${vocab},vocab=${vocab}`)).rejects.toThrow(`model file ${vocab}: onnxruntime cannot load it as an ONNX graph`);
    await expect(openReranker(`cross-encoder:model=${join(dir, "model.onnx")},vocab=${vocab},score=prob`)).rejects.toThrow("reranker cross-encoder: option score must be one of logit, softmax, not \"prob\"");
    await expect(openReranker(`cross-encoder:model=${join(dir, "model.onnx")},vocab=${vocab},pooling=cls`)).rejects.toThrow('reranker cross-encoder: unknown option "pooling"');
    await expect(openReranker(`cross-encoder:model=${join(dir, "model.onnx")},vocab=${join(dir, "none.txt")}`)).rejects.toThrow(`vocab file ${join(dir, "none.txt")}: cannot read (no such file)`);
    const r = await open({ model: join(dir, "model.onnx"), label: 1 });
    await expect(r.rerank(ref.items.slice(0, 1))).rejects.toThrow("label 1 asked for, the output has 1 column");
    await expect(openReranker("cross_encoder")).rejects.toThrow('reranker spec "cross_encoder": the name comes first');
    await expect(openReranker("colbert")).rejects.toThrow('--reranker: unknown reranker "colbert" (known: cross-encoder, llm-pointwise, llm-listwise, learned)');
  });
});
