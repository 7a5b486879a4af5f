// RaBitQ codes of a compressed dense index ("rabitq", Gao & Long, SIGMOD 2024): the residual r = x − c of
// a vector to its list centroid, rotated by a random orthogonal rotation (../rotation.ts) and kept as one
// sign bit a dimension, with two floats a vector:
//   - F = ‖r‖² / ‖Rr‖₁, so that the estimate of ⟨x, q⟩ is ⟨c, q⟩ + F · Σᵢ bᵢ (Rq)ᵢ (bᵢ = ±1): the
//     paper's unbiased estimator ⟨ō, q⟩ / ⟨ō, o⟩ of the residual's direction o, scaled by ‖r‖;
//   - E = ‖r‖ · √(1 − a²) / (a · √(D − 1)), a = ⟨ō, o⟩ = ‖Rr‖₁ / (‖r‖ √D), so that the estimate is within
//     ε₀ · ‖q‖ · E of the truth with high probability (Theorem 3.2: E is the error's scale, which behaves
//     as a normal deviation's; the paper's ε₀ = 1.9 leaves about 6% of estimates outside, so pruning here
//     takes ε₀ = 3.5, about 0.05%).
// Scanning: bits are packed four dimensions a nibble, so a query's look-up table has 16 entries per four
// dimensions (Σ ±(Rq)ᵢ over the nibble's bits) and the fast-scan kernel of ../fastscan.ts sums them, 16
// codes a look-up, from the table quantized to bytes (its rounding adds at most D/4 · delta/2 to Σ, which
// the bound includes). The `refine` best estimates are kept; given the k asked for, a candidate whose upper
// bound is below the k-th best lower bound cannot be among the k best and is dropped, so fewer int8 rows are
// read and rescored. codes.bin rows: D/8 bytes of bits (dimension 8p + j at bit j of byte p), then F and E
// as little-endian float32.

import { FastScanMemory, FS_BLOCK, FS_SCAN_BLOCKS, blockStarts, quantizeTable, type FastScanShare } from "../fastscan.js";
import { Rotation, paddedDim, rotationSigns, ROTATION_ROUNDS } from "../rotation.js";
import { nativeKernels } from "../native.js";
import { TopHeap } from "../top-heap.js";
import { listBase, forEachListChunk, type CoarseLists, type Codec, type CodeType, type ListCodes, type ListScan, type ListSource } from "./code-type.js";

/** The confidence of the error bound used to prune (ε₀ of the paper; about 0.05% of estimates fall outside it). */
export const RABITQ_EPSILON = 3.5;

/** The most padded dimensions the fast-scan kernel's 16-bit sums take (258 pairs of sub-spaces). */
const MAX_PADDED = 2048;

/** The estimator's factor and error bound of one vector's code (its bits are written into the caller's buffer). */
export interface RabitqParts {
  factor: number;
  error: number;
}

/** The trained state: the padded dimension and the rotation. */
export class RabitqCodec implements Codec {
  readonly kind = "rabitq";
  readonly codeBytes: number;
  readonly header: { padDim: number; rounds: number };
  readonly stored: Float32Array;
  readonly rotation: Rotation;
  /** Bytes of a code's bits. */
  readonly bitBytes: number;

  constructor(
    readonly dim: number,
    signs: Float32Array,
  ) {
    const pad = paddedDim(dim);
    if (pad > MAX_PADDED) throw new Error(`rabitq: ${dim} dimensions; the fast-scan kernel takes at most ${MAX_PADDED}`);
    this.rotation = new Rotation(pad, signs);
    this.bitBytes = pad / 8;
    this.codeBytes = this.bitBytes + 8;
    this.header = { padDim: pad, rounds: this.rotation.rounds };
    this.stored = signs;
  }

  /** The code of the residual `r` (`dim` values from `ro`) into `out` at `oo` (zeroed by the caller); `rot` is scratch. */
  encodeResidual(r: Float32Array, ro: number, out: Uint8Array, oo: number, rot: Float32Array): RabitqParts {
    const pad = this.rotation.dim;
    let norm2 = 0;
    for (let d = 0; d < this.dim; d++) norm2 += r[ro + d] * r[ro + d];
    this.rotation.apply(r, ro, this.dim, rot);
    let l1 = 0;
    for (let d = 0; d < pad; d++) {
      const v = rot[d];
      if (v > 0) {
        out[oo + (d >> 3)] |= 1 << (d & 7);
        l1 += v;
      } else l1 -= v;
    }
    if (norm2 === 0 || l1 === 0) return { factor: 0, error: 0 };
    const norm = Math.sqrt(norm2);
    const a = Math.min(1, l1 / (norm * Math.sqrt(pad)));
    return { factor: norm2 / l1, error: (norm * Math.sqrt(Math.max(0, 1 - a * a))) / (a * Math.sqrt(pad - 1)) };
  }

  encode(xs: Float32Array, lists: Int32Array, coarse: CoarseLists): Uint8Array {
    const dim = this.dim;
    const n = lists.length;
    const cb = this.codeBytes;
    const out = new Uint8Array(n * cb);
    const view = new DataView(out.buffer);
    const r = new Float32Array(dim);
    const rot = new Float32Array(this.rotation.dim);
    const sub = coarse.sub;
    for (let i = 0; i < n; i++) {
      const c = lists[i] * dim;
      for (let d = 0; d < dim; d++) r[d] = xs[i * dim + d] - sub[c + d];
      const p = this.encodeResidual(r, 0, out, i * cb, rot);
      view.setFloat32(i * cb + this.bitBytes, p.factor, true);
      view.setFloat32(i * cb + this.bitBytes + 4, p.error, true);
    }
    return out;
  }

  /** The query's rotation (`pad` values) and its norm. */
  rotateQuery(qs: Float32Array, qo: number): { rq: Float32Array; norm: number } {
    const rq = this.rotation.apply(qs, qo, this.dim, new Float32Array(this.rotation.dim));
    let n2 = 0;
    for (let d = 0; d < this.dim; d++) n2 += qs[qo + d] * qs[qo + d];
    return { rq, norm: Math.sqrt(n2) };
  }

  /** The float look-up table of a rotated query: entry s × 16 + c is Σⱼ ±rq[4s + j] (+ where bit j of c is set). */
  table(rq: Float32Array): Float32Array {
    const m = this.rotation.dim / 4;
    const t = new Float32Array(m * 16);
    for (let s = 0; s < m; s++) {
      const a = rq[4 * s];
      const b = rq[4 * s + 1];
      const c2 = rq[4 * s + 2];
      const d = rq[4 * s + 3];
      for (let c = 0; c < 16; c++) t[s * 16 + c] = (c & 1 ? a : -a) + (c & 2 ? b : -b) + (c & 4 ? c2 : -c2) + (c & 8 ? d : -d);
    }
    return t;
  }

  openLists(src: ListSource, coarse: CoarseLists): ListCodes {
    const starts = blockStarts(src.offsets);
    const memory = FastScanMemory.create(starts[coarse.lists], this.bitBytes, src.slots);
    const factors = new Float32Array(new SharedArrayBuffer(src.count * 8));
    readRows(src, this, starts, memory.codes(), factors);
    return new RabitqLists(this, memory, factors, starts, src.offsets, coarse);
  }

  attachLists(share: unknown, slot: number, offsets: Float64Array, coarse: CoarseLists): ListCodes {
    const s = share as RabitqShare;
    return new RabitqLists(this, FastScanMemory.attach(s.memory, slot), new Float32Array(s.factors), blockStarts(offsets), offsets, coarse);
  }
}

/** What a search worker attaches with: the fast-scan blocks and the factors, both in shared memory. */
interface RabitqShare {
  memory: FastScanShare;
  factors: SharedArrayBuffer;
}

class RabitqLists implements ListCodes {
  constructor(
    private readonly codec: RabitqCodec,
    private readonly memory: FastScanMemory,
    /** F and E of position p at 2p and 2p + 1. */
    private readonly factors: Float32Array,
    private readonly starts: Float64Array,
    private readonly offsets: Float64Array,
    private readonly coarse: CoarseLists,
  ) {}

  share(): RabitqShare {
    return { memory: this.memory.share(), factors: this.factors.buffer as SharedArrayBuffer };
  }

  candidates(s: ListScan): Float64Array {
    const { qs, qo, lists, refine } = s;
    const k = s.k ?? 0;
    const { memory, starts, offsets, factors, codec } = this;
    const { rq, norm } = codec.rotateQuery(qs, qo);
    const m = codec.rotation.dim / 4;
    const { table, delta, bias } = quantizeTable(codec.table(rq), m);
    const eps = RABITQ_EPSILON * norm;
    const tableErr = (m * delta) / 2;
    const native = nativeKernels();
    if (native !== null) {
      // the same first pass in the native addon (../native.ts): the same positions in the same order
      const bases = new Float64Array(lists.length);
      for (let i = 0; i < lists.length; i++) bases[i] = listBase(this.coarse, s, i);
      const out = new Float64Array(refine);
      const params = Float64Array.of(codec.bitBytes, delta, bias, eps, tableErr, refine, k);
      const n = native.rabitq(memory.codes(), factors, starts, offsets, lists, bases, table, params, out);
      return out.subarray(0, n);
    }
    memory.setTable(table);
    const heap = new TopHeap(refine);
    const bound = k > 0 && k < refine ? new TopHeap(k) : null;
    // the heaps' floors, kept here and refreshed after each push (the getter is not free in the hot loop)
    let floor = -Infinity;
    let lbFloor = -Infinity;
    for (let i = 0; i < lists.length; i++) {
      const l = lists[i];
      const base = listBase(this.coarse, s, i);
      const o0 = offsets[l];
      const len = offsets[l + 1] - o0;
      const b0 = starts[l];
      const nb = starts[l + 1] - b0;
      for (let j0 = 0; j0 < nb; j0 += FS_SCAN_BLOCKS) {
        const kb = Math.min(FS_SCAN_BLOCKS, nb - j0);
        const sums = memory.scan(b0 + j0, kb);
        const first = j0 * FS_BLOCK;
        const count = Math.min(kb * FS_BLOCK, len - first);
        const p0 = o0 + first;
        if (bound === null) {
          for (let j = 0; j < count; j++) {
            const est = base + factors[2 * (p0 + j)] * (bias + delta * sums[j]);
            if (est > floor) {
              heap.push(est, p0 + j);
              floor = heap.floor;
            }
          }
          continue;
        }
        for (let j = 0; j < count; j++) {
          const p = p0 + j;
          const f = factors[2 * p];
          const est = base + f * (bias + delta * sums[j]);
          const err = eps * factors[2 * p + 1] + f * tableErr;
          if (est - err > lbFloor) {
            bound.push(est - err, p);
            lbFloor = bound.floor;
          }
          if (est > floor && est + err >= lbFloor) {
            heap.push(est, p);
            floor = heap.floor;
          }
        }
      }
    }
    const items = heap.items();
    if (bound === null) return items;
    // drop what cannot be among the k best: its upper bound is below the k-th best lower bound
    const values = heap.values();
    const kept: number[] = [];
    for (let i = 0; i < items.length; i++) {
      const p = items[i];
      if (values[i] + eps * factors[2 * p + 1] + factors[2 * p] * tableErr >= lbFloor) kept.push(p);
    }
    return Float64Array.from(kept);
  }
}

/** Reads codes.bin's rows (list by list) into the fast-scan blocks (the bits) and the factors array. */
function readRows(src: ListSource, codec: RabitqCodec, starts: Float64Array, dst: Uint8Array, factors: Float32Array): void {
  const offsets = src.offsets;
  const cb = codec.codeBytes;
  const pairs = codec.bitBytes;
  forEachListChunk(src, cb, (rows, from, to) => {
    const view = new DataView(rows.buffer, rows.byteOffset, rows.byteLength);
    for (let t = from; t < to; t++) {
      const n = offsets[t + 1] - offsets[t];
      const at = starts[t] * pairs * FS_BLOCK;
      dst.fill(0, at, at + Math.ceil(n / FS_BLOCK) * pairs * FS_BLOCK);
      for (let i = 0; i < n; i++) {
        const row = (offsets[t] - offsets[from] + i) * cb;
        const d = at + (i >> 4) * pairs * FS_BLOCK + (i & 15);
        for (let b = 0; b < pairs; b++) dst[d + b * FS_BLOCK] = rows[row + b];
        const p = offsets[t] + i;
        factors[2 * p] = view.getFloat32(row + pairs, true);
        factors[2 * p + 1] = view.getFloat32(row + pairs + 4, true);
      }
    }
  });
}

/** RaBitQ: one bit a dimension after a random rotation, with an unbiased estimator and its error bound. */
export const rabitqCodes: CodeType<"rabitq"> = {
  name: "rabitq",
  version: 1,
  summary: "RaBitQ: the residual's signs after a random rotation (one bit a dimension), an unbiased estimate with an error bound, scanned by the fast-scan kernel",
  train: (t) => new RabitqCodec(t.coarse.dim, rotationSigns(paddedDim(t.coarse.dim), t.seed + 104729)),
  storedFloats: (dim, h) => (h.rounds as number) * paddedDim(dim),
  load: (dim, h, stored) => {
    if (h.padDim !== paddedDim(dim) || h.rounds !== ROTATION_ROUNDS) throw new Error(`rabitq: quantizer.bin's padDim ${String(h.padDim)} and rounds ${String(h.rounds)} do not fit ${dim} dimensions`);
    return new RabitqCodec(dim, stored);
  },
};
