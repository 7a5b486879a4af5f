// The native kernels (native/kernels.c through src/retrieval/dense/native.ts) against the portable paths:
// on every path this CPU has (AVX-512BW, AVX2, portable C), the fast-scan sums equal the JavaScript sums
// (tails of pairs the wide paths leave, the largest sums), and RaBitQ's first pass returns exactly the
// positions, in the same order, that the WebAssembly/TypeScript path returns, with and without the error
// bound's pruning; a whole search gives identical hits both ways; bad arguments are refused. Skipped, and
// listed, where the addon is not built (npm install builds it).

import { afterAll, describe, expect, it } from "vitest";
import { FS_BLOCK, FastScanMemory, fastScanJs } from "../../../src/retrieval/dense/fastscan.js";
import { nativeKernels, useNativeKernels, denseKernelsInUse } from "../../../src/retrieval/dense/native.js";
import { Int8RowMemory } from "../../../src/retrieval/dense/int8-kernel.js";
import { Quantizer } from "../../../src/retrieval/dense/quantizer.js";
import { layout, memorySource } from "./codes/contract.js";
import { clustered, rng } from "./clustered.js";
import { noteSkip } from "../../support/skips.js";

const native = nativeKernels();
if (native === null) noteSkip(import.meta.url, `the native kernels are not built here: ${denseKernelsInUse()}`);
const best = native?.path() ?? "c";
const paths = (["c", "avx2", "avx512"] as const).filter((p) => p === "c" || (p === "avx2" ? best !== "c" : best === "avx512"));
afterAll(() => {
  native?.usePath(best as "c");
  useNativeKernels(true);
});

const bytes = (n: number, seed: number, max = 256): Uint8Array => {
  const r = rng(seed);
  return Uint8Array.from({ length: n }, () => Math.floor((r() + 0.5) * max));
};

describe.skipIf(native === null)("native kernels", () => {
  it(`run on ${best} here`, () => {
    expect(["avx512", "avx2", "c"]).toContain(best);
    expect(denseKernelsInUse()).toBe(`native ${best}`);
  });

  for (const p of paths)
    for (const [pairs, blocks] of [[1, 1], [3, 5], [4, 3], [7, 17], [96, 40], [97, 9], [98, 2]] as const)
      it(`${p}: ${pairs} pairs, ${blocks} blocks: the sums equal the JavaScript sums`, () => {
        expect(native!.usePath(p)).toBe(p);
        const codes = bytes((blocks + 2) * pairs * FS_BLOCK, pairs * 17 + blocks);
        const lut = bytes(pairs * 32, pairs + 3, 128);
        const out = new Uint16Array(blocks * FS_BLOCK);
        native!.scan(codes, 2 * pairs * FS_BLOCK, blocks, pairs, lut, out);
        expect(Array.from(out)).toEqual(Array.from(fastScanJs(codes, 2 * pairs * FS_BLOCK, blocks, pairs, lut)));
      });

  for (const p of paths)
    it(`${p}: sums 258 pairs of 127 + 127 without overflow`, () => {
      native!.usePath(p);
      const out = new Uint16Array(2 * FS_BLOCK);
      native!.scan(new Uint8Array(2 * 258 * FS_BLOCK).fill(0xff), 0, 2, 258, new Uint8Array(258 * 32).fill(127), out);
      expect(Array.from(out)).toEqual(new Array(32).fill(258 * 254));
    });

  it("FastScanMemory.scan gives the same sums with and without the addon", () => {
    const pairs = 24;
    const blocks = 30;
    const codes = bytes(blocks * pairs * FS_BLOCK, 9);
    const lut = bytes(pairs * 32, 10, 128);
    const sums: number[][] = [];
    for (const on of [true, false]) {
      useNativeKernels(on);
      const mem = FastScanMemory.create(blocks, pairs);
      mem.codes().set(codes);
      mem.setTable(lut);
      sums.push(Array.from(mem.scan(3, 20)));
    }
    useNativeKernels(true);
    expect(sums[0]).toEqual(sums[1]);
    expect(sums[0]).toEqual(Array.from(fastScanJs(codes, 3 * pairs * FS_BLOCK, 20, pairs, lut)));
  });

  describe("RaBitQ's first pass", () => {
    const DIM = 256;
    const N = 6000;
    const xs = clustered(N, DIM, 40, 21);
    const q = Quantizer.train(xs.subarray(0, 3000 * DIM), DIM, { quantize: "rabitq", k1: 4, k2: 4 }, N);
    const lists = q.assign(xs);
    const { offsets, codes: laid } = layout(q, xs);
    const open = (on: boolean) => {
      useNativeKernels(on);
      const o = q.codes.openLists(memorySource(laid, offsets, q.codeBytes, 1), q);
      return o;
    };
    const js = open(false);
    const nat = open(true);

    for (const p of paths)
      it(`${p}: the same positions in the same order as the portable path, with and without pruning`, () => {
        native!.usePath(p);
        const r = rng(5);
        let pruned = 0;
        for (let t = 0; t < 30; t++) {
          const row = Math.floor((r() + 0.5) * N) % N;
          const qs = new Float32Array(DIM);
          for (let d = 0; d < DIM; d++) qs[d] = xs[row * DIM + d] + 0.3 * r();
          const probe = Int32Array.from({ length: 1 + (t % 6) }, (_, j) => (lists[row] + j * 5) % q.lists);
          let total = 0;
          for (const l of probe) total += offsets[l + 1] - offsets[l];
          for (const [rerank, k] of [[Math.min(total, 150), undefined], [Math.min(total, 150), 10], [Math.max(1, total + 5), 3]] as const) {
            const s = { qs, qo: 0, lists: probe, total, refine: rerank, refineFactor: 1, k };
            useNativeKernels(false);
            const a = js.candidates(s);
            useNativeKernels(true);
            const b = nat.candidates(s);
            expect(Array.from(b)).toEqual(Array.from(a));
            if (k !== undefined && k < rerank) pruned += Math.min(rerank, total) - b.length;
          }
        }
        expect(pruned).toBeGreaterThan(0);
      });
  });

  for (const p of paths)
    it(`${p}: int8 rows score as the WebAssembly gathering kernel scores them, and as plain integer sums`, () => {
      native!.usePath(p);
      for (const dim of [16, 48, 768]) {
        const rows = 300;
        const bytesOf = bytes(rows * dim, dim);
        const r = rng(dim + 1);
        const w = Float32Array.from({ length: dim }, () => r());
        const at = Float64Array.from({ length: 120 }, (_, j) => (j * 37 + dim) % rows);
        const scores: number[][] = [];
        for (const on of [false, true]) {
          useNativeKernels(on);
          const mem = Int8RowMemory.create(rows, dim, 1, 64);
          mem.bytes().set(bytesOf);
          mem.setQuery(w, 0.25);
          for (const [i, n] of [[0, 64], [64, 56], [5, 1]]) scores.push(Array.from(mem.scoreAt(at, i, n)));
        }
        useNativeKernels(true);
        expect(scores.slice(3)).toEqual(scores.slice(0, 3));
        // the integer sums themselves: a native call against a loop over the signed bytes
        const wInt = Int16Array.from({ length: dim }, (_, d) => ((d * 7919) % 2001) - 1000);
        const out = new Int32Array(at.length);
        native!.int8At(new Int8Array(bytesOf.buffer), at, 0, at.length, dim, wInt, out);
        const signed = new Int8Array(bytesOf.buffer);
        const expected = Array.from(at, (row) => {
          let sum = 0;
          for (let d = 0; d < dim; d++) sum += signed[row * dim + d] * wInt[d];
          return sum;
        });
        expect(Array.from(out)).toEqual(expected);
      }
    });

  it("refuses arguments of the wrong type or out of range", () => {
    expect(() => native!.int8At(new Int8Array(32), Float64Array.of(2), 0, 1, 16, new Int16Array(16), new Int32Array(1))).toThrow("int8At: a row out of range");
    expect(() => native!.int8At(new Int8Array(32), Float64Array.of(0), 0, 2, 16, new Int16Array(16), new Int32Array(2))).toThrow("int8At's arguments are out of range");
    const out = new Uint16Array(16);
    expect(() => native!.scan(new Uint8Array(15), 0, 1, 1, new Uint8Array(32), out)).toThrow("scan's arguments are out of range");
    expect(() => native!.scan(new Uint8Array(16), 0, 1, 1, new Uint8Array(31), out)).toThrow("out of range");
    expect(() => native!.scan(new Uint8Array(16), 0, 1, 1, new Uint8Array(32), new Uint32Array(16) as unknown as Uint16Array)).toThrow("argument out has the wrong type");
    const f64 = (n: number) => new Float64Array(n);
    const params = Float64Array.of(1, 1, 0, 1, 0, 4, 0);
    expect(() => native!.rabitq(new Uint8Array(16), new Float32Array(32), Float64Array.of(0, 1), Float64Array.of(0, 16), Int32Array.of(1), f64(1), new Uint8Array(32), params, f64(4))).toThrow("a probed list out of range");
    expect(() => native!.rabitq(new Uint8Array(15), new Float32Array(32), Float64Array.of(0, 1), Float64Array.of(0, 16), Int32Array.of(0), f64(1), new Uint8Array(32), params, f64(4))).toThrow("rabitq's arguments are out of range");
    expect(() => native!.usePath("sse" as "c")).toThrow("usePath: avx512, avx2 or c");
  });
});
