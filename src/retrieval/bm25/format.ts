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
//
// This module holds the layout: constants, file headers, the build id, the norms. The dictionary is in
// ./dictionary.ts, the postings writer in ./postings-writer.ts, the postings reader in ./postings-reader.ts.

import { closeSync, fstatSync, openSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { BLOCK, readFully } from "./codec.js";

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
