// Binary codes of a compressed dense index: the sign of the vector minus the sample mean, one bit a
// dimension (bit d of byte d/8, LSB first, zero-padded to a multiple of 16 bytes). A query's probed lists
// are scanned by Hamming distance with the SIMD kernel of ../hamming.ts; the `refine × refineFactor` nearest
// (those at the cut distance taken in list order) are refined to `refine` by an asymmetric score (the
// query's float values against the code's bits: one table of 256 sums per code byte). The codes need no
// trained state but the sample mean, which quantizer.bin holds for every code type.

import { HammingMemory, TABLE_CHUNK, type HammingShare } from "../hamming.js";
import { TopHeap } from "../top-heap.js";
import type { CoarseLists, Codec, CodeType, ListCodes, ListScan, ListSource } from "./code-type.js";

/** Bytes of a binary code of `dim` dimensions. */
export function binaryCodeBytes(dim: number): number {
  return Math.ceil(dim / 128) * 16;
}

/** Sign bits of `x − mean` (bit d of byte d/8, LSB first) set into `out` at `oo` (zeroed by the caller). */
export function binaryCode(mean: Float32Array, x: Float32Array, xo: number, out: Uint8Array, oo: number): void {
  const dim = mean.length;
  for (let d = 0; d < dim; d++) if (x[xo + d] > mean[d]) out[oo + (d >> 3)] |= 1 << (d & 7);
}

/**
 * The asymmetric refinement of binary codes for one query: entry b × 256 + v is the sum of (q − mean)
 * over the set bits of value v in code byte b, so a code's score is the sum of its bytes' entries.
 */
export function binaryTable(mean: Float32Array, q: Float32Array, qo: number): Float32Array {
  const dim = mean.length;
  const cb = binaryCodeBytes(dim);
  const table = new Float32Array(cb * 256);
  for (let b = 0; b < cb; b++) {
    for (let bit = 0; bit < 8; bit++) {
      const d = b * 8 + bit;
      const w = d < dim ? q[qo + d] - mean[d] : 0;
      const step = 1 << bit;
      for (let v = 0; v < 256; v++) if (v & step) table[b * 256 + v] += w;
    }
  }
  return table;
}

class BinaryLists implements ListCodes {
  constructor(
    private readonly memory: HammingMemory,
    private readonly offsets: Float64Array,
    private readonly coarse: CoarseLists,
  ) {}

  share(): HammingShare {
    return this.memory.share();
  }

  candidates(scan: ListScan): Float64Array {
    const { qs, qo, lists, total, refine, refineFactor } = scan;
    const memory = this.memory;
    const cb = memory.codeBytes;
    const code = new Uint8Array(cb);
    binaryCode(this.coarse.mean, qs, qo, code, 0);
    memory.setQuery(code);
    const bits = cb * 8;
    const hist = new Int32Array(bits + 1);
    const dist = new Uint16Array(total);
    const pos = new Float64Array(total);
    let t = 0;
    for (const l of lists) {
      const o0 = this.offsets[l];
      const len = this.offsets[l + 1] - o0;
      if (len === 0) continue;
      const d = memory.scan(o0, len);
      for (let j = 0; j < len; j++) {
        dist[t] = d[j];
        pos[t++] = o0 + j;
        hist[d[j]]++;
      }
    }
    // the `depth` nearest by Hamming distance (those at the cut distance taken in list order) ...
    const depth = Math.min(total, refine * refineFactor);
    let cut = 0;
    let below = 0;
    while (below + hist[cut] < depth) below += hist[cut++];
    let atCut = depth - below;
    const near = new Float64Array(depth);
    let s = 0;
    for (let j = 0; j < total; j++) {
      const d = dist[j];
      if (d < cut || (d === cut && atCut-- > 0)) near[s++] = pos[j];
    }
    if (depth <= refine) return near;
    // ... then the best `refine` of those by the query's float values against the code's bits
    // (asymmetric: Σ (q − mean)_d over the set bits, one table of 256 sums per code byte)
    memory.setTable(binaryTable(this.coarse.mean, qs, qo));
    const heap = new TopHeap(refine);
    for (let j0 = 0; j0 < depth; j0 += TABLE_CHUNK) {
      const n = Math.min(TABLE_CHUNK, depth - j0);
      const sums = memory.tableScores(near, j0, n);
      for (let j = 0; j < n; j++) heap.push(sums[j], near[j0 + j]);
    }
    return heap.items();
  }
}

class BinaryCodec implements Codec {
  readonly kind = "binary";
  readonly codeBytes: number;
  readonly header = { pqM: 0 };
  readonly stored = new Float32Array(0);

  constructor(readonly dim: number) {
    this.codeBytes = binaryCodeBytes(dim);
  }

  encode(xs: Float32Array, _lists: Int32Array, coarse: CoarseLists): Uint8Array {
    const n = xs.length / this.dim;
    const out = new Uint8Array(n * this.codeBytes);
    for (let i = 0; i < n; i++) binaryCode(coarse.mean, xs, i * this.dim, out, i * this.codeBytes);
    return out;
  }

  openLists(src: ListSource, coarse: CoarseLists): ListCodes {
    const memory = HammingMemory.create(src.count, this.codeBytes, Math.max(1, src.maxList), src.slots);
    src.read(memory.codes());
    return new BinaryLists(memory, src.offsets, coarse);
  }

  attachLists(share: unknown, slot: number, offsets: Float64Array, coarse: CoarseLists): ListCodes {
    return new BinaryLists(HammingMemory.attach(share as HammingShare, slot), offsets, coarse);
  }

  refineCodes(qs: Float32Array, qo: number, codes: readonly Uint8Array[], refine: number, coarse: CoarseLists): Float64Array {
    // the same sums as the kernel's `tableScores` (float table entries added in double precision, byte by byte)
    const cb = this.codeBytes;
    const lut = binaryTable(coarse.mean, qs, qo);
    const heap = new TopHeap(refine);
    for (let j = 0; j < codes.length; j++) {
      const code = codes[j];
      let v = 0;
      for (let b = 0; b < cb; b++) v += lut[b * 256 + code[b]];
      heap.push(v, j);
    }
    return heap.items();
  }
}

/** Binary codes: 1 bit a dimension, Hamming distance, refined by an asymmetric table. */
export const binaryCodes: CodeType<"binary"> = {
  name: "binary",
  version: 1,
  summary: "sign bits of the vector minus the sample mean (1 bit a dimension), Hamming distance, refined by the query's values",
  train: (t) => new BinaryCodec(t.coarse.dim),
  storedFloats: () => 0,
  load: (dim) => new BinaryCodec(dim),
};
