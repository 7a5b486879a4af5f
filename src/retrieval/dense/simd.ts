// The inner-product kernel of exact search as a small WebAssembly module with 128-bit SIMD, assembled
// here from its opcodes (no toolchain, no binary file): `score(rows, nRows, qs, nq, rowBytes, out)`
// writes `out[q·nRows + r] = row r · query q` for 4 queries per pass over a tile of rows. Each of the 4
// lanes sums every 4th dimension in float32 (f32x4 mul, then add), and the lanes are added as
// (l0 + l1) + (l2 + l3); `dotF32` below is the same arithmetic in plain JavaScript, bit for bit.

import { adviseHugePages } from "./native.js";
import { section, sleb, str, uleb } from "../../util/wasm-encoding.js";
import {
  BLOCK, LOOP, END, BR, BR_IF, VOID, GET, SET, TEE, I32_CONST, I32_GE_U, I32_ADD, I32_MUL, I32_SHL, F32_ADD, F32_STORE, I32, V128,
  V128_LOAD, V128_ZERO, F32X4_EXTRACT, F32X4_ADD, F32X4_MUL,
} from "../../util/wasm-asm.js";

export { section, sleb, str, uleb };

/**
 * A module of one function: `params` i32 parameters, no result, the local declarations `locals` and the
 * body `code`, exported as `name`, on an imported memory `m.mem` (what every dense kernel is; `shared`:
 * a shared memory that worker threads attach to).
 */
export function oneFunctionModule(name: string, params: number, locals: number[], code: number[], shared = false): Uint8Array {
  const body = [...locals, ...code];
  // the memory import's limits: at least one page; a shared memory must also declare its maximum
  const limits = shared ? [0x03, 0x01, ...uleb(65536)] : [0x00, 0x01];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, params, ...new Array<number>(params).fill(0x7f), 0]),
    ...section(2, [1, ...str("m"), ...str("mem"), 0x02, ...limits]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...str(name), 0x00, 0]),
    ...section(10, [1, ...uleb(body.length), ...body]),
  ]);
}


/** The kernel module's bytes. */
export function kernelBytes(): Uint8Array {
  // params: 0 rows, 1 nRows, 2 qs, 3 nq, 4 rowBytes, 5 out
  const [ROWS, NROWS, QS, NQ, RB, OUT] = [0, 1, 2, 3, 4, 5];
  // i32 locals 6..13, v128 locals 14..18
  const [Q, R, D, RA, QA, OB, NRB, QB] = [6, 7, 8, 9, 10, 11, 12, 13];
  const A = [14, 15, 16, 17];
  const V = 18;
  const c = (n: number) => [I32_CONST, ...sleb(n)];
  const code: number[] = [];
  const e = (...xs: (number | number[])[]) => {
    for (const x of xs) Array.isArray(x) ? code.push(...x) : code.push(x);
  };
  // NRB = nRows * 4 (bytes between two queries' score rows)
  e(GET, NROWS, c(4), I32_MUL, SET, NRB);
  e(c(0), SET, Q);
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, Q, GET, NQ, I32_GE_U, BR_IF, 1);
  // QA = qs + q * rowBytes
  e(GET, QS, GET, Q, GET, RB, I32_MUL, I32_ADD, SET, QA);
  e(c(0), SET, R);
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, R, GET, NROWS, I32_GE_U, BR_IF, 1);
  // RA = rows + r * rowBytes
  e(GET, ROWS, GET, R, GET, RB, I32_MUL, I32_ADD, SET, RA);
  for (const a of A) e(V128_ZERO, SET, a);
  e(c(0), SET, D);
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, D, GET, RB, I32_GE_U, BR_IF, 1);
  e(GET, RA, GET, D, I32_ADD, V128_LOAD, SET, V);
  // QB = QA + d; a_j += v * load(QB + j * rowBytes)
  e(GET, QA, GET, D, I32_ADD, SET, QB);
  for (let j = 0; j < 4; j++) {
    e(GET, A[j], GET, V, GET, QB, V128_LOAD, F32X4_MUL, F32X4_ADD, SET, A[j]);
    if (j < 3) e(GET, QB, GET, RB, I32_ADD, SET, QB);
  }
  e(GET, D, c(16), I32_ADD, SET, D);
  e(BR, 0, END, END);
  // OB = out + (q * nRows + r) * 4; store hsum(a_j) at OB + j * NRB
  e(GET, OUT, GET, Q, GET, NROWS, I32_MUL, GET, R, I32_ADD, c(2), I32_SHL, I32_ADD, SET, OB);
  for (let j = 0; j < 4; j++) {
    e(GET, OB);
    e(GET, A[j], F32X4_EXTRACT(0), GET, A[j], F32X4_EXTRACT(1), F32_ADD);
    e(GET, A[j], F32X4_EXTRACT(2), GET, A[j], F32X4_EXTRACT(3), F32_ADD);
    e(F32_ADD, F32_STORE, 2, 0);
    if (j < 3) e(GET, OB, GET, NRB, I32_ADD, SET, OB);
  }
  e(GET, R, c(1), I32_ADD, SET, R);
  e(BR, 0, END, END);
  e(GET, Q, c(4), I32_ADD, SET, Q);
  e(BR, 0, END, END);
  e(END);
  return oneFunctionModule("score", 6, [2, ...uleb(8), I32, ...uleb(5), V128], code);
}


// The slice of the WebAssembly API used here (TypeScript's "ES2023" lib does not declare it).
export type WasmModule = object;
/** A WebAssembly memory (the slice of its API used here). */
export interface WasmMemory {
  /** Its bytes (a SharedArrayBuffer for a shared memory). */
  readonly buffer: ArrayBuffer;
  /** Grows it by `pages` pages of 64 KiB; returns the former size in pages. */
  grow(pages: number): number;
}
export interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  /** `shared: true` gives a memory over a SharedArrayBuffer (typed here as an ArrayBuffer), which worker threads can be sent. */
  Memory: new (d: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
  Instance: new (m: WasmModule, imports: object) => { exports: Record<string, unknown> };
}
export const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** Bytes of a WebAssembly memory page. */
export const WASM_PAGE = 65536;

/**
 * A shared, fixed-size kernel memory of at least `bytes` bytes (codes and scratch slots that worker
 * threads attach to); refused naming `what` when it passes the 4 GiB a 32-bit memory can address.
 */
export function sharedKernelMemory(bytes: number, what: string): WasmMemory {
  const pages = Math.max(1, Math.ceil(bytes / WASM_PAGE));
  if (pages > 65536) throw new Error(`${what} need ${(bytes / 2 ** 30).toFixed(1)} GiB: more than the 4 GiB one search process can hold`);
  const memory = new wasmApi.Memory({ initial: pages, maximum: pages, shared: true });
  // large memories of codes, rows or vectors are read scattered: huge pages spare TLB misses (native only)
  if (bytes >= HUGE_PAGES_FROM) adviseHugePages(memory.buffer);
  return memory;
}

/** Kernel memories of at least this many bytes ask for transparent huge pages. */
const HUGE_PAGES_FROM = 32 * 2 ** 20;

let compiled: WasmModule | null = null;
/** The compiled kernel (compiled once per thread; a Module can also be posted to workers). */
export function kernelModule(): WasmModule {
  compiled ??= new wasmApi.Module(kernelBytes());
  return compiled;
}

/** Dimensions padded to a multiple of 4 (the kernel reads 4 floats at a time; padding is zeros). */
export function paddedDim(dim: number): number {
  return (dim + 3) & ~3;
}

/** The kernel's result for one row and one query, computed in JavaScript (reference and fallback). */
export function dotF32(a: Float32Array, ao: number, b: Float32Array, bo: number, dim: number): number {
  const f = Math.fround;
  let l0 = 0, l1 = 0, l2 = 0, l3 = 0;
  const full = dim & ~3;
  let d = 0;
  for (; d < full; d += 4) {
    l0 = f(l0 + f(a[ao + d] * b[bo + d]));
    l1 = f(l1 + f(a[ao + d + 1] * b[bo + d + 1]));
    l2 = f(l2 + f(a[ao + d + 2] * b[bo + d + 2]));
    l3 = f(l3 + f(a[ao + d + 3] * b[bo + d + 3]));
  }
  if (d < dim) {
    // The kernel's zero padding adds +0 (0 × 0) to the lanes past `dim`.
    l0 = f(l0 + f(a[ao + d] * b[bo + d]));
    l1 = f(l1 + (d + 1 < dim ? f(a[ao + d + 1] * b[bo + d + 1]) : 0));
    l2 = f(l2 + (d + 2 < dim ? f(a[ao + d + 2] * b[bo + d + 2]) : 0));
    l3 = f(l3 + 0);
  }
  return f(f(l0 + l1) + f(l2 + l3));
}

/** Best-k results of a batch of queries over one range of rows: `nq × k` ids (-1 = none) and scores, best first. */
export interface RangeResult {
  ids: Int32Array;
  scores: Float64Array;
}

/**
 * Copies `rows` (`n × dim`, unit vectors; row i is unit `rowBase + i`) into the kernel's memory and returns
 * a search function over them. Without `module` (or when the rows do not fit in 4 GB of wasm memory) the
 * same arithmetic runs in JavaScript. Self-contained apart from `dotF32`: its source is also the workers'.
 */
export function rangeSearcher(
  wasm: { Memory: new (d: { initial: number }) => { readonly buffer: ArrayBuffer }; Instance: new (m: object, i: object) => { exports: Record<string, unknown> } },
  module: object | null,
  rows: Float32Array,
  dim: number,
  rowBase: number,
): (qs: Float32Array, nq: number, k: number) => RangeResult {
  const n = rows.length / dim;
  const pd = (dim + 3) & ~3;
  const TILE = 256;
  const QCHUNK = 64;
  const rowsBytes = n * pd * 4;
  const qsOff = rowsBytes;
  const outOff = qsOff + QCHUNK * pd * 4;
  const total = outOff + TILE * QCHUNK * 4;
  const insertInto = (ids: Int32Array, scores: Float64Array, base: number, k: number, row: number, s: number): number => {
    let i = base + k - 1;
    while (i > base && scores[i - 1] < s) {
      scores[i] = scores[i - 1];
      ids[i] = ids[i - 1];
      i--;
    }
    scores[i] = s;
    ids[i] = row;
    return scores[base + k - 1];
  };
  if (module === null || total > 65536 * 65535) {
    return (qs, nq, k) => {
      const ids = new Int32Array(nq * k).fill(-1);
      const scores = new Float64Array(nq * k).fill(-Infinity);
      for (let q = 0; q < nq; q++) {
        let m = -Infinity;
        for (let r = 0; r < n; r++) {
          const s = dotF32(rows, r * dim, qs, q * dim, dim);
          if (s > m) m = insertInto(ids, scores, q * k, k, rowBase + r, s);
        }
      }
      return { ids, scores };
    };
  }
  const memory = new wasm.Memory({ initial: Math.ceil(total / 65536) });
  const score = new wasm.Instance(module, { m: { mem: memory } }).exports.score as (a: number, b: number, c: number, d: number, e: number, f: number) => void;
  const f32 = new Float32Array(memory.buffer);
  if (pd === dim) f32.set(rows);
  else for (let r = 0; r < n; r++) f32.set(rows.subarray(r * dim, (r + 1) * dim), r * pd);
  const qView = new Float32Array(memory.buffer, qsOff, QCHUNK * pd);
  const out = new Float32Array(memory.buffer, outOff, TILE * QCHUNK);
  return (qs, nq, k) => {
    const ids = new Int32Array(nq * k).fill(-1);
    const scores = new Float64Array(nq * k).fill(-Infinity);
    for (let q0 = 0; q0 < nq; q0 += QCHUNK) {
      const cq = Math.min(QCHUNK, nq - q0);
      const cq4 = (cq + 3) & ~3;
      // only the rows the kernel reads (cq4) are zeroed: a single query's probe must not clear QCHUNK rows
      qView.fill(0, 0, cq4 * pd);
      for (let q = 0; q < cq; q++) qView.set(qs.subarray((q0 + q) * dim, (q0 + q + 1) * dim), q * pd);
      for (let t0 = 0; t0 < n; t0 += TILE) {
        const nt = Math.min(TILE, n - t0);
        score(t0 * pd * 4, nt, qsOff, cq4, pd * 4, outOff);
        for (let q = 0; q < cq; q++) {
          const base = (q0 + q) * k;
          let m = scores[base + k - 1];
          const o = q * nt;
          for (let r = 0; r < nt; r++) {
            const s = out[o + r];
            if (s > m) m = insertInto(ids, scores, base, k, rowBase + t0 + r, s);
          }
        }
      }
    }
    return { ids, scores };
  };
}

/** {@link rangeSearcher} with this thread's kernel. */
export function localRangeSearcher(rows: Float32Array, dim: number, rowBase: number): (qs: Float32Array, nq: number, k: number) => RangeResult {
  return rangeSearcher(wasmApi, kernelModule(), rows, dim, rowBase);
}
