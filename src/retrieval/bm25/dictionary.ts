// The BM25 term dictionary (bm25.terms and bm25.termindex, laid out in ./format.ts's header comment):
// the writer that front-codes terms in blocks and collects the term index, and the reader that holds
// the term index in memory and reads a dictionary block on demand.

import { closeSync, fstatSync, openSync } from "node:fs";
import { join } from "node:path";
import { ByteSink, ByteSource, OutFile, readFully } from "./codec.js";
import { FILES, HEADER_BYTES, TERMS_PER_BLOCK } from "./format.js";

const TEXT = new TextEncoder();

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
  /** First terms of the blocks the binary search has visited (decoded once each). */
  private readonly firstTerms: (string | undefined)[];
  /** The term looked up as UTF-8, and the term being decoded from a block (reused buffers). */
  private want = new Uint8Array(256);
  private cur = new Uint8Array(256);

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
    this.firstTerms = new Array<string | undefined>(this.blocks);
    this.fd = openSync(join(dir, FILES.terms), "r");
  }

  private entry(i: number): number {
    return HEADER_BYTES + i * 24;
  }

  private firstTerm(i: number): string {
    const t = this.firstTerms[i];
    if (t !== undefined) return t;
    return (this.firstTerms[i] = this.decodeFirstTerm(i));
  }

  private decodeFirstTerm(i: number): string {
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
    // The term as UTF-8 (at most 3 bytes a UTF-16 code unit), compared with each entry in place.
    if (this.want.length < 3 * term.length) this.want = new Uint8Array(3 * term.length);
    const wantLen = TEXT.encodeInto(term, this.want).written;
    const want = this.want;
    const block = this.block;
    const n = Math.min(TERMS_PER_BLOCK, this.termCount - b * TERMS_PER_BLOCK);
    let prevLen = 0;
    try {
      for (let i = 0; i < n; i++) {
        const prefix = src.varint();
        const suffix = src.varint();
        if (prefix > prevLen || src.pos + suffix > len) throw new RangeError("bad entry");
        const size = prefix + suffix;
        if (this.cur.length < size) {
          const grown = new Uint8Array(Math.max(size, 2 * this.cur.length));
          grown.set(this.cur.subarray(0, prefix));
          this.cur = grown;
        }
        const cur = this.cur;
        for (let j = 0, at = src.pos; j < suffix; j++) cur[prefix + j] = block[at + j];
        src.pos += suffix;
        const docFreq = src.varint();
        const bytes = src.varint();
        if (size === wantLen) {
          let j = 0;
          while (j < size && cur[j] === want[j]) j++;
          if (j === size) return { docFreq, offset: postings, bytes };
        }
        postings += bytes;
        prevLen = size;
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
