// Per-query scores on disk: one JSON line per evaluated gold record (`PerQueryRow`), written while
// `evaluate` hands the rows over, to a temporary file created exclusively beside the target and
// renamed into place only when every row is written, so a killed run never leaves a file that looks whole.

import { closeSync, constants, openSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import type { PerQueryRow } from "./evaluate.js";

const FLUSH_BYTES = 1 << 20;

/** Whether `out` names the same file as one of `inputs` (same path, a link to it, or a hard link). */
export function sameFileAsInput(out: string, inputs: readonly string[]): string | undefined {
  let o: { dev: number; ino: number } | undefined;
  try {
    o = statSync(out);
  } catch {
    return undefined; // does not exist yet: cannot be an input
  }
  for (const i of inputs) {
    try {
      const s = statSync(i);
      if (s.dev === o.dev && s.ino === o.ino) return i;
    } catch {
      /* a missing input is reported by the reader */
    }
  }
  return undefined;
}

/** Writes `PerQueryRow`s as JSONL; `commit()` renames the temporary file into place, `abort()` removes it. */
export class PerQueryWriter {
  readonly tmp: string;
  private fd: number;
  private pending: string[] = [];
  private pendingBytes = 0;
  count = 0;

  constructor(readonly path: string) {
    const dir = dirname(resolve(path));
    // Resolve the directory (not the file): the rename replaces a link at `path`, never its target.
    this.tmp = join(realpathSync(dir), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.partial`);
    this.fd = openSync(this.tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o644);
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
    renameSync(this.tmp, this.path);
  }

  /** Drops the temporary file (nothing appears under the target name). */
  abort(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    try {
      unlinkSync(this.tmp);
    } catch {
      /* already gone */
    }
  }
}
