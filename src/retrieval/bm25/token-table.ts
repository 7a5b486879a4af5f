// A hash table from raw tokens — given as [start, end) ranges of a text, not as strings — to numbers
// (the builder's term ids), so a token seen before costs a hash and a comparison, and no allocation.
// Open addressing over one Int32Array of 4-int slots (hash, length + 1, start in the key pool, value)
// and the keys' UTF-16 code units in one pool: a lookup reads its slot and the key's code units, two
// places in memory, where separate arrays and string keys cost a cache miss each.

import { FNV_OFFSET, FNV_PRIME } from "./word-break.js";

/** Ints per slot: hash, key length + 1 (0: empty), key start in the pool, value. */
const SLOT = 4;

export class TokenTable {
  private slots = new Int32Array(SLOT << 17);
  private mask = (1 << 17) - 1;
  private pool = new Uint16Array(1 << 18);
  private poolUsed = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** FNV-1a of text[start, end) (UTF-16 code units). */
  static hash(text: string, start: number, end: number): number {
    let h = FNV_OFFSET;
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
    return h >>> 0;
  }

  /** The value stored for text[start, end) (whose hash is `h`), or undefined. */
  get(text: string, start: number, end: number, h: number): number | undefined {
    const { slots, pool, mask } = this;
    const len = end - start;
    const hh = h | 0;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const at = s * SLOT;
      const l1 = slots[at + 1];
      if (l1 === 0) return undefined;
      if (slots[at] === hh && l1 === len + 1) {
        const p = slots[at + 2] - start;
        let i = start;
        while (i < end && pool[p + i] === text.charCodeAt(i)) i++;
        if (i === end) return slots[at + 3];
      }
    }
  }

  /** Stores `value` for `key` (not present yet; `h` = its hash). */
  set(key: string, h: number, value: number): void {
    const len = key.length;
    if (this.poolUsed + len > this.pool.length) {
      let size = this.pool.length * 2;
      while (this.poolUsed + len > size) size *= 2;
      const pool = new Uint16Array(size);
      pool.set(this.pool.subarray(0, this.poolUsed));
      this.pool = pool;
    }
    const start = this.poolUsed;
    for (let i = 0; i < len; i++) this.pool[start + i] = key.charCodeAt(i);
    this.poolUsed += len;
    if ((this.count + 1) * 2 > this.mask + 1) this.rehash();
    this.place(this.slots, this.mask, h | 0, len + 1, start, value);
    this.count++;
  }

  private place(slots: Int32Array, mask: number, h: number, l1: number, start: number, value: number): void {
    let s = h & mask;
    while (slots[s * SLOT + 1] !== 0) s = (s + 1) & mask;
    const at = s * SLOT;
    slots[at] = h;
    slots[at + 1] = l1;
    slots[at + 2] = start;
    slots[at + 3] = value;
  }

  private rehash(): void {
    const old = this.slots;
    const size = (this.mask + 1) * 2;
    const slots = new Int32Array(size * SLOT);
    const mask = size - 1;
    for (let at = 0; at < old.length; at += SLOT) if (old[at + 1] !== 0) this.place(slots, mask, old[at], old[at + 1], old[at + 2], old[at + 3]);
    this.slots = slots;
    this.mask = mask;
  }

  clear(): void {
    this.slots.fill(0);
    this.poolUsed = 0;
    this.count = 0;
  }
}
