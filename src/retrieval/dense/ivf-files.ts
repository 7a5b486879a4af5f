// The files of a compressed dense index (an inverted file of coarse lists with binary, PQ or int8 codes):
// each starts with a header (a 4-byte length, then JSON padded to 64-byte alignment) naming the format,
// its version, the file's role, the build it belongs to and its row count and row size, so that a file
// from another build, another format version or of the wrong length is refused at open, naming the
// file, before any search; the manifest adds each file's size and CRC-32 (`tartan index verify`).

import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";

export const IVF_FORMAT = "tartan-dense-ivf";
export const IVF_FORMAT_VERSION = 1;

/** File names of an index directory. */
export const IVF_FILES = {
  quantizer: "quantizer.bin",
  lists: "lists.bin",
  ids: "ids.bin",
  codes: "codes.bin",
  rescore: "rescore.i8",
} as const;

/** What a file's header says. */
export interface IvfHeader {
  format: string;
  version: number;
  file: string;
  build: string;
  /** Rows in the file after the header. */
  rows: number;
  /** Bytes per row. */
  rowBytes: number;
  /** Anything else the file needs (dimensions, section sizes). */
  [key: string]: unknown;
}

/** The header bytes for `h` (length-prefixed JSON padded with spaces to a multiple of 64 bytes). */
export function headerBytes(h: IvfHeader): Buffer {
  const json = Buffer.from(JSON.stringify(h), "utf8");
  const total = Math.ceil((4 + json.length + 1) / 64) * 64;
  const out = Buffer.alloc(total, 0x20);
  out.writeUInt32LE(total - 4, 0);
  json.copy(out, 4);
  out[total - 1] = 0x0a;
  return out;
}

/** Writes all of `buf` at `position` (or appends when null). */
export function writeAll(fd: number, buf: Uint8Array, position: number | null, name: string): void {
  for (let off = 0; off < buf.length; ) {
    let n: number;
    try {
      n = writeSync(fd, buf, off, buf.length - off, position === null ? null : position + off);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new Error(`${name}: cannot write ${buf.length - off} bytes${err.code === "ENOSPC" ? " (no space left on the device)" : ""}: ${err.message}`);
    }
    off += n;
  }
}

/** Reads all of `buf` from `position`; a short read is a truncated file. */
export function readAll(fd: number, buf: Uint8Array, position: number, name: string): void {
  for (let off = 0; off < buf.length; ) {
    const n = readSync(fd, buf, off, buf.length - off, position + off);
    if (n <= 0) throw new Error(`${name}: truncated (nothing at byte ${position + off})`);
    off += n;
  }
}

/** Opens an index file and checks its header against what the index expects; returns the fd, header and data offset. */
export function openIvfFile(path: string, expect: { file: string; build: string; rows?: number; rowBytes?: number }): { fd: number; header: IvfHeader; offset: number } {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const lenBuf = Buffer.alloc(4);
    if (size < 4) throw new Error(`${path}: truncated (no header)`);
    readAll(fd, lenBuf, 0, path);
    const len = lenBuf.readUInt32LE(0);
    if (len > 1 << 20 || 4 + len > size) throw new Error(`${path}: not a ${IVF_FORMAT} file (bad header length)`);
    const hb = Buffer.alloc(len);
    readAll(fd, hb, 4, path);
    let h: IvfHeader;
    try {
      h = JSON.parse(hb.toString("utf8")) as IvfHeader;
    } catch {
      throw new Error(`${path}: not a ${IVF_FORMAT} file (unreadable header)`);
    }
    if (h.format !== IVF_FORMAT) throw new Error(`${path}: not a ${IVF_FORMAT} file`);
    if (h.version !== IVF_FORMAT_VERSION) throw new Error(`${path}: format version ${h.version}; this tartan reads version ${IVF_FORMAT_VERSION} (rebuild the index)`);
    if (h.file !== expect.file) throw new Error(`${path}: holds the ${h.file} part, not ${expect.file}`);
    if (h.build !== expect.build) throw new Error(`${path}: from build ${h.build}, the index is build ${expect.build} (files of two builds mixed; rebuild the index)`);
    if (expect.rows !== undefined && h.rows !== expect.rows) throw new Error(`${path}: ${h.rows} rows, the index has ${expect.rows}`);
    if (expect.rowBytes !== undefined && h.rowBytes !== expect.rowBytes) throw new Error(`${path}: rows of ${h.rowBytes} bytes, ${expect.rowBytes} expected`);
    const offset = 4 + len;
    const want = offset + h.rows * h.rowBytes;
    if (size !== want) throw new Error(`${path}: ${size} bytes, its header says ${want} (${size < want ? "truncated" : "trailing bytes"})`);
    return { fd, header: h, offset };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}
