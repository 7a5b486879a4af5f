// The alias table the entity retriever looks mentions up in, held compactly: the alias file's body as
// one buffer, each line's byte offset, and an open-addressing hash of the keys — about 24 to 40 bytes an
// alias beside the body, where a Map would hold a string, an entry and two typed arrays per alias. A
// lookup hashes the key and decodes a line's key only when the full 32-bit hashes agree; a
// line's candidates are parsed only when they are asked for.

import type { AliasLine } from "./format.js";

/** A mention's candidates: units and p(unit | mention), most probable first. */
export interface Candidates {
  units: Uint32Array;
  probs: Float64Array;
}

/** FNV-1a over the UTF-16 code units of `s`. */
function hashKey(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class AliasTable {
  /** Alias number + 1 per slot (0: empty), and the full hash of its key (compared before decoding the key). */
  private readonly slots: Uint32Array;
  private readonly hashes: Uint32Array;
  private readonly mask: number;

  /** The table of an alias file's checked `body` (readAliasFile); `starts`: each line's offset, then the body's length. */
  constructor(
    private readonly body: Buffer,
    private readonly starts: Float64Array,
  ) {
    let size = 16;
    while (size < 2 * this.size) size *= 2;
    this.slots = new Uint32Array(size);
    this.hashes = new Uint32Array(size);
    this.mask = size - 1;
    for (let i = 0; i < this.size; i++) this.insert(this.keyAt(i), i);
  }

  /** Number of aliases. */
  get size(): number {
    return this.starts.length - 1;
  }

  private insert(key: string, index: number): void {
    const h = hashKey(key);
    let s = h & this.mask;
    while (this.slots[s] !== 0) s = (s + 1) & this.mask;
    this.slots[s] = index + 1;
    this.hashes[s] = h;
  }

  /** The key of alias number `i`, read from its line, which starts `{"m":"…","c":` (checked at open). */
  private keyAt(i: number): string {
    const b = this.body;
    const start = this.starts[i] + 5; // past {"m":
    let end = start + 1;
    let escaped = false;
    while (b[end] !== 0x22) {
      if (b[end] === 0x5c) {
        escaped = true;
        end++;
      }
      end++;
    }
    return escaped ? (JSON.parse(b.toString("utf8", start, end + 1)) as string) : b.toString("utf8", start + 1, end);
  }

  /** The number of the alias with key `key`, or -1. */
  find(key: string): number {
    const h = hashKey(key);
    for (let s = h & this.mask; ; s = (s + 1) & this.mask) {
      const v = this.slots[s];
      if (v === 0) return -1;
      if (this.hashes[s] === h && this.keyAt(v - 1) === key) return v - 1;
    }
  }

  has(key: string): boolean {
    return this.find(key) >= 0;
  }

  /** The candidates of `key` with p(unit | key) = links / all links of the key, or undefined. */
  get(key: string): Candidates | undefined {
    const i = this.find(key);
    if (i < 0) return undefined;
    const { c } = JSON.parse(this.body.toString("utf8", this.starts[i], this.starts[i + 1] - 1)) as AliasLine;
    const total = c.reduce((sum, [, n]) => sum + n, 0);
    return { units: Uint32Array.from(c, ([u]) => u), probs: Float64Array.from(c, ([, n]) => n / total) };
  }
}
