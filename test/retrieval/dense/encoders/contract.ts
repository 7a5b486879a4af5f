// The contract every encoder type keeps, declared once and run on each registered type
// (./contract.test.ts walks ENCODERS, ./cases.ts says how each is set up): created through its
// descriptor from a spec it records back, it gives rows of its dimension (unit length), the same
// vectors twice, and the same vectors in one batch as one text at a time, for queries and passages.

import { afterAll, beforeAll, expect, it } from "vitest";
import { createEncoder, ENCODERS, type Encoder, type EncoderSpec } from "../../../../src/retrieval/dense/encoder.js";

/** One encoder type's contract case: the spec to create it from and the dimension it gives. */
export interface EncoderCase {
  spec: EncoderSpec;
  dim: number;
  /** Largest difference allowed between a batch's row and the text encoded alone (padding, batched kernels). */
  tolerance: number;
  /** Stops what the case started (a server). */
  close?: () => Promise<void>;
}

/** Texts the tiny test models have every word of; any encoder reads them. */
export const TEXTS = ["the cat sat", "the dog sat on the mat", "mat", "the the the dog", "sat cat"];

function maxDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

/** Declares the encoder contract for the encoder type called `name`, set up by `setup`. */
export function encoderContract(name: string, setup: () => Promise<EncoderCase>): void {
  let c: EncoderCase;
  let e: Encoder;
  let passages: Float32Array;
  beforeAll(async () => {
    c = await setup();
    expect(c.spec.type).toBe(name);
    e = await createEncoder(c.spec);
    passages = await e.encodePassages(TEXTS);
  }, 120_000);
  afterAll(async () => {
    await e?.close();
    await c?.close?.();
  });

  it("is created through its descriptor and records its spec (plain JSON)", async () => {
    expect(e.spec.type).toBe(name);
    expect(JSON.parse(JSON.stringify(e.spec))).toEqual(e.spec);
    const other = await ENCODERS.get(name).create(c.spec);
    expect(other.spec).toEqual(e.spec);
    await other.close();
  });

  it("gives one unit-length row of its dimension per text", async () => {
    expect(e.dim).toBe(c.dim);
    expect(passages.length).toBe(TEXTS.length * c.dim);
    for (let i = 0; i < TEXTS.length; i++) expect(Math.abs(Math.hypot(...passages.subarray(i * c.dim, (i + 1) * c.dim)) - 1)).toBeLessThan(1e-5);
    expect((await e.encodeQueries(TEXTS)).length).toBe(TEXTS.length * c.dim);
  });

  it("gives the same vectors twice", async () => {
    expect(maxDiff(await e.encodePassages(TEXTS), passages)).toBe(0);
    expect(maxDiff(await e.encodeQueries(TEXTS), await e.encodeQueries(TEXTS))).toBe(0);
  });

  it("gives the same vectors in one batch as one text at a time", async () => {
    const alone = new Float32Array(TEXTS.length * c.dim);
    const aloneQ = new Float32Array(TEXTS.length * c.dim);
    for (let i = 0; i < TEXTS.length; i++) {
      alone.set(await e.encodePassages([TEXTS[i]]), i * c.dim);
      aloneQ.set(await e.encodeQueries([TEXTS[i]]), i * c.dim);
    }
    expect(maxDiff(alone, passages)).toBeLessThanOrEqual(c.tolerance);
    expect(maxDiff(aloneQ, await e.encodeQueries(TEXTS))).toBeLessThanOrEqual(c.tolerance);
  });
}
