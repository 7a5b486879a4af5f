// The Hamming-distance kernel of binary codes: a small WebAssembly module with 128-bit SIMD, assembled
// here from its opcodes like ./simd.ts: `hamming(codes, n, q, blocks, out)` writes
// `out[i] = popcount(code i XOR q)` for `n` codes of `blocks` × 16 bytes (i8x16.popcnt per block,
// widened and summed in 16-bit lanes). `hammingJs` is the same count in plain JavaScript (tests, fallback).
// `HammingMemory` holds a set of codes in the kernel's memory (up to 4 GiB, the wasm32 limit) and scans
// ranges of them against one query code; `lut` (tableScores) sums a per-byte table over the codes at given
// positions, the asymmetric refinement of a search. The memory is shared (a SharedArrayBuffer): worker threads
// attach to the same codes, each with its own slot for the query code and the distances.

import { section, sharedKernelMemory, str, uleb, wasmApi, type WasmMemory } from "./simd.js";
import {
  BLOCK, LOOP, END, BR, BR_IF, VOID, GET, SET, I32_GE_U, I32_ADD, I32_STORE, I32, V128, V128_LOAD, V128_ZERO, I32X4_EXTRACT, emitter, I32_LOAD,
  I32_LOAD8_U, I32_MUL, I32_SHL, F32_LOAD, F64_CONST, F64_ADD, F64_STORE, F64_PROMOTE_F32, F64, V128_XOR, I8X16_POPCNT, I16X8_EXTADD_U8,
  I32X4_EXTADD_U16, I16X8_ADD,
} from "../../util/wasm-asm.js";


/** The kernel module's bytes. */
export function hammingKernelBytes(): Uint8Array {
  const [CODES, N, Q, BLOCKS, OUT] = [0, 1, 2, 3, 4];
  const [I, J, CA, QA, OA] = [5, 6, 7, 8, 9];
  const [ACC, T] = [10, 11];
  const { code, e, c } = emitter();
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
  const body2 = lutFunction();
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [2, 0x60, 5, I32, I32, I32, I32, I32, 0, 0x60, 5, I32, I32, I32, I32, I32, 0]),
    ...section(2, [1, ...str("m"), ...str("mem"), 0x02, 0x03, 0x01, ...uleb(65536)]), // shared, 1 … 65536 pages
    ...section(3, [2, 0, 1]),
    ...section(7, [2, ...str("hamming"), 0x00, 0, ...str("lut"), 0x00, 1]),
    ...section(10, [2, ...uleb(body.length), ...body, ...uleb(body2.length), ...body2]),
  ];
  return Uint8Array.from(bytes);
}

/**
 * `lut(pos, n, codeBytes, table, out)`: for the codes at the `n` positions (i32) at `pos`, writes the f64
 * sum over the code's bytes of `table[b × 256 + byte_b]` (f32, promoted; added in byte order, as the
 * JavaScript loop it replaces did) to `out`. Code p starts at byte p × codeBytes. Four codes are summed
 * side by side (four independent chains of additions instead of one, each still in byte order, so the
 * sums are the same), then the rest one at a time.
 */
function lutFunction(): number[] {
  const [POS, N, CB, TABLE, OUT] = [0, 1, 2, 3, 4];
  const [I, B, CO, TB, BA] = [5, 6, 7, 8, 9];
  const COS = [10, 11, 12, 13];
  const V = 14;
  const VS = [15, 16, 17, 18];
  const { code, e, c } = emitter();
  const entry = (co: number) => [GET, TB, GET, co, GET, B, I32_ADD, I32_LOAD8_U, 0, 0, c(2), I32_SHL, I32_ADD, F32_LOAD, 2, 0, F64_PROMOTE_F32];
  e(c(0), SET, I);
  // four codes at a time while four are left: BA = i + 4
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, I, c(4), I32_ADD, SET, BA, GET, BA, GET, N, 0x4b /* i32.gt_u */, BR_IF, 1);
  for (let k = 0; k < 4; k++) {
    e(GET, POS, GET, I, c(k), I32_ADD, c(2), I32_SHL, I32_ADD, I32_LOAD, 2, 0, GET, CB, I32_MUL, SET, COS[k]);
    e(F64_CONST, 0, 0, 0, 0, 0, 0, 0, 0, SET, VS[k]);
  }
  e(GET, TABLE, SET, TB, c(0), SET, B);
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, B, GET, CB, I32_GE_U, BR_IF, 1);
  for (let k = 0; k < 4; k++) e(GET, VS[k], ...entry(COS[k]), F64_ADD, SET, VS[k]);
  e(GET, TB, c(1024), I32_ADD, SET, TB, GET, B, c(1), I32_ADD, SET, B);
  e(BR, 0, END, END);
  for (let k = 0; k < 4; k++) e(GET, OUT, GET, I, c(k), I32_ADD, c(3), I32_SHL, I32_ADD, GET, VS[k], F64_STORE, 3, 0);
  e(GET, BA, SET, I);
  e(BR, 0, END, END);
  // the rest, one code at a time
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, I, GET, N, I32_GE_U, BR_IF, 1);
  // CO = pos[i] * codeBytes; V = 0; TB = table; B = 0
  e(GET, POS, GET, I, c(2), I32_SHL, I32_ADD, I32_LOAD, 2, 0, GET, CB, I32_MUL, SET, CO);
  e(F64_CONST, 0, 0, 0, 0, 0, 0, 0, 0, SET, V, GET, TABLE, SET, TB, c(0), SET, B);
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, B, GET, CB, I32_GE_U, BR_IF, 1);
  // V += f64(table[TB + byte(CO + B) * 4])
  e(GET, V, ...entry(CO), F64_ADD, SET, V);
  e(GET, TB, c(1024), I32_ADD, SET, TB, GET, B, c(1), I32_ADD, SET, B);
  e(BR, 0, END, END);
  e(GET, OUT, GET, I, c(3), I32_SHL, I32_ADD, GET, V, F64_STORE, 3, 0);
  e(GET, I, c(1), I32_ADD, SET, I);
  e(BR, 0, END, END);
  e(END);
  return [2, ...uleb(9), I32, ...uleb(5), F64, ...code];
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

/** Codes a {@link HammingMemory.tableScores} call takes at most. */
export const TABLE_CHUNK = 4096;

/** Bytes of one thread's scratch slot: query code and distances, the table, positions and sums. */
function slotBytes(codeBytes: number, maxScan: number): number {
  return Math.ceil((codeBytes + maxScan * 4) / 16) * 16 + codeBytes * 256 * 4 + TABLE_CHUNK * 4 + TABLE_CHUNK * 8;
}

/** What a worker thread needs to scan the same codes: the shared memory and the layout. */
export interface HammingShare {
  memory: WasmMemory;
  count: number;
  codeBytes: number;
  maxScan: number;
  slots: number;
}

/**
 * Codes of `codeBytes` bytes each (a multiple of 16 for Hamming scans) in the kernel's shared memory, scanned by range
 * against one query code: `scan(start, n)` returns the distances of codes `start … start + n - 1` (a view
 * valid until the next scan). `codes()` is the memory the codes are written into (filled by the caller).
 * The memory has `slots` scratch areas (query code and distances), one per thread that scans it:
 * `create` takes slot 0, `attach(share, s)` slot s.
 */
export class HammingMemory {
  private readonly kernel: (codes: number, n: number, q: number, blocks: number, out: number) => void;
  private readonly lut: (pos: number, n: number, codeBytes: number, table: number, out: number) => void;
  private readonly qOff: number;
  private readonly outOff: number;
  private readonly tableOff: number;
  private readonly posOff: number;
  private readonly sumOff: number;

  private constructor(
    private readonly memory: WasmMemory,
    readonly count: number,
    readonly codeBytes: number,
    readonly maxScan: number,
    readonly slots: number,
    slot: number,
  ) {
    if (slot < 0 || slot >= slots) throw new Error(`scratch slot ${slot} of ${slots}`);
    const codesEnd = Math.ceil((count * codeBytes) / 16) * 16;
    this.qOff = codesEnd + slot * slotBytes(codeBytes, maxScan);
    this.outOff = this.qOff + codeBytes;
    this.tableOff = this.qOff + Math.ceil((codeBytes + maxScan * 4) / 16) * 16;
    this.posOff = this.tableOff + codeBytes * 256 * 4;
    this.sumOff = this.posOff + TABLE_CHUNK * 4;
    const exports = new wasmApi.Instance(hammingModule(), { m: { mem: memory } }).exports;
    this.kernel = exports.hamming as typeof this.kernel;
    this.lut = exports.lut as typeof this.lut;
  }

  /** Room for `count` codes and `slots` scanning threads, in a new shared memory (slot 0 is the caller's). */
  static create(count: number, codeBytes: number, maxScan: number, slots = 1): HammingMemory {
    const total = Math.ceil((count * codeBytes) / 16) * 16 + slots * slotBytes(codeBytes, maxScan);
    const memory = sharedKernelMemory(total, `${count} binary codes of ${codeBytes} bytes`);
    return new HammingMemory(memory, count, codeBytes, maxScan, slots, 0);
  }

  /** The same codes, scanned from scratch slot `slot` (another thread's). */
  static attach(share: HammingShare, slot: number): HammingMemory {
    return new HammingMemory(share.memory, share.count, share.codeBytes, share.maxScan, share.slots, slot);
  }

  /** What {@link attach} needs, to send to a worker thread. */
  share(): HammingShare {
    return { memory: this.memory, count: this.count, codeBytes: this.codeBytes, maxScan: this.maxScan, slots: this.slots };
  }

  /** The codes' bytes, to be filled (code i at i × codeBytes). */
  codes(): Uint8Array {
    return new Uint8Array(this.memory.buffer, 0, this.count * this.codeBytes);
  }

  /** Sets the query code. */
  setQuery(code: Uint8Array): void {
    new Uint8Array(this.memory.buffer, this.qOff, this.codeBytes).set(code);
  }

  /** Sets the table of {@link tableScores}: `codeBytes × 256` values, entry b × 256 + v for byte b of value v. */
  setTable(table: Float32Array): void {
    if (table.length !== this.codeBytes * 256) throw new Error(`a table of ${this.codeBytes * 256} values expected, not ${table.length}`);
    new Float32Array(this.memory.buffer, this.tableOff, table.length).set(table);
  }

  /**
   * For the codes at `positions[from … from + n)` (n ≤ TABLE_CHUNK), Σ_b table[b × 256 + code byte b]
   * added in byte order in float64 (a view valid until the next call).
   */
  tableScores(positions: Float64Array, from: number, n: number): Float64Array {
    const pos = this.positions(n);
    for (let i = 0; i < n; i++) pos[i] = positions[from + i];
    return this.sumTable(n);
  }

  /** {@link tableScores} for the codes `start … start + n - 1` (n ≤ TABLE_CHUNK). */
  rangeTableScores(start: number, n: number): Float64Array {
    const pos = this.positions(n);
    for (let i = 0; i < n; i++) pos[i] = start + i;
    return this.sumTable(n);
  }

  /** The kernel's positions argument, room for `n` (≤ TABLE_CHUNK). */
  private positions(n: number): Int32Array {
    if (n > TABLE_CHUNK) throw new Error(`${n} codes at a time: at most ${TABLE_CHUNK}`);
    return new Int32Array(this.memory.buffer, this.posOff, n);
  }

  /** Runs the table kernel over the `n` positions set, returning the sums. */
  private sumTable(n: number): Float64Array {
    this.lut(this.posOff, n, this.codeBytes, this.tableOff, this.sumOff);
    return new Float64Array(this.memory.buffer, this.sumOff, n);
  }

  /** Distances of codes `start … start + n - 1` to the query code. */
  scan(start: number, n: number): Int32Array {
    if (n > this.maxScan) throw new Error(`scan of ${n} codes: at most ${this.maxScan}`);
    if (this.codeBytes % 16 !== 0) throw new Error(`Hamming distances of ${this.codeBytes}-byte codes: a multiple of 16 bytes expected`);
    this.kernel(start * this.codeBytes, n, this.qOff, this.codeBytes / 16, this.outOff);
    return new Int32Array(this.memory.buffer, this.outOff, n);
  }
}
