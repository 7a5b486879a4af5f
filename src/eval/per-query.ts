// Per-query scores on disk: one JSON line per evaluated gold record (`PerQueryRow`), written while
// `evaluate` hands the rows over, to a temporary file created exclusively beside the target and
// renamed into place only when every row is written, so a killed run never leaves a file that looks whole.

import { closeSync, writeSync } from "node:fs";
import { commitTemp, createTempFor, discardTemp } from "../util/safe-output.js";
import type { PerQueryRow } from "./evaluate.js";

const FLUSH_BYTES = 1 << 20;

/** Writes `PerQueryRow`s as JSONL; `commit()` renames the temporary file into place, `abort()` removes it. */
export class PerQueryWriter {
  readonly tmp: string;
  private fd: number;
  private pending: string[] = [];
  private pendingBytes = 0;
  count = 0;

  constructor(readonly path: string) {
    // Created exclusively beside `path` (../util/safe-output.ts): the rename replaces a link at `path`, never its target.
    const temp = createTempFor(path);
    this.tmp = temp.path;
    this.fd = temp.fd;
  }

  /** Adds one row (buffered; written in 1 MiB blocks). */
  write(row: PerQueryRow): void {
    const line = `${JSON.stringify(row)}\n`;
    this.pending.push(line);
    this.pendingBytes += line.length;
    this.count++;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    writeSync(this.fd, this.pending.join(""));
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Writes what is buffered and moves the file to its name. */
  commit(): void {
    this.flush();
    closeSync(this.fd);
    this.fd = -1;
    commitTemp(this.tmp, this.path);
  }

  /** Drops the temporary file (nothing appears under the target name). */
  abort(): void {
    discardTemp(this.tmp, this.fd >= 0 ? this.fd : undefined);
    this.fd = -1;
  }
}
