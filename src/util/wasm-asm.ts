// The WebAssembly opcodes and the code emitter that every hand-assembled kernel is written with (the
// dense kernels in src/retrieval/dense, the evaluator's string kernels in src/eval/string-kernel.ts),
// on top of ./wasm-encoding.ts's LEB128 and section encoders: one table instead of a copy in every
// kernel. Names follow the WebAssembly text format; a `(...)` form takes the instruction's immediates.

import { sleb, uleb } from "./wasm-encoding.js";

// Control, locals, types.
export const BLOCK = 0x02, LOOP = 0x03, IF = 0x04, ELSE = 0x05, END = 0x0b, BR = 0x0c, BR_IF = 0x0d, RETURN = 0x0f, VOID = 0x40;
/** `call` (its immediate: the function's index). */
export const CALL = 0x10;
export const SELECT = 0x1b;
export const GET = 0x20, SET = 0x21, TEE = 0x22;
export const I32 = 0x7f, F32 = 0x7d, F64 = 0x7c, V128 = 0x7b;

// Scalar memory access: the bare opcodes take their alignment and offset from the caller.
export const I32_LOAD = 0x28, F32_LOAD = 0x2a, I32_LOAD8_U = 0x2d;
export const I32_STORE = 0x36, F32_STORE = 0x38, F64_STORE = 0x39, I32_STORE8 = 0x3a;
/** `i32.load8_u` at a constant offset from the address on the stack. */
export const LOAD8 = (offset = 0) => [I32_LOAD8_U, 0, ...uleb(offset)];
/** `i32.load16_u` (no alignment promised). */
export const LOAD16 = [0x2f, 0, 0];
/** `i32.store8`. */
export const STORE8 = [I32_STORE8, 0, 0];

// Scalar arithmetic and comparisons.
export const I32_CONST = 0x41, F64_CONST = 0x44;
export const I32_EQZ = 0x45, I32_EQ = 0x46, I32_NE = 0x47, I32_LT_U = 0x49, I32_GT_S = 0x4a, I32_GT_U = 0x4b;
export const I32_LE_U = 0x4d, I32_GE_S = 0x4e, I32_GE_U = 0x4f;
export const F32_EQ = 0x5b, F32_GT = 0x5e;
export const I32_CLZ = 0x67, I32_CTZ = 0x68, I32_ADD = 0x6a, I32_SUB = 0x6b, I32_MUL = 0x6c;
export const I32_AND = 0x71, I32_OR = 0x72, I32_SHL = 0x74, I32_SHR_U = 0x76;
export const F32_ADD = 0x92, F64_ADD = 0xa0, F64_PROMOTE_F32 = 0xbb;

/** A 128-bit SIMD instruction (0xfd prefix) with its immediates. */
export const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm];
/** `v128.load` (16-byte alignment hint). */
export const V128_LOAD = simd(0x00, 4, 0);
/** `v128.load` at a constant offset from the address on the stack. */
export const V128_LOAD_AT = (offset: number) => simd(0x00, 4, ...uleb(offset));
/** `v128.load` and `v128.store` promising no alignment (byte buffers). */
export const V128_LOAD_U = simd(0x00, 0, 0);
export const V128_STORE_U = simd(0x0b, 0, 0);
/** `v128.store` at a constant offset from the address on the stack. */
export const V128_STORE_AT = (offset: number) => simd(0x0b, 4, ...uleb(offset));
/** `v128.load32_splat` at a constant offset: one float32 in all four lanes. */
export const V128_LOAD32_SPLAT = (offset: number) => simd(0x09, 2, ...uleb(offset));
export const V128_ZERO = simd(0x0c, ...new Array<number>(16).fill(0));
/** `v128.const` of four 32-bit lanes. */
export const V128_CONST = (lanes: number[]) => simd(0x0c, ...lanes.flatMap((x) => [x & 0xff, (x >>> 8) & 0xff, (x >>> 16) & 0xff, (x >>> 24) & 0xff]));
/** `v128.const` with the byte `b` in all sixteen lanes. */
export const SPLAT_CONST = (b: number) => simd(0x0c, ...new Array<number>(16).fill(b));
export const I8X16_SHUFFLE = (lanes: number[]) => simd(0x0d, ...lanes);
export const I8X16_SWIZZLE = simd(0x0e);
export const I8X16_SPLAT = simd(0x0f);
export const I32X4_EXTRACT = (lane: number) => simd(0x1b, lane);
export const F32X4_EXTRACT = (lane: number) => simd(0x1f, lane);
export const I8X16_EQ = simd(0x23), I8X16_LT_S = simd(0x25), I8X16_LE_U = simd(0x2a), I8X16_GE_U = simd(0x2c);
export const F32X4_GT = simd(0x44);
export const V128_AND = simd(0x4e), V128_OR = simd(0x50), V128_XOR = simd(0x51), V128_BITSELECT = simd(0x52);
export const I8X16_POPCNT = simd(0x62), I8X16_BITMASK = simd(0x64);
export const I8X16_SHR_U = simd(0x6d), I8X16_ADD = simd(0x6e);
export const I16X8_EXTADD_U8 = simd(0x7d), I32X4_EXTADD_U16 = simd(0x7f);
export const I16X8_EXTEND_LOW_I8X16_S = simd(0x87), I16X8_EXTEND_HIGH_I8X16_S = simd(0x88);
export const I16X8_SHR_U = simd(0x8d), I16X8_ADD = simd(0x8e);
export const I32X4_ADD = simd(0xae), I32X4_DOT_I16X8_S = simd(0xba);
export const F32X4_ADD = simd(0xe4), F32X4_MUL = simd(0xe6);

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
