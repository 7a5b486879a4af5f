// The fast scan of 4-bit product-quantization codes ("pq4", ./quantizer.ts): each sub-space has 16
// centroids, so one query's look-up table for a sub-space is 16 bytes, which fits one SIMD register, and
// `i8x16.swizzle` looks up 16 codes at once (the "fast scan" of André et al. and of FAISS's IVF-PQ fast
// scan; this is our own WebAssembly kernel, assembled from its opcodes like ./hamming.ts).
//   - Codes live in blocks of 16: for each pair of sub-spaces (2p, 2p+1) a block holds 16 bytes, byte j
//     being code j's nibbles `c[2p] | c[2p+1] << 4` (the same packing as a row-major code's byte p, so a
//     block is a byte transpose of 16 codes). A list's codes are padded with zero codes to whole blocks.
//   - The table is quantized to bytes: entry (s, c) = round((f[s][c] − min_s f[s]) / delta), 0 … 127,
//     one `delta` for all sub-spaces, so a pair's two look-ups add up in a byte without overflow and the
//     pair sums are widened to 16 bits (exact up to 258 pairs). A code's score is
//     `bias + delta · sum`, bias = Σ_s min_s.
// `scan(codes, blocks, pairs, lut, out)` writes the 16-bit sums of `blocks` blocks in code order; the
// kernel's sums equal `fastScanJs` (tested). `FastScanMemory` holds every list's blocks in shared memory
// (worker threads attach to it), with one scratch slot per scanning thread for the table and the sums.

import { nativeKernels, type NativeKernels } from "./native.js";
import { oneFunctionModule, sharedKernelMemory, uleb, wasmApi, type WasmMemory } from "./simd.js";
import {
  BLOCK, LOOP, END, BR, BR_IF, VOID, GET, SET, I32_GE_U, I32_ADD, I32, V128, V128_LOAD, V128_ZERO, V128_CONST, emitter,
  I8X16_SHUFFLE, I8X16_SWIZZLE, V128_AND, I8X16_SHR_U, I8X16_ADD, I16X8_SHR_U, I16X8_ADD, V128_STORE_AT,
} from "../../util/wasm-asm.js";


/** Codes in a block. */
export const FS_BLOCK = 16;
/** Blocks a {@link FastScanMemory.scan} call takes at most (4,096 codes). */
export const FS_SCAN_BLOCKS = 256;

/** The kernel module's bytes: `scan(codes, blocks, pairs, lut, out)`. */
export function fastScanKernelBytes(): Uint8Array {
  const [CODES, BLOCKS, PAIRS, LUT, OUT] = [0, 1, 2, 3, 4];
  const [B, P, CA, TA, OA] = [5, 6, 7, 8, 9];
  const [ACCE, ACCO, C, M0F, MFF] = [10, 11, 12, 13, 14];
  const { code, e, c } = emitter();
  e(V128_CONST([0x0f0f0f0f, 0x0f0f0f0f, 0x0f0f0f0f, 0x0f0f0f0f]), SET, M0F);
  e(V128_CONST([0x00ff00ff, 0x00ff00ff, 0x00ff00ff, 0x00ff00ff]), SET, MFF);
  e(GET, CODES, SET, CA, GET, OUT, SET, OA, c(0), SET, B);
  e(BLOCK, VOID, LOOP, VOID); // blocks
  e(GET, B, GET, BLOCKS, I32_GE_U, BR_IF, 1);
  e(V128_ZERO, SET, ACCE, V128_ZERO, SET, ACCO, GET, LUT, SET, TA, c(0), SET, P);
  e(BLOCK, VOID, LOOP, VOID); // pairs of sub-spaces
  e(GET, P, GET, PAIRS, I32_GE_U, BR_IF, 1);
  e(GET, CA, V128_LOAD, SET, C);
  // the pair's byte sums: table 2p at the low nibbles plus table 2p+1 at the high ones (each ≤ 127)
  e(GET, TA, V128_LOAD, GET, C, GET, M0F, V128_AND, I8X16_SWIZZLE);
  e(GET, TA, c(16), I32_ADD, V128_LOAD, GET, C, c(4), I8X16_SHR_U, I8X16_SWIZZLE, I8X16_ADD, SET, C);
  // widened: even codes from the low bytes of the 16-bit lanes, odd codes from the high bytes
  e(GET, ACCE, GET, C, GET, MFF, V128_AND, I16X8_ADD, SET, ACCE);
  e(GET, ACCO, GET, C, c(8), I16X8_SHR_U, I16X8_ADD, SET, ACCO);
  e(GET, CA, c(16), I32_ADD, SET, CA, GET, TA, c(32), I32_ADD, SET, TA, GET, P, c(1), I32_ADD, SET, P);
  e(BR, 0, END, END);
  // codes 0 … 7 and 8 … 15 in order: the even and odd 16-bit lanes interleaved
  const lo: number[] = [];
  const hi: number[] = [];
  for (let k = 0; k < 4; k++) lo.push(2 * k, 2 * k + 1, 16 + 2 * k, 17 + 2 * k);
  for (let k = 4; k < 8; k++) hi.push(2 * k, 2 * k + 1, 16 + 2 * k, 17 + 2 * k);
  e(GET, OA, GET, ACCE, GET, ACCO, I8X16_SHUFFLE(lo), V128_STORE_AT(0));
  e(GET, OA, GET, ACCE, GET, ACCO, I8X16_SHUFFLE(hi), V128_STORE_AT(16));
  e(GET, OA, c(32), I32_ADD, SET, OA, GET, B, c(1), I32_ADD, SET, B);
  e(BR, 0, END, END);
  e(END);
  return oneFunctionModule("scan", 5, [2, ...uleb(5), I32, ...uleb(5), V128], code, true);
}

let compiled: object | null = null;
function fastScanModule(): object {
  compiled ??= new wasmApi.Module(fastScanKernelBytes());
  return compiled;
}

/** The kernel's sums in JavaScript: `blocks` blocks of `pairs` × 16 bytes from `codes[at]`, table `lut` (pairs × 32 bytes). */
export function fastScanJs(codes: Uint8Array, at: number, blocks: number, pairs: number, lut: Uint8Array): Uint16Array {
  const out = new Uint16Array(blocks * FS_BLOCK);
  for (let b = 0; b < blocks; b++)
    for (let p = 0; p < pairs; p++)
      for (let j = 0; j < FS_BLOCK; j++) {
        const v = codes[at + (b * pairs + p) * FS_BLOCK + j];
        out[b * FS_BLOCK + j] += lut[p * 32 + (v & 15)] + lut[p * 32 + 16 + (v >> 4)];
      }
  return out;
}

/** A query's float table (`m × 16`, entry s × 16 + c) as the kernel's bytes: a code's score ≈ bias + delta · sum. */
export function quantizeTable(f: Float32Array, m: number): { table: Uint8Array; delta: number; bias: number } {
  const mins = new Float64Array(m);
  let range = 0;
  let bias = 0;
  for (let s = 0; s < m; s++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let c = 0; c < 16; c++) {
      const v = f[s * 16 + c];
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    mins[s] = lo;
    bias += lo;
    if (hi - lo > range) range = hi - lo;
  }
  const delta = range > 0 ? range / 127 : 1;
  const table = new Uint8Array(m * 16);
  for (let s = 0; s < m; s++) for (let c = 0; c < 16; c++) table[s * 16 + c] = Math.min(127, Math.round((f[s * 16 + c] - mins[s]) / delta));
  return { table, delta, bias };
}

/** Each list's first block (`lists + 1` entries) for lists of the sizes `offsets` gives. */
export function blockStarts(offsets: Float64Array): Float64Array {
  const lists = offsets.length - 1;
  const out = new Float64Array(lists + 1);
  for (let l = 0; l < lists; l++) out[l + 1] = out[l] + Math.ceil((offsets[l + 1] - offsets[l]) / FS_BLOCK);
  return out;
}

/** Writes `n` row-major codes (`codeBytes` each, from `src[at]`) as blocks into `dst[to]` (zero-padded to whole blocks). */
export function toBlocks(src: Uint8Array, at: number, n: number, codeBytes: number, dst: Uint8Array, to: number): void {
  const blocks = Math.ceil(n / FS_BLOCK);
  dst.fill(0, to, to + blocks * codeBytes * FS_BLOCK);
  for (let i = 0; i < n; i++) {
    const b = i >> 4;
    const j = i & 15;
    const s = at + i * codeBytes;
    const d = to + b * codeBytes * FS_BLOCK + j;
    for (let p = 0; p < codeBytes; p++) dst[d + p * FS_BLOCK] = src[s + p];
  }
}

/** Bytes of one thread's scratch slot: the table and the sums. */
function slotBytes(pairs: number): number {
  return Math.ceil((pairs * 32) / 16) * 16 + FS_SCAN_BLOCKS * FS_BLOCK * 2;
}

/** What a worker thread needs to scan the same blocks. */
export interface FastScanShare {
  memory: WasmMemory;
  blocks: number;
  pairs: number;
  slots: number;
}

/**
 * `blocks` blocks of 4-bit codes (`pairs` × 16 bytes each) in the kernel's shared memory, scanned by
 * block range against one query's table. `create` takes scratch slot 0, `attach(share, s)` slot s.
 */
export class FastScanMemory {
  private readonly kernel: (codes: number, blocks: number, pairs: number, lut: number, out: number) => void;
  private readonly lutOff: number;
  private readonly outOff: number;
  private readonly native: NativeKernels | null;

  private constructor(
    private readonly memory: WasmMemory,
    readonly blocks: number,
    readonly pairs: number,
    readonly slots: number,
    slot: number,
  ) {
    if (slot < 0 || slot >= slots) throw new Error(`scratch slot ${slot} of ${slots}`);
    this.lutOff = blocks * pairs * FS_BLOCK + slot * slotBytes(pairs);
    this.outOff = this.lutOff + Math.ceil((pairs * 32) / 16) * 16;
    this.kernel = new wasmApi.Instance(fastScanModule(), { m: { mem: memory } }).exports.scan as typeof this.kernel;
    this.native = nativeKernels();
  }

  /** Room for `blocks` blocks and `slots` scanning threads, in a new shared memory (slot 0 is the caller's). */
  static create(blocks: number, pairs: number, slots = 1): FastScanMemory {
    const total = blocks * pairs * FS_BLOCK + slots * slotBytes(pairs);
    const memory = sharedKernelMemory(total, `${blocks * FS_BLOCK} 4-bit PQ codes of ${pairs} bytes`);
    return new FastScanMemory(memory, blocks, pairs, slots, 0);
  }

  /** The same blocks, scanned from scratch slot `slot` (another thread's). */
  static attach(share: FastScanShare, slot: number): FastScanMemory {
    return new FastScanMemory(share.memory, share.blocks, share.pairs, share.slots, slot);
  }

  /** What {@link attach} needs, to send to a worker thread. */
  share(): FastScanShare {
    return { memory: this.memory, blocks: this.blocks, pairs: this.pairs, slots: this.slots };
  }

  /** The blocks' bytes, to be filled (block b at b × pairs × 16). */
  codes(): Uint8Array {
    return new Uint8Array(this.memory.buffer, 0, this.blocks * this.pairs * FS_BLOCK);
  }

  /** Sets the query's table: `pairs × 32` bytes (sub-space s at s × 16), as {@link quantizeTable} makes. */
  setTable(table: Uint8Array): void {
    if (table.length !== this.pairs * 32) throw new Error(`a table of ${this.pairs * 32} bytes expected, not ${table.length}`);
    new Uint8Array(this.memory.buffer, this.lutOff, table.length).set(table);
  }

  /** The sums of blocks `start … start + n − 1` (n ≤ FS_SCAN_BLOCKS), 16 a block in code order (a view valid until the next call). */
  scan(start: number, n: number): Uint16Array {
    if (n > FS_SCAN_BLOCKS) throw new Error(`${n} blocks at a time: at most ${FS_SCAN_BLOCKS}`);
    const out = new Uint16Array(this.memory.buffer, this.outOff, n * FS_BLOCK);
    if (this.native !== null) {
      // the same sums from the native addon (./native.ts), where it is built
      const lut = new Uint8Array(this.memory.buffer, this.lutOff, this.pairs * 32);
      this.native.scan(this.codes(), start * this.pairs * FS_BLOCK, n, this.pairs, lut, out);
    } else this.kernel(start * this.pairs * FS_BLOCK, n, this.pairs, this.lutOff, this.outOff);
    return out;
  }
}
