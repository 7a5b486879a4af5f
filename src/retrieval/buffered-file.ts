// Small synchronous file I/O for index files: a write buffer that appends numbers and text to a file
// in large writes (memory bounded whatever the file size), a read that insists on the byte count it
// asked for, so a truncated file is an error naming it rather than stale buffer bytes, and a read window
// for reads that mostly move forward (one large read serves many small ones).

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

/** Reads of a file that mostly move forward, served from one window of it read ahead in large pieces. */
export class ReadWindow {
  private buf: Buffer;
  private start = 0;
  private end = 0;

  /** `size`: the file's size (reads stop there); `chunk`: bytes read ahead at a time. */
  constructor(
    private readonly fd: number,
    private readonly file: string,
    private readonly size: number,
    private readonly chunk = 1 << 18,
  ) {
    this.buf = Buffer.allocUnsafe(0);
  }

  /** The window's buffer, valid until the next `at`. */
  get buffer(): Buffer {
    return this.buf;
  }

  /** Makes bytes [pos, pos + length) of the file (within its size) readable in `buffer`; returns where `pos` is in it. */
  at(pos: number, length: number): number {
    if (pos < this.start || pos + length > this.end) {
      if (pos + length > this.size) throw new Error(`${this.file}: ${length} bytes expected at offset ${pos}, beyond its ${this.size} bytes (truncated or corrupt)`);
      const want = Math.max(length, Math.min(this.chunk, this.size - pos));
      if (this.buf.length < want) this.buf = Buffer.allocUnsafe(Math.max(want, this.chunk));
      readExactly(this.fd, this.buf, 0, want, pos, this.file);
      this.start = pos;
      this.end = pos + want;
    }
    return pos - this.start;
  }
}
