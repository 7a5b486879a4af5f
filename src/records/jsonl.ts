// Streaming JSONL: read (plain or .gz) with constant memory, tolerate a missing final newline,
// blank lines, CRLF and a UTF-8 BOM, and report a malformed line as `file:line: reason` while the
// rest of the file is still read. Write (plain or .gz) atomically with backpressure.

import { createReadStream, createWriteStream, renameSync, unlinkSync, type WriteStream } from "node:fs";
import { createGunzip, createGzip, type Gzip } from "node:zlib";
import { once } from "node:events";

/** A problem with one line of an input file; `toString()` gives `file:line: reason`. */
export class LineError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${reason}`);
    this.name = "LineError";
  }
}

/** What a scan saw besides the records it delivered. */
export interface ScanStats {
  /** Lines holding a record (delivered to the callback). */
  records: number;
  /** Empty or whitespace-only lines, skipped. */
  blankLines: number;
  /** Malformed lines, each reported through `onError`. */
  badLines: number;
  /** Bytes read from the file (compressed bytes for .gz). */
  bytes: number;
}

export interface ScanOptions {
  /** Called for each malformed line; the scan goes on. Default: collect nothing and go on. */
  onError?: (error: LineError) => void;
  /** Called after each chunk with the bytes read so far (for progress bars). */
  onProgress?: (bytesRead: number) => void;
  /** Start reading at this byte offset of a plain file (for resumable jobs); lines are counted from `startLine`. */
  startByte?: number;
  startLine?: number;
  /** Read size; default 1 MiB. */
  chunkSize?: number;
}

const NL = 0x0a;

/** Turns a JSON.parse message into a short reason. */
function jsonReason(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return `invalid JSON (${msg})`;
}

/** One non-blank line of a file. `endByte` is the offset just past its newline (uncompressed). */
export interface RawLine {
  text: string;
  line: number;
  endByte: number;
}

/** One non-blank line as bytes: `buf[start, end)` without the newline, CR or BOM. */
export interface ByteLine {
  buf: Buffer;
  start: number;
  end: number;
  line: number;
  endByte: number;
}

function isBlankBytes(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/**
 * The lines of `file` (.gz decompressed on the fly) as byte ranges, a chunk at a time: each yielded
 * array holds the complete non-blank lines of one read. Pulling drives reading, so memory stays
 * constant. Only a line that straddles two reads is copied.
 */
export async function* byteLineBatches(
  file: string,
  options: ScanOptions = {},
  stats?: ScanStats,
): AsyncGenerator<ByteLine[]> {
  const gz = file.endsWith(".gz");
  const st: ScanStats = stats ?? { records: 0, blankLines: 0, badLines: 0, bytes: 0 };
  const startByte = options.startByte ?? 0;
  if (gz && startByte > 0) throw new Error(`${file}: resuming at a byte offset needs an uncompressed file`);
  const raw = createReadStream(file, { highWaterMark: options.chunkSize ?? 1 << 20, start: startByte });
  const stream = gz ? raw.pipe(createGunzip()) : raw;
  if (gz)
    raw.on("data", (c: string | Buffer) => {
      st.bytes += c.length;
    });
  let lineNumber = options.startLine ?? 0;
  let offset = startByte; // uncompressed offset of carry[0] (or of the next chunk)
  let carry: Buffer | null = null;
  let first = startByte === 0;
  let batch: ByteLine[] = [];

  const emit = (buf: Buffer, start: number, end: number, endByte: number) => {
    lineNumber++;
    let e = end;
    if (e > start && buf[e - 1] === 0x0d) e--;
    let s = start;
    if (first) {
      first = false;
      if (e - s >= 3 && buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) s += 3;
    }
    if (s === e || isBlankBytes(buf, s, e)) {
      st.blankLines++;
      return;
    }
    batch.push({ buf, start: s, end: e, line: lineNumber, endByte });
  };

  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (!gz) st.bytes += chunk.length;
      let s = 0;
      let i = chunk.indexOf(NL);
      if (carry !== null) {
        if (i === -1) {
          carry = Buffer.concat([carry, chunk]);
          options.onProgress?.(st.bytes);
          continue;
        }
        const joined = Buffer.concat([carry, chunk.subarray(0, i)]);
        emit(joined, 0, joined.length, offset + joined.length + 1);
        offset += joined.length + 1;
        carry = null;
        s = i + 1;
        i = chunk.indexOf(NL, s);
      }
      const base = offset - s;
      while (i !== -1) {
        emit(chunk, s, i, base + i + 1);
        s = i + 1;
        i = chunk.indexOf(NL, s);
      }
      offset = base + s;
      carry = s < chunk.length ? Buffer.from(chunk.subarray(s)) : null;
      options.onProgress?.(st.bytes);
      if (batch.length > 0) {
        const out = batch;
        batch = [];
        yield out;
      }
    }
    if (carry && carry.length > 0) emit(carry, 0, carry.length, offset + carry.length);
    if (batch.length > 0) yield batch;
  } finally {
    raw.destroy();
  }
}

/** The lines of `file` as strings, a chunk at a time (see {@link byteLineBatches}). */
export async function* lineBatches(file: string, options: ScanOptions = {}, stats?: ScanStats): AsyncGenerator<RawLine[]> {
  for await (const batch of byteLineBatches(file, options, stats)) {
    const out: RawLine[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const b = batch[i];
      out[i] = { text: b.buf.toString("utf8", b.start, b.end), line: b.line, endByte: b.endByte };
    }
    yield out;
  }
}

/** Calls `onLine(text, lineNumber, endByte)` for every non-blank line of `file`. */
export async function scanLines(
  file: string,
  onLine: (text: string, lineNumber: number, endByte: number) => void,
  options: ScanOptions = {},
): Promise<ScanStats> {
  const stats: ScanStats = { records: 0, blankLines: 0, badLines: 0, bytes: 0 };
  for await (const batch of byteLineBatches(file, options, stats)) {
    // One line decoded at a time, so strings do not outlive young-generation GCs.
    for (const l of batch) onLine(l.buf.toString("utf8", l.start, l.end), l.line, l.endByte);
  }
  return stats;
}

/** Parses one line as a JSON object, or returns the reason it is not one. */
export function parseJsonObject(text: string): { value: Record<string, unknown> } | { reason: string } {
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
      const text = l.buf.toString("utf8", l.start, l.end);
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
      const r = parseJsonObject(l.buf.toString("utf8", l.start, l.end));
      if ("reason" in r) {
        const err = new LineError(file, l.line, r.reason);
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
 * Writes JSON values one per line, gzip-compressed when the path ends in `.gz`. Output goes to
 * `path + ".partial"` and is renamed into place by `close()`, so a crash never leaves a truncated file
 * under the final name.
 */
export class JsonlWriter {
  private readonly file: WriteStream;
  private readonly sink: WriteStream | Gzip;
  private readonly tmp: string;
  private closed = false;
  count = 0;

  constructor(readonly path: string) {
    this.tmp = `${path}.partial`;
    this.file = createWriteStream(this.tmp);
    if (path.endsWith(".gz")) {
      const gz = createGzip();
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

  /** Writes one already serialized JSON line (without its newline). */
  async writeLine(json: string): Promise<void> {
    this.count++;
    if (!this.sink.write(`${json}\n`)) await once(this.sink, "drain");
  }

  /** Flushes and moves the file into place. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const finished = once(this.file, "close");
    this.sink.end();
    await finished;
    renameSync(this.tmp, this.path);
  }

  /** Stops writing and removes the partial file. */
  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const finished = once(this.file, "close");
    this.sink.end();
    await finished;
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
