// The ONNX encoder on a real (tiny, generated) ONNX model run by onnxruntime-node through
// @huggingface/transformers: the real tokenizer, padding and attention mask, pooling, normalisation and
// prefixes are checked against hidden states computed independently in JavaScript.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OnnxEncoder, isLocalModel } from "../../../src/retrieval/dense/onnx.js";
import { createEncoder } from "../../../src/retrieval/dense/encoder.js";
import { expectedHidden, HIDDEN, ids, meanPool, tinyWeights, unit, writeTinyModel } from "./tiny-encoder.js";

const weights = tinyWeights(1);
let dir = "";
const open: OnnxEncoder[] = [];

async function load(spec: Partial<Parameters<typeof OnnxEncoder.load>[0]>): Promise<OnnxEncoder> {
  const e = await OnnxEncoder.load({ type: "onnx", model: dir, ...spec });
  open.push(e);
  return e;
}

function rows(m: Float32Array, dim: number): number[][] {
  return Array.from({ length: m.length / dim }, (_, i) => Array.from(m.subarray(i * dim, (i + 1) * dim)));
}

function expectClose(got: number[][], want: number[][]): void {
  expect(got.length).toBe(want.length);
  got.forEach((row, i) => row.forEach((x, j) => expect(Math.abs(x - want[i][j])).toBeLessThan(2e-6)));
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tartan-onnx-"));
  writeTinyModel(dir, weights);
});

afterAll(async () => {
  for (const e of open) await e.close();
});

describe("OnnxEncoder on a generated BERT-like ONNX model", () => {
  it("mean-pools under the attention mask and normalises, padded rows included", async () => {
    const e = await load({});
    // one batch: the shorter text is padded to the longer one's length
    const got = rows(await e.encodePassages(["the cat sat", "The dog sat on the mat"]), HIDDEN);
    expect(e.dim).toBe(HIDDEN);
    const want = [unit(meanPool(expectedHidden(weights, ids(["the", "cat", "sat"])))), unit(meanPool(expectedHidden(weights, ids(["the", "dog", "sat", "on", "the", "mat"]))))];
    expectClose(got, want);
    got.forEach((r) => expect(Math.abs(Math.hypot(...r) - 1)).toBeLessThan(1e-6));
  });

  it("takes the [CLS] vector with pooling cls", async () => {
    const e = await load({ pooling: "cls" });
    const got = rows(await e.encodePassages(["the cat sat", "dog"]), HIDDEN);
    expectClose(got, [unit(expectedHidden(weights, ids(["the", "cat", "sat"]))[0]), unit(expectedHidden(weights, ids(["dog"]))[0])]);
  });

  it("leaves vectors unnormalised when asked", async () => {
    const e = await load({ normalize: false });
    const got = rows(await e.encodePassages(["the cat sat"]), HIDDEN);
    const want = meanPool(expectedHidden(weights, ids(["the", "cat", "sat"])));
    expectClose(got, [want]);
    expect(Math.abs(Math.hypot(...got[0]) - 1)).toBeGreaterThan(0.01);
  });

  it("prepends the query and passage prefixes", async () => {
    const e = await load({ queryPrefix: "query: ", passagePrefix: "passage: ", batchSize: 1 });
    const q = rows(await e.encodeQueries(["the dog", "cat"]), HIDDEN);
    const p = rows(await e.encodePassages(["the dog"]), HIDDEN);
    expectClose(q, [unit(meanPool(expectedHidden(weights, ids(["query", ":", "the", "dog"])))), unit(meanPool(expectedHidden(weights, ids(["query", ":", "cat"]))))]);
    expectClose(p, [unit(meanPool(expectedHidden(weights, ids(["passage", ":", "the", "dog"]))))]);
  });

  it("gives the same vectors whatever the batch size", async () => {
    const texts = ["the cat sat", "mat", "the the the dog", "sat cat"];
    const a = await (await load({ batchSize: 1 })).encodePassages(texts);
    const b = await (await load({ batchSize: 4 })).encodePassages(texts);
    expectClose(rows(a, HIDDEN), rows(b, HIDDEN));
  });

  it("loads a relative local path offline and records it absolute", async () => {
    const rel = relative(process.cwd(), dir);
    expect(isLocalModel(rel)).toBe(true);
    expect(isLocalModel("org/not-a-local-dir")).toBe(false);
    const e = (await createEncoder({ type: "onnx", model: rel })) as OnnxEncoder;
    open.push(e);
    expect(e.spec.model).toBe(dir);
    const { env } = await import("@huggingface/transformers");
    expect(env.allowRemoteModels).toBe(false);
  });

  it("fails clearly on a directory without a model", async () => {
    const empty = mkdtempSync(join(tmpdir(), "tartan-onnx-empty-"));
    await expect(OnnxEncoder.load({ type: "onnx", model: empty })).rejects.toThrow();
  });
});
