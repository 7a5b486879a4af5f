// The BM25 on-disk format (format version 2): four files in the index directory, each starting with the
// same 32-byte header, read on demand with positional reads (only the term index and the norms are held
// in memory), so opening an index of 22M passages takes a moment and a query reads only its terms.
//
// Header (32 bytes, every file):  "TARTBM25" | u32 format version | u32 file tag | 16-byte build id
//   The build id is a hash of the four files' bodies, repeated in manifest.json (params.buildId): a file
//   from another build is refused at open. The manifest also lists each file's size and CRC-32.
//
// bm25.terms      the term dictionary: terms in UTF-16 code-unit order (JavaScript's `<`), in blocks of
//                 TERMS_PER_BLOCK, front-coded within a block. Entry: varint prefix (bytes shared with the
//                 previous term of the block), varint suffix length, suffix bytes (UTF-8), varint docFreq,
//                 varint bytes of the term's postings.
// bm25.termindex  one 24-byte entry per dictionary block, then a sentinel entry: f64 offset of the block
//                 in bm25.terms, f64 offset of its first term's postings in bm25.postings, u32 offset and
//                 u32 length of the block's first term in the term-bytes area that follows the entries.
// bm25.postings   each term's postings, in dictionary order. With docFreq ≥ BLOCK (128):
//                   f32 the term's largest x = tf × normInverse[norm] (its score bound),
//                   per full block: varint (last doc − previous block's last doc), varint block bytes,
//                     f32 the block's largest x (block-max pruning),
//                   full blocks: u8 doc bits, u8 tf bits, 128 (doc − previous doc − 1) bit-packed,
//                     128 (tf − 1) bit-packed,
//                   the tail (docFreq mod 128 postings).
//                 The tail, and all postings of a rarer term: varint ((doc − previous doc − 1) × 2 + (tf = 1)),
//                 then varint (tf − 2) when tf > 1. The first "previous doc" is −1.
// bm25.norms      one byte per unit: its length (terms indexed) as Lucene's SmallFloat.intToByte4.
// Scoring statistics (units, docCount, sumTotalTermFreq, k1, b, analyzer) are in manifest.json's params.

import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { BLOCK, ByteSink, ByteSource, OutFile, bitWidth, packBlock, readFully, unpackGaps, unpackPlusOne } from "./codec.js";

const f = Math.fround;

/**
 * A score bound `b` cannot beat a threshold `t` when b × SEARCH_SAFETY ≤ t (scores are sums of float parts
 * in double; the relative margin guards the comparison against rounding in the sums of bounds).
 */
export const SEARCH_SAFETY = 1 + 1e-12;

export const FORMAT_VERSION = 2;
export const MAGIC = "TARTBM25";
export const HEADER_BYTES = 32;
export const TERMS_PER_BLOCK = 32;
export { BLOCK };

export const FILES = { terms: "bm25.terms", termindex: "bm25.termindex", postings: "bm25.postings", norms: "bm25.norms" } as const;
export type Bm25File = keyof typeof FILES;
const TAGS: Record<Bm25File, number> = { terms: 1, termindex: 2, postings: 3, norms: 4 };

/** The 32-byte header of file `which` for build `buildId` (32 hex digits). */
export function fileHeader(which: Bm25File, buildId: string): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  h.write(MAGIC, 0, "latin1");
  h.writeUInt32LE(FORMAT_VERSION, 8);
  h.writeUInt32LE(TAGS[which], 12);
  Buffer.from(buildId, "hex").copy(h, 16);
  return h;
}

/** Checks the header of `dir`'s file `which` (size ≥ header, magic, version, tag, build id); returns its size. */
export function checkFileHeader(dir: string, which: Bm25File, buildId: string): number {
  const path = join(dir, FILES[which]);
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    throw new Error(`${path}: missing (${(e as Error).message})`);
  }
  try {
    const size = fstatSync(fd).size;
    if (size < HEADER_BYTES) throw new Error(`${path}: truncated (${size} bytes, less than its header)`);
    const h = Buffer.alloc(HEADER_BYTES);
    readFully(fd, h, 0, HEADER_BYTES, 0, path);
    if (h.toString("latin1", 0, 8) !== MAGIC) throw new Error(`${path}: not a tartan BM25 file (bad magic)`);
    const version = h.readUInt32LE(8);
    if (version !== FORMAT_VERSION) throw new Error(`${path}: BM25 format ${version}, this tartan reads ${FORMAT_VERSION} (rebuild the index)`);
    if (h.readUInt32LE(12) !== TAGS[which]) throw new Error(`${path}: header names another BM25 file (tag ${h.readUInt32LE(12)})`);
    const id = h.toString("hex", 16, 32);
    if (id !== buildId) throw new Error(`${path}: from another build (build id ${id}, manifest.json says ${buildId})`);
    return size;
  } finally {
    closeSync(fd);
  }
}

/** Encodes one term's postings, fed in increasing doc order. */
export class TermEncoder {
  private readonly blocks = new ByteSink(1 << 16);
  private readonly skips = new ByteSink(1 << 10);
  private readonly tail = new ByteSink(1 << 10);
  private readonly docs = new Int32Array(BLOCK);
  private readonly tfs = new Int32Array(BLOCK);
  private readonly xs = new Float32Array(BLOCK);
  private n = 0;
  private count = 0;
  private last = -1;
  private lastBlockDoc = -1;
  private termMax = 0;
  constructor(private readonly normInverse: Float32Array) {}

  reset(): void {
    this.blocks.pos = this.skips.pos = this.tail.pos = 0;
    this.n = this.count = 0;
    this.last = this.lastBlockDoc = -1;
    this.termMax = 0;
  }

  /** The posting (doc, tf) whose unit has norm byte `norm`. */
  add(doc: number, tf: number, norm: number): void {
    const i = this.n++;
    this.docs[i] = doc;
    this.tfs[i] = tf;
    const x = Math.fround(tf * this.normInverse[norm]);
    this.xs[i] = x;
    if (x > this.termMax) this.termMax = x;
    this.count++;
    if (this.n === BLOCK) this.fullBlock();
  }

  private fullBlock(): void {
    const { docs, tfs, xs } = this;
    let prev = this.last;
    let maxDelta = 0;
    let maxTf = 0;
    let maxX = 0;
    const deltas = SCRATCH_D;
    const tfm = SCRATCH_T;
    for (let i = 0; i < BLOCK; i++) {
      const d = docs[i] - prev - 1;
      prev = docs[i];
      deltas[i] = d;
      if (d > maxDelta) maxDelta = d;
      const t = tfs[i] - 1;
      tfm[i] = t;
      if (t > maxTf) maxTf = t;
      if (xs[i] > maxX) maxX = xs[i];
    }
    const start = this.blocks.pos;
    const db = bitWidth(maxDelta);
    const tb = bitWidth(maxTf);
    if (db > 32 || tb > 32) throw new RangeError("posting values exceed 32 bits");
    this.blocks.u8(db);
    this.blocks.u8(tb);
    packBlock(this.blocks, deltas, db);
    packBlock(this.blocks, tfm, tb);
    this.skips.varint(prev - this.lastBlockDoc);
    this.skips.varint(this.blocks.pos - start);
    this.skips.f32(maxX);
    this.lastBlockDoc = prev;
    this.last = prev;
    this.n = 0;
  }

  /** Writes the term's postings to `out`; returns [docFreq, bytes]. */
  finish(out: ByteSink): [number, number] {
    const start = out.pos;
    let prev = this.last;
    for (let i = 0; i < this.n; i++) {
      const d = this.docs[i] - prev - 1;
      prev = this.docs[i];
      const tf = this.tfs[i];
      this.tail.varint(d * 2 + (tf === 1 ? 1 : 0));
      if (tf !== 1) this.tail.varint(tf - 2);
    }
    if (this.count >= BLOCK) {
      out.f32(this.termMax);
      out.bytes(this.skips.buf.subarray(0, this.skips.pos));
      out.bytes(this.blocks.buf.subarray(0, this.blocks.pos));
    }
    out.bytes(this.tail.buf.subarray(0, this.tail.pos));
    const result: [number, number] = [this.count, out.pos - start];
    this.reset();
    return result;
  }
}

const SCRATCH_D = new Int32Array(BLOCK);
const SCRATCH_T = new Int32Array(BLOCK);

/** Writes the dictionary (to `terms`, after its header) and collects the term index as terms arrive in order. */
export class DictionaryWriter {
  readonly index = new ByteSink(1 << 16);
  readonly firstTerms = new ByteSink(1 << 16);
  private inBlock = 0;
  private prev: Uint8Array = new Uint8Array(0);
  count = 0;

  constructor(private readonly terms: OutFile) {}

  /** Adds a term whose postings start at `postingsOffset` in bm25.postings. */
  add(term: Uint8Array, docFreq: number, postingsBytes: number, postingsOffset: number): void {
    let prefix = 0;
    if (this.inBlock === TERMS_PER_BLOCK) this.inBlock = 0;
    if (this.inBlock === 0) {
      this.index.f64(this.terms.position);
      this.index.f64(postingsOffset);
      this.index.u32(this.firstTerms.pos);
      this.index.u32(term.length);
      this.firstTerms.bytes(term);
    } else {
      const max = Math.min(term.length, this.prev.length);
      while (prefix < max && term[prefix] === this.prev[prefix]) prefix++;
    }
    const t = this.terms.sink;
    t.varint(prefix);
    t.varint(term.length - prefix);
    t.bytes(term.subarray(prefix));
    t.varint(docFreq);
    t.varint(postingsBytes);
    this.prev = term;
    this.inBlock++;
    this.count++;
    this.terms.maybeFlush();
  }

  /** The term index file's body: entries, the sentinel, then the first terms' bytes. */
  indexBody(termsEnd: number, postingsEnd: number): Uint8Array {
    const out = new ByteSink(this.index.pos + 24 + this.firstTerms.pos);
    out.bytes(this.index.buf.subarray(0, this.index.pos));
    out.f64(termsEnd);
    out.f64(postingsEnd);
    out.u32(this.firstTerms.pos);
    out.u32(0);
    out.bytes(this.firstTerms.buf.subarray(0, this.firstTerms.pos));
    return out.buf.subarray(0, out.pos);
  }
}

/** Hashes file bodies into the build id (32 hex digits). */
export class BuildIdHash {
  private readonly h = createHash("sha256");
  update(bytes: Uint8Array): void {
    this.h.update(bytes);
  }
  digest(): string {
    return this.h.digest("hex").slice(0, 32);
  }
}

/** Writes `header` at offset 0 of `path` (the body was written after a placeholder). */
export function patchHeader(path: string, header: Buffer): void {
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
}

/** A term's place in the dictionary. */
export interface TermInfo {
  docFreq: number;
  offset: number;
  bytes: number;
}

/** The term dictionary opened for lookups: the term index in memory, dictionary blocks read on demand. */
export class Dictionary {
  private readonly index: Buffer;
  private readonly blocks: number;
  private readonly firstTermsAt: number;
  private readonly fd: number;
  private block = Buffer.alloc(1 << 12);

  constructor(
    readonly dir: string,
    readonly termCount: number,
  ) {
    const ipath = join(dir, FILES.termindex);
    const fd = openSync(ipath, "r");
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(size);
      readFully(fd, buf, 0, size, 0, ipath);
      this.index = buf;
    } finally {
      closeSync(fd);
    }
    this.blocks = Math.ceil(termCount / TERMS_PER_BLOCK);
    this.firstTermsAt = HEADER_BYTES + (this.blocks + 1) * 24;
    if (this.firstTermsAt > this.index.length) throw new Error(`${ipath}: truncated (${this.index.length} bytes for ${this.blocks} blocks)`);
    const firstBytes = this.index.readUInt32LE(HEADER_BYTES + this.blocks * 24 + 16);
    if (this.firstTermsAt + firstBytes !== this.index.length) throw new Error(`${ipath}: ${this.index.length} bytes, expected ${this.firstTermsAt + firstBytes} (corrupt)`);
    this.fd = openSync(join(dir, FILES.terms), "r");
  }

  private entry(i: number): number {
    return HEADER_BYTES + i * 24;
  }

  private firstTerm(i: number): string {
    const e = this.entry(i);
    const off = this.index.readUInt32LE(e + 16);
    const len = this.index.readUInt32LE(e + 20);
    const a = this.firstTermsAt + off;
    if (a + len > this.index.length) throw new Error(`${join(this.dir, FILES.termindex)}: corrupt (term bytes out of range)`);
    return this.index.toString("utf8", a, a + len);
  }

  /** Where `term`'s postings are, or null when it is not in the index. */
  lookup(term: string): TermInfo | null {
    if (this.blocks === 0) return null;
    // The last block whose first term is ≤ term.
    let lo = 0;
    let hi = this.blocks - 1;
    if (term < this.firstTerm(0)) return null;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.firstTerm(mid) <= term) lo = mid;
      else hi = mid - 1;
    }
    return this.scanBlock(lo, term);
  }

  private scanBlock(b: number, term: string): TermInfo | null {
    const e = this.entry(b);
    const start = this.index.readDoubleLE(e);
    const end = this.index.readDoubleLE(e + 24);
    let postings = this.index.readDoubleLE(e + 8);
    const len = end - start;
    const path = join(this.dir, FILES.terms);
    if (!(len > 0) || len > 1 << 30) throw new Error(`${path}: corrupt term index (block ${b})`);
    if (this.block.length < len) this.block = Buffer.alloc(len);
    readFully(this.fd, this.block, 0, len, start, path);
    const src = new ByteSource(this.block, 0, len);
    const want = Buffer.from(term, "utf8");
    let prev = Buffer.alloc(0);
    const n = Math.min(TERMS_PER_BLOCK, this.termCount - b * TERMS_PER_BLOCK);
    try {
      for (let i = 0; i < n; i++) {
        const prefix = src.varint();
        const suffix = src.varint();
        if (prefix > prev.length || src.pos + suffix > len) throw new RangeError("bad entry");
        const cur = Buffer.allocUnsafe(prefix + suffix);
        prev.copy(cur, 0, 0, prefix);
        this.block.copy(cur, prefix, src.pos, src.pos + suffix);
        src.pos += suffix;
        const docFreq = src.varint();
        const bytes = src.varint();
        const c = Buffer.compare(cur, want);
        if (c === 0) return { docFreq, offset: postings, bytes };
        postings += bytes;
        prev = cur;
      }
    } catch (err) {
      if (err instanceof RangeError) throw new Error(`${path}: corrupt dictionary block ${b} (${err.message})`);
      throw err;
    }
    return null;
  }

  /** Every term with its postings, in order (tests and verification). */
  *entries(): Generator<[string, TermInfo]> {
    for (let b = 0; b < this.blocks; b++) {
      const e = this.entry(b);
      const start = this.index.readDoubleLE(e);
      const end = this.index.readDoubleLE(e + 24);
      let postings = this.index.readDoubleLE(e + 8);
      const buf = Buffer.alloc(end - start);
      readFully(this.fd, buf, 0, buf.length, start, join(this.dir, FILES.terms));
      const src = new ByteSource(buf);
      let prev = Buffer.alloc(0);
      const n = Math.min(TERMS_PER_BLOCK, this.termCount - b * TERMS_PER_BLOCK);
      for (let i = 0; i < n; i++) {
        const prefix = src.varint();
        const suffix = src.varint();
        const cur = Buffer.concat([prev.subarray(0, prefix), buf.subarray(src.pos, src.pos + suffix)]);
        src.pos += suffix;
        const docFreq = src.varint();
        const bytes = src.varint();
        yield [cur.toString("utf8"), { docFreq, offset: postings, bytes }];
        postings += bytes;
        prev = cur;
      }
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** One term's postings, decoded a block at a time: `doc` is the current unit (or NO_MORE), `tf` its frequency. */
export class PostingCursor {
  static readonly NO_MORE = 0x7fffffff;
  doc = -1;
  tf = 0;
  /** The term's score bound: its largest tf × normInverse. */
  readonly maxX: number;
  readonly docFreq: number;
  private readonly src: PostingBytes;
  /** The bytes read so far: `win` holds the term's bytes from `winAt` on. */
  private win: Uint8Array = new Uint8Array(0);
  private winAt = 0;
  private readonly docs = new Int32Array(BLOCK);
  private readonly tfs = new Int32Array(BLOCK);
  /** Postings decoded in docs/tfs, and the position of the current one. */
  private n = 0;
  private i = 0;
  /** Full blocks: their last docs, byte offsets in buf, and largest x. */
  private readonly blockLast: Int32Array;
  private readonly blockAt: Int32Array;
  readonly blockMaxX: Float32Array;
  private readonly fullBlocks: number;
  private readonly tailAt: number;
  /** The block decoded next (fullBlocks = the tail). */
  private next = 0;
  /** The block whose bound `blockBound` answered last. */
  private shallow = 0;
  /** Blocks `scoreWindow` passed over undecoded (counted each time, for tests and benchmarks). */
  blocksSkipped = 0;

  /**
   * The buffer reads go into (when the source reads into buffers): passed in to reuse one across
   * queries, replaced by a larger one when a read needs more.
   */
  readBuffer: Uint8Array;

  constructor(src: PostingBytes | Uint8Array, docFreq: number, normInverse: Float32Array, norms: Uint8Array, readonly file: string, readBuffer?: Uint8Array) {
    this.src = src instanceof Uint8Array ? bytesOf(src) : src;
    this.readBuffer = readBuffer ?? EMPTY;
    const size = this.src.size;
    this.docFreq = docFreq;
    const full = docFreq >= BLOCK ? Math.floor(docFreq / BLOCK) : 0;
    this.fullBlocks = full;
    this.blockLast = new Int32Array(full);
    this.blockAt = new Int32Array(full);
    this.blockMaxX = new Float32Array(full);
    try {
      if (full > 0) {
        // The skip entries take at most 14 bytes a block (two varints and a float).
        this.ensure(0, Math.min(size, 4 + 14 * full));
        const win = this.win;
        const src = new ByteSource(win);
        const view = new DataView(win.buffer, win.byteOffset, win.byteLength);
        const end = win.length;
        if (end < 4) throw new RangeError("read past the end");
        this.maxX = view.getFloat32(0, true);
        src.pos = 4;
        let last = -1;
        const { blockLast, blockAt, blockMaxX } = this;
        // blockAt holds the blocks' sizes until the offsets are known.
        for (let b = 0; b < full; b++) {
          last += src.varint();
          blockLast[b] = last;
          blockAt[b] = src.varint();
          if (src.pos + 4 > end) throw new RangeError("read past the end");
          blockMaxX[b] = view.getFloat32(src.pos, true);
          src.pos += 4;
        }
        let at = src.pos;
        for (let b = 0; b < full; b++) {
          const bytes = blockAt[b];
          blockAt[b] = at;
          at += bytes;
        }
        if (at > size) throw new RangeError("blocks past the end");
        this.tailAt = at;
      } else {
        this.tailAt = 0;
        // A rare term: decode everything now; its bound comes from its postings.
        this.decodeTail(-1);
        let m = 0;
        for (let k = 0; k < this.n; k++) {
          const x = Math.fround(this.tfs[k] * normInverse[norms[this.docs[k]]]);
          if (x > m) m = x;
        }
        this.maxX = m;
        this.next = 1;
      }
    } catch (e) {
      if (e instanceof RangeError) throw new Error(`${file}: corrupt postings (${e.message})`);
      throw e;
    }
  }

  private decodeTail(prev: number): void {
    const size = this.src.size;
    this.ensure(this.tailAt, size - this.tailAt);
    const src = new ByteSource(this.win, this.tailAt - this.winAt, size - this.winAt);
    const count = this.docFreq - this.fullBlocks * BLOCK;
    for (let k = 0; k < count; k++) {
      const v = src.varint();
      prev += Math.floor(v / 2) + 1;
      this.docs[k] = prev;
      this.tfs[k] = v & 1 ? 1 : src.varint() + 2;
    }
    if (src.pos !== src.end) throw new RangeError(`${src.end - src.pos} bytes left after the tail`);
    this.n = count;
    this.i = -1;
  }

  /** Decodes block `b` (fullBlocks = the tail) so that the next `nextDoc` returns its first posting. */
  private load(b: number): boolean {
    if (b > this.fullBlocks || (b === this.fullBlocks && this.docFreq % BLOCK === 0)) {
      this.n = 0;
      this.i = 0;
      this.next = this.fullBlocks + 1;
      return false;
    }
    const prev = b === 0 ? -1 : this.blockLast[b - 1];
    try {
      if (b === this.fullBlocks) this.decodeTail(prev);
      else {
        const at = this.blockAt[b];
        this.ensure(at, (b + 1 < this.fullBlocks ? this.blockAt[b + 1] : this.tailAt) - at);
        const win = this.win;
        let p = at - this.winAt;
        const db = win[p++];
        const tb = win[p++];
        if (db > 32 || tb > 32) throw new RangeError("bad bit width");
        p = unpackGaps(win, p, db, prev, this.docs);
        unpackPlusOne(win, p, tb, this.tfs);
        const d = this.docs[BLOCK - 1];
        if (d !== this.blockLast[b]) throw new RangeError(`block ${b} ends at unit ${d}, its skip entry says ${this.blockLast[b]}`);
        this.n = BLOCK;
        this.i = -1;
      }
    } catch (e) {
      if (e instanceof RangeError) throw new Error(`${this.file}: corrupt postings (${e.message})`);
      throw e;
    }
    this.next = b + 1;
    return true;
  }

  /** Makes `win` hold the term's bytes [at, at + len), reading ahead (POSTINGS_WINDOW) when it must read. */
  private ensure(at: number, len: number): void {
    if (at >= this.winAt && at + len <= this.winAt + this.win.length) return;
    const size = this.src.size;
    if (at < 0 || len < 0 || at + len > size) throw new RangeError(`bytes ${at}..${at + len} outside the term's ${size}`);
    const end = size - at <= 4 * POSTINGS_WINDOW ? size : Math.min(size, at + Math.max(len, POSTINGS_WINDOW));
    const n = end - at;
    if (this.src.readInto) {
      if (this.readBuffer.length < n) this.readBuffer = new Uint8Array(Math.max(n, POSTINGS_WINDOW));
      this.src.readInto(at, n, this.readBuffer);
      this.win = this.readBuffer.subarray(0, n);
    } else this.win = this.src.read(at, n);
    this.winAt = at;
  }

  /** Moves to the next posting; returns its doc (NO_MORE at the end). */
  nextDoc(): number {
    if (this.doc === PostingCursor.NO_MORE) return this.doc;
    if (++this.i >= this.n) {
      if (!this.load(this.next) || ++this.i >= this.n) return (this.doc = PostingCursor.NO_MORE);
    }
    this.tf = this.tfs[this.i];
    return (this.doc = this.docs[this.i]);
  }

  /** The first block that may hold a doc ≥ target (fullBlocks = the tail), from `from` on. */
  private blockFor(target: number, from: number): number {
    let b = from;
    while (b < this.fullBlocks && this.blockLast[b] < target) b++;
    return b;
  }

  /**
   * The largest x of the block that would hold `target` (for full blocks, from the skip data; the tail
   * and rare terms: the term bound), or -1 when no posting ≥ target is left.
   */
  blockBound(target: number): number {
    const b = (this.shallow = this.blockFor(target, Math.max(this.shallow, this.next - 1, 0)));
    if (b < this.fullBlocks) return this.blockMaxX[b];
    if (this.docFreq % BLOCK === 0 && this.fullBlocks > 0) return -1;
    return this.maxX;
  }

  /**
   * The largest x of the postings left in units [lo, hi] (lo ≥ the last target): the largest block
   * bound of the full blocks overlapping them, the term bound for the tail; -1 when none can be there.
   */
  maxXIn(lo: number, hi: number): number {
    const d = this.doc;
    if (d === PostingCursor.NO_MORE || (d >= lo && d > hi)) return -1;
    let b = (this.shallow = this.blockFor(lo, Math.max(this.shallow, this.next - 1, 0)));
    const full = this.fullBlocks;
    const bx = this.blockMaxX;
    const last = this.blockLast;
    let m = -1;
    for (;;) {
      if (b >= full) {
        if (this.docFreq % BLOCK !== 0 || full === 0) m = Math.max(m, this.maxX);
        return m;
      }
      if (bx[b] > m) m = bx[b];
      if (last[b] >= hi) return m;
      b++;
    }
  }

  /**
   * The last unit of the block holding the first posting ≥ target (NO_MORE − 1 for the tail), not
   * moving the cursor.
   */
  blockEndFor(target: number): number {
    const b = (this.shallow = this.blockFor(target, Math.max(this.shallow, this.next - 1, 0)));
    return b < this.fullBlocks ? this.blockLast[b] : PostingCursor.NO_MORE - 1;
  }

  /**
   * Term at a time over the window [lo, hi): for each posting there, adds its score to acc[doc − lo] and
   * sets bit doc − lo of `seen`; returns the postings scored. The score of a posting with tf t ≤ 2 is
   * table[(t − 1) × 256 + norm], else w − w / (1 + t × normInverse[norm]) (float). A block whose bound
   * plus `rest` (the other terms' bounds) cannot beat `threshold` is neither decoded nor scored: no unit
   * holding the term there can enter the top k, whatever the other terms add. The cursor is left on the
   * first posting ≥ hi, or behind it (before a skipped block that reaches past the window).
   */
  scoreWindow(lo: number, hi: number, acc: Float64Array, seen: Int32Array, table: Float32Array, w: number, normInverse: Float32Array, norms: Uint8Array, rest: number, threshold: number): number {
    const NO_MORE = PostingCursor.NO_MORE;
    if (this.doc === NO_MORE) return 0;
    const docs = this.docs;
    const tfs = this.tfs;
    const full = this.fullBlocks;
    let count = 0;
    // The decoded block, when postings ≥ lo are left in it.
    let i = this.i < 0 ? 0 : this.i;
    let n = this.n;
    if (n > 0 && i < n && docs[n - 1] >= lo) {
      while (docs[i] < lo) i++;
    } else {
      i = n = 0;
    }
    for (;;) {
      const from = i;
      for (; i < n; i++) {
        const doc = docs[i];
        if (doc >= hi) break;
        const tf = tfs[i];
        const nb = norms[doc];
        const s = tf <= 2 ? table[((tf - 1) << 8) | nb] : f(w - f(w / f(1 + f(tf * normInverse[nb]))));
        const o = doc - lo;
        acc[o] += s;
        seen[o >> 5] |= 1 << (o & 31);
      }
      count += i - from;
      if (i < n) {
        this.i = i;
        this.tf = tfs[i];
        this.doc = docs[i];
        return count;
      }
      // The next block that may hold postings ≥ lo, skipping those that cannot matter.
      let b = this.blockFor(lo, Math.max(this.next, 0));
      for (;;) {
        if (b > full || (b === full && full > 0 && this.docFreq % BLOCK === 0)) {
          this.n = this.i = 0;
          this.next = full + 1;
          this.doc = NO_MORE;
          return count;
        }
        const start = b === 0 ? 0 : this.blockLast[b - 1] + 1;
        if (start >= hi) return count;
        const bx = b < full ? this.blockMaxX[b] : this.maxX;
        if ((f(w - f(w / f(1 + bx))) + rest) * SEARCH_SAFETY > threshold) break;
        this.blocksSkipped++;
        if (b === full || this.blockLast[b] >= hi) return count;
        b++;
      }
      this.load(b);
      i = 0;
      n = this.n;
      while (i < n && docs[i] < lo) i++;
    }
  }

  /** Moves to the first posting with doc ≥ target; returns its doc (NO_MORE when none). */
  advance(target: number): number {
    if (this.doc >= target) return this.doc;
    if (this.n > 0 && this.i < this.n && this.docs[this.n - 1] >= target) {
      // In the decoded block.
      let k = Math.max(this.i, 0);
      while (this.docs[k] < target) k++;
      this.i = k;
      this.tf = this.tfs[k];
      return (this.doc = this.docs[k]);
    }
    const b = this.blockFor(target, Math.max(this.next, 0));
    if (!this.load(b)) return (this.doc = PostingCursor.NO_MORE);
    let k = 0;
    while (k < this.n && this.docs[k] < target) k++;
    if (k === this.n) return (this.doc = PostingCursor.NO_MORE);
    this.i = k;
    this.tf = this.tfs[k];
    return (this.doc = this.docs[k]);
  }
}

/** Bytes a posting cursor reads at a time (more when the rest of the term is at most four times this). */
export const POSTINGS_WINDOW = 64 * 1024;

/** A term's postings bytes, read piecewise: a cursor reads its skip entries, then only the blocks it needs. */
export interface PostingBytes {
  readonly size: number;
  /** Bytes [at, at + len) of the term's postings. */
  read(at: number, len: number): Uint8Array;
  /** Reads bytes [at, at + len) into buf[0, len) (sources that copy: no allocation per read). */
  readInto?(at: number, len: number, buf: Uint8Array): void;
}

const EMPTY = new Uint8Array(0);

/** Postings already in memory. */
export function bytesOf(buf: Uint8Array): PostingBytes {
  return { size: buf.length, read: (at, len) => buf.subarray(at, at + len) };
}

/** A term's postings at `offset` (`bytes` long) in the postings file `fd`, read with positional reads. */
export function postingsAt(fd: number, offset: number, bytes: number, file: string): PostingBytes {
  return {
    size: bytes,
    read: (at, len) => {
      const buf = new Uint8Array(len);
      readFully(fd, buf, 0, len, offset + at, file);
      return buf;
    },
    readInto: (at, len, buf) => readFully(fd, buf, 0, len, offset + at, file),
  };
}

/** Reads the norms file's body (one byte per unit). */
export function readNorms(dir: string, units: number): Uint8Array {
  const path = join(dir, FILES.norms);
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    if (size !== HEADER_BYTES + units) throw new Error(`${path}: ${size} bytes, expected ${HEADER_BYTES + units} for ${units} units`);
    const buf = new Uint8Array(units);
    readFully(fd, buf, 0, units, HEADER_BYTES, path);
    return buf;
  } finally {
    closeSync(fd);
  }
}

export { readSync };
