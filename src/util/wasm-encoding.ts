// The WebAssembly binary format's encoders that hand-assembled kernels share (the dense kernels in
// src/retrieval/dense, the evaluator's string kernels in src/eval/string-kernel.ts): LEB128 numbers,
// names and sections.

/** Unsigned LEB128. */
export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 (for i32.const). */
export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

/** A name: its UTF-8 length, then its bytes. */
export function str(s: string): number[] {
  return [...uleb(Buffer.byteLength(s, "utf8")), ...Buffer.from(s, "utf8")];
}

/** A section: its id, its length, its body. */
export function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}
