// The SPLADE encoder against an independent reference (test/fixtures/splade-onnx/make.py, run in
// beforeAll with Debian's python3-onnx and python3-numpy): a random BERT masked-language model as an ONNX
// graph, run by onnxruntime-node, gives term weights equal to NumPy's float64 log(1 + ReLU(logits))
// max-pooled over the text's tokens, to 1e-5, on SQuAD questions, paragraphs and the tokenizer's edge
// texts, batched with padding, with and without token_type_ids, truncated; top-k pruning keeps the
// reference's k largest; bad models, vocabularies and specs are refused naming the file or field.

import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSpladeSpec, SpladeEncoder, spladeSpecFromDir, type SpladeSpec, type SparseWeights } from "../../../src/retrieval/impact/splade.js";
import { makeSpladeFixture, sparseDiff, type SpladeRef } from "./splade-fixture.js";

let dir = "";
let ref: SpladeRef;
const open: SpladeEncoder[] = [];

beforeAll(() => {
  ({ dir, ref } = makeSpladeFixture());
}, 300_000);

afterAll(async () => {
  for (const e of open) await e.close();
});

async function load(spec: Partial<SpladeSpec> = {}): Promise<SpladeEncoder> {
  const e = await SpladeEncoder.load({ type: "splade-onnx", model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), maxLength: 128, ...spec });
  open.push(e);
  return e;
}

const asObject = (w: SparseWeights): Record<string, number> => Object.fromEntries(w.terms.map((t, i) => [t, w.weights[i]]));

describe("SPLADE encoder against NumPy", () => {
  it("gives the reference's weights to 1e-5 on 60 questions, the edge texts and 20 paragraphs (batches of 16, padded)", async () => {
    const e = await load();
    expect(ref.vocabSize).toBe(e.terms.length);
    expect(ref.sample.texts.map((t) => e.tokenizer.encode(t).ids)).toEqual(ref.sample.ids);
    const got = await e.encodePassages(ref.sample.texts);
    let worst = 0;
    got.forEach((w, i) => (worst = Math.max(worst, sparseDiff(asObject(w), ref.sample.weights[i]))));
    expect(worst).toBeLessThan(1e-5);
    // the reference's sparsity: non-zero terms per text, all of them kept
    const counts = ref.sample.weights.map((w) => Object.keys(w).length);
    expect([Math.min(...counts), Math.max(...counts), counts.reduce((a, b) => a + b, 0)]).toEqual([17, 234, 9970]);
    const gotCounts = got.map((w) => w.terms.length);
    // a weight within 1e-5 of 0 may fall either side; none of the reference's is that close
    expect(gotCounts).toEqual(counts);
    // the largest first, ties to the lower id
    for (const w of got) for (let i = 1; i < w.weights.length; i++) expect(w.weights[i - 1]).toBeGreaterThanOrEqual(w.weights[i]);
  });

  it("gives the same weights one text at a time and in one batch, with and without token_type_ids", async () => {
    const batched = await load({ batchSize: 64 });
    const single = await load({ batchSize: 1, model: join(dir, "model-no-types.onnx") });
    const texts = ref.sample.texts.slice(0, 40);
    const a = await batched.encodeQueries(texts);
    const b = await single.encodeQueries(texts);
    let worst = 0;
    a.forEach((w, i) => (worst = Math.max(worst, sparseDiff(asObject(w), asObject(b[i])), sparseDiff(asObject(w), ref.sample.weights[i]))));
    expect(worst).toBeLessThan(1e-5);
  });

  it("truncates at maxLength as the reference does (12 tokens)", async () => {
    const e = await load({ maxLength: 12 });
    const got = await e.encodeQueries(ref.short.texts);
    expect(ref.short.texts.map((t) => e.tokenizer.encode(t).ids)).toEqual(ref.short.ids);
    let worst = 0;
    got.forEach((w, i) => (worst = Math.max(worst, sparseDiff(asObject(w), ref.short.weights[i]))));
    expect(worst).toBeLessThan(1e-5);
  });

  it("keeps the k largest weights of queries and of documents separately (queryTopK, docTopK)", async () => {
    const e = await load({ queryTopK: 10, docTopK: 40 });
    const texts = ref.sample.texts.slice(0, 60);
    const q = await e.encodeQueries(texts);
    const d = await e.encodePassages(texts);
    texts.forEach((_, i) => {
      const want = Object.entries(ref.sample.weights[i]).sort((x, y) => y[1] - x[1]);
      expect(q[i].terms).toEqual(want.slice(0, 10).map(([t]) => t));
      expect(d[i].terms).toEqual(want.slice(0, 40).map(([t]) => t));
      q[i].weights.forEach((w, j) => expect(Math.abs(w - want[j][1])).toBeLessThan(1e-5));
    });
  });

  it("takes a model directory (model.onnx or onnx/model.onnx, and vocab.txt), refusing one without them", () => {
    expect(spladeSpecFromDir(dir, { docTopK: 5 })).toEqual({ type: "splade-onnx", model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), docTopK: 5 });
    const optimum = mkdtempSync(join(tmpdir(), "tartan-splade-dir-"));
    mkdirSync(join(optimum, "onnx"));
    copyFileSync(join(dir, "model.onnx"), join(optimum, "onnx", "model.onnx"));
    expect(() => spladeSpecFromDir(optimum)).toThrow(`SPLADE encoder directory ${optimum}: no vocab.txt (the WordPiece vocabulary the model's logits are columns of)`);
    copyFileSync(join(dir, "vocab.txt"), join(optimum, "vocab.txt"));
    expect(spladeSpecFromDir(optimum).model).toBe(join(optimum, "onnx", "model.onnx"));
    const empty = mkdtempSync(join(tmpdir(), "tartan-splade-dir-"));
    expect(() => spladeSpecFromDir(empty)).toThrow(`SPLADE encoder directory ${empty}: no model.onnx (nor onnx/model.onnx)`);
    expect(() => spladeSpecFromDir(join(empty, "nope"))).toThrow(`SPLADE encoder directory ${join(empty, "nope")}: cannot read (no such file)`);
  });

  it("refuses a graph whose output is not logits, a vocabulary of another size, and bad spec fields", async () => {
    await expect(load({ model: join(dir, "bad-output.onnx") })).rejects.toThrow(`model file ${join(dir, "bad-output.onnx")}: the graph has no output "logits" (outputs: pooler_output)`);
    await expect(load({ model: join(dir, "bad-output.onnx"), output: "pooler_output" })).rejects.toThrow(`model file ${join(dir, "bad-output.onnx")}: output "pooler_output" has shape [batch, 32]; a masked-language model's logits [batch, sequence, vocabulary] are needed`);
    const short = join(mkdtempSync(join(tmpdir(), "tartan-splade-vocab-")), "vocab.txt");
    writeFileSync(short, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n");
    await expect(load({ vocab: short })).rejects.toThrow(`model file ${join(dir, "model.onnx")}: output "logits" has ${ref.vocabSize} columns, vocab file ${short} 6 tokens`);
    const spaced = join(mkdtempSync(join(tmpdir(), "tartan-splade-vocab-")), "vocab.txt");
    writeFileSync(spaced, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nnew york\n");
    await expect(load({ vocab: spaced })).rejects.toThrow(`vocab file ${spaced}:6: term "new york" has a space, tab or line break`);
    await expect(load({ model: join(dir, "missing.onnx") })).rejects.toThrow(`SPLADE encoder: model file ${join(dir, "missing.onnx")}: cannot read (no such file)`);
    expect(() => checkSpladeSpec({ type: "splade-onnx", model: "m", vocab: "v", topK: 3 }, "manifest.json: params.encoder")).toThrow('manifest.json: params.encoder: unknown field "topK"');
    expect(() => checkSpladeSpec({ type: "splade-onnx", model: "m", vocab: "v", docTopK: 0 }, "--params")).toThrow("--params: field docTopK must be an integer of at least 1, not 0");
    expect(() => checkSpladeSpec({ type: "bert-onnx", model: "m", vocab: "v" }, "--params")).toThrow('--params: field type: "bert-onnx" is not an impact encoder type (known: splade-onnx)');
  });
});
