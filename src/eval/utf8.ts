// UTF-8 validity of input lines: the official evaluator opens files as UTF-8 and stops at the first
// invalid byte (UnicodeDecodeError); tartan decodes it as U+FFFD and says where it was.

import { isUtf8 } from "node:buffer";

/** Byte offset (from `start`) of the first byte that is not valid UTF-8 in `buf[start, end)`, or -1. */
export function firstInvalidUtf8(buf: Uint8Array, start: number, end: number): number {
  const sub = buf.subarray(start, end);
  if (isUtf8(sub)) return -1;
  let i = 0;
  const n = sub.length;
  while (i < n) {
    const c = sub[i];
    let len: number;
    let min: number;
    if (c < 0x80) {
      i++;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      min = 0x10000;
    } else return i;
    if (i + len > n) return i;
    let cp = c & (len === 2 ? 0x1f : len === 3 ? 0x0f : 0x07);
    for (let j = 1; j < len; j++) {
      const x = sub[i + j];
      if ((x & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (x & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return -1;
}
