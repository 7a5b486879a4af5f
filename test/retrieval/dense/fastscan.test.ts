// The fast scan of 4-bit PQ codes: the WebAssembly kernel against its JavaScript sums (every block count
// and pair count tried, the largest sums included), the block layout against row-major codes, the byte
// table against the float table it stands for, and the 4-bit encoder against a plain nearest-centroid
// search.

import { describe, expect, it } from "vitest";
import { FS_BLOCK, FastScanMemory, blockStarts, fastScanJs, quantizeTable, toBlocks } from "../../../src/retrieval/dense/fastscan.js";
import { PqEncoder } from "../../../src/retrieval/dense/pq-encode.js";
import { rng } from "./clustered.js";

const bytes = (n: number, seed: number, max = 256): Uint8Array => {
  const r = rng(seed);
  return Uint8Array.from({ length: n }, () => Math.floor((r() + 0.5) * max));
};

describe("fast-scan kernel", () => {
  for (const [pairs, blocks] of [[1, 1], [4, 3], [96, 256], [7, 17]] as const) {
    it(`${pairs} pairs of sub-spaces, ${blocks} blocks: the kernel's sums equal the JavaScript sums`, () => {
      const mem = FastScanMemory.create(blocks + 5, pairs);
      const codes = bytes((blocks + 5) * pairs * FS_BLOCK, pairs * 31 + blocks);
      mem.codes().set(codes);
      const lut = bytes(pairs * 32, pairs, 128);
      mem.setTable(lut);
      expect(Array.from(mem.scan(0, blocks))).toEqual(Array.from(fastScanJs(codes, 0, blocks, pairs, lut)));
      // a range that starts past the first block
      expect(Array.from(mem.scan(5, blocks))).toEqual(Array.from(fastScanJs(codes, 5 * pairs * FS_BLOCK, blocks, pairs, lut)));
    });
  }

  it("sums the largest table values without overflow: 258 pairs of 127 + 127", () => {
    const pairs = 258;
    const mem = FastScanMemory.create(2, pairs);
    mem.codes().fill(0xff);
    mem.setTable(new Uint8Array(pairs * 32).fill(127));
    expect(Array.from(mem.scan(0, 2))).toEqual(new Array(32).fill(258 * 254));
  });

  it("refuses a table of the wrong size and too many blocks at a time", () => {
    const mem = FastScanMemory.create(300, 2);
    expect(() => mem.setTable(new Uint8Array(63))).toThrow("a table of 64 bytes expected, not 63");
    expect(() => mem.scan(0, 257)).toThrow("257 blocks at a time: at most 256");
  });
});

describe("fast-scan layout and table", () => {
  it("lays row-major codes out in zero-padded blocks of 16 that score as the rows do", () => {
    const codeBytes = 3;
    const sizes = [37, 0, 16, 1];
    const offsets = Float64Array.from([0, 37, 37, 53, 54]);
    expect(Array.from(blockStarts(offsets))).toEqual([0, 3, 3, 4, 5]);
    const rows = bytes(54 * codeBytes, 5);
    const starts = blockStarts(offsets);
    const dst = new Uint8Array(starts[4] * codeBytes * FS_BLOCK).fill(9);
    for (let l = 0; l < sizes.length; l++) toBlocks(rows, offsets[l] * codeBytes, sizes[l], codeBytes, dst, starts[l] * codeBytes * FS_BLOCK);
    const lut = bytes(codeBytes * 32, 6, 128);
    const sums = fastScanJs(dst, 0, starts[4], codeBytes, lut);
    const rowSum = (i: number): number => {
      let v = 0;
      for (let p = 0; p < codeBytes; p++) v += lut[p * 32 + (rows[i * codeBytes + p] & 15)] + lut[p * 32 + 16 + (rows[i * codeBytes + p] >> 4)];
      return v;
    };
    for (let l = 0; l < sizes.length; l++) for (let i = 0; i < sizes[l]; i++) expect(sums[starts[l] * FS_BLOCK + i]).toBe(rowSum(offsets[l] + i));
    // padding codes are zero codes: each sums the tables' first entries
    let zero = 0;
    for (let p = 0; p < codeBytes; p++) zero += lut[p * 32] + lut[p * 32 + 16];
    expect(sums[37]).toBe(zero);
    expect(sums[47]).toBe(zero);
  });

  it("quantizes a float table to bytes 0 … 127 whose sums stand for the float sums within m·delta/2", () => {
    const m = 24;
    const r = rng(11);
    const f = Float32Array.from({ length: m * 16 }, () => r() * (1 + Math.abs(r())));
    const { table, delta, bias } = quantizeTable(f, m);
    expect(Math.max(...table)).toBe(127);
    for (let s = 0; s < m; s++) expect(Math.min(...table.subarray(s * 16, s * 16 + 16))).toBe(0);
    const codes = bytes(500 * m, 12, 16);
    let worst = 0;
    for (let i = 0; i < 500; i++) {
      let exact = 0;
      let sum = 0;
      for (let s = 0; s < m; s++) {
        exact += f[s * 16 + codes[i * m + s]];
        sum += table[s * 16 + codes[i * m + s]];
      }
      worst = Math.max(worst, Math.abs(bias + delta * sum - exact));
    }
    expect(worst).toBeLessThanOrEqual((m * delta) / 2 + 1e-6);
    expect(worst).toBeGreaterThan(0);
  });
});

describe("4-bit PQ encoder", () => {
  it("gives each sub-space its nearest of 16 centroids, two codes a byte, low nibble first, ties to the lower", () => {
    const dim = 24;
    const m = 12;
    const dsub = dim / m;
    const next = rng(77);
    const cb = Float32Array.from({ length: m * 16 * dsub }, () => next() - 0.5);
    for (let s = 0; s < m; s++) for (let d = 0; d < dsub; d++) cb[(s * 16 + 13) * dsub + d] = cb[(s * 16 + 4) * dsub + d];
    const centroids = Float32Array.from({ length: 2 * dim }, () => next() * 0.2);
    const n = 300;
    const xs = new Float32Array(n * dim);
    const lists = Int32Array.from({ length: n }, (_, i) => i % 2);
    for (let i = 0; i < n; i++) {
      for (let d = 0; d < dim; d++) xs[i * dim + d] = centroids[lists[i] * dim + d] + next() - 0.5;
      if (i % 25 === 0) for (let s = 0; s < m; s++) for (let d = 0; d < dsub; d++) xs[i * dim + s * dsub + d] = centroids[lists[i] * dim + s * dsub + d] + cb[(s * 16 + 13) * dsub + d];
    }
    const codes = new PqEncoder(dim, m, cb, true, 16).encode(xs, lists, centroids);
    expect(codes.length).toBe(n * (m / 2));
    let agree = 0;
    for (let i = 0; i < n; i++)
      for (let s = 0; s < m; s++) {
        const got = (codes[i * (m / 2) + (s >> 1)] >> ((s & 1) * 4)) & 15;
        let best = Infinity;
        let arg = 0;
        for (let c = 0; c < 16; c++) {
          let d2 = 0;
          for (let d = 0; d < dsub; d++) d2 += (Math.fround(xs[i * dim + s * dsub + d] - centroids[lists[i] * dim + s * dsub + d]) - cb[(s * 16 + c) * dsub + d]) ** 2;
          if (d2 < best) {
            best = d2;
            arg = c;
          }
        }
        if (arg === got) agree++;
        if (i % 25 === 0) expect(got).toBe(4);
      }
    expect(agree / (n * m)).toBeGreaterThan(0.999);
  });
});
