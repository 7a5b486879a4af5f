// A hash table from raw tokens — given as [start, end) ranges of a text, not as strings — to numbers
// (the builder's term ids), so a token seen before costs a hash and a comparison, and no allocation.

export class TokenTable {
  private keys: string[] = [];
  private hashes = new Uint32Array(1 << 16);
  private values = new Int32Array(1 << 16);
  private slots = new Int32Array(1 << 17).fill(-1);
  private mask = (1 << 17) - 1;

  get size(): number {
    return this.keys.length;
  }

  /** FNV-1a of text[start, end) (UTF-16 code units). */
  static hash(text: string, start: number, end: number): number {
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return h >>> 0;
  }

  /** The value stored for text[start, end) (whose hash is `h`), or undefined. */
  get(text: string, start: number, end: number, h: number): number | undefined {
    const { slots, hashes, keys, mask } = this;
    const len = end - start;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const e = slots[s];
      if (e < 0) return undefined;
      if (hashes[e] === h) {
        const k = keys[e];
        if (k.length === len) {
          let i = 0;
          while (i < len && k.charCodeAt(i) === text.charCodeAt(start + i)) i++;
          if (i === len) return this.values[e];
        }
      }
    }
  }

  /** Stores `value` for `key` (not present yet; `h` = its hash). */
  set(key: string, h: number, value: number): void {
    const e = this.keys.length;
    if (e === this.hashes.length) {
      const hashes = new Uint32Array(e * 2);
      hashes.set(this.hashes);
      this.hashes = hashes;
      const values = new Int32Array(e * 2);
      values.set(this.values);
      this.values = values;
    }
    this.keys.push(key);
    this.hashes[e] = h;
    this.values[e] = value;
    if ((e + 1) * 2 > this.slots.length) this.rehash();
    else this.place(e);
  }

  private place(e: number): void {
    let s = this.hashes[e] & this.mask;
    while (this.slots[s] >= 0) s = (s + 1) & this.mask;
    this.slots[s] = e;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    this.mask = this.slots.length - 1;
    for (let e = 0; e < this.keys.length; e++) this.place(e);
  }

  clear(): void {
    this.keys = [];
    this.slots.fill(-1);
  }
}
