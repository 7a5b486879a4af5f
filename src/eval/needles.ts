// The context metrics' needles: normalized gold titles and answers as UTF-8 bytes, one after another in
// one growable buffer, each normalized and encoded once (when its gold record is read), so the context
// matcher (./context-match.ts) copies a record's needles next to the passages it searches with no string
// work per prediction. Needles holding a lone surrogate (no UTF-8 form) are refused: their records are
// compared as strings.

import { normalizeAnswer, normalizeAsciiInto } from "./normalize.js";

const LONE_SURROGATE_RE = /\p{Cs}/u;

/** Needles, each `bytes[at[k], at[k + 1])`. */
export class NeedleStore {
  bytes: Buffer = Buffer.allocUnsafe(1 << 12);
  at = new Int32Array(256);
  /** Number of needles. */
  count = 0;

  /** Room for `more` bytes after the last needle, and for one more needle. */
  private reserve(more: number): void {
    const end = this.at[this.count];
    if (end + more > this.bytes.length) {
      const b = Buffer.allocUnsafe(Math.max(end + more, 2 * this.bytes.length));
      this.bytes.copy(b, 0, 0, end);
      this.bytes = b;
    }
    if (this.count + 2 > this.at.length) {
      const a = new Int32Array(2 * this.at.length);
      a.set(this.at);
      this.at = a;
    }
  }

  /**
   * Adds `normalize_answer(text)`, or `text` itself when `normalized`; returns false (adding nothing)
   * when that holds a lone surrogate.
   */
  add(text: string, normalized: boolean): boolean {
    const at = this.at[this.count];
    let s = text;
    if (!normalized) {
      this.reserve(text.length);
      const end = normalizeAsciiInto(text, this.bytes, at);
      if (end >= 0) {
        this.at[++this.count] = end;
        return true;
      }
      s = normalizeAnswer(text);
    }
    this.reserve(3 * s.length);
    const out = this.bytes;
    let o = at;
    let i = 0;
    // ASCII code units copied here (no call into C++ for most needles); the rest written as UTF-8.
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      out[o++] = c;
    }
    if (i < s.length) {
      if (LONE_SURROGATE_RE.test(s)) return false;
      o = at + out.write(s, at, "utf8");
    }
    this.at[++this.count] = o;
    return true;
  }

  /** Needle k as a string (needles are valid UTF-8). */
  string(k: number): string {
    return this.bytes.toString("utf8", this.at[k], this.at[k + 1]);
  }

  /** Whether needle k holds needle j of `other` (Python's `in`: a byte match of UTF-8 is a code-point match). */
  holds(k: number, other: NeedleStore, j: number): boolean {
    const hay = this.bytes;
    const needle = other.bytes;
    const from = other.at[j];
    const len = other.at[j + 1] - from;
    if (len === 0) return true;
    const c = needle[from];
    const last = this.at[k + 1] - len;
    for (let i = this.at[k]; i <= last; i++) {
      if (hay[i] !== c) continue;
      let m = 1;
      while (m < len && hay[i + m] === needle[from + m]) m++;
      if (m === len) return true;
    }
    return false;
  }

  /** Keeps the first `count` needles. */
  truncate(count: number): void {
    this.count = count;
  }
}

/** A gold record's needles in a store: `titles` titles from needle `first`, then `answers` answers. */
export interface Needles {
  store: NeedleStore;
  first: number;
  titles: number;
  answers: number;
}
