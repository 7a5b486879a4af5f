// The entity alias file (`entity.aliases`, format version 3): what the entity retriever reads.
//
// Header (64 bytes): "TARTENTY" | u32 format version | u32 header bytes (64) | f64 file bytes |
//   f64 aliases | f64 units | 16-byte build id (the first 16 bytes of the SHA-256 of everything after the
//   header, repeated in manifest.json as params.buildId) | f64 body bytes.
// Body: one JSON line per alias, sorted by key (UTF-16 code-unit order, JavaScript's `<`), with no
//   duplicates: {"m": key, "c": [[unit, links], …]} with candidates by links descending, then unit
//   ascending. The body is byte for byte format 1's `aliases.jsonl`.
// Key index (after the body): a 24-byte head, u32 blocks | u32 first words | u32 Bloom bits an entry |
//   u32 Bloom probes | u32 CRC-32 of the rest of the key index | u32 0; then per block (the body cut into
//   runs of whole lines of at least BLOCK_BYTES, the last may be shorter) f64 body offset | f64 number
//   of its first alias | u32 CRC-32 of its bytes | u32 key bytes + UTF-8 of its first key; then a Bloom
//   filter of all keys and one of the first words of keys of two words or more (BLOOM_BITS bits an
//   entry, BLOOM_PROBES probes by double hashing of hashKey).
//
// Opening (`openAliasFile`) reads the header and the key index only (about 1.5 bytes an alias and 40
// a block), never the body: it checks the header against the file (size, version, layout) and the
// manifest (build id, units), and the key index against its CRC-32 and the header. A lookup asks the
// Bloom filter (most n-grams of a query are no alias and stop there), binary-searches the block keys
// and reads one block with pread, checking its CRC-32 before any byte of it is used; the line found is
// parsed, and its shape and units checked, when its candidates are asked for. So a flipped, lost or
// foreign byte anywhere is refused, naming the file, at open or at the first lookup that would read it.
// The first-word filter lets mention finding skip the n-grams of two words or more that start at a word
// no such key starts with (most words of a query) without building their keys.
// `checkAliasFile` — `tartan index verify` — reads the whole file once in bounded memory: its SHA-256,
// every line (JSON, canonical start, shape, unit range, key order, count) and the key index rebuilt
// from the lines, byte for byte.

import { closeSync, fstatSync, openSync, writeSync } from "node:fs";
import { createHash, type Hash } from "node:crypto";
import { crc32 } from "node:zlib";
import { readExactly } from "../buffered-file.js";
import { commitTemp, createTempFor, discardTemp, type TempFile } from "../../util/safe-output.js";

export const ENTITY_FORMAT_VERSION = 3;
export const ALIASES_FILE = "entity.aliases";
export const ALIASES_MAGIC = "TARTENTY";
export const ALIASES_HEADER_BYTES = 64;
/** A key-index block holds whole lines until it reaches this many bytes. */
export const BLOCK_BYTES = 4096;
/** Bloom filter bits an alias, and probes a key (about 1% false positives). */
export const BLOOM_BITS = 10;
export const BLOOM_PROBES = 7;
/** Bytes of the key index's head. */
const INDEX_HEAD_BYTES = 24;

/** One alias: a mention key and its candidate units with link counts (count desc, unit asc). */
export interface AliasLine {
  m: string;
  c: [number, number][];
}

/** FNV-1a over the UTF-16 code units of `s`. */
export function hashKey(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The second Bloom hash: MurmurHash3's finalizer of the first, odd. */
function hash2(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) | 1) >>> 0;
}

/** Whether the Bloom filter `bloom` of `bits` bits (> 0) may hold a key with hash `h`. */
export function bloomHas(bloom: Uint8Array, bits: number, h: number): boolean {
  const step = hash2(h);
  let x = h;
  for (let i = 0; i < BLOOM_PROBES; i++) {
    const bit = x % bits;
    if ((bloom[bit >>> 3] & (1 << (bit & 7))) === 0) return false;
    x = (x + step) >>> 0;
  }
  return true;
}

function bloomSet(bloom: Uint8Array, bits: number, h: number): void {
  const step = hash2(h);
  let x = h;
  for (let i = 0; i < BLOOM_PROBES; i++) {
    const bit = x % bits;
    bloom[bit >>> 3] |= 1 << (bit & 7);
    x = (x + step) >>> 0;
  }
}

/** A growable list of 32-bit hashes. */
class Hashes {
  private data = new Uint32Array(1 << 10);
  length = 0;

  push(h: number): void {
    if (this.length === this.data.length) {
      const grown = new Uint32Array(2 * this.length);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = h;
  }

  /** A Bloom filter of the hashes, BLOOM_BITS bits each. */
  bloom(): Buffer {
    const bits = BLOOM_BITS * this.length;
    const out = Buffer.alloc((bits + 7) >>> 3);
    for (let i = 0; i < this.length; i++) bloomSet(out, bits, this.data[i]);
    return out;
  }
}

/** The key index of a body, built line by line (by the writer, and again by the full check). */
export class KeyIndexBuilder {
  private readonly entries: Buffer[] = [];
  private readonly keys = new Hashes();
  private readonly firstWords = new Hashes();
  private lastFirstWord: string | null = null;
  private blockStart = -Infinity;
  private blockCrc = 0;
  private offset = 0;

  /** Adds the next line: its key and its bytes (newline included). */
  add(key: string, line: Uint8Array): void {
    if (this.offset - this.blockStart >= BLOCK_BYTES) {
      this.closeBlock();
      this.blockStart = this.offset;
      this.blockCrc = 0;
      const k = Buffer.from(key, "utf8");
      const e = Buffer.allocUnsafe(24 + k.length);
      e.writeDoubleLE(this.offset, 0);
      e.writeDoubleLE(this.keys.length, 8);
      e.writeUInt32LE(0, 16); // the block's CRC-32, filled in when it closes
      e.writeUInt32LE(k.length, 20);
      k.copy(e, 24);
      this.entries.push(e);
    }
    this.blockCrc = crc32(line, this.blockCrc);
    this.keys.push(hashKey(key));
    // Keys of several words sharing a first word are neighbours in key order: one entry each word.
    const space = key.indexOf(" ");
    if (space >= 0) {
      const word = key.slice(0, space);
      if (word !== this.lastFirstWord) this.firstWords.push(hashKey(word));
      this.lastFirstWord = word;
    }
    this.offset += line.length;
  }

  private closeBlock(): void {
    if (this.entries.length > 0) this.entries[this.entries.length - 1].writeUInt32LE(this.blockCrc >>> 0, 16);
  }

  /** The key index's bytes (head, blocks, the two Bloom filters). */
  finish(): Buffer {
    this.closeBlock();
    const out = Buffer.concat([Buffer.alloc(INDEX_HEAD_BYTES), ...this.entries, this.keys.bloom(), this.firstWords.bloom()]);
    out.writeUInt32LE(this.entries.length, 0);
    out.writeUInt32LE(this.firstWords.length, 4);
    out.writeUInt32LE(BLOOM_BITS, 8);
    out.writeUInt32LE(BLOOM_PROBES, 12);
    out.writeUInt32LE(crc32(out.subarray(INDEX_HEAD_BYTES)) >>> 0, 16);
    return out;
  }
}

function header(fileBytes: number, aliases: number, units: number, buildId: string, bodyBytes: number): Buffer {
  const h = Buffer.alloc(ALIASES_HEADER_BYTES);
  h.write(ALIASES_MAGIC, 0, "latin1");
  h.writeUInt32LE(ENTITY_FORMAT_VERSION, 8);
  h.writeUInt32LE(ALIASES_HEADER_BYTES, 12);
  h.writeDoubleLE(fileBytes, 16);
  h.writeDoubleLE(aliases, 24);
  h.writeDoubleLE(units, 32);
  Buffer.from(buildId, "hex").copy(h, 40);
  h.writeDoubleLE(bodyBytes, 56);
  return h;
}

/** Writes an alias file through an exclusive temporary name; `close()` appends the key index, fills in the header and renames it. */
export class AliasFileWriter {
  private readonly temp: TempFile;
  private readonly hash: Hash = createHash("sha256");
  private readonly index = new KeyIndexBuilder();
  private buf = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  private bytes = ALIASES_HEADER_BYTES;
  private last: string | null = null;
  aliases = 0;

  constructor(
    readonly path: string,
    private readonly units: number,
  ) {
    this.temp = createTempFor(path, () => {});
    writeSync(this.temp.fd, Buffer.alloc(ALIASES_HEADER_BYTES));
  }

  private flush(): void {
    this.write(this.buf.subarray(0, this.used));
    this.used = 0;
  }

  private write(chunk: Buffer): void {
    this.hash.update(chunk);
    let at = 0;
    while (at < chunk.length) at += writeSync(this.temp.fd, chunk, at, chunk.length - at);
  }

  /** Appends one alias (keys must come in increasing order, units below the file's unit count). */
  add(line: AliasLine): void {
    if (this.last !== null && !(this.last < line.m)) throw new Error(`${this.path}: alias keys out of order (${JSON.stringify(this.last)} before ${JSON.stringify(line.m)})`);
    for (const [u, n] of line.c) if (!Number.isInteger(u) || u < 0 || u >= this.units || !(n > 0)) throw new Error(`${this.path}: alias ${JSON.stringify(line.m)}: bad candidate [${u},${n}] (units 0..${this.units - 1})`);
    this.last = line.m;
    const text = `${JSON.stringify(line)}\n`;
    const max = text.length * 3;
    if (this.used + max > this.buf.length) {
      this.flush();
      if (max > this.buf.length) this.buf = Buffer.allocUnsafe(max);
    }
    const n = this.buf.write(text, this.used, "utf8");
    this.index.add(line.m, this.buf.subarray(this.used, this.used + n));
    this.used += n;
    this.bytes += n;
    this.aliases++;
  }

  /** Finishes the file: key index, header with size, counts and build id, then the rename. */
  close(): { bytes: number; aliases: number; buildId: string } {
    let buildId: string;
    const bodyBytes = this.bytes - ALIASES_HEADER_BYTES;
    try {
      this.flush();
      const tail = this.index.finish();
      this.write(tail);
      this.bytes += tail.length;
      buildId = this.hash.digest("hex").slice(0, 32);
      const h = header(this.bytes, this.aliases, this.units, buildId, bodyBytes);
      writeSync(this.temp.fd, h, 0, h.length, 0);
      closeSync(this.temp.fd);
    } catch (e) {
      discardTemp(this.temp);
      throw e;
    }
    commitTemp(this.temp, this.path);
    return { bytes: this.bytes, aliases: this.aliases, buildId };
  }

  /** Drops the unfinished file. */
  abort(): void {
    discardTemp(this.temp, this.temp.fd);
  }
}

/** An alias file opened for lookups: its descriptor, counts and key index (the body stays on disk). */
export interface AliasFile {
  path: string;
  fd: number;
  aliases: number;
  units: number;
  bodyBytes: number;
  /** Body offset of each block, then the body's length. */
  blockStarts: Float64Array;
  /** Number of each block's first alias, then the alias count. */
  blockFirst: Float64Array;
  /** CRC-32 of each block's bytes. */
  blockCrcs: Uint32Array;
  /** Each block's first key. */
  blockKeys: string[];
  /** The Bloom filter of all keys, and its size in bits (0 when there are no aliases). */
  bloom: Uint8Array;
  bloomBits: number;
  /** The Bloom filter of the first words of keys of two words or more, and its size in bits. */
  firstWordBloom: Uint8Array;
  firstWordBits: number;
}

interface Header {
  size: number;
  aliases: number;
  units: number;
  id: string;
  bodyBytes: number;
}

/** Reads the header of the open file `fd` and checks it against the file and `expect` (from the manifest). */
function readHeader(path: string, fd: number, expect: { units: number; buildId: unknown }): Header {
  const size = fstatSync(fd).size;
  if (size < ALIASES_HEADER_BYTES) throw new Error(`${path}: truncated (${size} bytes, less than its ${ALIASES_HEADER_BYTES}-byte header)`);
  const h = Buffer.alloc(ALIASES_HEADER_BYTES);
  readExactly(fd, h, 0, ALIASES_HEADER_BYTES, 0, path);
  if (h.toString("latin1", 0, 8) !== ALIASES_MAGIC) throw new Error(`${path}: not a tartan entity alias file (bad magic)`);
  const version = h.readUInt32LE(8);
  if (version !== ENTITY_FORMAT_VERSION) throw new Error(`${path}: entity alias format ${version}, this tartan reads ${ENTITY_FORMAT_VERSION} (rebuild the index)`);
  if (h.readUInt32LE(12) !== ALIASES_HEADER_BYTES) throw new Error(`${path}: bad header length ${h.readUInt32LE(12)} (corrupt)`);
  const fileBytes = h.readDoubleLE(16);
  if (fileBytes !== size) throw new Error(`${path}: ${size} bytes, its header says ${fileBytes} (${size < fileBytes ? "truncated" : "changed"}; rebuild the index)`);
  const aliases = h.readDoubleLE(24);
  const units = h.readDoubleLE(32);
  const id = h.toString("hex", 40, 56);
  const bodyBytes = h.readDoubleLE(56);
  if (id !== expect.buildId) throw new Error(`${path}: from another build (build id ${id}, manifest.json says ${String(expect.buildId)})`);
  if (units !== expect.units) throw new Error(`${path}: written for ${units} units, manifest.json says ${expect.units} (from another build)`);
  // The shortest line, {"m":"x","c":[[0,1]]}, is 22 bytes.
  if (!Number.isInteger(bodyBytes) || bodyBytes < 0 || ALIASES_HEADER_BYTES + bodyBytes > size) throw new Error(`${path}: body of ${bodyBytes} bytes in ${size} (corrupt; rebuild the index)`);
  if (!Number.isInteger(aliases) || aliases < 0 || aliases * 22 > bodyBytes) throw new Error(`${path}: ${aliases} aliases in ${bodyBytes} bytes (corrupt; rebuild the index)`);
  return { size, aliases, units, id, bodyBytes };
}

type KeyIndex = Pick<AliasFile, "blockStarts" | "blockFirst" | "blockCrcs" | "blockKeys" | "bloom" | "bloomBits" | "firstWordBloom" | "firstWordBits">;

/** Parses and checks the key index `tail` (everything after the body) against its CRC-32 and the header. */
function parseKeyIndex(path: string, head: Header, tail: Buffer): KeyIndex {
  const bad = (why: string) => new Error(`${path}: key index: ${why} (corrupt; rebuild the index)`);
  if (tail.length < INDEX_HEAD_BYTES) throw bad(`${tail.length} bytes, less than its ${INDEX_HEAD_BYTES}-byte head`);
  if (crc32(tail.subarray(INDEX_HEAD_BYTES)) >>> 0 !== tail.readUInt32LE(16)) throw bad("contents differ from its CRC-32");
  const blocks = tail.readUInt32LE(0);
  const firstWords = tail.readUInt32LE(4);
  if (tail.readUInt32LE(8) !== BLOOM_BITS || tail.readUInt32LE(12) !== BLOOM_PROBES) throw bad(`Bloom filters of ${tail.readUInt32LE(8)} bits an entry and ${tail.readUInt32LE(12)} probes, this tartan uses ${BLOOM_BITS} and ${BLOOM_PROBES}`);
  if ((head.aliases === 0) !== (blocks === 0) || blocks > head.aliases) throw bad(`${blocks} blocks for ${head.aliases} aliases`);
  if (firstWords > head.aliases) throw bad(`${firstWords} first words for ${head.aliases} aliases`);
  const blockStarts = new Float64Array(blocks + 1);
  const blockFirst = new Float64Array(blocks + 1);
  const blockCrcs = new Uint32Array(blocks);
  const blockKeys: string[] = new Array<string>(blocks);
  let at = INDEX_HEAD_BYTES;
  for (let b = 0; b < blocks; b++) {
    if (at + 24 > tail.length || at + 24 + tail.readUInt32LE(at + 20) > tail.length) throw bad(`block ${b + 1} of ${blocks} cut short`);
    const start = tail.readDoubleLE(at);
    const first = tail.readDoubleLE(at + 8);
    const end = at + 24 + tail.readUInt32LE(at + 20);
    const key = tail.toString("utf8", at + 24, end);
    if (b === 0 ? start !== 0 || first !== 0 : !(start > blockStarts[b - 1]) || !(first > blockFirst[b - 1]) || !(blockKeys[b - 1] < key)) throw bad(`block ${b + 1} out of order`);
    if (!Number.isInteger(start) || !Number.isInteger(first) || start >= head.bodyBytes || first >= head.aliases) throw bad(`block ${b + 1} past the body`);
    blockStarts[b] = start;
    blockFirst[b] = first;
    blockCrcs[b] = tail.readUInt32LE(at + 16);
    blockKeys[b] = key;
    at = end;
  }
  blockStarts[blocks] = head.bodyBytes;
  blockFirst[blocks] = head.aliases;
  const bloomBits = BLOOM_BITS * head.aliases;
  const firstWordBits = BLOOM_BITS * firstWords;
  const bloomEnd = at + ((bloomBits + 7) >>> 3);
  const expected = bloomEnd + ((firstWordBits + 7) >>> 3) - at;
  if (tail.length - at !== expected) throw bad(`${tail.length - at} bytes of Bloom filters, ${expected} expected`);
  return { blockStarts, blockFirst, blockCrcs, blockKeys, bloom: tail.subarray(at, bloomEnd), bloomBits, firstWordBloom: tail.subarray(bloomEnd), firstWordBits };
}

function openFile(path: string): number {
  try {
    return openSync(path, "r");
  } catch (e) {
    throw new Error(`${path}: missing (${(e as Error).message})`);
  }
}

/**
 * Opens the alias file `path` of an index with `units` units and build id `buildId` (from its manifest):
 * checks the header and reads the key index (not the body). Throws naming the file on any mismatch.
 */
export function openAliasFile(path: string, expect: { units: number; buildId: unknown }): AliasFile {
  const fd = openFile(path);
  try {
    const head = readHeader(path, fd, expect);
    const tail = Buffer.allocUnsafe(head.size - ALIASES_HEADER_BYTES - head.bodyBytes);
    readExactly(fd, tail, 0, tail.length, ALIASES_HEADER_BYTES + head.bodyBytes, path);
    return { path, fd, aliases: head.aliases, units: head.units, bodyBytes: head.bodyBytes, ...parseKeyIndex(path, head, tail) };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Whether `p` is a candidate [unit below `units`, positive finite link count]. */
export function isCandidate(p: unknown, units: number): boolean {
  return Array.isArray(p) && p.length === 2 && Number.isInteger(p[0]) && p[0] >= 0 && p[0] < units && typeof p[1] === "number" && p[1] > 0 && Number.isFinite(p[1]);
}

/** Checks one parsed line `v` (alias number `n`, text starting `text`), whose key must follow `prev`. */
export function checkAliasLine(path: string, n: number, v: unknown, text: string, prev: string | null, units: number): AliasLine {
  const bad = (why: string): Error => new Error(`${path}: alias ${n + 1}: ${why} (corrupt; rebuild the index)`);
  const a = v as AliasLine;
  if (a === null || typeof a !== "object" || typeof a.m !== "string" || !Array.isArray(a.c) || a.c.length === 0) throw bad('not {"m": key, "c": [[unit, links], …]}');
  // The retriever reads keys straight from the lines: each must start as the writer starts it.
  const head = `{"m":${JSON.stringify(a.m)},"c":`;
  if (!text.startsWith(head)) throw bad(`does not start ${head}`);
  if (prev !== null && !(prev < a.m)) throw bad("keys out of order");
  for (const p of a.c) if (!isCandidate(p, units)) throw bad(`bad candidate ${JSON.stringify(p)} (units 0..${units - 1})`);
  return a;
}

/**
 * Reads the whole alias file once (4 MiB at a time) and checks everything: header, SHA-256 against the
 * build id, every line, the line count, and the key index against one rebuilt from the lines.
 * Returns the alias count; throws naming the file.
 */
export function checkAliasFile(path: string, expect: { units: number; buildId: unknown }): { aliases: number } {
  const fd = openFile(path);
  try {
    const head = readHeader(path, fd, expect);
    const hash = createHash("sha256");
    const rebuilt = new KeyIndexBuilder();
    const CHUNK = 4 << 20;
    let carry = Buffer.alloc(0);
    let n = 0;
    let prev: string | null = null;
    for (let pos = 0; pos < head.bodyBytes; ) {
      const len = Math.min(CHUNK, head.bodyBytes - pos);
      const chunk = Buffer.allocUnsafe(len);
      readExactly(fd, chunk, 0, len, ALIASES_HEADER_BYTES + pos, path);
      hash.update(chunk);
      pos += len;
      const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      let start = 0;
      for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
        if (n === head.aliases) throw new Error(`${path}: more aliases than its header's ${head.aliases} (corrupt; rebuild the index)`);
        const text = buf.toString("utf8", start, nl);
        let v: unknown;
        try {
          v = JSON.parse(text);
        } catch {
          throw new Error(`${path}: alias ${n + 1}: not valid JSON (corrupt; rebuild the index)`);
        }
        const a = checkAliasLine(path, n, v, text, prev, head.units);
        rebuilt.add(a.m, buf.subarray(start, nl + 1));
        prev = a.m;
        n++;
        start = nl + 1;
      }
      carry = Buffer.from(buf.subarray(start));
    }
    if (carry.length > 0) throw new Error(`${path}: alias ${n + 1}: the last line has no newline (corrupt; rebuild the index)`);
    if (n !== head.aliases) throw new Error(`${path}: ${n} aliases, its header says ${head.aliases} (corrupt; rebuild the index)`);
    const tail = Buffer.allocUnsafe(head.size - ALIASES_HEADER_BYTES - head.bodyBytes);
    readExactly(fd, tail, 0, tail.length, ALIASES_HEADER_BYTES + head.bodyBytes, path);
    hash.update(tail);
    if (hash.digest("hex").slice(0, 32) !== head.id) throw new Error(`${path}: contents differ from its checksum (corrupt; rebuild the index)`);
    if (!rebuilt.finish().equals(tail)) throw new Error(`${path}: key index does not match the lines (corrupt; rebuild the index)`);
    return { aliases: n };
  } finally {
    closeSync(fd);
  }
}
