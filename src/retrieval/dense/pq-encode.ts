// The product-quantization encoder of a compressed dense index (./quantizer.ts): for every row and
// sub-space, the nearest of the sub-space's 256 codebook centroids to the row's residual (the row minus
// its list's centroid), as a small WebAssembly module with 128-bit SIMD assembled from its opcodes
// (src/util/wasm-asm.ts). Nearest = the largest `r·c − ‖c‖²/2`, computed in float32: `−‖c‖²/2` plus
// `r_d · c_d` for d = 0 … dsub−1 in that order, each product and sum rounded to float32; ties go to the
// lower centroid. The kernel takes four centroids a pass (the codebook transposed into groups of four,
// each residual value splatted across the lanes, the dimensions unrolled); `encodeJs` is the same
// arithmetic in JavaScript, so the two routes give the same codes (tested).

import { oneFunctionModule, uleb, WASM_PAGE, wasmApi, type WasmMemory } from "./simd.js";
import {
  BLOCK, LOOP, END, BR, BR_IF, VOID, GET, SET, I32_GE_U, I32_ADD, I32, V128, F32, SELECT, I32_AND, I32_OR, I32_LT_U, I32_STORE8, F32_GT, F32_EQ,
  V128_CONST, V128_LOAD_AT, V128_LOAD32_SPLAT, V128_BITSELECT, F32X4_GT, F32X4_ADD, F32X4_MUL, I32X4_ADD, F32X4_EXTRACT, I32X4_EXTRACT, emitter,
} from "../../util/wasm-asm.js";

const NEG_INF = 0xff800000;

/**
 * The kernel module's bytes for sub-spaces of `dsub` dimensions: `encode(res, n, m, cbT, negHalf, out)`.
 * `res` holds n × m residuals of dsub float32 each; `cbT` the codebooks, sub-space by sub-space, in 64
 * groups of four centroids, each group as dsub vectors of the four centroids' value in that dimension;
 * `negHalf` the m × 256 values `−‖c‖²/2`; `out` gets n × m bytes. The dimensions are unrolled, each
 * residual value splatted once into a local.
 */
export function pqKernelBytes(dsub: number): Uint8Array {
  const [RES, N, M, CBT, NH, OUT] = [0, 1, 2, 3, 4, 5];
  // i32 locals 6..12, v128 locals 13..17 and 18..18+dsub−1, f32 locals, i32 locals
  const [I, S, G, RA, CA, HA, OA] = [6, 7, 8, 9, 10, 11, 12];
  const [ACC, BEST, BIDX, IDX, GT] = [13, 14, 15, 16, 17];
  const R0 = 18;
  const [BV, V] = [R0 + dsub, R0 + dsub + 1];
  const [BI, IX, COND] = [R0 + dsub + 2, R0 + dsub + 3, R0 + dsub + 4];
  const { code, e, c } = emitter();
  e(GET, RES, SET, RA, GET, OUT, SET, OA, c(0), SET, I);
  e(BLOCK, VOID, LOOP, VOID); // rows
  e(GET, I, GET, N, I32_GE_U, BR_IF, 1);
  e(GET, CBT, SET, CA, GET, NH, SET, HA, c(0), SET, S);
  e(BLOCK, VOID, LOOP, VOID); // sub-spaces
  e(GET, S, GET, M, I32_GE_U, BR_IF, 1);
  for (let d = 0; d < dsub; d++) e(GET, RA, V128_LOAD32_SPLAT(d * 4), SET, R0 + d);
  e(V128_CONST([NEG_INF, NEG_INF, NEG_INF, NEG_INF]), SET, BEST);
  e(V128_CONST([0, 0, 0, 0]), SET, BIDX, V128_CONST([0, 1, 2, 3]), SET, IDX);
  e(c(0), SET, G);
  e(BLOCK, VOID, LOOP, VOID); // groups of four centroids
  e(GET, G, c(64), I32_GE_U, BR_IF, 1);
  // acc = −‖c‖²/2, then acc += splat(res[d]) * cbT[group][d] for d in order
  e(GET, HA, V128_LOAD_AT(0), SET, ACC);
  for (let d = 0; d < dsub; d++) e(GET, ACC, GET, R0 + d, GET, CA, V128_LOAD_AT(d * 16), F32X4_MUL, F32X4_ADD, SET, ACC);
  e(GET, CA, c(16 * dsub), I32_ADD, SET, CA);
  // lanes that beat their best so far (strictly: ties keep the lower centroid)
  e(GET, ACC, GET, BEST, F32X4_GT, SET, GT);
  e(GET, ACC, GET, BEST, GET, GT, V128_BITSELECT, SET, BEST);
  e(GET, IDX, GET, BIDX, GET, GT, V128_BITSELECT, SET, BIDX);
  e(GET, IDX, V128_CONST([4, 4, 4, 4]), I32X4_ADD, SET, IDX);
  e(GET, HA, c(16), I32_ADD, SET, HA, GET, G, c(1), I32_ADD, SET, G);
  e(BR, 0, END, END);
  // the best of the four lanes: larger value, or the same value at a lower centroid
  e(GET, BEST, F32X4_EXTRACT(0), SET, BV, GET, BIDX, I32X4_EXTRACT(0), SET, BI);
  for (let l = 1; l < 4; l++) {
    e(GET, BEST, F32X4_EXTRACT(l), SET, V, GET, BIDX, I32X4_EXTRACT(l), SET, IX);
    // cond = v > bv || (v == bv && ix < bi)
    e(GET, V, GET, BV, F32_GT, GET, V, GET, BV, F32_EQ, GET, IX, GET, BI, I32_LT_U, I32_AND, I32_OR, SET, COND);
    e(GET, IX, GET, BI, GET, COND, SELECT, SET, BI);
    e(GET, V, GET, BV, GET, COND, SELECT, SET, BV);
  }
  e(GET, OA, GET, BI, I32_STORE8, 0, 0);
  e(GET, OA, c(1), I32_ADD, SET, OA);
  e(GET, RA, c(4 * dsub), I32_ADD, SET, RA);
  e(GET, S, c(1), I32_ADD, SET, S);
  e(BR, 0, END, END);
  e(GET, I, c(1), I32_ADD, SET, I);
  e(BR, 0, END, END);
  e(END);
  return oneFunctionModule("encode", 6, [4, ...uleb(7), I32, ...uleb(5 + dsub), V128, ...uleb(2), F32, ...uleb(3), I32], code);
}

const compiled = new Map<number, object>();
function pqModule(dsub: number): object {
  let m = compiled.get(dsub);
  if (!m) compiled.set(dsub, (m = new wasmApi.Module(pqKernelBytes(dsub))));
  return m;
}

/** Rows encoded per kernel call. */
const CHUNK = 256;

type Kernel = (res: number, n: number, m: number, cbT: number, negHalf: number, out: number) => void;

/** `−‖c‖²/2` of each of the `count` centroids of `codebooks` (count × dsub), in float32 as both routes use it. */
function negHalfNorms(codebooks: Float32Array, count: number, dsub: number): Float32Array {
  const out = new Float32Array(count);
  for (let j = 0; j < count; j++) {
    let s = 0;
    for (let d = 0; d < dsub; d++) s = Math.fround(s + Math.fround(codebooks[j * dsub + d] * codebooks[j * dsub + d]));
    out[j] = Math.fround(-s / 2);
  }
  return out;
}

/**
 * Encodes rows of `dim` floats by the m codebooks of `ksub` centroids of dim/m values: 256 centroids give
 * m bytes a row (by the kernel), 16 give m/2 bytes, two 4-bit codes a byte (sub-space 2p in the low
 * nibble of byte p, 2p+1 in the high one; in JavaScript, the same arithmetic).
 */
export class PqEncoder {
  private readonly dsub: number;
  private readonly negHalf: Float32Array;
  private readonly memory: WasmMemory | null = null;
  private readonly kernel: Kernel | null = null;
  private readonly resOff = 0;
  private readonly cbOff: number = 0;
  private readonly nhOff: number = 0;
  private readonly outOff: number = 0;

  constructor(
    private readonly dim: number,
    private readonly m: number,
    private readonly codebooks: Float32Array,
    useKernel = true,
    private readonly ksub: 256 | 16 = 256,
  ) {
    this.dsub = dim / m;
    this.negHalf = negHalfNorms(codebooks, m * ksub, this.dsub);
    if (!useKernel || ksub !== 256) return;
    const dsub = this.dsub;
    this.cbOff = CHUNK * dim * 4;
    this.nhOff = this.cbOff + m * 256 * dsub * 4;
    this.outOff = this.nhOff + m * 256 * 4;
    this.memory = new wasmApi.Memory({ initial: Math.ceil((this.outOff + CHUNK * m) / WASM_PAGE) });
    this.kernel = new wasmApi.Instance(pqModule(this.dsub), { m: { mem: this.memory } }).exports.encode as Kernel;
    // the codebooks transposed: sub-space s, group g of four centroids, dimension d, lane l
    const cbT = new Float32Array(this.memory.buffer, this.cbOff, m * 256 * dsub);
    for (let s = 0; s < m; s++)
      for (let g = 0; g < 64; g++)
        for (let d = 0; d < dsub; d++)
          for (let l = 0; l < 4; l++) cbT[((s * 64 + g) * dsub + d) * 4 + l] = codebooks[(s * 256 + g * 4 + l) * dsub + d];
    new Float32Array(this.memory.buffer, this.nhOff, m * 256).set(this.negHalf);
  }

  /** The codes (n × m bytes) of the rows of `xs` (n × dim), each the residual to `centroids[lists[i]]`. */
  encode(xs: Float32Array, lists: Int32Array, centroids: Float32Array): Uint8Array {
    const dim = this.dim;
    const n = xs.length / dim;
    if (!this.kernel || !this.memory) return this.encodeJs(xs, lists, centroids);
    const out = new Uint8Array(n * this.m);
    const res = new Float32Array(this.memory.buffer, this.resOff, CHUNK * dim);
    const codes = new Uint8Array(this.memory.buffer, this.outOff, CHUNK * this.m);
    for (let i0 = 0; i0 < n; i0 += CHUNK) {
      const k = Math.min(CHUNK, n - i0);
      for (let i = 0; i < k; i++) {
        const xo = (i0 + i) * dim;
        const co = lists[i0 + i] * dim;
        for (let d = 0; d < dim; d++) res[i * dim + d] = xs[xo + d] - centroids[co + d];
      }
      this.kernel(this.resOff, k, this.m, this.cbOff, this.nhOff, this.outOff);
      out.set(codes.subarray(0, k * this.m), i0 * this.m);
    }
    return out;
  }

  /** The same codes by the same float32 arithmetic in JavaScript. */
  encodeJs(xs: Float32Array, lists: Int32Array, centroids: Float32Array): Uint8Array {
    const { dim, m, dsub, codebooks, negHalf, ksub } = this;
    const n = xs.length / dim;
    const nibbles = ksub === 16;
    const cb = nibbles ? m / 2 : m;
    const out = new Uint8Array(n * cb);
    const r = new Float32Array(dsub);
    for (let i = 0; i < n; i++) {
      for (let s = 0; s < m; s++) {
        const xo = i * dim + s * dsub;
        const co = lists[i] * dim + s * dsub;
        for (let d = 0; d < dsub; d++) r[d] = xs[xo + d] - centroids[co + d];
        let best = -Infinity;
        let arg = 0;
        for (let c = 0; c < ksub; c++) {
          const b = (s * ksub + c) * dsub;
          let v = negHalf[s * ksub + c];
          for (let d = 0; d < dsub; d++) v = Math.fround(v + Math.fround(r[d] * codebooks[b + d]));
          if (v > best) {
            best = v;
            arg = c;
          }
        }
        if (nibbles) out[i * cb + (s >> 1)] |= arg << ((s & 1) * 4);
        else out[i * m + s] = arg;
      }
    }
    return out;
  }
}
