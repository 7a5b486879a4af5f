// The rescoring kernel of a compressed dense index: inner products of int8 rows with one query's weights,
// as a small WebAssembly module with 128-bit SIMD assembled here from its opcodes like ./simd.ts.
// `dot(rows, n, w, blocks, out)` writes `out[i] = Σ_d w[d] · row_i[d]` in exact 32-bit integer
// arithmetic: each 16-byte block of a row is sign-extended to two i16x8 halves and multiplied with the
// int16 weights by i32x4.dot_i16x8_s. The query's float weights are scaled to integers no larger than
// `maxWeight(dim)`, so no sum can overflow; the score is `bias + scale · sum`. `Int8Scorer` holds the
// rows read from disk (pread straight into the kernel's memory) and the query; dimensions that are not a
// multiple of 16 take the same integer arithmetic in JavaScript, so both routes give the same scores.
// `Int8RowMemory` holds all of an index's rows in one shared kernel memory (search workers attach to it)
// and scores the candidates where they lie, with the gathering form of the kernel,
// `dotAt(positions, n, w, blocks, out)` (row i at the byte address `positions[i]`): the same sums, no copy.

import { nativeKernels, type NativeKernels } from "./native.js";
import { oneFunctionModule, sharedKernelMemory, uleb, WASM_PAGE, wasmApi, type WasmMemory } from "./simd.js";
import {
  BLOCK, LOOP, END, BR, BR_IF, VOID, GET, SET, I32_GE_U, I32_ADD, I32_STORE, I32, V128, V128_LOAD, V128_ZERO, I32X4_EXTRACT, I32X4_ADD, emitter,
  I16X8_EXTEND_LOW_I8X16_S, I16X8_EXTEND_HIGH_I8X16_S, I32X4_DOT_I16X8_S, I32_LOAD,
} from "../../util/wasm-asm.js";


/**
 * The kernel module's bytes: `dot` over contiguous rows, or (`gather`) `dotAt` whose first argument is an
 * array of the rows' byte addresses, in a shared memory.
 */
export function int8KernelBytes(gather = false): Uint8Array {
  const [ROWS, N, W, BLOCKS, OUT] = [0, 1, 2, 3, 4];
  const [I, J, RA, WA, OA] = [5, 6, 7, 8, 9];
  const [ACC, V] = [10, 11];
  const { code, e, c } = emitter();
  e(GET, ROWS, SET, RA, GET, OUT, SET, OA, c(0), SET, I);
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, I, GET, N, I32_GE_U, BR_IF, 1);
  // gathering: this row's address is the next entry of the positions array (ROWS walks it)
  if (gather) e(GET, ROWS, I32_LOAD, 2, 0, SET, RA, GET, ROWS, c(4), I32_ADD, SET, ROWS);
  e(V128_ZERO, SET, ACC, GET, W, SET, WA, c(0), SET, J);
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, J, GET, BLOCKS, I32_GE_U, BR_IF, 1);
  e(GET, RA, V128_LOAD, SET, V);
  e(GET, ACC, GET, V, I16X8_EXTEND_LOW_I8X16_S, GET, WA, V128_LOAD, I32X4_DOT_I16X8_S, I32X4_ADD, SET, ACC);
  e(GET, WA, c(16), I32_ADD, SET, WA);
  e(GET, ACC, GET, V, I16X8_EXTEND_HIGH_I8X16_S, GET, WA, V128_LOAD, I32X4_DOT_I16X8_S, I32X4_ADD, SET, ACC);
  e(GET, WA, c(16), I32_ADD, SET, WA, GET, RA, c(16), I32_ADD, SET, RA, GET, J, c(1), I32_ADD, SET, J);
  e(BR, 0, END, END);
  e(GET, OA, GET, ACC, I32X4_EXTRACT(0), GET, ACC, I32X4_EXTRACT(1), I32_ADD, GET, ACC, I32X4_EXTRACT(2), I32_ADD, GET, ACC, I32X4_EXTRACT(3), I32_ADD, I32_STORE, 2, 0);
  e(GET, OA, c(4), I32_ADD, SET, OA, GET, I, c(1), I32_ADD, SET, I);
  e(BR, 0, END, END);
  e(END);
  return gather ? oneFunctionModule("dotAt", 5, [2, ...uleb(5), I32, ...uleb(2), V128], code, true) : oneFunctionModule("dot", 5, [2, ...uleb(5), I32, ...uleb(2), V128], code);
}

let compiled: object | null = null;
function int8Module(): object {
  compiled ??= new wasmApi.Module(int8KernelBytes());
  return compiled;
}

let compiledGather: object | null = null;
function int8GatherModule(): object {
  compiledGather ??= new wasmApi.Module(int8KernelBytes(true));
  return compiledGather;
}

/** The largest integer weight for `dim` dimensions: `dim × 128 × w` stays below 2³¹ (and w fits in int16). */
export function maxWeight(dim: number): number {
  return Math.min(32767, Math.floor((2 ** 31 - 1) / (Math.max(1, dim) * 128)));
}


/** Writes `weights` rounded to integers of `maxWeight(dim)` at most into `into`; returns the scale back to floats. */
function integerWeights(weights: Float32Array, dim: number, into: Int16Array): number {
  let max = 0;
  for (let d = 0; d < dim; d++) max = Math.max(max, Math.abs(weights[d]));
  const m = maxWeight(dim);
  const inv = max > 0 ? m / max : 0;
  for (let d = 0; d < dim; d++) into[d] = Math.round(weights[d] * inv);
  return max > 0 ? max / m : 0;
}

/** The first `n` integer sums as scores (`bias + scale · sum`, rounded to float32) in `out`; a view of them. */
function toScores(sums: Int32Array, n: number, bias: number, scale: number, out: Float64Array): Float64Array {
  for (let i = 0; i < n; i++) out[i] = Math.fround(bias + scale * sums[i]);
  return out.subarray(0, n);
}

/**
 * Scores up to `maxRows` int8 rows of `dim` bytes against one query at a time: fill `rows(n)` (row r at
 * r × dim), `setQuery(weights, bias)`, then `score(n)` gives `bias + scale · Σ w·x` per row.
 */
export class Int8Scorer {
  private readonly memory: WasmMemory | null;
  private readonly kernel: ((rows: number, n: number, w: number, blocks: number, out: number) => void) | null;
  private readonly rowBuf: Uint8Array;
  private readonly wOff: number;
  private readonly outOff: number;
  private readonly wInt: Int16Array;
  private scale = 0;
  private bias = 0;
  private readonly scores: Float64Array;

  constructor(
    readonly dim: number,
    readonly maxRows: number,
    useKernel = true,
  ) {
    const simdOk = useKernel && dim % 16 === 0;
    this.scores = new Float64Array(maxRows);
    if (simdOk) {
      const rowsBytes = Math.ceil((maxRows * dim) / 16) * 16;
      this.wOff = rowsBytes;
      this.outOff = this.wOff + dim * 2;
      this.memory = new wasmApi.Memory({ initial: Math.ceil((this.outOff + maxRows * 4) / WASM_PAGE) });
      this.kernel = new wasmApi.Instance(int8Module(), { m: { mem: this.memory } }).exports.dot as (rows: number, n: number, w: number, blocks: number, out: number) => void;
      this.rowBuf = new Uint8Array(this.memory.buffer, 0, maxRows * dim);
      this.wInt = new Int16Array(this.memory.buffer, this.wOff, dim);
    } else {
      this.wOff = this.outOff = 0;
      this.memory = null;
      this.kernel = null;
      this.rowBuf = new Uint8Array(maxRows * dim);
      this.wInt = new Int16Array(dim);
    }
  }

  /** The bytes `n` rows are to be read into. */
  rows(n: number): Uint8Array {
    if (n > this.maxRows) throw new Error(`${n} rows: at most ${this.maxRows}`);
    return this.rowBuf.subarray(0, n * this.dim);
  }

  /** The query: score = bias + Σ weights[d] · x[d] (weights rounded to integers of `maxWeight(dim)` at most). */
  setQuery(weights: Float32Array, bias: number): void {
    this.scale = integerWeights(weights, this.dim, this.wInt);
    this.bias = bias;
  }

  /** Scores of the first `n` rows (a view valid until the next call). */
  score(n: number): Float64Array {
    const out = this.scores;
    const dim = this.dim;
    if (this.kernel && this.memory) {
      this.kernel(0, n, this.wOff, dim / 16, this.outOff);
      return toScores(new Int32Array(this.memory.buffer, this.outOff, n), n, this.bias, this.scale, out);
    }
    const rows = new Int8Array(this.rowBuf.buffer, this.rowBuf.byteOffset, n * dim);
    const w = this.wInt;
    for (let i = 0; i < n; i++) {
      let s = 0;
      const o = i * dim;
      for (let d = 0; d < dim; d++) s += w[d] * rows[o + d];
      out[i] = Math.fround(this.bias + this.scale * s);
    }
    return out.subarray(0, n);
  }
}

/** What a search worker attaches to the rows held in the rescoring kernel's memory with (`Int8RowMemory.attach`). */
export interface Int8RowShare {
  memory: WasmMemory;
  rows: number;
  dim: number;
  slots: number;
  maxRows: number;
}

/**
 * All of an index's int8 rows in one shared kernel memory, with a scratch slot per scoring thread (the
 * query's weights, the candidates' addresses, the sums): candidates are scored where they lie, with the
 * same integer sums as {@link Int8Scorer} gives for the same rows.
 */
export class Int8RowMemory {
  private readonly kernel: (positions: number, n: number, w: number, blocks: number, out: number) => void;
  private readonly wOff: number;
  private readonly posOff: number;
  private readonly outOff: number;
  private readonly wInt: Int16Array;
  private readonly positions: Uint32Array;
  private readonly sums: Int32Array;
  private readonly scores: Float64Array;
  private scale = 0;
  private bias = 0;
  /** The native kernels where built (../native.ts): the same sums, rows read ahead. */
  private readonly native: NativeKernels | null;
  private readonly rowsView: Int8Array;

  private constructor(private readonly memory: WasmMemory, readonly rows: number, readonly dim: number, readonly slots: number, readonly maxRows: number, slot: number) {
    if (slot < 0 || slot >= slots) throw new Error(`scratch slot ${slot} of ${slots}`);
    const base = Int8RowMemory.rowsBytes(rows, dim) + slot * Int8RowMemory.slotBytes(dim, maxRows);
    this.wOff = base;
    this.posOff = base + Math.ceil((dim * 2) / 16) * 16;
    this.outOff = this.posOff + maxRows * 4;
    this.kernel = new wasmApi.Instance(int8GatherModule(), { m: { mem: memory } }).exports.dotAt as typeof this.kernel;
    this.wInt = new Int16Array(memory.buffer, this.wOff, dim);
    this.positions = new Uint32Array(memory.buffer, this.posOff, maxRows);
    this.sums = new Int32Array(memory.buffer, this.outOff, maxRows);
    this.scores = new Float64Array(maxRows);
    this.native = nativeKernels();
    this.rowsView = new Int8Array(memory.buffer, 0, rows * dim);
  }

  private static rowsBytes(rows: number, dim: number): number {
    return Math.ceil((rows * dim) / 16) * 16;
  }

  private static slotBytes(dim: number, maxRows: number): number {
    return Math.ceil((dim * 2) / 16) * 16 + maxRows * 8;
  }

  /** Whether rows of `dim` bytes can be held and scored this way (the kernel's 16-byte blocks, a 4 GiB memory). */
  static fits(rows: number, dim: number, slots: number, maxRows: number): boolean {
    return dim % 16 === 0 && Int8RowMemory.rowsBytes(rows, dim) + slots * Int8RowMemory.slotBytes(dim, maxRows) <= 65536 * WASM_PAGE;
  }

  /** Room for `rows` rows of `dim` bytes and `slots` scoring threads, in a new shared memory (slot 0 is the caller's). */
  static create(rows: number, dim: number, slots: number, maxRows: number): Int8RowMemory {
    const memory = sharedKernelMemory(Int8RowMemory.rowsBytes(rows, dim) + slots * Int8RowMemory.slotBytes(dim, maxRows), `${rows} int8 rows of ${dim} bytes`);
    return new Int8RowMemory(memory, rows, dim, slots, maxRows, 0);
  }

  /** The same rows, scored from scratch slot `slot` (another thread's). */
  static attach(share: Int8RowShare, slot: number): Int8RowMemory {
    return new Int8RowMemory(share.memory, share.rows, share.dim, share.slots, share.maxRows, slot);
  }

  /** What {@link attach} needs, to send to a worker thread. */
  share(): Int8RowShare {
    return { memory: this.memory, rows: this.rows, dim: this.dim, slots: this.slots, maxRows: this.maxRows };
  }

  /** The rows' bytes, to be filled (row r at r × dim). */
  bytes(): Uint8Array {
    return new Uint8Array(this.memory.buffer, 0, this.rows * this.dim);
  }

  /** The query, as {@link Int8Scorer.setQuery}. */
  setQuery(weights: Float32Array, bias: number): void {
    this.scale = integerWeights(weights, this.dim, this.wInt);
    this.bias = bias;
  }

  /** Scores of the rows at positions `at[i … i + n − 1]` (n ≤ maxRows; a view valid until the next call). */
  scoreAt(at: Float64Array, i: number, n: number): Float64Array {
    if (n > this.maxRows) throw new Error(`${n} rows: at most ${this.maxRows}`);
    const dim = this.dim;
    if (this.native !== null) this.native.int8At(this.rowsView, at, i, n, dim, this.wInt, this.sums);
    else {
      const pos = this.positions;
      for (let j = 0; j < n; j++) pos[j] = at[i + j] * dim;
      this.kernel(this.posOff, n, this.wOff, dim / 16, this.outOff);
    }
    return toScores(this.sums, n, this.bias, this.scale, this.scores);
  }
}
