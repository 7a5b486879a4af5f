// The alias table the entity retriever looks mentions up in, with the alias file's body left on disk:
// in memory only its key index (./format.ts: Bloom filters of the keys and of the first words of keys
// of several words, about 1.5 bytes an alias, and each 4 KiB block's offset, CRC-32 and first key,
// about 60 bytes a block). A lookup asks the Bloom filter
// first (most n-grams of a query are no alias and stop there, at the cost of a hash and a probe or
// two), then binary-searches the block keys, reads that block with one pread (its CRC-32 checked before
// use) and finds the key's line in it by a byte search; a line's candidates are parsed (and checked)
// only when they are asked for. The blocks read last are kept for the next lookups, and the last line
// found for the `get` that follows a `has`.

import { closeSync, readSync } from "node:fs";
import { crc32 } from "node:zlib";
import { bloomHas, checkAliasLine, hashKey, isCandidate, ALIASES_HEADER_BYTES, type AliasFile, type AliasLine } from "./format.js";

/** A mention's candidates: units and p(unit | mention), most probable first. */
export interface Candidates {
  units: Uint32Array;
  probs: Float64Array;
}

/** Blocks kept after reading, 4 KiB each (the mentions of a query and its neighbours mostly fall in a few). */
const CACHED_BLOCKS = 256;

/** A line found in a block: the block's bytes and number, the line's byte range (newline excluded). */
interface Line {
  buf: Buffer;
  block: number;
  start: number;
  end: number;
}

/** Whether a parsed line has candidates, each a valid one. */
function candidatesOk(v: unknown, units: number): boolean {
  const c = (v as AliasLine | null)?.c;
  return Array.isArray(c) && c.length > 0 && c.every((p) => isCandidate(p, units));
}

export class AliasTable {
  private readonly cache = new Map<number, Buffer>();
  private lastKey: string | null = null;
  private lastLine: Line | null = null;
  private closed = false;

  /** The table over an opened alias file (openAliasFile); it owns the descriptor (`close()`). */
  constructor(private readonly file: AliasFile) {}

  /** Number of aliases. */
  get size(): number {
    return this.file.aliases;
  }

  has(key: string): boolean {
    return this.line(key) !== null;
  }

  /** False when no key of two words or more starts with `word` (true: one may). */
  mayStartLongerKey(word: string): boolean {
    const f = this.file;
    return f.firstWordBits > 0 && bloomHas(f.firstWordBloom, f.firstWordBits, hashKey(word));
  }

  /** The candidates of `key` with p(unit | key) = links / all links of the key, or undefined. */
  get(key: string): Candidates | undefined {
    const l = this.line(key);
    if (l === null) return undefined;
    const text = l.buf.toString("utf8", l.start, l.end);
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw new Error(`${this.file.path}: alias ${this.aliasNumber(l) + 1}: not valid JSON (corrupt; rebuild the index)`);
    }
    // A line that passed its block's CRC-32 can only be wrong if it was written wrong; say how.
    if (!candidatesOk(v, this.file.units)) checkAliasLine(this.file.path, this.aliasNumber(l), v, text, null, this.file.units);
    const { c } = v as AliasLine;
    const total = c.reduce((sum, [, n]) => sum + n, 0);
    return { units: Uint32Array.from(c, ([u]) => u), probs: Float64Array.from(c, ([, n]) => n / total) };
  }

  /** Closes the alias file (once; later calls do nothing). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
    closeSync(this.file.fd);
  }

  /** The line of `key`, or null (the last answer is kept: `get` mostly follows `has`). */
  private line(key: string): Line | null {
    if (key !== this.lastKey) {
      this.lastLine = this.find(key);
      this.lastKey = key;
    }
    return this.lastLine;
  }

  private find(key: string): Line | null {
    const f = this.file;
    if (f.bloomBits === 0 || !bloomHas(f.bloom, f.bloomBits, hashKey(key))) return null;
    // The last block whose first key is ≤ key.
    if (key < f.blockKeys[0]) return null;
    let lo = 0;
    let hi = f.blockKeys.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (f.blockKeys[mid] <= key) lo = mid;
      else hi = mid - 1;
    }
    const buf = this.block(lo);
    // Lines start `{"m":<key as JSON.stringify writes it>,"c":` (the writer's form, checked in full by
    // checkAliasFile); that text occurs nowhere else at a line start (quotes inside a key are escaped).
    const needle = `{"m":${JSON.stringify(key)},"c":`;
    for (let start = buf.indexOf(needle); start >= 0; start = buf.indexOf(needle, start + 1)) {
      if (start > 0 && buf[start - 1] !== 10) continue;
      return { buf, block: lo, start, end: buf.indexOf(10, start) }; // the block ends with a newline (checked when read)
    }
    return null;
  }

  /** Block `b`'s bytes (whole lines), from the cache or one pread checked against its CRC-32. */
  private block(b: number): Buffer {
    const cached = this.cache.get(b);
    if (cached !== undefined) return cached;
    const f = this.file;
    const start = f.blockStarts[b];
    const buf = Buffer.allocUnsafe(f.blockStarts[b + 1] - start);
    for (let got = 0; got < buf.length; ) {
      const n = readSync(f.fd, buf, got, buf.length - got, ALIASES_HEADER_BYTES + start + got);
      if (n === 0) throw new Error(`${f.path}: ends inside its body (truncated since it was opened; rebuild the index)`);
      got += n;
    }
    if (crc32(buf) >>> 0 !== f.blockCrcs[b]) throw new Error(`${f.path}: the block at body byte ${start} differs from its CRC-32 (corrupt; rebuild the index)`);
    if (buf.toString("latin1", 0, 6) !== '{"m":"' || buf[buf.length - 1] !== 10) throw new Error(`${f.path}: the block at body byte ${start} is not whole lines {"m":"…","c":…} (corrupt; rebuild the index)`);
    if (this.cache.size >= CACHED_BLOCKS) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(b, buf);
    return buf;
  }

  /** The alias number of line `l` (for error messages). */
  private aliasNumber(l: Line): number {
    let n = this.file.blockFirst[l.block];
    for (let at = l.buf.indexOf(10); at >= 0 && at < l.start; at = l.buf.indexOf(10, at + 1)) n++;
    return n;
  }
}
