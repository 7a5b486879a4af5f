// The contract every code type of a compressed dense index keeps (src/retrieval/dense/codes/code-type.ts),
// declared for one registered code type on clustered vectors: its descriptor; its code size; encoding
// that does not depend on how rows are batched (the build's workers split batches); a round trip through
// quantizer.bin and codes.bin; and a scan of the probed lists whose candidates agree with the code type's
// brute-force reference (./references.ts), through the index's shared memory and from a search worker's
// attached copy alike.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { QUANTIZE_KINDS, Quantizer, type QuantizeKind } from "../../../../src/retrieval/dense/quantizer.js";
import { codeTypes } from "../../../../src/retrieval/dense/codes/registry.js";
import type { ListCodes, ListSource } from "../../../../src/retrieval/dense/codes/code-type.js";
import { clustered, rng } from "../clustered.js";
import type { CodeCase } from "./cases.js";
import type { Reference } from "./references.js";

const DIM = 64;
const N = 3000;

/** The rows laid out list by list, as the build lays them out: offsets, and the codes in list order. */
export function layout(q: Quantizer, xs: Float32Array): { offsets: Float64Array; codes: Uint8Array; order: Int32Array } {
  const lists = q.assign(xs);
  const codes = q.encode(xs, lists);
  const offsets = new Float64Array(q.lists + 1);
  for (const l of lists) offsets[l + 1]++;
  for (let l = 0; l < q.lists; l++) offsets[l + 1] += offsets[l];
  const fill = Float64Array.from(offsets.subarray(0, q.lists));
  const cb = q.codeBytes;
  const out = new Uint8Array(codes.length);
  const order = new Int32Array(lists.length);
  for (let i = 0; i < lists.length; i++) {
    const at = fill[lists[i]]++;
    order[at] = i;
    out.set(codes.subarray(i * cb, (i + 1) * cb), at * cb);
  }
  return { offsets, codes: out, order };
}

/** codes.bin as a list source, from memory. */
export function memorySource(codes: Uint8Array, offsets: Float64Array, cb: number, slots: number): ListSource {
  let maxList = 0;
  for (let l = 0; l + 1 < offsets.length; l++) maxList = Math.max(maxList, offsets[l + 1] - offsets[l]);
  const count = offsets[offsets.length - 1];
  return {
    path: "memory",
    count,
    offsets,
    maxList,
    slots,
    read: (into) => {
      const out = into ?? new Uint8Array(count * cb);
      out.set(codes.subarray(0, count * cb));
      return out;
    },
    withRows: (f) => f((from, into) => into.set(codes.subarray(from * cb, from * cb + into.length))),
  };
}

/** Checks `got` against the reference: the same positions, or the best `refine` by score (ties at the cut within eps). */
function agrees(got: Float64Array, ref: Reference, refine: number): void {
  if ("exact" in ref) {
    expect([...got].sort((a, b) => a - b)).toEqual([...ref.exact].sort((a, b) => a - b));
    return;
  }
  const sorted = [...ref.scored].sort((a, b) => b.score - a.score);
  expect(got.length).toBe(Math.min(refine, sorted.length));
  expect(new Set(got).size).toBe(got.length);
  const cut = sorted[got.length - 1].score;
  const score = new Map(sorted.map((s) => [s.pos, s.score]));
  for (const p of got) expect(score.get(p) as number).toBeGreaterThanOrEqual(cut - ref.eps);
  const chosen = new Set(got);
  for (const s of sorted) if (!chosen.has(s.pos)) expect(s.score).toBeLessThanOrEqual(cut + ref.eps);
}

/** Declares the contract's cases for the code type `name`, set up by `c`. */
export function codeTypeContract(name: string, c: CodeCase): void {
  const xs = clustered(N, DIM, 24, 7);
  const sample = xs.subarray(0, 2000 * DIM);
  const q = Quantizer.train(sample, DIM, { quantize: name as QuantizeKind, k1: 4, k2: 4, ...c.params }, N);
  const tmp = mkdtempSync(join(tmpdir(), `tartan-codes-${name}-`));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("is registered with a name, a positive version and a summary, and `--quantize` takes it", () => {
    const d = codeTypes.get(name);
    expect(d.name).toBe(name);
    expect(d.version).toBeGreaterThanOrEqual(1);
    expect(d.summary?.length).toBeGreaterThan(10);
    expect(QUANTIZE_KINDS).toContain(name);
    expect(q.kind).toBe(name);
  });

  it("has its code size, and encodes rows the same in one batch or in parts", () => {
    expect(q.codeBytes).toBe(c.codeBytes(DIM));
    const lists = q.assign(xs);
    const all = q.encode(xs, lists);
    expect(all.length).toBe(N * q.codeBytes);
    const cut = 1234;
    const a = q.encode(xs.subarray(0, cut * DIM), lists.subarray(0, cut));
    const b = q.encode(xs.subarray(cut * DIM), lists.subarray(cut));
    expect(Buffer.concat([a, b]).equals(Buffer.from(all))).toBe(true);
  });

  it("round-trips through quantizer.bin: the same header fields, stored floats and codes", () => {
    const path = join(tmp, "quantizer.bin");
    q.save(path, "b1");
    const back = Quantizer.load(path, "b1");
    expect(back.kind).toBe(name);
    expect(back.codeBytes).toBe(q.codeBytes);
    expect(back.codes.header).toEqual(q.codes.header);
    expect(Array.from(back.codes.stored)).toEqual(Array.from(q.codes.stored));
    const lists = q.assign(xs);
    expect(Buffer.from(back.encode(xs, lists)).equals(Buffer.from(q.encode(xs, lists)))).toBe(true);
    expect(() => Quantizer.load(path, "b2")).toThrow("from build b1, the index is build b2");
    // a build worker's copy is the same quantizer
    const copy = Quantizer.fromParts(structuredClone(q.parts()));
    expect(Buffer.from(copy.encode(xs, lists)).equals(Buffer.from(q.encode(xs, lists)))).toBe(true);
  });

  it("scans the probed lists into the candidates its brute-force reference gives, opened and attached alike", () => {
    const { offsets, codes } = layout(q, xs);
    const opened = q.codes.openLists(memorySource(codes, offsets, q.codeBytes, 2), q);
    const attached: ListCodes = q.codes.attachLists(structuredClone(opened.share()), 1, offsets, q);
    const r = rng(3);
    for (let t = 0; t < 12; t++) {
      const qs = new Float32Array(DIM);
      const row = Math.floor((r() + 0.5) * N) % N;
      for (let d = 0; d < DIM; d++) qs[d] = xs[row * DIM + d] + 0.3 * r();
      const lists = Int32Array.from({ length: 1 + (t % 4) }, (_, j) => (row + j * 5) % q.lists);
      let total = 0;
      for (const l of lists) total += offsets[l + 1] - offsets[l];
      const refine = Math.max(1, Math.floor(total / (t % 2 === 0 ? 9 : 3)));
      const refineFactor = 1 + (t % 3);
      if (total <= refine) continue;
      const ref = c.reference({ q, qs, codes, offsets, lists, refine, refineFactor });
      const got = opened.candidates({ qs, qo: 0, lists, total, refine, refineFactor });
      agrees(got, ref, refine);
      expect(Array.from(attached.candidates({ qs, qo: 0, lists, total, refine, refineFactor }))).toEqual(Array.from(got));
      for (const p of got) expect(lists.some((l) => p >= offsets[l] && p < offsets[l + 1])).toBe(true);
    }
  });
}
