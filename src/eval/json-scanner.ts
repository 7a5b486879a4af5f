// A byte-level JSON scanner for one line: validates it against the RFC 8259 grammar (iteratively, with
// a nesting limit) while pulling out chosen values, without building the line as objects. Strings are
// scanned four bytes at a time and decoded only when asked for; every scalar comes with Python's `str()`
// of it, taken from the JSON token itself (`5.0` stays "5.0", 20-digit integers keep every digit,
// `true` is "True", `null` "None"), as `json.loads` + `str()` give them; lists and objects are only
// marked. It knows nothing of KILT: the record views built on it are in ./scan.ts.

import { MAX_DEPTH, NESTING_REASON } from "../records/record-limits.js";
import { pyFloatRepr } from "../records/python-str.js";
import { kernelFor, type PlainEnd, type TextKernels } from "./string-kernel.js";
/** What a JSON value was, for Python's `str()` and truthiness. */
export const enum Kind {
  Str = 0,
  Int = 1,
  Float = 2,
  True = 3,
  False = 4,
  Null = 5,
  Array = 6,
  Object = 7,
}

/** A scalar's Python `str()` (empty for arrays and objects), its kind, and Python truthiness. */
export interface PyValue {
  str: string;
  kind: Kind;
  falsy: boolean;
}

/** A string value left in the line's bytes (passage texts are only normalized when a metric needs them). */
export interface TextRef {
  buf: Buffer;
  start: number;
  end: number;
  /** The contents hold a backslash escape. */
  escaped: boolean;
  /** Every byte is ASCII. */
  ascii: boolean;
}

const enc = new TextEncoder();

/**
 * Member names for `Scanner.member`: their bytes, whether each is plain (printable ASCII without `"` or
 * `\`), and the plain ones grouped by their first byte (`"` for the empty name), in list order: the
 * candidates for a name starting with byte c are `byFirst[firstAt[c] .. firstAt[c + 1])`.
 */
export interface Names {
  bytes: Uint8Array[];
  plain: boolean[];
  firstAt: Int32Array;
  byFirst: Int32Array;
}
export function names(list: readonly string[]): Names {
  const bytes = list.map((name) => enc.encode(name));
  const plain = bytes.map((b) => b.every((c) => c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c));
  const first = (j: number) => (bytes[j].length > 0 ? bytes[j][0] : 0x22);
  const firstAt = new Int32Array(257);
  const byFirst: number[] = [];
  for (let c = 0; c < 256; c++) {
    firstAt[c] = byFirst.length;
    for (let j = 0; j < bytes.length; j++) if (plain[j] && first(j) === c) byFirst.push(j);
  }
  firstAt[256] = byFirst.length;
  return { bytes, plain, firstAt, byFirst: Int32Array.from(byFirst) };
}

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
/** Bytes that end a run of plain string contents: controls, '"', '\\' and non-ASCII (1). */
const STOP = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STOP[c] = 1;
STOP[QUOTE] = 1;
STOP[BACKSLASH] = 1;
for (let c = 0x80; c < 0x100; c++) STOP[c] = 1;


/** Thrown on any syntax error (one instance: no stack trace is taken). */
export class Fail extends Error {}
export const FAIL = new Fail();

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** Python `str(int)` / `str(float)` of a JSON number token. */
export function pyStrOfNumber(token: string, isInt: boolean): string {
  if (isInt) {
    // Most ints are short: skip BigInt unless needed (leading "-0" becomes "0").
    if (token.length < 16 && token !== "-0") return token;
    return BigInt(token).toString();
  }
  return pyFloatRepr(Number(token));
}

/** Buffer's own decoders, which `toString` calls after checking its arguments (undocumented, present since Node 0.x). */
interface Slices {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}
const hasSlices = typeof (Buffer.prototype as unknown as Partial<Slices>).latin1Slice === "function" && typeof (Buffer.prototype as unknown as Partial<Slices>).utf8Slice === "function";

/**
 * A short Latin-1 string straight from its bytes: `String.fromCharCode` is a builtin, where
 * `latin1Slice` is a call into C++ (ids and page ids are mostly this short: ~30 ns less per string).
 */
function shortLatin1(b: Buffer, s: number, n: number): string {
  switch (n) {
    case 0:
      return "";
    case 1:
      return String.fromCharCode(b[s]);
    case 2:
      return String.fromCharCode(b[s], b[s + 1]);
    case 3:
      return String.fromCharCode(b[s], b[s + 1], b[s + 2]);
    case 4:
      return String.fromCharCode(b[s], b[s + 1], b[s + 2], b[s + 3]);
    case 5:
      return String.fromCharCode(b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4]);
    case 6:
      return String.fromCharCode(b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5]);
    case 7:
      return String.fromCharCode(b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5], b[s + 6]);
    case 8:
      return String.fromCharCode(b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5], b[s + 6], b[s + 7]);
    case 9:
      return String.fromCharCode(b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5], b[s + 6], b[s + 7], b[s + 8]);
    default:
      return String.fromCharCode(b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5], b[s + 6], b[s + 7], b[s + 8], b[s + 9]);
  }
}

/** `buf.toString(ascii ? "latin1" : "utf8", start, end)` without the argument checks (one call per scanned string). */
export function decode(buf: Buffer, ascii: boolean, start: number, end: number): string {
  if (ascii && end - start <= 10) return shortLatin1(buf, start, end - start);
  if (!hasSlices) return buf.toString(ascii ? "latin1" : "utf8", start, end);
  return ascii ? (buf as unknown as Slices).latin1Slice(start, end) : (buf as unknown as Slices).utf8Slice(start, end);
}

/** The string value of the JSON string contents `buf[start, end)` (all ASCII when `ascii`, escapes resolved when `escaped`). */
export function stringOf(buf: Buffer, ascii: boolean, escaped: boolean, start: number, end: number): string {
  const s = decode(buf, ascii, start, end);
  return escaped ? (JSON.parse(`"${s}"`) as string) : s;
}

/** Decodes a TextRef's string value. */
export function textOf(t: TextRef): string {
  return stringOf(t.buf, t.ascii, t.escaped, t.start, t.end);
}

/** `v` set to a JSON number token: Python's `str()` of it, its kind (int unless it has a fraction or exponent) and truthiness. */
export function numberValue(v: PyValue, token: string, isInt: boolean): PyValue {
  return setValue(v, pyStrOfNumber(token, isInt), isInt ? Kind.Int : Kind.Float, Number(token) === 0);
}

export function setValue(v: PyValue, str: string, kind: Kind, falsy: boolean): PyValue {
  v.str = str;
  v.kind = kind;
  v.falsy = falsy;
  return v;
}

/** A scanner over one line: set `buf` (`setBuffer`), `pos` and `end`, then read values; any error throws FAIL. */
export class Scanner {
  /** Why the last scan failed when the reason is more than a syntax error (nesting, size); set by callers too. */
  failure = "";
  buf: Buffer = Buffer.alloc(0);
  pos = 0;
  end = 0;
  // Set by scanStringRange.
  sEscaped = false;
  sAscii = true;
  /** Some string of the line holds a byte >= 0x80 (the only place valid JSON can have one). */
  sawHigh = false;

  ws(): void {
    const b = this.buf;
    let p = this.pos;
    while (p < this.end) {
      const c = b[p];
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  peek(): number {
    return this.pos < this.end ? this.buf[this.pos] : -1;
  }

  expect(c: number): void {
    if (this.pos >= this.end || this.buf[this.pos] !== c) throw FAIL;
    this.pos++;
  }

  /** At a `"`: validates the string and returns the index of its closing quote (contents are pos+1..close). */
  scanStringRange(): number {
    const b = this.buf;
    const end = this.end;
    const words = this.words;
    const delta = this.wordDelta;
    const wordEnd = (end - delta) >> 2;
    const kernel = this.kernel;
    let p = this.pos + 1;
    let escaped = false;
    let high = false;
    for (;;) {
      // Plain bytes 16 at a time by the SIMD kernel in a line reader's buffer, else four at a time
      // (aligned words): stop at a byte < 0x20, '"', '\' or >= 0x80.
      if (kernel !== null) p = kernel(p + this.kernelBase, end + this.kernelBase) - this.kernelBase;
      else if (((p - delta) & 3) === 0 && p >= delta) {
        let w = (p - delta) >> 2;
        while (w < wordEnd) {
          const x = words[w];
          const q = x ^ 0x22222222;
          const e = x ^ 0x5c5c5c5c;
          if ((((x - 0x20202020) & ~x) | ((q - 0x01010101) & ~q) | ((e - 0x01010101) & ~e) | x) & 0x80808080) break;
          w++;
        }
        p = (w << 2) + delta;
      }
      if (p >= end) throw FAIL;
      const c = b[p];
      if (STOP[c] === 0) {
        p++;
        continue;
      }
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escaped = true;
        const e = b[p + 1];
        if (e === 0x75) {
          if (p + 5 >= end || !isHex(b[p + 2]) || !isHex(b[p + 3]) || !isHex(b[p + 4]) || !isHex(b[p + 5])) throw FAIL;
          p += 6;
          continue;
        }
        if (e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
          p += 2;
          continue;
        }
        throw FAIL;
      }
      if (c < 0x20) throw FAIL;
      high = true;
      p++;
    }
    this.sEscaped = escaped;
    this.sAscii = !high;
    if (high) this.sawHigh = true;
    return p;
  }

  /** `buf` viewed as aligned 32-bit words (for `scanStringRange`): word w is bytes [4w + wordDelta, 4w + wordDelta + 4). */
  setBuffer(buf: Buffer): void {
    this.buf = buf;
    if (buf === this.wordsOf) return;
    this.wordsOf = buf;
    this.kernels = kernelFor(buf) ?? null;
    this.kernel = this.kernels?.plainEnd ?? null;
    this.kernelBase = buf.byteOffset;
    const delta = (4 - (buf.byteOffset & 3)) & 3;
    this.wordDelta = delta;
    this.words = buf.length > delta ? new Int32Array(buf.buffer, buf.byteOffset + delta, (buf.length - delta) >> 2) : new Int32Array(0);
  }
  words: Int32Array = new Int32Array(0);
  wordDelta = 0;
  /** The SIMD kernel over `buf`'s memory (a line reader's buffer), or null; `buf` is at `kernelBase` in that memory. */
  kernel: PlainEnd | null = null;
  /** All the kernels of that memory (./string-kernel.ts), or null. */
  kernels: TextKernels | null = null;
  kernelBase = 0;
  wordsOf: Buffer = Buffer.alloc(0);

  /** At a `"`: the decoded string. */
  readString(): string {
    const start = this.pos + 1;
    const close = this.scanStringRange();
    this.pos = close + 1;
    return stringOf(this.buf, this.sAscii, this.sEscaped, start, close);
  }

  /** At a `"` of a member name: whether it equals `key` (bytes), leaving pos after the name. */
  keyEquals(start: number, close: number, key: Uint8Array): boolean {
    if (this.sEscaped) {
      const s = JSON.parse(`"${utf8.decode(this.buf.subarray(start, close))}"`) as string;
      return s === utf8.decode(key);
    }
    if (close - start !== key.length) return false;
    const b = this.buf;
    for (let i = 0; i < key.length; i++) if (b[start + i] !== key[i]) return false;
    return true;
  }

  /** Reads a member name and the colon after it; returns [start, close] of the name's contents. */
  memberName(): void {
    if (this.peek() !== QUOTE) throw FAIL;
    this.nameStart = this.pos + 1;
    this.nameClose = this.scanStringRange();
    this.nameEscaped = this.sEscaped;
    this.pos = this.nameClose + 1;
    this.ws();
    this.expect(0x3a);
    this.ws();
  }
  nameStart = 0;
  nameClose = 0;
  nameEscaped = false;

  name(key: Uint8Array): boolean {
    this.sEscaped = this.nameEscaped;
    return this.keyEquals(this.nameStart, this.nameClose, key);
  }

  /** Index of the current member name in `keys`, or -1. */
  nameIndex(keys: readonly Uint8Array[]): number {
    for (let i = 0; i < keys.length; i++) if (this.name(keys[i])) return i;
    return -1;
  }

  /**
   * Reads a member name and the colon after it; returns its index in `names` (compared as decoded
   * strings), or -1. A name written exactly as a plain one of `names` (printable ASCII without `"` or
   * `\`, so its bytes are a valid JSON string as they are) is recognized by comparing bytes, without
   * scanning it as a string first; anything else takes the general route.
   */
  member(names: Names): number {
    const list = names.bytes;
    const b = this.buf;
    const p = this.pos;
    const end = this.end;
    if (p + 1 < end && b[p] === QUOTE) {
      // Only the names starting with the name's first byte (usually one) are compared.
      const c = b[p + 1];
      const byFirst = names.byFirst;
      for (let x = names.firstAt[c], last = names.firstAt[c + 1]; x < last; x++) {
        const j = byFirst[x];
        const k = list[j];
        const n = k.length;
        const q = p + 1 + n;
        if (q >= end || b[q] !== QUOTE) continue;
        let i = 1;
        while (i < n && b[p + 1 + i] === k[i]) i++;
        if (i >= n) {
          this.pos = q + 1;
          this.ws();
          this.expect(0x3a);
          this.ws();
          return j;
        }
      }
    }
    this.memberName();
    return this.nameIndex(list);
  }

  /** A number token; sets `numIsInt`. */
  numberToken(): string {
    const start = this.pos;
    this.skipNumber();
    return decode(this.buf, true, start, this.pos);
  }

  /** Steps over a number token, validating it; sets `numIsInt`. */
  skipNumber(): void {
    const b = this.buf;
    const start = this.pos;
    let p = start;
    let isInt = true;
    if (b[p] === 0x2d) p++;
    if (p >= this.end) throw FAIL;
    if (b[p] === 0x30) p++;
    else if (b[p] >= 0x31 && b[p] <= 0x39) while (p < this.end && isDigit(b[p])) p++;
    else throw FAIL;
    if (p < this.end && b[p] === 0x2e) {
      isInt = false;
      p++;
      if (p >= this.end || !isDigit(b[p])) throw FAIL;
      while (p < this.end && isDigit(b[p])) p++;
    }
    if (p < this.end && (b[p] === 0x65 || b[p] === 0x45)) {
      isInt = false;
      p++;
      if (p < this.end && (b[p] === 0x2b || b[p] === 0x2d)) p++;
      if (p >= this.end || !isDigit(b[p])) throw FAIL;
      while (p < this.end && isDigit(b[p])) p++;
    }
    this.pos = p;
    this.numIsInt = isInt;
  }
  numIsInt = true;

  literal(word: string): void {
    for (let i = 0; i < word.length; i++) {
      if (this.pos >= this.end || this.buf[this.pos] !== word.charCodeAt(i)) throw FAIL;
      this.pos++;
    }
  }

  /** Skips any value, validating it; iterative, with the nesting limit counted from `depth`. */
  skipValue(depth: number): void {
    this.ws();
    const c0 = this.peek();
    // Scalars (most skipped values: titles, paragraph ids) need no stack.
    if (c0 !== 0x7b && c0 !== 0x5b) return this.skipScalar(c0);
    // A stack of container kinds: 1 = array, 2 = object; `expectValue` says what comes next.
    const stack: number[] = [];
    for (;;) {
      this.ws();
      const c = this.peek();
      let closed = false;
      if (c === 0x7b || c === 0x5b) {
        if (depth + stack.length + 1 > MAX_DEPTH) {
          this.failure = NESTING_REASON;
          throw FAIL;
        }
        this.pos++;
        this.ws();
        const close = c === 0x7b ? 0x7d : 0x5d;
        if (this.peek() === close) {
          this.pos++;
          closed = true;
        } else {
          stack.push(c === 0x7b ? 2 : 1);
          if (c === 0x7b) this.memberName();
          continue;
        }
      } else this.skipScalar(c);
      // After a value: close containers or move to the next element.
      for (;;) {
        if (stack.length === 0) return;
        this.ws();
        const top = stack[stack.length - 1];
        const n = this.peek();
        if (n === 0x2c) {
          this.pos++;
          this.ws();
          if (top === 2) this.memberName();
          break;
        }
        if ((top === 1 && n === 0x5d) || (top === 2 && n === 0x7d)) {
          this.pos++;
          stack.pop();
          continue;
        }
        throw FAIL;
      }
      void closed;
    }
  }

  skipScalar(c: number): void {
    if (c === QUOTE) this.pos = this.scanStringRange() + 1;
    else if (c === 0x74) this.literal("true");
    else if (c === 0x66) this.literal("false");
    else if (c === 0x6e) this.literal("null");
    else if (c === 0x2d || isDigit(c)) this.skipNumber();
    else throw FAIL;
  }

  /** Any value as a PyValue (containers validated and skipped, marked by kind); a string is not decoded when `kindOnly`. */
  value(depth: number, kindOnly = false): PyValue {
    return this.valueInto({ str: "", kind: Kind.Null, falsy: true }, depth, kindOnly);
  }

  /** `value`, written into `v` (a pooled object) and returned. */
  valueInto(v: PyValue, depth: number, kindOnly = false): PyValue {
    const c = this.peek();
    if (c === QUOTE) {
      if (kindOnly) {
        const start = this.pos + 1;
        const close = this.scanStringRange();
        this.pos = close + 1;
        return setValue(v, "", Kind.Str, close === start);
      }
      const s = this.readString();
      return setValue(v, s, Kind.Str, s.length === 0);
    }
    if (c === 0x7b || c === 0x5b) {
      const start = this.pos;
      this.skipValue(depth);
      // Empty containers are falsy in Python.
      let p = start + 1;
      while (p < this.pos) {
        const x = this.buf[p];
        if (x === 0x20 || x === 0x0a || x === 0x0d || x === 0x09) p++;
        else break;
      }
      return setValue(v, "", c === 0x7b ? Kind.Object : Kind.Array, p === this.pos - 1);
    }
    if (c === 0x74) {
      this.literal("true");
      return setValue(v, "True", Kind.True, false);
    }
    if (c === 0x66) {
      this.literal("false");
      return setValue(v, "False", Kind.False, true);
    }
    if (c === 0x6e) {
      this.literal("null");
      return setValue(v, "None", Kind.Null, true);
    }
    const tok = this.numberToken();
    return numberValue(v, tok, this.numIsInt);
  }

  /**
   * At a `[` or `{` (checked by the caller): steps in; false when the container is empty (and closed).
   * Then per element: `ws()` (and `memberName()` in an object), read the value, and `more(close)`.
   */
  open(close: number): boolean {
    this.pos++;
    this.ws();
    if (this.peek() === close) {
      this.pos++;
      return false;
    }
    this.ws();
    return true;
  }

  /** After an element: true at a `,` (stepped over), false at `close` (stepped over); anything else fails. */
  more(close: number): boolean {
    this.ws();
    const n = this.peek();
    if (n === 0x2c) {
      this.pos++;
      this.ws();
      return true;
    }
    if (n !== close) throw FAIL;
    this.pos++;
    return false;
  }
}
