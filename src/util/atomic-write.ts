// Writing a whole result file safely: to a new temporary name beside the target (created exclusively,
// never through a planted link), then renamed over the target, so no reader ever sees half a file
// and a failed write leaves the old file as it was.

import { randomBytes } from "node:crypto";
import { closeSync, constants, openSync, realpathSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** Writes `text` (or bytes) to `path` atomically. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = join(realpathSync(dirname(resolve(path))), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.partial`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o644);
  let closed = false;
  try {
    if (typeof data === "string") writeSync(fd, data);
    else writeSync(fd, data);
    closeSync(fd);
    closed = true;
    renameSync(tmp, path);
  } catch (e) {
    if (!closed) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      /* gone */
    }
    throw e;
  }
}
