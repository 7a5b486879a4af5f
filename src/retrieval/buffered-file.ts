// Small synchronous file I/O for index files: a write buffer that appends numbers and text to a file
// in large writes (memory bounded whatever the file size), and a read that insists on the byte count it
// asked for, so a truncated file is an error naming it rather than stale buffer bytes.

import { closeSync, openSync, readSync, writeSync } from "node:fs";

/** Appends to a new file through a 1 MiB buffer. */
export class BufferedFile {
  private readonly fd: number;
  private buf: Buffer;
  private used = 0;
  /** Bytes written so far (flushed or buffered). */
  bytes = 0;

  constructor(
    readonly path: string,
    size = 1 << 20,
  ) {
    this.fd = openSync(path, "w");
    this.buf = Buffer.allocUnsafe(size);
  }

  private room(n: number): void {
    if (this.used + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  flush(): void {
    let at = 0;
    while (at < this.used) at += writeSync(this.fd, this.buf, at, this.used - at);
    this.used = 0;
  }

  u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32LE(v, this.used);
    this.used += 4;
    this.bytes += 4;
  }

  u16(v: number): void {
    this.room(2);
    this.buf.writeUInt16LE(v, this.used);
    this.used += 2;
    this.bytes += 2;
  }

  f64(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.used);
    this.used += 8;
    this.bytes += 8;
  }

  /** Appends raw bytes. */
  raw(data: Uint8Array): void {
    this.room(data.length);
    this.buf.set(data, this.used);
    this.used += data.length;
    this.bytes += data.length;
  }

  /** Appends `s` as UTF-8; returns its byte length. */
  text(s: string): number {
    const max = s.length * 3;
    this.room(max);
    const n = this.buf.write(s, this.used, "utf8");
    this.used += n;
    this.bytes += n;
    return n;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

/** Reads exactly `length` bytes at `position` into `buf` at `offset`, or throws naming `file`. */
export function readExactly(fd: number, buf: Uint8Array, offset: number, length: number, position: number, file: string): void {
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, offset + got, length - got, position + got);
    if (n === 0) throw new Error(`${file}: ${length} bytes expected at offset ${position}, the file ends after ${got} (truncated or corrupt)`);
    got += n;
  }
}
