// The opcodes and the code emitter the dense WebAssembly kernels are assembled with (./hamming.ts,
// ./int8-kernel.ts), on top of ./simd.ts's LEB128 and section encoders: one table instead of a copy
// in every kernel.

import { sleb, uleb } from "./simd.js";

export const BLOCK = 0x02, LOOP = 0x03, END = 0x0b, BR = 0x0c, BR_IF = 0x0d, VOID = 0x40;
export const GET = 0x20, SET = 0x21;
export const I32_CONST = 0x41, I32_GE_U = 0x4f, I32_ADD = 0x6a, I32_MUL = 0x6c, I32_SHL = 0x74;
export const I32_LOAD = 0x28, I32_LOAD8_U = 0x2d, I32_STORE = 0x36, F32_LOAD = 0x2a;
export const F64_CONST = 0x44, F64_ADD = 0xa0, F64_STORE = 0x39, F64_PROMOTE_F32 = 0xbb;
export const I32 = 0x7f, F64 = 0x7c, V128 = 0x7b;
/** A 128-bit SIMD instruction (0xfd prefix) with its immediates. */
export const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm];
export const V128_LOAD = simd(0x00, 4, 0);
export const V128_ZERO = simd(0x0c, ...new Array(16).fill(0));
export const I32X4_EXTRACT = (lane: number) => simd(0x1b, lane);
export const F32 = 0x7d;
export const SELECT = 0x1b;
export const I32_AND = 0x71, I32_OR = 0x72, I32_LT_U = 0x49, I32_STORE8 = 0x3a;
export const F32_GT = 0x5e, F32_EQ = 0x5b;
/** `v128.const` of four 32-bit lanes. */
export const V128_CONST = (lanes: number[]) => simd(0x0c, ...lanes.flatMap((x) => [x & 0xff, (x >>> 8) & 0xff, (x >>> 16) & 0xff, (x >>> 24) & 0xff]));
/** `v128.load` at a constant offset from the address on the stack. */
export const V128_LOAD_AT = (offset: number) => simd(0x00, 4, ...uleb(offset));
/** `v128.load32_splat` at a constant offset: one float32 in all four lanes. */
export const V128_LOAD32_SPLAT = (offset: number) => simd(0x09, 2, ...uleb(offset));
export const V128_BITSELECT = simd(0x52);
export const F32X4_GT = simd(0x44);
export const F32X4_ADD = simd(0xe4);
export const F32X4_MUL = simd(0xe6);
export const I32X4_ADD = simd(0xae);
export const F32X4_EXTRACT = (lane: number) => simd(0x1f, lane);

/** A function body under construction: `e(...)` appends opcodes and byte arrays, `c(n)` is `i32.const n`. */
export function emitter(): { code: number[]; e: (...xs: (number | number[])[]) => void; c: (n: number) => number[] } {
  const code: number[] = [];
  return {
    code,
    e: (...xs) => {
      for (const x of xs) Array.isArray(x) ? code.push(...x) : code.push(x);
    },
    c: (n) => [I32_CONST, ...sleb(n)],
  };
}
