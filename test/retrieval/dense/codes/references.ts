// Brute-force references of the code types, in plain JavaScript and independent of the SIMD kernels: for
// one query and its probed lists, each code type's estimate of every candidate and the rule its scan keeps
// the best by. The contract (./contract.ts) checks a code type's scan against its reference.

import { binaryTable } from "../../../../src/retrieval/dense/codes/binary.js";
import { quantizeTable } from "../../../../src/retrieval/dense/fastscan.js";
import type { Quantizer } from "../../../../src/retrieval/dense/quantizer.js";
import type { PqBooks } from "../../../../src/retrieval/dense/codes/pq.js";
import type { RabitqCodec } from "../../../../src/retrieval/dense/codes/rabitq.js";

/** What a scan must return: `exact` positions (any order), or the best `refine` of `scored` by score (ties within `eps` either way). */
export type Reference = { exact: number[] } | { scored: { pos: number; score: number }[]; eps: number };

/** The query and the index's codes (row-major, list order), as a reference reads them. */
export interface RefInput {
  q: Quantizer;
  qs: Float32Array;
  codes: Uint8Array;
  offsets: Float64Array;
  lists: Int32Array;
  refine: number;
  refineFactor: number;
}

/** A code type's brute-force reference. */
export type ReferenceFn = (r: RefInput) => Reference;

const positions = (r: RefInput): { pos: number; list: number }[] => Array.from(r.lists).flatMap((l) => Array.from({ length: r.offsets[l + 1] - r.offsets[l] }, (_, j) => ({ pos: r.offsets[l] + j, list: l })));
const centroid = (r: RefInput, l: number): number => {
  let s = 0;
  for (let d = 0; d < r.q.dim; d++) s += r.qs[d] * r.q.sub[l * r.q.dim + d];
  return s;
};
const pqLut = (r: RefInput): Float32Array => {
  const b = (r.q.codes as unknown as { books: PqBooks }).books;
  const dsub = b.dim / b.pqM;
  const lut = new Float32Array(b.pqM * b.ksub);
  for (let s = 0; s < b.pqM; s++)
    for (let c = 0; c < b.ksub; c++) {
      let v = 0;
      for (let d = 0; d < dsub; d++) v += r.qs[s * dsub + d] * b.codebooks[(s * b.ksub + c) * dsub + d];
      lut[s * b.ksub + c] = v;
    }
  return lut;
};

/** Binary: the `refine × refineFactor` nearest by Hamming distance (ties in list order), then the best `refine` by Σ (q − mean) over the set bits. */
export const binaryReference: ReferenceFn = (r) => {
  const cb = r.q.codeBytes;
  const code = new Uint8Array(cb);
  for (let d = 0; d < r.q.dim; d++) if (r.qs[d] > r.q.mean[d]) code[d >> 3] |= 1 << (d & 7);
  const pop = (v: number) => v.toString(2).split("1").length - 1;
  const all = positions(r).map((p, order) => {
    let h = 0;
    for (let b = 0; b < cb; b++) h += pop(code[b] ^ r.codes[p.pos * cb + b]);
    return { pos: p.pos, h, order };
  });
  const depth = Math.min(all.length, r.refine * r.refineFactor);
  const near = [...all].sort((a, b) => a.h - b.h || a.order - b.order).slice(0, depth);
  if (depth <= r.refine) return { exact: near.map((x) => x.pos) };
  const table = binaryTable(r.q.mean, r.qs, 0);
  return { scored: near.map((x) => ({ pos: x.pos, score: Array.from({ length: cb }, (_, b) => table[b * 256 + r.codes[x.pos * cb + b]]).reduce((a, v) => a + v, 0) })), eps: 1e-4 };
};

/** 8-bit PQ: q·(list centroid) + Σ_s LUT[s][code_s]. */
export const pqReference: ReferenceFn = (r) => {
  const lut = pqLut(r);
  const m = r.q.codeBytes;
  return { scored: positions(r).map((p) => ({ pos: p.pos, score: centroid(r, p.list) + Array.from({ length: m }, (_, s) => lut[s * 256 + r.codes[p.pos * m + s]]).reduce((a, v) => a + v, 0) })), eps: 1e-4 };
};

/** 4-bit PQ: the byte table's sums (low nibble first), `delta · sum + bias` plus the list's centroid score. */
export const pq4Reference: ReferenceFn = (r) => {
  const cb = r.q.codeBytes;
  const { table, delta, bias } = quantizeTable(pqLut(r), cb * 2);
  return {
    scored: positions(r).map((p) => {
      let sum = 0;
      for (let b = 0; b < cb; b++) {
        const v = r.codes[p.pos * cb + b];
        sum += table[2 * b * 16 + (v & 15)] + table[(2 * b + 1) * 16 + (v >> 4)];
      }
      return { pos: p.pos, score: centroid(r, p.list) + bias + delta * sum };
    }),
    eps: 1e-4,
  };
};

/** int8: every position of the probed lists. */
export const int8Reference: ReferenceFn = (r) => ({ exact: positions(r).map((p) => p.pos) });

/** RaBitQ: ⟨c, q⟩ + F · (bias + delta · Σ) with the rotated query's byte table over the code's nibbles (F read from the row). */
export const rabitqReference: ReferenceFn = (r) => {
  const codec = r.q.codes as unknown as RabitqCodec;
  const cb = codec.codeBytes;
  const bb = codec.bitBytes;
  const { rq } = codec.rotateQuery(r.qs, 0);
  const { table, delta, bias } = quantizeTable(codec.table(rq), bb * 2);
  const view = new DataView(r.codes.buffer, r.codes.byteOffset, r.codes.byteLength);
  return {
    scored: positions(r).map((p) => {
      let sum = 0;
      for (let b = 0; b < bb; b++) {
        const v = r.codes[p.pos * cb + b];
        sum += table[2 * b * 16 + (v & 15)] + table[(2 * b + 1) * 16 + (v >> 4)];
      }
      return { pos: p.pos, score: centroid(r, p.list) + view.getFloat32(p.pos * cb + bb, true) * (bias + delta * sum) };
    }),
    eps: 1e-4,
  };
};
