// Streaming JSONL: read (plain or .gz) with constant memory, tolerate a missing final newline,
// blank lines, CRLF and a UTF-8 BOM, and report a malformed line as `file:line: reason` while the
// rest of the file is still read. Write (plain or .gz) atomically with backpressure.

import { lineLimitReason } from "./record-limits.js";
import { isParquetPath, LineError, type ByteLine, type RawLine, type ScanOptions, type ScanStats } from "./lines.js";
export { isParquetPath, LineError, type ByteLine, type RawLine, type ScanOptions, type ScanStats } from "./lines.js";
import { isUtf8 } from "node:buffer";
import { createReadStream, createWriteStream, existsSync, renameSync, statSync, unlinkSync, type WriteStream } from "node:fs";
import { Readable } from "node:stream";
import { createTempFor } from "../util/safe-output.js";
import { diskError } from "../util/disk-errors.js";
import { readAhead } from "./read-ahead.js";
import { createGunzip, createGzip, type Gzip } from "node:zlib";
import { once } from "node:events";

const NL = 0x0a;

/** Turns a JSON.parse message into a short reason. */
function jsonReason(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return `invalid JSON (${msg})`;
}

/** Whether `buf[start, end)` holds only spaces, tabs and CRs (a blank line). */
export function isBlankBytes(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/** Where the content of line `buf[start, end)` (newline excluded) ends: before a trailing CR. */
export function lineContentEnd(buf: Buffer, start: number, end: number): number {
  return end > start && buf[end - 1] === 0x0d ? end - 1 : end;
}

/** Where the content of a file's first line `buf[start, end)` starts: after a UTF-8 BOM. */
export function afterBom(buf: Buffer, start: number, end: number): number {
  return end - start >= 3 && buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf ? start + 3 : start;
}

/** The error of a line longer than `maxLine` bytes (`where`: the file, or "standard input"). */
export function lineTooLong(where: string, line: number, maxLine: number): LineError {
  return new LineError(where, line, `line longer than ${maxLine} bytes (raise --max-line-bytes to read it)`);
}

/** Default for {@link ScanOptions.maxLineBytes}: 256 MB. */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;
let defaultMaxLineBytes = DEFAULT_MAX_LINE_BYTES;

/** The line-length limit used when a scan does not give one. */
export function defaultMaxLineBytesNow(): number {
  return defaultMaxLineBytes;
}

/** Sets the line-length limit used when a scan does not give one (the CLI's `--max-line-bytes`). */
export function setDefaultMaxLineBytes(n: number): void {
  if (!Number.isInteger(n) || n < 1) throw new Error(`--max-line-bytes must be a positive integer, got ${n}`);
  defaultMaxLineBytes = n;
}

/**
 * Refuses inputs that are not regular files (FIFOs, character devices, sockets, directories): reading
 * them can block forever. `-` (standard input) is always accepted.
 */
export function assertReadableFile(file: string): void {
  if (file === "-") return;
  let st;
  try {
    st = statSync(file);
  } catch {
    return; // opening it gives the error (ENOENT, EACCES), with the path
  }
  if (st.isFile()) return;
  const what = st.isDirectory()
    ? "a directory"
    : st.isFIFO()
      ? "a FIFO"
      : st.isCharacterDevice()
        ? "a character device"
        : st.isSocket()
          ? "a socket"
          : st.isBlockDevice()
            ? "a block device"
            : "not a regular file";
  throw new Error(`${file}: ${what}, not a regular file (give standard input as -)`);
}

/** `err` with the file named in its message (zlib and stream errors do not name it). */
export function namingFile(file: string, err: unknown): unknown {
  if (err instanceof LineError || !(err instanceof Error)) return err;
  const name = file === "-" ? "standard input" : file;
  if (err.message.includes(name)) return err;
  const gzipError = (err as NodeJS.ErrnoException).code?.startsWith("Z_") === true;
  const wrapped = new Error(`${name}: ${gzipError ? `corrupt gzip data (${err.message})` : err.message}`);
  (wrapped as NodeJS.ErrnoException).code = (err as NodeJS.ErrnoException).code;
  return wrapped;
}

/**
 * The lines of `file` (.gz decompressed on the fly; `-` is standard input; a Hugging Face .parquet export
 * as the equivalent KILT JSON lines, ./parquet.ts) as byte ranges, a chunk at a
 * time: each yielded array holds the complete non-blank lines of one read. Pulling drives reading, so
 * memory stays constant. A line that straddles reads is gathered piece by piece and joined once
 * (linear in its length); a line longer than `maxLineBytes` stops the scan with `file:line`.
 */
export async function* byteLineBatches(
  file: string,
  options: ScanOptions = {},
  stats?: ScanStats,
): AsyncGenerator<ByteLine[]> {
  if (isParquetPath(file)) {
    const { parquetLineBatches } = await import("./parquet.js");
    yield* parquetLineBatches(file, options, stats);
    return;
  }
  const gz = file.endsWith(".gz");
  const st: ScanStats = stats ?? { records: 0, blankLines: 0, badLines: 0, bytes: 0 };
  const startByte = options.startByte ?? 0;
  const maxLine = options.maxLineBytes ?? defaultMaxLineBytes;
  if (gz && startByte > 0) throw new Error(`${file}: resuming at a byte offset needs an uncompressed file`);
  assertReadableFile(file);
  if (file === "-" && startByte > 0) throw new Error("standard input cannot be resumed at a byte offset");
  const chunkSize = options.chunkSize ?? 1 << 20;
  const raw: Readable =
    file !== "-"
      ? createReadStream(file, { highWaterMark: chunkSize, start: startByte })
      : options.readAheadBytes
        ? Readable.from(readAhead(0, { chunkBytes: chunkSize, maxBytes: options.readAheadBytes }), { objectMode: false })
        : process.stdin;
  const stream = gz ? raw.pipe(createGunzip({ chunkSize: 1 << 20 })) : raw;
  if (gz)
    raw.on("data", (c: string | Buffer) => {
      st.bytes += c.length;
    });
  let lineNumber = options.startLine ?? 0;
  let offset = startByte; // uncompressed offset of the first carried piece (or of the next chunk)
  const pieces: Buffer[] = []; // the start of a line that straddles reads
  let carried = 0;
  let first = startByte === 0;
  let batch: ByteLine[] = [];
  const tooLong = () => lineTooLong(file === "-" ? "standard input" : file, lineNumber + 1, maxLine);

  const emit = (buf: Buffer, start: number, end: number, startOffset: number, endByte: number) => {
    if (end - start > maxLine) throw tooLong();
    lineNumber++;
    const e = lineContentEnd(buf, start, end);
    let s = start;
    if (first) {
      first = false;
      s = afterBom(buf, s, e);
    }
    if (s === e || isBlankBytes(buf, s, e)) {
      st.blankLines++;
      return;
    }
    batch.push({ buf, start: s, end: e, line: lineNumber, startByte: startOffset + (s - start), endByte });
  };

  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (!gz) st.bytes += chunk.length;
      let s = 0;
      let i = chunk.indexOf(NL);
      if (carried > 0) {
        if (i === -1) {
          carried += chunk.length;
          if (carried > maxLine) throw tooLong();
          pieces.push(Buffer.from(chunk));
          options.onProgress?.(st.bytes);
          continue;
        }
        pieces.push(chunk.subarray(0, i));
        const joined = Buffer.concat(pieces, carried + i);
        pieces.length = 0;
        carried = 0;
        emit(joined, 0, joined.length, offset, offset + joined.length + 1);
        offset += joined.length + 1;
        s = i + 1;
        i = chunk.indexOf(NL, s);
      }
      const base = offset - s;
      while (i !== -1) {
        emit(chunk, s, i, base + s, base + i + 1);
        s = i + 1;
        i = chunk.indexOf(NL, s);
      }
      offset = base + s;
      if (s < chunk.length) {
        carried = chunk.length - s;
        if (carried > maxLine) throw tooLong();
        pieces.push(Buffer.from(chunk.subarray(s)));
      }
      options.onProgress?.(st.bytes);
      if (batch.length > 0) {
        const out = batch;
        batch = [];
        yield out;
      }
    }
    if (carried > 0) {
      const joined = Buffer.concat(pieces, carried);
      emit(joined, 0, joined.length, offset, offset + joined.length);
    }
    if (batch.length > 0) yield batch;
  } catch (e) {
    throw namingFile(file, e);
  } finally {
    if (raw !== process.stdin) raw.destroy();
  }
}

/**
 * Where the first invalid UTF-8 byte of `buf[start, end)` is (relative to `start`), or -1 when the
 * range is valid UTF-8. Checked with `buffer.isUtf8` first (fast), located byte by byte only when invalid.
 */
export function invalidUtf8At(buf: Buffer, start: number, end: number): number {
  if (isUtf8(buf.subarray(start, end))) return -1;
  let i = start;
  while (i < end) {
    const c = buf[i];
    let n: number;
    let min: number;
    if (c < 0x80) {
      i++;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      min = 0x10000;
    } else return i - start;
    if (i + n >= end) return i - start;
    let cp = c & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const b = buf[i + k];
      if ((b & 0xc0) !== 0x80) return i - start;
      cp = (cp << 6) | (b & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i - start;
    i += n + 1;
  }
  return -1;
}

/**
 * The text of one line; invalid UTF-8 is a {@link LineError} naming the line and byte offset, given to
 * `options.onInvalidUtf8` (then the line is decoded with U+FFFD and kept) or returned (the line is malformed).
 */
export function decodeLine(file: string, l: ByteLine, options: ScanOptions = {}): string | LineError {
  const bad = invalidUtf8At(l.buf, l.start, l.end);
  if (bad === -1) return l.buf.toString("utf8", l.start, l.end);
  const err = new LineError(file, l.line, `invalid UTF-8 at byte ${l.startByte + bad} of the file (byte ${bad} of the line)`);
  if (!options.onInvalidUtf8) return err;
  options.onInvalidUtf8(err);
  return l.buf.toString("utf8", l.start, l.end);
}

/** The text of a line, or a thrown {@link LineError} for invalid UTF-8 (unless `options.onInvalidUtf8` takes it). */
function lineText(file: string, l: ByteLine, options: ScanOptions): string {
  const text = decodeLine(file, l, options);
  if (text instanceof LineError) throw text;
  return text;
}

/** The lines of `file` as strings, a chunk at a time (see {@link byteLineBatches}); invalid UTF-8 throws a LineError. */
export async function* lineBatches(file: string, options: ScanOptions = {}, stats?: ScanStats): AsyncGenerator<RawLine[]> {
  for await (const batch of byteLineBatches(file, options, stats)) {
    const out: RawLine[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const b = batch[i];
      out[i] = { text: lineText(file, b, options), line: b.line, endByte: b.endByte };
    }
    yield out;
  }
}

/** Calls `onLine(text, lineNumber, endByte)` for every non-blank line of `file`; invalid UTF-8 throws a LineError. */
export async function scanLines(
  file: string,
  onLine: (text: string, lineNumber: number, endByte: number) => void,
  options: ScanOptions = {},
): Promise<ScanStats> {
  const stats: ScanStats = { records: 0, blankLines: 0, badLines: 0, bytes: 0 };
  for await (const batch of byteLineBatches(file, options, stats)) {
    // One line decoded at a time, so strings do not outlive young-generation GCs.
    for (const l of batch) onLine(lineText(file, l, options), l.line, l.endByte);
  }
  return stats;
}

/**
 * Parses one line as a JSON object, or returns the reason it is not one (including a line past the
 * shared nesting and object limits, ./record-limits.ts).
 */
export function parseJsonObject(text: string): { value: Record<string, unknown> } | { reason: string } {
  const limit = lineLimitReason(text);
  if (limit !== null) return { reason: limit };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { reason: jsonReason(err) };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    return { reason: `expected a JSON object, found ${kind}` };
  }
  return { value: value as Record<string, unknown> };
}

/**
 * Calls `onRecord(value, lineNumber, text)` for every JSON object in a JSONL file. Malformed lines
 * (invalid JSON, or JSON that is not an object) go to `options.onError` and are counted; the scan goes on.
 */
export async function scanJsonl<T = Record<string, unknown>>(
  file: string,
  onRecord: (value: T, lineNumber: number, text: string, endByte: number) => void,
  options: ScanOptions = {},
): Promise<ScanStats> {
  const stats: ScanStats = { records: 0, blankLines: 0, badLines: 0, bytes: 0 };
  for await (const batch of byteLineBatches(file, options, stats)) {
    for (const l of batch) {
      // One line decoded at a time, so strings do not outlive young-generation GCs.
      const text = decodeLine(file, l, options);
      if (text instanceof LineError) {
        stats.badLines++;
        options.onError?.(text);
        continue;
      }
      const r = parseJsonObject(text);
      if ("reason" in r) {
        stats.badLines++;
        options.onError?.(new LineError(file, l.line, r.reason));
        continue;
      }
      stats.records++;
      onRecord(r.value as T, l.line, text, l.endByte);
    }
  }
  return stats;
}

/** One record of {@link readJsonl}, with the line it came from. */
export interface JsonlItem<T> {
  value: T;
  line: number;
  endByte: number;
}

/**
 * Async iteration over a JSONL file's records with constant memory. Malformed lines go to
 * `options.onError`; without one, the first malformed line is thrown once reached.
 */
export async function* readJsonl<T = Record<string, unknown>>(
  file: string,
  options: ScanOptions = {},
): AsyncGenerator<JsonlItem<T>> {
  for await (const batch of byteLineBatches(file, options)) {
    for (const l of batch) {
      const text = decodeLine(file, l, options);
      const r = text instanceof LineError ? { reason: text.reason } : parseJsonObject(text);
      if ("reason" in r) {
        const err = text instanceof LineError ? text : new LineError(file, l.line, r.reason);
        if (options.onError) {
          options.onError(err);
          continue;
        }
        throw err;
      }
      yield { value: r.value as T, line: l.line, endByte: l.endByte };
    }
  }
}

/** Reads a whole JSONL file into memory (for small files: tests, configs, samples). Throws on the first bad line. */
export async function readJsonlAll<T = Record<string, unknown>>(file: string): Promise<T[]> {
  const out: T[] = [];
  let err: LineError | null = null;
  await scanJsonl<T>(file, (v) => out.push(v), { onError: (e) => (err ??= e) });
  if (err) throw err;
  return out;
}

/**
 * Writes JSON values one per line, gzip-compressed when the path ends in `.gz`. Output goes to a
 * temporary `path.<pid>-<hex>.partial`, created exclusively (never through a planted link), and is
 * renamed into place by `close()`, so a crash never leaves a truncated file under the final name; the
 * temporary files of killed runs are removed by the next writer of the same path.
 */
export class JsonlWriter {
  private readonly file: WriteStream;
  private readonly sink: WriteStream | Gzip;
  private readonly tmp: string;
  private closed = false;
  /** The first error of the file or gzip stream (a full disk), named by path; rejects `failed`. */
  private error: unknown = null;
  private readonly failed: Promise<never>;
  private pending = 0;
  count = 0;

  constructor(readonly path: string) {
    const temp = createTempFor(path);
    this.tmp = temp.path;
    this.file = createWriteStream(this.tmp, { fd: temp.fd });
    let fail!: (e: unknown) => void;
    this.failed = new Promise<never>((_, reject) => (fail = reject));
    this.failed.catch(() => {}); // observed through `error`
    const onError = (e: Error) => {
      if (this.error !== null) return;
      this.error = diskError(this.path, e, { written: this.file.bytesWritten, pending: this.pending, cleanup: `the temporary file was removed; ${existsSync(this.path) ? `${this.path} is untouched` : `${this.path} was not created`}` });
      fail(this.error);
    };
    this.file.on("error", onError);
    if (path.endsWith(".gz")) {
      const gz = createGzip();
      gz.on("error", onError);
      gz.pipe(this.file);
      this.sink = gz;
    } else {
      this.sink = this.file;
    }
  }

  /** Writes one value; await the result to respect backpressure. */
  async write(value: unknown): Promise<void> {
    await this.writeLine(JSON.stringify(value));
  }

  /** Writes one already serialized line (without its newline); rejects once the file cannot be written (a full disk). */
  async writeLine(json: string): Promise<void> {
    if (this.error !== null) throw this.error;
    this.count++;
    const line = `${json}\n`;
    this.pending = line.length;
    if (!this.sink.write(line)) await Promise.race([once(this.sink, "drain"), this.failed]);
  }

  /** Waits until the file is closed (or failed). */
  private async finish(): Promise<void> {
    const closed = once(this.file, "close").catch(() => {});
    this.sink.end();
    await Promise.race([closed, this.failed.catch(() => {})]);
    if (this.error !== null && !this.file.closed) this.file.destroy();
  }

  /** Flushes and moves the file into place; on a write error removes the temporary file and throws it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.finish();
    if (this.error !== null) {
      this.removeTemp();
      throw this.error;
    }
    renameSync(this.tmp, this.path);
  }

  /** Stops writing and removes the partial file. */
  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.finish();
    this.removeTemp();
  }

  private removeTemp(): void {
    try {
      unlinkSync(this.tmp);
    } catch {
      /* already gone */
    }
  }
}

/** Writes an iterable of values to a JSONL file (plain or .gz). */
export async function writeJsonl(path: string, values: Iterable<unknown> | AsyncIterable<unknown>): Promise<number> {
  const w = new JsonlWriter(path);
  try {
    for await (const v of values as AsyncIterable<unknown>) await w.write(v);
  } catch (e) {
    await w.abort();
    throw e;
  }
  await w.close();
  return w.count;
}
