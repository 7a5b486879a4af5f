// The evaluator's byte-level record scanner. It reads one JSONL line straight from its bytes and pulls
// out only what the metrics read (the id, the gold input, each output's answer, and per provenance
// entry the keys asked for: rank keys, title, passage text), without building the record as objects.
// Every value comes with Python's `str()` of it, taken from the JSON token itself, so `5.0` stays
// "5.0", 20-digit integers keep every digit, `true` is "True" and `null` "None", as `json.loads` +
// `str()` give them; lists and objects are marked (their Python repr is not reproduced: the evaluator
// reports them). The scanner validates the whole line as JSON (RFC 8259 grammar, iteratively, with a
// nesting limit), so a line it accepts is one `JSON.parse` accepts; on any error it returns null and
// the caller takes the strict reader's message. Checked against JSON.parse in test/eval/scan.test.ts.

import { MAX_DEPTH, MAX_RECORD_OBJECTS, NESTING_REASON, OBJECTS_REASON } from "../records/record-limits.js";
import { pyFloatRepr } from "../records/python-str.js";
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

export interface ProvEntry {
  /** False for a provenance item that is not an object (its other fields are then unset). */
  object: boolean;
  /** Values of the wanted keys, indexed as `ScanSpec.provKeys`; undefined where the key is absent. */
  vals: (PyValue | undefined)[];
  /** The `text` member when it is a string and texts were asked for. */
  text?: TextRef;
  /** The `text` member is present (a string or not). */
  hasText: boolean;
  /** The `text` member is present but not a string. */
  textValue?: PyValue;
}

export interface OutputView {
  object: boolean;
  hasAnswer: boolean;
  answer?: PyValue;
  hasProvenance: boolean;
  /** The provenance value is a list (false: absent or another type). */
  provenanceList: boolean;
  provenance: ProvEntry[];
}

export interface RecordView {
  hasId: boolean;
  id?: PyValue;
  hasInput: boolean;
  input?: PyValue;
  hasOutput: boolean;
  /** The output value is a list. */
  outputList: boolean;
  outputs: OutputView[];
  /** Some value of a wanted provenance key is a list or an object (so callers need not look for one otherwise). */
  compositeVals: boolean;
}

export interface ScanSpec {
  /** Provenance keys whose values are wanted (rank keys, wikipedia_id, title...). */
  provKeys: readonly string[];
  /** Keep `text` members of provenance entries as TextRefs. */
  texts: boolean;
  /** Recycle the view, its outputs and provenance entries: a view is valid only until the next `scanRecord` (streaming callers). */
  reuse?: boolean;
  /**
   * Provenance keys (of `provKeys`), and `"input"`, whose string values are validated but not decoded:
   * their PyValue has kind Str, Python truthiness, and `str` "" (for values only checked, never read).
   */
  kindOnly?: readonly string[];
}

/** The shared limits of every JSON-line reader (src/records/record-limits.ts). */
export { MAX_DEPTH } from "../records/record-limits.js";

const enc = new TextEncoder();

/** Member names for `Scanner.member`: their bytes, and whether each is plain (printable ASCII without `"` or `\`). */
interface Names {
  bytes: Uint8Array[];
  plain: boolean[];
}
function names(list: readonly string[]): Names {
  const bytes = list.map((name) => enc.encode(name));
  return { bytes, plain: bytes.map((b) => b.every((c) => c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c)) };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Bytes that end a run of plain string contents: controls, '"', '\\' and non-ASCII (1). */
const STOP = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STOP[c] = 1;
STOP[QUOTE] = 1;
STOP[BACKSLASH] = 1;
for (let c = 0x80; c < 0x100; c++) STOP[c] = 1;

/** Why the last scan failed (a short reason; the strict reader gives the full message). */
export let scanFailure = "";
/** Provenance entries of the record being scanned (against MAX_RECORD_OBJECTS). */
let provenanceSeen = 0;

/**
 * Whether the last line scanned had a byte >= 0x80 in a string (or failed before that could be known).
 * A line it accepted without one is ASCII, so valid UTF-8: callers check UTF-8 only when this is set.
 */
export let scanSawNonAscii = false;

class Fail extends Error {}
const FAIL = new Fail();

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

const latin1 = new TextDecoder("latin1");
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

/** Decodes a TextRef's string value. */
export function textOf(t: TextRef): string {
  const s = decode(t.buf, t.ascii, t.start, t.end);
  return t.escaped ? (JSON.parse(`"${s}"`) as string) : s;
}

function set(v: PyValue, str: string, kind: Kind, falsy: boolean): PyValue {
  v.str = str;
  v.kind = kind;
  v.falsy = falsy;
  return v;
}

/** A scanner over one line; `scanRecord` is the entry point. */
class Scanner {
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
    let p = this.pos + 1;
    let escaped = false;
    let high = false;
    for (;;) {
      // Plain bytes four at a time (aligned words): stop at a word holding a byte < 0x20, '"', '\' or >= 0x80.
      if (((p - delta) & 3) === 0 && p >= delta) {
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
    const delta = (4 - (buf.byteOffset & 3)) & 3;
    this.wordDelta = delta;
    this.words = buf.length > delta ? new Int32Array(buf.buffer, buf.byteOffset + delta, (buf.length - delta) >> 2) : new Int32Array(0);
  }
  words: Int32Array = new Int32Array(0);
  wordDelta = 0;
  wordsOf: Buffer = Buffer.alloc(0);

  /** At a `"`: the decoded string. */
  readString(): string {
    const start = this.pos + 1;
    const close = this.scanStringRange();
    this.pos = close + 1;
    const s = decode(this.buf, this.sAscii, start, close);
    return this.sEscaped ? (JSON.parse(`"${s}"`) as string) : s;
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
    const plain = names.plain;
    const b = this.buf;
    const p = this.pos;
    const end = this.end;
    if (p < end && b[p] === QUOTE) {
      for (let j = 0; j < list.length; j++) {
        if (!plain[j]) continue;
        const k = list[j];
        const n = k.length;
        const q = p + 1 + n;
        if (q >= end || b[q] !== QUOTE) continue;
        let i = 0;
        while (i < n && b[p + 1 + i] === k[i]) i++;
        if (i === n) {
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
          scanFailure = NESTING_REASON;
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
        return set(v, "", Kind.Str, close === start);
      }
      const s = this.readString();
      return set(v, s, Kind.Str, s.length === 0);
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
      return set(v, "", c === 0x7b ? Kind.Object : Kind.Array, p === this.pos - 1);
    }
    if (c === 0x74) {
      this.literal("true");
      return set(v, "True", Kind.True, false);
    }
    if (c === 0x66) {
      this.literal("false");
      return set(v, "False", Kind.False, true);
    }
    if (c === 0x6e) {
      this.literal("null");
      return set(v, "None", Kind.Null, true);
    }
    const tok = this.numberToken();
    return set(v, pyStrOfNumber(tok, this.numIsInt), this.numIsInt ? Kind.Int : Kind.Float, Number(tok) === 0);
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

const scanner = new Scanner();
const EMPTY = Buffer.alloc(0);
/** A spec's provenance keys as bytes, which of them are kind-only, and whether the input is. */
interface SpecBytes {
  keys: Uint8Array[];
  kindOnly: boolean[];
  inputKindOnly: boolean;
  /** The names a provenance entry's members are matched against: the keys, "text", then names known to be skipped. */
  provNames: Names;
}

/** Provenance members of KILT files that are skipped unless asked for (recognized without scanning the name). */
const PROV_SKIPPED = ["title", "start_paragraph_id", "end_paragraph_id", "start_character", "end_character", "bleu_score", "section", "meta"];
const RECORD_NAMES = names(["id", "input", "output"]);
const OUTPUT_NAMES = names(["answer", "provenance"]);
const specKeys = new WeakMap<ScanSpec, SpecBytes>();

/** The record view reused from line to line (`ScanSpec.reuse`). */
const pooledRecord: RecordView = { hasId: false, hasInput: false, hasOutput: false, outputList: false, outputs: [], compositeVals: false };

/** A provenance entry with its own value and text objects, reused from record to record (`ScanSpec.reuse`). */
interface PooledEntry extends ProvEntry {
  pooledVals: PyValue[];
  pooledText: TextRef;
}
const pool: PooledEntry[] = [];
let pooledUsed = 0;
/** Set by `provEntry` when a wanted key's value is a list or object (`RecordView.compositeVals`). */
let compositeSeen = false;

function newEntry(keys: number, reuse: boolean): ProvEntry {
  if (!reuse) return { object: true, vals: new Array<PyValue | undefined>(keys), hasText: false };
  let e = pool[pooledUsed];
  if (e === undefined || e.pooledVals.length !== keys) {
    e = {
      object: true,
      vals: new Array<PyValue | undefined>(keys),
      hasText: false,
      pooledVals: Array.from({ length: keys }, () => ({ str: "", kind: Kind.Null, falsy: true })),
      pooledText: { buf: EMPTY, start: 0, end: 0, escaped: false, ascii: true },
    };
    pool[pooledUsed] = e;
  } else {
    e.object = true;
    const vals = e.vals;
    for (let i = 0; i < vals.length; i++) vals[i] = undefined;
    e.hasText = false;
    e.text = undefined;
    e.textValue = undefined;
    e.pooledText.buf = EMPTY;
  }
  pooledUsed++;
  return e;
}

function provEntry(s: Scanner, spec: ScanSpec, sb: SpecBytes, depth: number): ProvEntry {
  const keys = sb.keys;
  if (s.peek() !== 0x7b) {
    s.skipValue(depth);
    return { object: false, vals: [], hasText: false };
  }
  const reuse = spec.reuse === true;
  const entry = newEntry(keys.length, reuse);
  const vals = entry.vals;
  if (!s.open(0x7d)) return entry;
  const nk = keys.length;
  do {
    const i = s.member(sb.provNames);
    if (i >= 0 && i < nk) {
      const v = reuse ? s.valueInto((entry as PooledEntry).pooledVals[i], depth + 1, sb.kindOnly[i]) : s.value(depth + 1, sb.kindOnly[i]);
      vals[i] = v;
      if (v.kind === Kind.Array || v.kind === Kind.Object) compositeSeen = true;
    }
    else if (i === nk && spec.texts) {
      entry.hasText = true;
      if (s.peek() === QUOTE) {
        const start = s.pos + 1;
        const close = s.scanStringRange();
        s.pos = close + 1;
        const t: TextRef = reuse ? (entry as PooledEntry).pooledText : { buf: EMPTY, start: 0, end: 0, escaped: false, ascii: true };
        t.buf = s.buf;
        t.start = start;
        t.end = close;
        t.escaped = s.sEscaped;
        t.ascii = s.sAscii;
        entry.text = t;
        entry.textValue = undefined;
      } else {
        entry.text = undefined;
        entry.textValue = s.value(depth + 1);
      }
    } else s.skipValue(depth + 1);
  } while (s.more(0x7d));
  return entry;
}

/** Output views reused from line to line (`ScanSpec.reuse`), with their provenance arrays. */
const outputPool: OutputView[] = [];
let outputsUsed = 0;

function newOutput(reuse: boolean): OutputView {
  if (!reuse) return { object: false, hasAnswer: false, hasProvenance: false, provenanceList: false, provenance: [] };
  let out = outputPool[outputsUsed];
  if (out === undefined) {
    out = { object: false, hasAnswer: false, hasProvenance: false, provenanceList: false, provenance: [] };
    outputPool[outputsUsed] = out;
  } else {
    out.object = false;
    out.hasAnswer = false;
    out.answer = undefined;
    out.hasProvenance = false;
    out.provenanceList = false;
    out.provenance.length = 0;
  }
  outputsUsed++;
  return out;
}

function outputItem(s: Scanner, spec: ScanSpec, keys: SpecBytes, depth: number): OutputView {
  const reuse = spec.reuse === true;
  const out = newOutput(reuse);
  if (s.peek() !== 0x7b) {
    s.skipValue(depth);
    return out;
  }
  out.object = true;
  if (!s.open(0x7d)) return out;
  do {
    const m = s.member(OUTPUT_NAMES);
    if (m === 0) {
      out.hasAnswer = true;
      out.answer = s.value(depth + 1);
    } else if (m === 1) {
      out.hasProvenance = true;
      if (reuse) out.provenance.length = 0;
      else out.provenance = [];
      if (s.peek() === 0x5b) {
        out.provenanceList = true;
        if (depth + 2 > MAX_DEPTH) throw FAIL;
        if (s.open(0x5d))
          do {
            // Memory per record is bounded: past the limit the line is malformed (named by file:line).
            if (++provenanceSeen > MAX_RECORD_OBJECTS) {
              scanFailure = OBJECTS_REASON;
              throw FAIL;
            }
            out.provenance.push(provEntry(s, spec, keys, depth + 2));
          } while (s.more(0x5d));
      } else {
        out.provenanceList = false;
        s.skipValue(depth + 1);
      }
    } else s.skipValue(depth + 1);
  } while (s.more(0x7d));
  return out;
}

/**
 * Scans one JSONL line `buf[start, end)` (no newline) into a RecordView, or returns null when the
 * line is not a JSON object (see `scanFailure`; take the strict reader's message for the user).
 * With `spec.reuse`, provenance entries are recycled: the view is valid until the next call.
 */
export function scanRecord(buf: Buffer, start: number, end: number, spec: ScanSpec): RecordView | null {
  let keys = specKeys.get(spec);
  if (!keys) {
    const kindOnly = spec.kindOnly ?? [];
    keys = {
      keys: spec.provKeys.map((k) => enc.encode(k)),
      kindOnly: spec.provKeys.map((k) => kindOnly.includes(k)),
      inputKindOnly: kindOnly.includes("input"),
      provNames: names([...spec.provKeys, "text", ...PROV_SKIPPED]),
    };
    specKeys.set(spec, keys);
  }
  const s = scanner;
  s.setBuffer(buf);
  s.pos = start;
  s.end = end;
  scanFailure = "";
  provenanceSeen = 0;
  pooledUsed = 0;
  outputsUsed = 0;
  compositeSeen = false;
  s.sawHigh = false;
  scanSawNonAscii = true;
  const reuse = spec.reuse === true;
  const rec: RecordView = reuse ? pooledRecord : { hasId: false, hasInput: false, hasOutput: false, outputList: false, outputs: [], compositeVals: false };
  if (reuse) {
    rec.hasId = false;
    rec.id = undefined;
    rec.hasInput = false;
    rec.input = undefined;
    rec.hasOutput = false;
    rec.outputList = false;
    rec.outputs.length = 0;
    rec.compositeVals = false;
  }
  try {
    s.ws();
    if (s.peek() !== 0x7b) throw FAIL;
    if (s.open(0x7d))
      do {
        const m = s.member(RECORD_NAMES);
        if (m === 0) {
          rec.hasId = true;
          rec.id = s.value(1);
        } else if (m === 1) {
          rec.hasInput = true;
          rec.input = s.value(1, keys.inputKindOnly);
        } else if (m === 2) {
          rec.hasOutput = true;
          if (reuse) rec.outputs.length = 0;
          else rec.outputs = [];
          if (s.peek() === 0x5b) {
            rec.outputList = true;
            if (s.open(0x5d)) do rec.outputs.push(outputItem(s, spec, keys, 2));
              while (s.more(0x5d));
          } else {
            rec.outputList = false;
            s.skipValue(1);
          }
        } else s.skipValue(1);
      } while (s.more(0x7d));
    s.ws();
    if (s.pos !== end) throw FAIL;
    rec.compositeVals = compositeSeen;
    scanSawNonAscii = s.sawHigh;
    return rec;
  } catch (e) {
    if (e instanceof Fail) {
      if (!scanFailure) scanFailure = `invalid JSON near byte ${s.pos - start}`;
      return null;
    }
    throw e;
  } finally {
    s.buf = EMPTY;
  }
}

// ---- the same view from a parsed JavaScript value (records given in memory) -------------------------

function pyValueOf(v: unknown): PyValue {
  if (typeof v === "string") return { str: v, kind: Kind.Str, falsy: v.length === 0 };
  if (v === true) return { str: "True", kind: Kind.True, falsy: false };
  if (v === false) return { str: "False", kind: Kind.False, falsy: true };
  if (v === null || v === undefined) return { str: "None", kind: Kind.Null, falsy: true };
  if (typeof v === "number") {
    const isInt = Number.isInteger(v) && Math.abs(v) < 1e16;
    return { str: isInt ? String(v) : pyFloatRepr(v), kind: isInt ? Kind.Int : Kind.Float, falsy: v === 0 };
  }
  if (typeof v === "bigint") return { str: v.toString(), kind: Kind.Int, falsy: v === 0n };
  if (Array.isArray(v)) return { str: "", kind: Kind.Array, falsy: v.length === 0 };
  return { str: "", kind: Kind.Object, falsy: Object.keys(v as object).length === 0 };
}

const textEncoder = new TextEncoder();

/** The PyValue of a member of a parsed object, undefined when it is absent. */
const memberValue = (o: Record<string, unknown>, key: string): PyValue | undefined => (key in o ? pyValueOf(o[key]) : undefined);

/**
 * The RecordView of a record already parsed into JavaScript values (library calls with arrays).
 * Numbers are Python ints when integral and below 1e16 (JavaScript cannot tell `5.0` from `5`).
 */
export function viewOfValue(rec: unknown, spec: ScanSpec): RecordView {
  const view: RecordView = { hasId: false, hasInput: false, hasOutput: false, outputList: false, outputs: [], compositeVals: false };
  if (rec === null || typeof rec !== "object" || Array.isArray(rec)) return view;
  const r = rec as Record<string, unknown>;
  view.hasId = "id" in r;
  view.id = memberValue(r, "id");
  view.hasInput = "input" in r;
  view.input = memberValue(r, "input");
  if ("output" in r) {
    view.hasOutput = true;
    view.outputList = Array.isArray(r.output);
    if (Array.isArray(r.output)) {
      for (const o of r.output as unknown[]) {
        const out: OutputView = { object: false, hasAnswer: false, hasProvenance: false, provenanceList: false, provenance: [] };
        view.outputs.push(out);
        if (o === null || typeof o !== "object" || Array.isArray(o)) continue;
        out.object = true;
        const oo = o as Record<string, unknown>;
        out.hasAnswer = "answer" in oo;
        out.answer = memberValue(oo, "answer");
        if ("provenance" in oo) {
          out.hasProvenance = true;
          out.provenanceList = Array.isArray(oo.provenance);
          if (Array.isArray(oo.provenance)) {
            for (const p of oo.provenance as unknown[]) {
              if (p === null || typeof p !== "object" || Array.isArray(p)) {
                out.provenance.push({ object: false, vals: [], hasText: false });
                continue;
              }
              const pp = p as Record<string, unknown>;
              const entry: ProvEntry = { object: true, vals: spec.provKeys.map((k) => memberValue(pp, k)), hasText: false };
              if (entry.vals.some((v) => v !== undefined && (v.kind === Kind.Array || v.kind === Kind.Object))) view.compositeVals = true;
              if (spec.texts && "text" in pp) {
                entry.hasText = true;
                if (typeof pp.text === "string") {
                  const bytes = Buffer.from(JSON.stringify(pp.text).slice(1, -1), "utf8");
                  let high = 0;
                  for (const b of bytes) high |= b;
                  entry.text = { buf: bytes, start: 0, end: bytes.length, escaped: bytes.includes(BACKSLASH), ascii: high < 0x80 };
                } else entry.textValue = pyValueOf(pp.text);
              }
              out.provenance.push(entry);
            }
          }
        }
      }
    }
  }
  return view;
}
