// Byte-level coding for the BM25 files (./format.ts): growable output buffers written to a file as they
// fill, variable-length integers (7 bits a byte, up to 2^53), and bit packing of 128-value blocks.

import { closeSync, openSync, readSync, writeSync } from "node:fs";

/** An append-only byte buffer; `flushTo` writes what it holds to a file descriptor. */
export class ByteSink {
  buf: Uint8Array;
  pos = 0;
  constructor(capacity = 1 << 16) {
    this.buf = new Uint8Array(capacity);
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  u32(v: number): void {
    this.ensure(4);
    const b = this.buf;
    let p = this.pos;
    b[p++] = v & 0xff;
    b[p++] = (v >>> 8) & 0xff;
    b[p++] = (v >>> 16) & 0xff;
    b[p++] = (v >>> 24) & 0xff;
    this.pos = p;
  }
  f32(v: number): void {
    F32[0] = v;
    this.bytes(F32B);
  }
  f64(v: number): void {
    F64[0] = v;
    this.bytes(F64B);
  }
  /** Unsigned integer < 2^53, 7 bits a byte, low bits first. */
  varint(v: number): void {
    this.ensure(8);
    const b = this.buf;
    let p = this.pos;
    if (v < 0x10000000) {
      while (v >= 0x80) {
        b[p++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      b[p++] = v;
    } else {
      this.ensure(10);
      while (v >= 0x80) {
        b[p++] = (v % 128) | 0x80;
        v = Math.floor(v / 128);
      }
      b[p++] = v;
    }
    this.pos = p;
  }
  bytes(src: Uint8Array): void {
    this.ensure(src.length);
    this.buf.set(src, this.pos);
    this.pos += src.length;
  }
  /** Writes the contents to `fd` and empties the buffer; returns the bytes written. */
  flushTo(fd: number): number {
    const n = this.pos;
    let off = 0;
    while (off < n) off += writeSync(fd, this.buf, off, n - off);
    this.pos = 0;
    return n;
  }
}

const F32 = new Float32Array(1);
const F32B = new Uint8Array(F32.buffer);
const F64 = new Float64Array(1);
const F64B = new Uint8Array(F64.buffer);

/** A cursor over bytes in memory. */
export class ByteSource {
  pos: number;
  constructor(
    public buf: Uint8Array,
    pos = 0,
    public end = buf.length,
  ) {
    this.pos = pos;
  }
  u8(): number {
    if (this.pos >= this.end) throw new RangeError("read past the end");
    return this.buf[this.pos++];
  }
  u32(): number {
    if (this.pos + 4 > this.end) throw new RangeError("read past the end");
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
  }
  f32(): number {
    if (this.pos + 4 > this.end) throw new RangeError("read past the end");
    for (let i = 0; i < 4; i++) F32B[i] = this.buf[this.pos++];
    return F32[0];
  }
  f64(): number {
    if (this.pos + 8 > this.end) throw new RangeError("read past the end");
    for (let i = 0; i < 8; i++) F64B[i] = this.buf[this.pos++];
    return F64[0];
  }
  varint(): number {
    const b = this.buf;
    let p = this.pos;
    const end = this.end;
    let v = 0;
    let shift = 0;
    for (;;) {
      if (p >= end) throw new RangeError("read past the end");
      const c = b[p++];
      if (shift < 28) v |= (c & 0x7f) << shift;
      else v += (c & 0x7f) * 2 ** shift;
      if (c < 0x80) break;
      shift += 7;
      if (shift > 56) throw new RangeError("varint too long");
    }
    this.pos = p;
    return v < 0 ? v >>> 0 : v;
  }
}

/** Bits needed for `v` (0 for 0). */
export function bitWidth(v: number): number {
  return v === 0 ? 0 : v >= 0x100000000 ? 33 : 32 - Math.clz32(v);
}

/** Values per block of postings. */
export const BLOCK = 128;

/** Appends BLOCK values of `width` bits (≤ 32) from `values` to `out`: exactly 16 × width bytes. */
export function packBlock(out: ByteSink, values: Uint32Array | Int32Array, width: number): void {
  if (width === 0) return;
  out.ensure(16 * width);
  const b = out.buf;
  let p = out.pos;
  let word = 0;
  let used = 0;
  for (let i = 0; i < BLOCK; i++) {
    const v = values[i] >>> 0;
    word |= v << used;
    used += width;
    if (used >= 32) {
      b[p++] = word & 0xff;
      b[p++] = (word >>> 8) & 0xff;
      b[p++] = (word >>> 16) & 0xff;
      b[p++] = (word >>> 24) & 0xff;
      used -= 32;
      word = used === 0 ? 0 : v >>> (width - used);
    }
  }
  out.pos = p;
}

/** Reads BLOCK values of `width` bits from `buf` at `pos` into `out`; returns the position after them. */
export function unpackBlock(buf: Uint8Array, pos: number, width: number, out: Int32Array): number {
  if (width === 0) {
    out.fill(0, 0, BLOCK);
    return pos;
  }
  const end = pos + 16 * width;
  if (end > buf.length) throw new RangeError("read past the end");
  const mask = width === 32 ? -1 : (1 << width) - 1;
  let p = pos;
  let word = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24);
  p += 4;
  let used = 0;
  for (let i = 0; i < BLOCK; i++) {
    let v = word >>> used;
    used += width;
    if (used >= 32) {
      used -= 32;
      if (p < end) {
        word = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24);
        p += 4;
        if (used > 0) v |= word << (width - used);
      }
    }
    out[i] = v & mask;
  }
  return end;
}

/** Whether typed arrays are little-endian here (the word decoders below view packed bytes as 32-bit words). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/** Aligned scratch for one packed block: up to 128 words, plus a zero word the decoders may read past. */
const WORDS = new Int32Array(BLOCK + 1);

/** Copies the 16 × width bytes of a packed block at `pos` into WORDS (word by word: no view allocated). */
function loadWords(buf: Uint8Array, pos: number, width: number): void {
  const words = 4 * width;
  if (pos + 4 * words > buf.length) throw new RangeError("read past the end");
  for (let k = 0, p = pos; k < words; k++, p += 4) WORDS[k] = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24);
  WORDS[words] = 0;
}

/**
 * Decoders of one packed block for each width 1-32, unrolled (as Lucene's generated ForUtil): value i is
 * bits [i × width, (i + 1) × width) of the little-endian words, so every shift is a constant. Made once
 * with `new Function` (2.5× the speed of a loop over the values in a micro-benchmark); where code
 * generation is not allowed, or on a big-endian machine, the loop below is used instead.
 * `gaps`: out[i] = prev + Σ (value + 1) (docs from gaps); `plusOne`: out[i] = value + 1 (tfs).
 */
type Decoder = (w: Int32Array, prev: number, out: Int32Array) => void;
function makeDecoders(gaps: boolean): Decoder[] | null {
  if (!LITTLE_ENDIAN) return null;
  try {
    const out: Decoder[] = [];
    for (let width = 1; width <= 32; width++) {
      const mask = width === 32 ? -1 : (1 << width) - 1;
      let src = "let d = prev;\n";
      for (let i = 0; i < BLOCK; i++) {
        const bit = i * width;
        const k = bit >>> 5;
        const sh = bit & 31;
        let e = sh === 0 ? `w[${k}]` : `(w[${k}] >>> ${sh})`;
        if (sh + width > 32) e = `(${e} | (w[${k + 1}] << ${32 - sh}))`;
        if (width < 32 || sh !== 0) e = `(${e} & ${mask})`;
        src += gaps ? `d += ${e} + 1; out[${i}] = d;\n` : `out[${i}] = ${e} + 1;\n`;
      }
      out[width] = new Function("w", "prev", "out", src) as Decoder;
    }
    return out;
  } catch {
    return null;
  }
}
const GAPS = makeDecoders(true);
const PLUS_ONE = makeDecoders(false);

/** Decodes value i of the block in WORDS (the generic path). */
function wordValue(bit: number, mask: number): number {
  const k = bit >>> 5;
  const sh = bit & 31;
  return ((WORDS[k] >>> sh) | ((WORDS[k + 1] << 1) << (31 - sh))) & mask;
}

/**
 * Decodes a packed block of BLOCK gaps (doc − previous doc − 1, `width` bits each) at `pos` into the docs
 * themselves, starting after `prev`; returns the position after the block.
 */
export function unpackGaps(buf: Uint8Array, pos: number, width: number, prev: number, out: Int32Array): number {
  let d = prev;
  if (width === 0) {
    for (let i = 0; i < BLOCK; i++) out[i] = ++d;
    return pos;
  }
  if (!LITTLE_ENDIAN) {
    const end = unpackBlock(buf, pos, width, out);
    for (let i = 0; i < BLOCK; i++) out[i] = d += (out[i] >>> 0) + 1;
    return end;
  }
  loadWords(buf, pos, width);
  if (GAPS) GAPS[width](WORDS, prev, out);
  else {
    const mask = width === 32 ? -1 : (1 << width) - 1;
    for (let i = 0; i < BLOCK; i++) out[i] = d += wordValue(i * width, mask) + 1;
  }
  return pos + 16 * width;
}

/** Decodes a packed block of BLOCK values (`width` bits each) at `pos` as value + 1 into `out`; returns the position after it. */
export function unpackPlusOne(buf: Uint8Array, pos: number, width: number, out: Int32Array): number {
  if (width === 0) {
    out.fill(1, 0, BLOCK);
    return pos;
  }
  if (!LITTLE_ENDIAN) {
    const end = unpackBlock(buf, pos, width, out);
    for (let i = 0; i < BLOCK; i++) out[i] += 1;
    return end;
  }
  loadWords(buf, pos, width);
  if (PLUS_ONE) PLUS_ONE[width](WORDS, 0, out);
  else {
    const mask = width === 32 ? -1 : (1 << width) - 1;
    for (let i = 0; i < BLOCK; i++) out[i] = wordValue(i * width, mask) + 1;
  }
  return pos + 16 * width;
}

/** A file written through a ByteSink, tracking the bytes written. */
export class OutFile {
  readonly fd: number;
  readonly sink = new ByteSink(1 << 20);
  written = 0;
  /** `onFlush(bytes)` sees every byte written (e.g. to hash them). */
  constructor(
    readonly path: string,
    private readonly onFlush?: (bytes: Uint8Array) => void,
  ) {
    this.fd = openSync(path, "wx");
  }
  private flush(): void {
    this.onFlush?.(this.sink.buf.subarray(0, this.sink.pos));
    this.written += this.sink.flushTo(this.fd);
  }
  /** Absolute position of the next byte. */
  get position(): number {
    return this.written + this.sink.pos;
  }
  /** Writes the buffer out when it holds more than `threshold` bytes. */
  maybeFlush(threshold = 1 << 20): void {
    if (this.sink.pos >= threshold) this.flush();
  }
  close(): number {
    this.flush();
    closeSync(this.fd);
    return this.written;
  }
}

/** Reads exactly `length` bytes at `position` of `fd` into `buf` at `offset`, or throws naming `file`. */
export function readFully(fd: number, buf: Uint8Array, offset: number, length: number, position: number, file: string): void {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, offset + done, length - done, position + done);
    if (n === 0) throw new Error(`${file}: truncated (wanted ${length} bytes at ${position}, the file ends at ${position + done})`);
    done += n;
  }
}

/** Sequential reads of a file through a buffer (for merging segment files). */
export class InFile {
  readonly fd: number;
  private readonly src: ByteSource;
  /** File position of src.buf[0]. */
  private base = 0;
  private fileEnd: number;
  constructor(
    readonly path: string,
    start: number,
    end: number,
    private readonly chunk = 1 << 20,
  ) {
    this.fd = openSync(path, "r");
    this.fileEnd = end;
    this.base = start;
    this.src = new ByteSource(new Uint8Array(chunk + 64), 0, 0);
  }
  /** Makes at least `n` bytes (or what is left of the file) available from src.pos; returns the source. */
  need(n: number): ByteSource {
    const s = this.src;
    if (s.end - s.pos >= n) return s;
    const keep = s.end - s.pos;
    if (s.buf.length < n + 64) {
      const next = new Uint8Array(Math.max(n + 64, s.buf.length * 2));
      next.set(s.buf.subarray(s.pos, s.end));
      s.buf = next;
    } else s.buf.copyWithin(0, s.pos, s.end);
    this.base += s.pos;
    s.pos = 0;
    s.end = keep;
    const want = Math.min(s.buf.length - keep, this.fileEnd - (this.base + keep));
    if (want > 0) {
      readFully(this.fd, s.buf, keep, want, this.base + keep, this.path);
      s.end = keep + want;
    }
    return s;
  }
  /** Whether every byte up to the end was consumed. */
  get atEnd(): boolean {
    return this.base + this.src.pos >= this.fileEnd;
  }
  close(): void {
    closeSync(this.fd);
  }
}
