// The evaluator's line reader. A plain JSONL file is read into one reused buffer (in the string
// kernel's memory, ./string-kernel.ts, so the scanner runs the kernel on it) and each line is
// handed to a callback before the next read: no buffer per chunk, no object per line (the streams
// of records/jsonl.ts allocate both, and a megabyte buffer per read also triggers collections for
// external memory). Lines, line numbers, blank lines, a BOM, CRLF, the line-length limit and the
// errors are those of `byteLineBatches`, which still reads everything else (.gz, .parquet, stdin).

import { open } from "node:fs/promises";
import {
  afterBom,
  assertReadableFile,
  byteLineBatches,
  defaultMaxLineBytesNow,
  isBlankBytes,
  isParquetPath,
  lineContentEnd,
  lineTooLong,
  namingFile,
  type ScanStats,
} from "../records/jsonl.js";
import { LineMemory } from "./string-kernel.js";

/** Receives one non-blank line `buf[start, end)` (no newline, CR or BOM); the bytes are valid only during the call. */
export type LineSink = (buf: Buffer, start: number, end: number, line: number) => void;

const NL = 0x0a;
const CHUNK = 1 << 20;

/** Calls `sink` for each non-blank line of `file`, in order; counts blank lines and bytes read into `stats`. */
export async function forEachLine(file: string, sink: LineSink, stats: ScanStats, onProgress?: (bytes: number) => void): Promise<void> {
  if (file === "-" || file.endsWith(".gz") || isParquetPath(file)) {
    for await (const batch of byteLineBatches(file, { onProgress }, stats)) for (const l of batch) sink(l.buf, l.start, l.end, l.line);
    return;
  }
  assertReadableFile(file);
  const maxLine = defaultMaxLineBytesNow();
  let lineNumber = 0;
  let first = true;
  const tooLong = () => lineTooLong(file, lineNumber + 1, maxLine);
  const memory = LineMemory.take(CHUNK);
  let buf = memory.buf;
  const emit = (start: number, end: number) => {
    if (end - start > maxLine) throw tooLong();
    lineNumber++;
    const e = lineContentEnd(buf, start, end);
    let s = start;
    if (first) {
      first = false;
      s = afterBom(buf, s, e);
    }
    if (s === e || isBlankBytes(buf, s, e)) stats.blankLines++;
    else sink(buf, s, e, lineNumber);
  };
  const fh = await open(file, "r").catch((e: unknown) => {
    throw namingFile(file, e);
  });
  try {
    // `have` bytes at the front of `buf` are the start of a line not yet complete.
    let have = 0;
    for (;;) {
      if (have === buf.length) buf = memory.grow(buf.length * 2, have);
      const { bytesRead } = await fh.read(buf, have, buf.length - have, null);
      const len = have + bytesRead;
      let s = 0;
      if (bytesRead === 0) {
        if (len > 0) emit(0, len);
        break;
      }
      stats.bytes += bytesRead;
      // Bytes past `len` are left from earlier reads: a newline found there is not one.
      for (let i = buf.indexOf(NL, have); i !== -1 && i < len; i = buf.indexOf(NL, s)) {
        emit(s, i);
        s = i + 1;
      }
      onProgress?.(stats.bytes);
      have = len - s;
      if (have > maxLine) throw tooLong();
      if (have > 0 && s > 0) buf.copy(buf, 0, s, len);
    }
  } catch (e) {
    throw namingFile(file, e);
  } finally {
    memory.release();
    await fh.close();
  }
}
