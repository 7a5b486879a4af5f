// What the line readers share with the readers of other formats (./parquet.ts reads a Parquet file as
// the equivalent JSON lines): the error naming a file's line, the scan options and statistics, and the
// shapes of a line. A module of its own so that ./jsonl.ts and ./parquet.ts both point down to it.

/** A Hugging Face Parquet export, read as KILT JSON lines by ./parquet.ts (loaded only when one is met). */
export function isParquetPath(file: string): boolean {
  return /\.parquet$/i.test(file);
}

/** A problem with one line of an input file; `toString()` gives `file:line: reason`. */
export class LineError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    // A Parquet file has rows, not lines (./parquet.ts).
    super(isParquetPath(file) ? `${file}: row ${line}: ${reason}` : `${file}:${line}: ${reason}`);
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

/** Options of the JSONL readers ({@link scanJsonl}, {@link readJsonl}, {@link byteLineBatches}). */
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
  /** Longest line accepted, in bytes (longer: a `file:line` error); default 256 MB ({@link setDefaultMaxLineBytes}). */
  maxLineBytes?: number;
  /**
   * Called for a line that is not valid UTF-8 (with its line and byte offset); the line is then decoded
   * with U+FFFD and read on. Without it, such a line is malformed (reported like invalid JSON).
   */
  onInvalidUtf8?: (error: LineError) => void;
  /**
   * For `-` (standard input): read it on a worker thread up to this many bytes ahead of the consumer
   * (./read-ahead.ts), so a process piping into us never waits while the caller is busy between
   * batches. Default 0: read on the main thread.
   */
  readAheadBytes?: number;
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
  /** Offset of `buf[start]` in the (uncompressed) file. */
  startByte: number;
  endByte: number;
}
