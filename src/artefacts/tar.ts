// A small POSIX ustar writer and a strict reader, enough for tartan's artefacts: regular files only,
// names up to 255 bytes (prefix + name), sizes in octal or GNU base-256 (files over 8 GiB), fixed
// mode, owner and time so the same directory packs to the same bytes. The reader checks every
// header's checksum and reports a truncated archive, a link or any other entry type by name; it never
// interprets names itself (the caller checks them).

import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";

/** The tar block size. */
export const BLOCK = 512;

/** One entry header as read. */
export interface TarEntry {
  name: string;
  size: number;
  /** The type flag: "0" regular file, "1" hard link, "2" symbolic link, "5" directory, … */
  type: string;
  /** The link target for types "1" and "2". */
  linkName: string;
  /** Byte offset of the entry's data in the archive. */
  dataOffset: number;
}

function putString(buf: Buffer, at: number, len: number, value: string): void {
  const b = Buffer.from(value, "utf8");
  if (b.length > len) throw new Error(`tar header field too long: ${value}`);
  b.copy(buf, at);
}

function putOctal(buf: Buffer, at: number, len: number, value: number): void {
  putString(buf, at, len, `${value.toString(8).padStart(len - 1, "0")}\0`);
}

/** Splits a name into ustar's prefix (≤155 bytes) and name (≤100 bytes) at a "/". */
function splitName(name: string): [string, string] {
  if (Buffer.byteLength(name) <= 100) return ["", name];
  for (let i = name.lastIndexOf("/"); i > 0; i = name.lastIndexOf("/", i - 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100) return [prefix, rest];
  }
  throw new Error(`${name}: name too long for a tar archive (at most 100 bytes after a directory of at most 155)`);
}

/** A ustar header for an entry of `size` bytes (type "0" unless given: tests write other types). */
export function tarHeader(name: string, size: number, type = "0", linkName = ""): Buffer {
  const h = Buffer.alloc(BLOCK);
  const [prefix, base] = splitName(name);
  putString(h, 0, 100, base);
  putOctal(h, 100, 8, 0o644);
  putOctal(h, 108, 8, 0);
  putOctal(h, 116, 8, 0);
  if (size < 8 ** 11) putOctal(h, 124, 12, size);
  else {
    // GNU base-256: high bit set, big-endian binary
    h[124] = 0x80;
    let v = BigInt(size);
    for (let i = 135; i > 124; i--) {
      h[i] = Number(v & 0xffn);
      v >>= 8n;
    }
  }
  putOctal(h, 136, 12, 0);
  h.fill(0x20, 148, 156); // checksum field counts as spaces
  putString(h, 156, 1, type);
  putString(h, 157, 100, linkName);
  putString(h, 257, 6, "ustar\0");
  putString(h, 263, 2, "00");
  putString(h, 345, 155, prefix);
  let sum = 0;
  for (const b of h) sum += b;
  putString(h, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return h;
}

/** Zero bytes that pad `size` bytes of data to a whole block. */
export function tarPadding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** The end of an archive: two zero blocks. */
export const TAR_END = Buffer.alloc(2 * BLOCK);

function readString(h: Buffer, at: number, len: number): string {
  const end = h.indexOf(0, at);
  return h.toString("utf8", at, end === -1 || end > at + len ? at + len : end);
}

function readNumber(h: Buffer, at: number, len: number, what: string): number {
  if (h[at] & 0x80) {
    let v = 0n;
    for (let i = at + 1; i < at + len; i++) v = (v << 8n) | BigInt(h[i]);
    return Number(v);
  }
  const s = readString(h, at, len).trim();
  if (s === "") return 0;
  if (!/^[0-7]+$/u.test(s)) throw new Error(`bad ${what} field ${JSON.stringify(s)}`);
  return parseInt(s, 8);
}

/**
 * Parses the header block `h` read at `offset`: null for a zero block (the end of the archive),
 * else the entry. Throws on a bad checksum or field, naming the offset.
 */
export function parseTarHeader(h: Buffer, offset: number): TarEntry | null {
  if (h.every((b) => b === 0)) return null;
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i];
  const want = readNumber(h, 148, 8, "checksum");
  if (sum !== want) throw new Error(`header at byte ${offset}: checksum ${sum.toString(8)}, recorded ${want.toString(8)} (corrupt or not a tar archive)`);
  const base = readString(h, 0, 100);
  const prefix = h.toString("latin1", 257, 262) === "ustar" ? readString(h, 345, 155) : "";
  return {
    name: prefix ? `${prefix}/${base}` : base,
    size: readNumber(h, 124, 12, "size"),
    type: String.fromCharCode(h[156] || 0x30),
    linkName: readString(h, 157, 100),
    dataOffset: offset + BLOCK,
  };
}

/** Reads a tar archive from a file, entry by entry, synchronously. */
export class TarReader {
  private readonly fd: number;
  readonly size: number;
  private at = 0;
  private ended = false;

  constructor(readonly path: string) {
    this.fd = openSync(path, "r");
    this.size = fstatSync(this.fd).size;
  }

  /** The next entry, or null at the end-of-archive blocks. Throws on a truncated archive or a bad header. */
  next(): TarEntry | null {
    if (this.ended) return null;
    if (this.at + BLOCK > this.size) throw new Error(`truncated: the archive ends at byte ${this.size} without its end-of-archive blocks`);
    const h = Buffer.alloc(BLOCK);
    readSync(this.fd, h, 0, BLOCK, this.at);
    const e = parseTarHeader(h, this.at);
    if (e === null) {
      this.ended = true;
      return null;
    }
    this.at = e.dataOffset + e.size + tarPadding(e.size).length;
    return e;
  }

  /** Calls `onChunk` with the data of `e` in order; throws naming the entry when the archive ends inside it. */
  read(e: TarEntry, onChunk: (chunk: Buffer) => void): void {
    const buf = Buffer.allocUnsafe(Math.min(Math.max(e.size, 1), 4 << 20));
    let done = 0;
    while (done < e.size) {
      const want = Math.min(buf.length, e.size - done);
      const n = readSync(this.fd, buf, 0, want, e.dataOffset + done);
      if (n === 0) throw new Error(`truncated: the archive ends inside ${e.name} (${done.toLocaleString("en-US")} of ${e.size.toLocaleString("en-US")} bytes)`);
      onChunk(buf.subarray(0, n));
      done += n;
    }
  }

  /** Closes the archive file. */
  close(): void {
    closeSync(this.fd);
  }
}

/** Writes `buf` whole at the current end of `fd`. */
export function writeAll(fd: number, buf: Buffer): void {
  let at = 0;
  while (at < buf.length) at += writeSync(fd, buf, at, buf.length - at);
}
