// The on-disk layout of a BM25 index (`bm25.index` in the index directory): a JSON header, then
// 8-byte-aligned sections that are used in place as typed arrays after one read (no parsing, no
// per-term objects), so opening an index costs little more than reading the file.
//
//   "TARTBM25" | u32 header bytes | header JSON | sections…
// Sections (T terms, P postings, B blocks, N units):
//   termBytes    UTF-8 terms, concatenated          termOffsets  u32[T+1]
//   hash         u32[H] (term id + 1, 0 = empty)    postingStart u32[T+1]
//   docs         u32[P] (ascending per term)        tfs          u8|u16|u32[P]
//   blockStart   u32[T+1] (first block of a term)   blockLastDoc u32[B]      blockMaxX f32[B]
//   termMaxX     f32[T]                             norms        u8[N] (SmallFloat length bytes)
// A block is BLOCK_SIZE consecutive postings of one term; blockMaxX = the largest tf * normInverse in it.

import { readFileSync } from "node:fs";

export const INDEX_FILE = "bm25.index";
export const MAGIC = "TARTBM25";
export const FORMAT_VERSION = 1;
export const BLOCK_SIZE = 128;

export interface IndexHeader {
  formatVersion: number;
  analyzer: string;
  k1: number;
  b: number;
  title: boolean;
  /** Units in the index (N). */
  units: number;
  /** Units with at least one term (Lucene's docCount). */
  docCount: number;
  sumTotalTermFreq: number;
  terms: number;
  postings: number;
  blocks: number;
  hashSize: number;
  tfBytes: 1 | 2 | 4;
  sections: Record<SectionName, [offset: number, byteLength: number]>;
}

export type SectionName =
  | "termBytes"
  | "termOffsets"
  | "hash"
  | "postingStart"
  | "docs"
  | "tfs"
  | "blockStart"
  | "blockLastDoc"
  | "blockMaxX"
  | "termMaxX"
  | "norms";

export const SECTION_ORDER: readonly SectionName[] = [
  "termBytes",
  "termOffsets",
  "hash",
  "postingStart",
  "docs",
  "tfs",
  "blockStart",
  "blockLastDoc",
  "blockMaxX",
  "termMaxX",
  "norms",
];

/** FNV-1a over the UTF-16 code units of a term: the term dictionary's hash. */
export function termHash(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) {
    h ^= term.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The hash table size for `terms` terms: a power of two, at most half full. */
export function hashSizeFor(terms: number): number {
  let size = 16;
  while (size < terms * 2) size *= 2;
  return size;
}

/** Serializes the header and sections into one buffer list (header padded to 8 bytes). */
export function layout(
  header: Omit<IndexHeader, "sections">,
  sections: Record<SectionName, ArrayBufferView>,
): { chunks: Buffer[]; header: IndexHeader } {
  // Offsets depend on the header length, which depends on the offsets' digits: fix the header size by
  // padding it to a generous multiple of 8 once.
  const sizes = SECTION_ORDER.map((s) => sections[s].byteLength);
  const draft = (base: number): IndexHeader => {
    const offsets = {} as IndexHeader["sections"];
    let at = base;
    SECTION_ORDER.forEach((s, i) => {
      offsets[s] = [at, sizes[i]];
      at += Math.ceil(sizes[i] / 8) * 8;
    });
    return { ...header, sections: offsets };
  };
  let base = 0;
  for (;;) {
    const json = Buffer.from(JSON.stringify(draft(base)));
    const need = Math.ceil((MAGIC.length + 4 + json.length) / 8) * 8;
    if (need === base) break;
    base = need;
  }
  const full = draft(base);
  const json = Buffer.from(JSON.stringify(full));
  const head = Buffer.alloc(base, 0x20);
  head.write(MAGIC, 0, "latin1");
  head.writeUInt32LE(base - MAGIC.length - 4, MAGIC.length);
  json.copy(head, MAGIC.length + 4);
  const chunks: Buffer[] = [head];
  SECTION_ORDER.forEach((s, i) => {
    const v = sections[s];
    chunks.push(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
    const pad = Math.ceil(sizes[i] / 8) * 8 - sizes[i];
    if (pad > 0) chunks.push(Buffer.alloc(pad));
  });
  return { chunks, header: full };
}

export interface IndexArrays {
  header: IndexHeader;
  /** The whole file; termBytes are read from it. */
  file: Buffer;
  termBytesOffset: number;
  termOffsets: Uint32Array;
  hash: Uint32Array;
  postingStart: Uint32Array;
  docs: Uint32Array;
  tfs: Uint8Array | Uint16Array | Uint32Array;
  blockStart: Uint32Array;
  blockLastDoc: Uint32Array;
  blockMaxX: Float32Array;
  termMaxX: Float32Array;
  norms: Uint8Array;
}

/** Reads an index file into typed-array views over one buffer. */
export function readIndexFile(path: string): IndexArrays {
  let file = readFileSync(path);
  if (file.byteOffset % 8 !== 0) file = Buffer.from(file); // copies into an aligned buffer
  if (file.toString("latin1", 0, MAGIC.length) !== MAGIC) throw new Error(`${path}: not a tartan BM25 index`);
  const headerLength = file.readUInt32LE(MAGIC.length);
  const header = JSON.parse(file.toString("utf8", MAGIC.length + 4, MAGIC.length + 4 + headerLength).trimEnd()) as IndexHeader;
  if (header.formatVersion !== FORMAT_VERSION) throw new Error(`${path}: BM25 index format ${header.formatVersion}, this tartan reads ${FORMAT_VERSION}`);
  const { buffer, byteOffset } = file;
  const sec = (name: SectionName): [number, number] => {
    const [offset, length] = header.sections[name];
    if (offset + length > file.length) throw new Error(`${path}: truncated (section ${name})`);
    return [byteOffset + offset, length];
  };
  const u32 = (name: SectionName): Uint32Array => {
    const [o, l] = sec(name);
    return new Uint32Array(buffer, o, l / 4);
  };
  const f32 = (name: SectionName): Float32Array => {
    const [o, l] = sec(name);
    return new Float32Array(buffer, o, l / 4);
  };
  const [tfo, tfl] = sec("tfs");
  const tfs =
    header.tfBytes === 1 ? new Uint8Array(buffer, tfo, tfl) : header.tfBytes === 2 ? new Uint16Array(buffer, tfo, tfl / 2) : new Uint32Array(buffer, tfo, tfl / 4);
  const [no, nl] = sec("norms");
  return {
    header,
    file,
    termBytesOffset: header.sections.termBytes[0],
    termOffsets: u32("termOffsets"),
    hash: u32("hash"),
    postingStart: u32("postingStart"),
    docs: u32("docs"),
    tfs,
    blockStart: u32("blockStart"),
    blockLastDoc: u32("blockLastDoc"),
    blockMaxX: f32("blockMaxX"),
    termMaxX: f32("termMaxX"),
    norms: new Uint8Array(buffer, no, nl),
  };
}
