// The evaluator's WebAssembly kernels for JSON string contents, assembled here from the opcodes of
// ../util/wasm-asm.ts (no toolchain, no binary file):
//   - `plainEnd(p, end)`: the first byte of `[p, end)` that ends a run of plain string bytes — '"',
//     '\', a control byte or a byte >= 0x80 — or `end`, 16 bytes a step (three i8x16 compares and a
//     bitmask);
//   - `normalize(p, end, o)`: `normalize_answer` of the ASCII bytes `[p, end)` written from `o`, the
//     single-pass route of ./normalize.ts (`normalizeAsciiBytes`) instruction for instruction, on the
//     same byte tables (./ascii-classes.ts, copied to the start of the memory), and 16 bytes at a time
//     through runs of letters, digits and single spaces holding no article; -1 at a non-ASCII byte;
//   - `find(from, end, needle, len)`: the first place of a byte string, `Buffer.indexOf`'s answer, its
//     candidates found 16 places a step by the needle's first and last bytes.
//   - `provList(p, end, rec, recEnd, names)`: a provenance list of flat objects validated and its members'
//     places written to a record area (./list-kernel.ts).
// The line reader (./lines.ts) keeps its buffer in a kernel memory of its own (`LineMemory`), beside
// an output area as large: the scanner (./json-scanner.ts) runs `plainEnd` on a line's bytes in place,
// and the context metrics (./context-match.ts) normalize passage texts into the output area. Buffers
// elsewhere take the JavaScript routes. Why hand-written kernels: docs/decisions.md.

import { section, str as name, uleb } from "../util/wasm-encoding.js";
import {
  BLOCK, LOOP, IF, ELSE, END, BR, BR_IF, RETURN, VOID, GET, SET, TEE, LOAD8, LOAD16, STORE8, I32_EQ, I32_NE, I32_LT_U, I32_GT_U,
  I32_GE_U, I32_CTZ, I32_ADD, I32_SUB, I32_AND, I32_OR, I32, V128, SPLAT_CONST as splat, V128_LOAD_U as V128_LOAD,
  V128_STORE_U as V128_STORE, I8X16_EQ, I8X16_LT_S, I8X16_LE_U, I8X16_GE_U, V128_AND, V128_OR, I8X16_BITMASK, I32_EQZ, I32_LE_U,
  I32_CLZ, I32_SHL, I32_SHR_U, I32_GT_S, I32_GE_S, I8X16_SPLAT, emitter,
} from "../util/wasm-asm.js";
import { CLASS, WORD_LOWER } from "./ascii-classes.js";
import { provListBody, type ProvList } from "./list-kernel.js";

// The slice of the WebAssembly API used here (TypeScript's "ES2023" lib does not declare it).
interface Memory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface Api {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (d: { initial: number }) => Memory;
  Instance: new (m: object, imports: object) => { exports: Record<string, unknown> };
}
const api = (globalThis as unknown as { WebAssembly?: Api }).WebAssembly;

/** The kernel: index of the first byte of `[p, end)` ending a run of plain string contents, or `end`. */
export type PlainEnd = (p: number, end: number) => number;
/** The kernel: `normalize_answer` of ASCII bytes `[p, end)` written from `o`; returns the output's end, or -1 at a non-ASCII byte. */
export type NormalizeAscii = (p: number, end: number, o: number) => number;

/** The kernel: the first `h` in `[from, end - len]` where the `len` bytes at `needle` are, or -1. */
export type FindBytes = (from: number, end: number, needle: number, len: number) => number;

/** The kernels of one memory, and its output area (`out`, at `outAt` in the memory). */
export interface TextKernels {
  plainEnd: PlainEnd;
  normalize: NormalizeAscii;
  find: FindBytes;
  /**
   * The provenance-list kernel (./list-kernel.ts), its record area (`records`: the memory's int32s from
   * `recordsAt` to `recordsEnd`) and its name table (`names`, at `namesAt`; `namesOf`: whose names it holds).
   */
  provList: ProvList;
  names: Uint8Array;
  namesAt: number;
  namesOf: unknown;
  records: Int32Array;
  recordsAt: number;
  recordsEnd: number;
  out: Buffer;
  outAt: number;
}


/** Where the byte tables sit in a kernel memory: the classes at 0, the word bytes' lower-case forms at 256. */
const TABLE_WORD_LOWER = 256;
/** Then the provenance-list kernel's name table (1 KiB) and record area (256 KiB: a longer list takes the JavaScript route). */
const NAMES_AT = 512;
const RECORDS_AT = NAMES_AT + 1024;
const RECORDS_END = RECORDS_AT + (1 << 18);
const TABLES = RECORDS_END;
/** Bytes between the output area and the line buffer: `normalize` stores 16 bytes at a time, up to 15 past its output. */
const GAP = 64;

function plainEndBody(): number[] {
  const [P, E, V, BITS, C, QUOTES, BACKSLASHES, SPACES] = [0, 1, 2, 3, 4, 5, 6, 7];
  const { code, e, c } = emitter();
  // The constants in locals, set once a call (a v128.const inside the loop is built again every step).
  e(splat(0x22), SET, QUOTES, splat(0x5c), SET, BACKSLASHES, splat(0x20), SET, SPACES);
  // 16 bytes a step while 16 are left: a byte is a stop when it is '"', '\', or < 0x20 as a signed
  // byte (controls, and every byte >= 0x80).
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, P, c(16), I32_ADD, GET, E, I32_GT_U, BR_IF, 1);
  e(GET, P, V128_LOAD, SET, V);
  e(GET, V, GET, QUOTES, I8X16_EQ, GET, V, GET, BACKSLASHES, I8X16_EQ, V128_OR, GET, V, GET, SPACES, I8X16_LT_S, V128_OR);
  e(I8X16_BITMASK, TEE, BITS, IF, VOID, GET, P, GET, BITS, I32_CTZ, I32_ADD, RETURN, END);
  e(GET, P, c(16), I32_ADD, SET, P, BR, 0, END, END);
  // The rest a byte at a time: (c - 0x20) > 0x5f unsigned is c < 0x20 or c >= 0x80.
  e(BLOCK, VOID, LOOP, VOID);
  e(GET, P, GET, E, I32_GE_U, BR_IF, 1);
  e(GET, P, LOAD8(), TEE, C, c(0x22), I32_EQ, GET, C, c(0x5c), I32_EQ);
  e(I32_OR, GET, C, c(0x20), I32_SUB, c(0x5f), I32_GT_U, I32_OR, IF, VOID, GET, P, RETURN, END);
  e(GET, P, c(1), I32_ADD, SET, P, BR, 0, END, END);
  e(GET, E, END);
  return [3, 1, V128, 2, I32, 3, V128, ...code];
}

function normalizeBody(): number[] {
  const [I, E, O, AT, PENDING, C, K, W, RUN, LEN, S, WM, WS, NOFAST] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];
  const [V, LV] = [14, 15];
  const [WORD, SPACE, PUNCT, NON_ASCII] = [1, 2, 3, 4];
  const { code, e, c } = emitter();
  // Byte vectors in locals from 16 on, set once a call (a v128.const inside the loop is built again every step).
  const consts = new Map<number, number>();
  const k = (b: number): number[] => {
    if (!consts.has(b)) consts.set(b, 16 + consts.size);
    return [GET, consts.get(b)!];
  };
  /** A pending space is written before the next output byte, unless nothing was written yet. */
  const flushSpace = () => {
    e(GET, PENDING, GET, O, GET, AT, I32_GT_U, I32_AND, IF, VOID);
    e(GET, O, c(0x20), STORE8, GET, O, c(1), I32_ADD, SET, O, END);
    e(c(0), SET, PENDING);
  };
  e(GET, O, SET, AT);
  e(BLOCK, VOID, LOOP, VOID); // bytes
  e(GET, I, GET, E, I32_GE_U, BR_IF, 1);
  e(GET, I, LOAD8(), TEE, C, LOAD8(), TEE, K, c(WORD), I32_EQ, IF, VOID);
  {
    // At a word start, 16 bytes at a time while they are only letters, digits and single spaces, with
    // no article among the words they end: those words lower-cased as they are, up to the last space
    // (then pending). Tried again only past a block that failed.
    const mask = (...xs: (number | number[])[]) => e(...xs, I8X16_BITMASK);
    e(GET, I, GET, NOFAST, I32_GE_U, GET, I, c(16), I32_ADD, GET, E, I32_LE_U, I32_AND, IF, VOID);
    e(GET, I, V128_LOAD, TEE, V, k(0x20), V128_OR, SET, LV);
    mask(GET, V, k(0x20), I8X16_EQ);
    e(SET, S);
    mask(GET, LV, k(0x61), I8X16_GE_U, GET, LV, k(0x7a), I8X16_LE_U, V128_AND, GET, V, k(0x30), I8X16_GE_U, GET, V, k(0x39), I8X16_LE_U, V128_AND, V128_OR);
    e(SET, WM);
    e(GET, WM, GET, S, I32_OR, c(0xffff), I32_EQ, GET, S, c(0), I32_NE, I32_AND, GET, S, GET, S, c(1), I32_SHR_U, I32_AND, I32_EQZ, I32_AND, IF, VOID);
    // Word starts, then "a", "an", "the" starting there and followed by a space (looked for only
    // when some word of at most three bytes starts there).
    e(GET, WM, GET, S, c(1), I32_SHL, c(1), I32_OR, I32_AND, TEE, WS);
    e(GET, S, c(1), I32_SHR_U, GET, S, c(2), I32_SHR_U, I32_OR, GET, S, c(3), I32_SHR_U, I32_OR, I32_AND, IF, I32);
    const letter = (ch: number) => mask(GET, LV, k(ch), I8X16_EQ);
    e(GET, WS);
    letter(0x61);
    e(I32_AND, TEE, RUN, GET, S, c(1), I32_SHR_U, I32_AND);
    e(GET, RUN);
    letter(0x6e);
    e(c(1), I32_SHR_U, I32_AND, GET, S, c(2), I32_SHR_U, I32_AND, I32_OR);
    e(GET, WS);
    letter(0x74);
    e(I32_AND);
    letter(0x68);
    e(c(1), I32_SHR_U, I32_AND);
    letter(0x65);
    e(c(2), I32_SHR_U, I32_AND, GET, S, c(3), I32_SHR_U, I32_AND, I32_OR);
    e(ELSE, c(0), END);
    e(I32_EQZ, IF, VOID);
    flushSpace();
    e(GET, O, GET, V, GET, V, k(0x41), I8X16_GE_U, GET, V, k(0x5a), I8X16_LE_U, V128_AND, k(0x20), V128_AND, V128_OR, V128_STORE);
    e(c(31), GET, S, I32_CLZ, I32_SUB, TEE, LEN, GET, O, I32_ADD, SET, O);
    e(GET, I, GET, LEN, I32_ADD, c(1), I32_ADD, SET, I, c(1), SET, PENDING);
    e(BR, 4, END, END);
    e(GET, I, c(16), I32_ADD, SET, NOFAST, END);
    // A word run: letters and digits lower-cased, punctuation inside it dropped.
    flushSpace();
    e(GET, O, SET, RUN);
    e(GET, O, GET, C, LOAD8(TABLE_WORD_LOWER), STORE8, GET, O, c(1), I32_ADD, SET, O);
    e(GET, I, c(1), I32_ADD, SET, I);
    e(BLOCK, VOID, LOOP, VOID);
    e(GET, I, GET, E, I32_GE_U, BR_IF, 1);
    e(GET, I, LOAD8(), TEE, C, LOAD8(TABLE_WORD_LOWER), TEE, W, IF, VOID);
    e(GET, O, GET, W, STORE8, GET, O, c(1), I32_ADD, SET, O);
    e(ELSE);
    e(GET, C, LOAD8(), c(PUNCT), I32_NE, BR_IF, 2);
    e(END);
    e(GET, I, c(1), I32_ADD, SET, I, BR, 0, END, END);
    // An article ("a", "an", "the") becomes a pending space, merged with the space before it.
    e(GET, O, GET, RUN, I32_SUB, TEE, LEN, c(4), I32_LT_U, IF, VOID);
    e(GET, LEN, c(1), I32_EQ, GET, RUN, LOAD8(), c(0x61), I32_EQ, I32_AND);
    e(GET, LEN, c(2), I32_EQ, GET, RUN, ...LOAD16, c(0x6e61), I32_EQ, I32_AND, I32_OR);
    e(GET, LEN, c(3), I32_EQ, GET, RUN, ...LOAD16, c(0x6874), I32_EQ, I32_AND, GET, RUN, LOAD8(2), c(0x65), I32_EQ, I32_AND, I32_OR);
    e(IF, VOID);
    e(GET, RUN, SET, O);
    e(GET, O, GET, AT, I32_GT_U, IF, VOID, GET, O, c(1), I32_SUB, LOAD8(), c(0x20), I32_EQ, IF, VOID);
    e(GET, O, c(1), I32_SUB, SET, O, END, END);
    e(c(1), SET, PENDING);
    e(END, END);
    e(BR, 1); // the next byte
  }
  e(END);
  e(GET, I, c(1), I32_ADD, SET, I);
  e(GET, K, c(PUNCT), I32_EQ, BR_IF, 0);
  e(GET, K, c(SPACE), I32_EQ, IF, VOID, c(1), SET, PENDING, BR, 1, END);
  e(GET, K, c(NON_ASCII), I32_EQ, IF, VOID, c(-1), RETURN, END);
  flushSpace();
  e(GET, O, GET, C, STORE8, GET, O, c(1), I32_ADD, SET, O);
  e(BR, 0, END, END);
  e(GET, O, END);
  const init: number[] = [];
  for (const [b, local] of consts) init.push(...splat(b), SET, local);
  return [2, 11, I32, 2 + consts.size, V128, ...init, ...code];
}

/**
 * `find`: candidates are the places where the needle's first and last bytes both match, 16 places a
 * step (two loads, two compares, a bitmask); each is then compared byte by byte. Loads reach up to 15
 * bytes past `end` (inside the memory: the gap after the output area).
 */
function findBody(): number[] {
  const [H, HE, N, L, I, LIM, M, K, J, FIRST, LAST] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const { code, e, c } = emitter();
  e(GET, HE, GET, L, I32_SUB, SET, LIM);
  e(GET, N, LOAD8(), I8X16_SPLAT, SET, FIRST, GET, N, GET, L, I32_ADD, c(1), I32_SUB, LOAD8(), I8X16_SPLAT, SET, LAST);
  e(GET, H, SET, I);
  e(BLOCK, VOID, LOOP, VOID); // 16 places a step
  e(GET, I, GET, LIM, I32_GT_S, BR_IF, 1);
  e(GET, I, V128_LOAD, GET, FIRST, I8X16_EQ, GET, I, GET, L, I32_ADD, c(1), I32_SUB, V128_LOAD, GET, LAST, I8X16_EQ, V128_AND, I8X16_BITMASK, SET, M);
  e(BLOCK, VOID, LOOP, VOID); // candidates, in order
  e(GET, M, I32_EQZ, BR_IF, 1);
  e(GET, I, GET, M, I32_CTZ, I32_ADD, TEE, K, GET, LIM, I32_GT_S, IF, VOID, c(-1), RETURN, END);
  e(c(1), SET, J);
  e(BLOCK, VOID, LOOP, VOID); // the bytes between the first and the last
  e(GET, J, GET, L, c(1), I32_SUB, I32_GE_S, IF, VOID, GET, K, RETURN, END);
  e(GET, K, GET, J, I32_ADD, LOAD8(), GET, N, GET, J, I32_ADD, LOAD8(), I32_NE, BR_IF, 1);
  e(GET, J, c(1), I32_ADD, SET, J, BR, 0, END, END);
  e(GET, M, GET, M, c(1), I32_SUB, I32_AND, SET, M, BR, 0, END, END);
  e(GET, I, c(16), I32_ADD, SET, I, BR, 0, END, END);
  e(c(-1), END);
  return [2, 5, I32, 2, V128, ...code];
}

/** The module's bytes: memory `m.mem` imported; `plainEnd(p, end) -> i32` and `normalize(p, end, o) -> i32` exported. */
export function stringKernelBytes(): Uint8Array {
  const bodies = [plainEndBody(), normalizeBody(), findBody(), provListBody(0)];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [4, 0x60, 2, I32, I32, 1, I32, 0x60, 3, I32, I32, I32, 1, I32, 0x60, 4, I32, I32, I32, I32, 1, I32, 0x60, 5, I32, I32, I32, I32, I32, 1, I32]),
    ...section(2, [1, ...name("m"), ...name("mem"), 0x02, 0x00, 0x01]),
    ...section(3, [4, 0, 1, 2, 3]),
    ...section(7, [4, ...name("plainEnd"), 0x00, 0, ...name("normalize"), 0x00, 1, ...name("find"), 0x00, 2, ...name("provList"), 0x00, 3]),
    ...section(10, [4, ...bodies.flatMap((b) => [...uleb(b.length), ...b])]),
  ]);
}

let compiled: object | null | undefined;
function kernelModule(): object | null {
  if (compiled === undefined) {
    try {
      compiled = api ? new api.Module(stringKernelBytes()) : null;
    } catch {
      // No WebAssembly SIMD here: strings are scanned in JavaScript.
      compiled = null;
    }
  }
  return compiled;
}

/** The kernels of each memory's current bytes (a grown memory has new bytes, registered again). */
const kernels = new WeakMap<ArrayBufferLike, TextKernels>();

/** The kernels that work on `buf` in place (its offset in their memory is `buf.byteOffset`), or undefined. */
export function kernelFor(buf: Uint8Array): TextKernels | undefined {
  return kernels.get(buf.buffer);
}

const PAGE = 65536;

/** Memories of readers that finished, at their first size, for the next reader (one kernel instance reused). */
const idle: LineMemory[] = [];

/**
 * One line reader's buffer, in a kernel memory that no other reader uses at the same time: the byte
 * tables, an output area, then the buffer, the two of the same size. An ordinary Buffer where
 * WebAssembly SIMD is missing. `LineMemory.take` reuses a memory a finished reader gave back with
 * `release` (the gold file's and the guess file's readers then call the same kernel functions, so code
 * optimized while reading the first is not thrown away for the second).
 */
export class LineMemory {
  /** A memory of `bytes` no one else is using. */
  static take(bytes: number): LineMemory {
    const i = idle.findIndex((m) => m.buf.length === bytes);
    return i < 0 ? new LineMemory(bytes) : idle.splice(i, 1)[0];
  }

  /** Gives the memory back when done with it (kept for the next reader while at its first size). */
  release(): void {
    if (this.buf.length === this.first && idle.length < 2) idle.push(this);
  }
  private readonly first: number;

  private readonly memory: Memory | null = null;
  private readonly exports: { plainEnd: PlainEnd; normalize: NormalizeAscii; find: FindBytes; provList: ProvList } | null = null;
  /** The buffer. */
  buf: Buffer;

  constructor(bytes: number) {
    this.first = bytes;
    const module = kernelModule();
    if (module === null || api === undefined) {
      this.buf = Buffer.allocUnsafe(bytes);
      return;
    }
    this.memory = new api.Memory({ initial: Math.ceil((TABLES + GAP + 2 * bytes) / PAGE) });
    this.exports = new api.Instance(module, { m: { mem: this.memory } }).exports as unknown as typeof this.exports;
    const tables = new Uint8Array(this.memory.buffer, 0, TABLES);
    tables.set(CLASS, 0);
    tables.set(WORD_LOWER, TABLE_WORD_LOWER);
    this.buf = this.view(bytes);
  }

  private view(bytes: number): Buffer {
    const ab = this.memory!.buffer;
    const { plainEnd, normalize, find, provList } = this.exports!;
    const records = new Int32Array(ab, RECORDS_AT, (RECORDS_END - RECORDS_AT) >> 2);
    const names = new Uint8Array(ab, NAMES_AT, RECORDS_AT - NAMES_AT);
    kernels.set(ab, {
      plainEnd, normalize, find, provList, records, recordsAt: RECORDS_AT, recordsEnd: RECORDS_END, names, namesAt: NAMES_AT, namesOf: null,
      out: Buffer.from(ab, TABLES, bytes), outAt: TABLES,
    });
    return Buffer.from(ab, TABLES + bytes + GAP, bytes);
  }

  /** Grows the buffer to `bytes`, keeping its first `keep` bytes (the old buffer is then unusable). */
  grow(bytes: number, keep: number): Buffer {
    if (this.memory === null) {
      const bigger = Buffer.allocUnsafe(bytes);
      this.buf.copy(bigger, 0, 0, keep);
      return (this.buf = bigger);
    }
    const from = this.buf.byteOffset;
    const pages = Math.ceil((TABLES + GAP + 2 * bytes) / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (pages > 0) this.memory.grow(pages);
    const bigger = this.view(bytes);
    new Uint8Array(this.memory.buffer).copyWithin(bigger.byteOffset, from, from + keep);
    return (this.buf = bigger);
  }
}
