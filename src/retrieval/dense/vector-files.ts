// Precomputed vectors in: `.npy` (float32 or float16, C order, 2-d), `.fvecs` (each row an int32 count
// then the floats), and raw little-endian float32/float16 rows of a given dimension, opened as a
// `VectorSource` that reads any range of rows on demand (pread), so a corpus of any size streams through a
// build without being held in memory. The file's shape is checked at open (a truncated file or a size that
// is not a whole number of rows is refused, naming the file); rows are checked as they are read (a NaN or
// infinite value, or an `.fvecs` row of another dimension, is refused naming the file and the row). A file
// of no rows or of zero-dimensional rows (`.npy` of shape (0, d) or (n, 0), an empty `.fvecs`, an empty raw
// file) is refused at open, naming the file: there is nothing to build.

import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/** Rows of vectors readable by range: the input of a dense build from precomputed vectors. */
export interface VectorSource {
  /** Where the rows come from (for messages). */
  readonly name: string;
  readonly count: number;
  readonly dim: number;
  /** Rows `start … start + n - 1` as one row-major float32 array (`n × dim`). */
  read(start: number, n: number): Float32Array;
  /** Releases the file. */
  close(): void;
}

/** What the rows of a file are stored as. */
export type VectorDtype = "float32" | "float16";

/** How to read a vector file whose layout its name does not say. */
export interface VectorFileOptions {
  /** Raw files: the dimension (required). */
  dim?: number;
  /** Raw files: the element type; default from the extension (`.f16`/`.fp16` → float16), else float32. */
  dtype?: VectorDtype;
  /** The layout; default from the extension (`.npy`, `.fvecs`, anything else raw). */
  format?: "npy" | "fvecs" | "raw";
}

let halfTable: Float32Array | null = null;
/** IEEE 754 half → float32 for every 16-bit pattern (built once, 256 KiB). */
function halfToFloat(): Float32Array {
  if (halfTable) return halfTable;
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const s = h & 0x8000 ? -1 : 1;
    const e = (h >> 10) & 0x1f;
    const m = h & 0x3ff;
    t[h] = e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
  }
  halfTable = t;
  return t;
}

/** A file of fixed-size rows after a header: npy and raw. */
class FlatRows implements VectorSource {
  private readonly fd: number;
  private readonly rowBytes: number;
  private buf: Buffer = Buffer.alloc(0);

  constructor(
    readonly name: string,
    readonly count: number,
    readonly dim: number,
    private readonly dtype: VectorDtype,
    private readonly offset: number,
    fd: number,
  ) {
    this.fd = fd;
    this.rowBytes = dim * (dtype === "float32" ? 4 : 2);
  }

  read(start: number, n: number): Float32Array {
    checkRange(this, start, n);
    const bytes = n * this.rowBytes;
    const out = new Float32Array(n * this.dim);
    if (this.dtype === "float32") {
      // little-endian rows straight into the result (x86 and ARM are little-endian)
      readFully(this.fd, Buffer.from(out.buffer, 0, bytes), bytes, this.offset + start * this.rowBytes, this.name);
    } else {
      if (this.buf.length < bytes) this.buf = Buffer.allocUnsafeSlow(bytes);
      readFully(this.fd, this.buf, bytes, this.offset + start * this.rowBytes, this.name);
      const t = halfToFloat();
      const b = this.buf;
      for (let i = 0; i < n * this.dim; i++) out[i] = t[b[2 * i] | (b[2 * i + 1] << 8)];
    }
    checkFinite(out, this.dim, start, this.name);
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** `.fvecs`: each row is its dimension (int32) then that many float32 values. */
class FvecsRows implements VectorSource {
  private readonly rowBytes: number;
  private buf: Buffer = Buffer.alloc(0);
  constructor(
    readonly name: string,
    readonly count: number,
    readonly dim: number,
    private readonly fd: number,
  ) {
    this.rowBytes = 4 + 4 * dim;
  }

  read(start: number, n: number): Float32Array {
    checkRange(this, start, n);
    const bytes = n * this.rowBytes;
    if (this.buf.length < bytes) this.buf = Buffer.allocUnsafe(bytes);
    readFully(this.fd, this.buf, bytes, start * this.rowBytes, this.name);
    const out = new Float32Array(n * this.dim);
    for (let r = 0; r < n; r++) {
      const at = r * this.rowBytes;
      const d = this.buf.readInt32LE(at);
      if (d !== this.dim) throw new Error(`${this.name}: row ${start + r} says it has ${d} dimensions, the first row ${this.dim}`);
      for (let j = 0; j < this.dim; j++) out[r * this.dim + j] = this.buf.readFloatLE(at + 4 + 4 * j);
    }
    checkFinite(out, this.dim, start, this.name);
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Refuses rows outside the source. */
function checkRange(s: { name: string; count: number }, start: number, n: number): void {
  if (start < 0 || n < 0 || start + n > s.count) throw new Error(`${s.name}: rows ${start}…${start + n - 1} asked, the file has ${s.count}`);
}

function readFully(fd: number, buf: Buffer, bytes: number, position: number, name: string): void {
  for (let off = 0; off < bytes; ) {
    const got = readSync(fd, buf, off, bytes - off, position + off);
    if (got <= 0) throw new Error(`${name}: truncated (no bytes at offset ${position + off})`);
    off += got;
  }
}

/** Refuses a NaN or infinite value, naming the file and the row. */
function checkFinite(v: Float32Array, dim: number, rowBase: number, name: string): void {
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (x - x !== 0) throw new Error(`${name}: row ${rowBase + Math.floor(i / dim)} has a ${Number.isNaN(x) ? "NaN" : "infinite"} value (dimension ${i % dim})`);
  }
}

/** Parses an `.npy` header: dtype, order and shape. */
function npyHeader(fd: number, name: string, size: number): { dtype: VectorDtype; count: number; dim: number; offset: number } {
  const head = Buffer.alloc(Math.min(size, 65536 + 12));
  readSync(fd, head, 0, head.length, 0);
  if (head.length < 10 || head.readUInt8(0) !== 0x93 || head.toString("latin1", 1, 6) !== "NUMPY") throw new Error(`${name}: not a .npy file (no \\x93NUMPY magic)`);
  const major = head.readUInt8(6);
  const hlen = major === 1 ? head.readUInt16LE(8) : head.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  if (start + hlen > head.length) throw new Error(`${name}: truncated .npy header`);
  const h = head.toString("latin1", start, start + hlen);
  const descr = /'descr':\s*'([^']*)'/.exec(h)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(h)?.[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(h)?.[1];
  if (descr === undefined || fortran === undefined || shape === undefined) throw new Error(`${name}: .npy header without descr, fortran_order and shape: ${h.trim()}`);
  if (fortran === "True") throw new Error(`${name}: Fortran-ordered array; save it in C order (numpy.ascontiguousarray)`);
  const dtype: VectorDtype | undefined = descr === "<f4" || descr === "f4" ? "float32" : descr === "<f2" || descr === "f2" ? "float16" : undefined;
  if (!dtype) throw new Error(`${name}: dtype ${descr}; expected little-endian float32 (<f4) or float16 (<f2)`);
  const dims = shape.split(",").map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  if (dims.length !== 2 || !dims.every((d) => Number.isInteger(d) && d >= 0)) throw new Error(`${name}: shape (${shape}); expected a 2-d array (rows, dimensions)`);
  return { dtype, count: dims[0], dim: dims[1], offset: start + hlen };
}

/** Opens a vector file (see the module comment); the caller closes it. */
export function openVectorFile(path: string, options: VectorFileOptions = {}): VectorSource {
  const lower = path.toLowerCase();
  const format = options.format ?? (lower.endsWith(".npy") ? "npy" : lower.endsWith(".fvecs") ? "fvecs" : "raw");
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    if (format === "npy") {
      const h = npyHeader(fd, path, size);
      const want = h.offset + h.count * h.dim * (h.dtype === "float32" ? 4 : 2);
      if (size < want) throw new Error(`${path}: truncated: the header says ${h.count} rows of ${h.dim} ${h.dtype} (${want} bytes), the file has ${size} bytes (row ${Math.floor((size - h.offset) / (h.dim * (h.dtype === "float32" ? 4 : 2)))} is the first missing)`);
      if (size > want) throw new Error(`${path}: ${size - want} bytes after the ${h.count} rows the header declares`);
      if (h.dim === 0) throw new Error(`${path}: shape (${h.count}, 0): zero-dimensional vectors`);
      if (h.count === 0) throw new Error(`${path}: shape (0, ${h.dim}): no vectors`);
      if (options.dim !== undefined && options.dim !== h.dim) throw new Error(`${path}: ${h.dim}-d vectors, ${options.dim} expected`);
      return new FlatRows(path, h.count, h.dim, h.dtype, h.offset, fd);
    }
    if (format === "fvecs") {
      if (size === 0) throw new Error(`${path}: empty .fvecs file: no vectors`);
      if (size < 4) throw new Error(`${path}: truncated .fvecs file (${size} bytes)`);
      const b = Buffer.alloc(4);
      readSync(fd, b, 0, 4, 0);
      const dim = b.readInt32LE(0);
      if (dim <= 0 || dim > 1 << 16) throw new Error(`${path}: row 0 says it has ${dim} dimensions`);
      const rowBytes = 4 + 4 * dim;
      if (size % rowBytes !== 0) throw new Error(`${path}: truncated: ${size} bytes is not a whole number of ${dim}-d rows (row ${Math.floor(size / rowBytes)} is cut)`);
      if (options.dim !== undefined && options.dim !== dim) throw new Error(`${path}: ${dim}-d vectors, ${options.dim} expected`);
      return new FvecsRows(path, size / rowBytes, dim, fd);
    }
    const dim = options.dim;
    if (dim === undefined || !Number.isInteger(dim) || dim < 1) throw new Error(`${path}: a raw vector file needs its dimension (--dim)`);
    const dtype = options.dtype ?? (/\.(f16|fp16|half)$/.test(lower) ? "float16" : "float32");
    const rowBytes = dim * (dtype === "float32" ? 4 : 2);
    if (size === 0) throw new Error(`${path}: empty file: no vectors`);
    if (size % rowBytes !== 0) throw new Error(`${path}: truncated: ${size} bytes is not a whole number of ${dim}-d ${dtype} rows (row ${Math.floor(size / rowBytes)} is cut)`);
    return new FlatRows(path, size / rowBytes, dim, dtype, 0, fd);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Vectors already in memory (`n × dim`) as a source (tests, small sets, the library). */
export function arraySource(vectors: Float32Array, dim: number, name = "vectors"): VectorSource {
  if (vectors.length % dim !== 0) throw new Error(`${name}: ${vectors.length} values is not a whole number of ${dim}-d rows`);
  const count = vectors.length / dim;
  return {
    name,
    count,
    dim,
    read(start, n) {
      if (start < 0 || start + n > count) throw new Error(`${name}: rows ${start}…${start + n - 1} asked, there are ${count}`);
      const out = vectors.slice(start * dim, (start + n) * dim);
      checkFinite(out, dim, start, name);
      return out;
    },
    close() {},
  };
}
