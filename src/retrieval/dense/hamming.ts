// The Hamming-distance kernel of binary codes: a small WebAssembly module with 128-bit SIMD, assembled
// here from its opcodes like ./simd.ts: `hamming(codes, n, q, blocks, out)` writes
// `out[i] = popcount(code i XOR q)` for `n` codes of `blocks` × 16 bytes (i8x16.popcnt per block,
// widened and summed in 16-bit lanes). `hammingJs` is the same count in plain JavaScript (tests, fallback).
// `HammingMemory` holds a set of codes in the kernel's memory (up to 4 GiB, the wasm32 limit) and scans
// ranges of them against one query code.

import { section, sleb, str, uleb, wasmApi } from "./simd.js";

const BLOCK = 0x02, LOOP = 0x03, END = 0x0b, BR = 0x0c, BR_IF = 0x0d, VOID = 0x40;
const GET = 0x20, SET = 0x21;
const I32_CONST = 0x41, I32_GE_U = 0x4f, I32_ADD = 0x6a, I32_STORE = 0x36;
const I32 = 0x7f, V128 = 0x7b;
const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm];
const V128_LOAD = simd(0x00, 4, 0);
const V128_ZERO = simd(0x0c, ...new Array(16).fill(0));
const V128_XOR = simd(0x51);
const I8X16_POPCNT = simd(0x62);
const I16X8_EXTADD_U8 = simd(0x7d);
const I32X4_EXTADD_U16 = simd(0x7f);
const I16X8_ADD = simd(0x8e);
const I32X4_EXTRACT = (lane: number) => simd(0x1b, lane);

/** The kernel module's bytes. */
export function hammingKernelBytes(): Uint8Array {
  const [CODES, N, Q, BLOCKS, OUT] = [0, 1, 2, 3, 4];
  const [I, J, CA, QA, OA] = [5, 6, 7, 8, 9];
  const [ACC, T] = [10, 11];
  const c = (n: number) => [I32_CONST, ...sleb(n)];
  const code: number[] = [];
  const e = (...xs: (number | number[])[]) => {
    for (const x of xs) Array.isArray(x) ? code.push(...x) : code.push(x);
  };
  e(GET, CODES, SET, CA, GET, OUT, SET, OA, c(0), SET, I);
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, I, GET, N, I32_GE_U, BR_IF, 1);
  e(V128_ZERO, SET, ACC, GET, Q, SET, QA, c(0), SET, J);
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, J, GET, BLOCKS, I32_GE_U, BR_IF, 1);
  e(GET, ACC, GET, CA, V128_LOAD, GET, QA, V128_LOAD, V128_XOR, I8X16_POPCNT, I16X8_EXTADD_U8, I16X8_ADD, SET, ACC);
  e(GET, CA, c(16), I32_ADD, SET, CA, GET, QA, c(16), I32_ADD, SET, QA, GET, J, c(1), I32_ADD, SET, J);
  e(BR, 0, END, END);
  e(GET, ACC, I32X4_EXTADD_U16, SET, T);
  e(GET, OA, GET, T, I32X4_EXTRACT(0), GET, T, I32X4_EXTRACT(1), I32_ADD, GET, T, I32X4_EXTRACT(2), I32_ADD, GET, T, I32X4_EXTRACT(3), I32_ADD, I32_STORE, 2, 0);
  e(GET, OA, c(4), I32_ADD, SET, OA, GET, I, c(1), I32_ADD, SET, I);
  e(BR, 0, END, END);
  e(END);
  const locals = [2, ...uleb(5), I32, ...uleb(2), V128];
  const body = [...locals, ...code];
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]),
    ...section(2, [1, ...str("m"), ...str("mem"), 0x02, 0x00, 0x01]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...str("hamming"), 0x00, 0]),
    ...section(10, [1, ...uleb(body.length), ...body]),
  ];
  return Uint8Array.from(bytes);
}

let compiled: object | null = null;
function hammingModule(): object {
  compiled ??= new wasmApi.Module(hammingKernelBytes());
  return compiled;
}

/** popcount(a[ao … ao+bytes) XOR b[bo …)) in JavaScript. */
export function hammingJs(a: Uint8Array, ao: number, b: Uint8Array, bo: number, bytes: number): number {
  let d = 0;
  for (let i = 0; i < bytes; i++) {
    let x = a[ao + i] ^ b[bo + i];
    x = x - ((x >> 1) & 0x55);
    x = (x & 0x33) + ((x >> 2) & 0x33);
    d += (x + (x >> 4)) & 0x0f;
  }
  return d;
}

const PAGE = 65536;

/**
 * Codes of `codeBytes` bytes each (a multiple of 16) in the kernel's memory, scanned by range against one
 * query code: `scan(start, n)` returns the distances of codes `start … start + n - 1` (a view valid until
 * the next scan). `codes()` is the memory the codes are written into (filled by the caller).
 */
export class HammingMemory {
  private readonly memory: { readonly buffer: ArrayBuffer };
  private readonly kernel: (codes: number, n: number, q: number, blocks: number, out: number) => void;
  private readonly qOff: number;
  private readonly outOff: number;

  constructor(
    readonly count: number,
    readonly codeBytes: number,
    readonly maxScan: number,
  ) {
    if (codeBytes % 16 !== 0) throw new Error(`binary codes of ${codeBytes} bytes: a multiple of 16 expected`);
    const codesBytes = count * codeBytes;
    this.qOff = Math.ceil(codesBytes / 16) * 16;
    this.outOff = this.qOff + codeBytes;
    const total = this.outOff + maxScan * 4;
    const pages = Math.ceil(total / PAGE);
    if (pages > 65536) throw new Error(`${count} binary codes of ${codeBytes} bytes need ${(total / 2 ** 30).toFixed(1)} GiB: more than the 4 GiB one search process can hold`);
    this.memory = new wasmApi.Memory({ initial: pages, maximum: pages });
    this.kernel = new wasmApi.Instance(hammingModule(), { m: { mem: this.memory } }).exports.hamming as typeof this.kernel;
  }

  /** The codes' bytes, to be filled (code i at i × codeBytes). */
  codes(): Uint8Array {
    return new Uint8Array(this.memory.buffer, 0, this.count * this.codeBytes);
  }

  /** Sets the query code. */
  setQuery(code: Uint8Array): void {
    new Uint8Array(this.memory.buffer, this.qOff, this.codeBytes).set(code);
  }

  /** Distances of codes `start … start + n - 1` to the query code. */
  scan(start: number, n: number): Int32Array {
    if (n > this.maxScan) throw new Error(`scan of ${n} codes: at most ${this.maxScan}`);
    this.kernel(start * this.codeBytes, n, this.qOff, this.codeBytes / 16, this.outOff);
    return new Int32Array(this.memory.buffer, this.outOff, n);
  }
}
