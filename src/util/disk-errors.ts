// Errors of a full or failing disk, made to name what was being written: Node's own messages
// ("ENOSPC: no space left on device, write") say neither the file nor how far the write got.

/** What each disk error code means, in words. */
const DISK_CODES: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EFBIG: "file too large (file system or file-size limit)",
  EIO: "input/output error",
};

/** A write that the disk refused: `path` names what was being written. */
export class DiskError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "DiskError";
  }
}

/** The error's code when it is a disk error (ENOSPC, EDQUOT, EFBIG, EIO), else undefined. */
export function diskErrorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && code in DISK_CODES ? code : undefined;
}

/**
 * `e` as a {@link DiskError} naming `path`, how many bytes were written and how many more were
 * pending (when known) and what was cleaned up; other errors are returned as they are.
 */
export function diskError(path: string, e: unknown, o: { written?: number; pending?: number; cleanup?: string } = {}): unknown {
  const code = diskErrorCode(e);
  if (code === undefined || e instanceof DiskError) return e;
  const fmt = (n: number) => n.toLocaleString("en-US");
  const bytes = o.written === undefined ? "" : ` after ${fmt(o.written)} bytes written${o.pending ? ` (${fmt(o.pending)} more did not fit)` : ""}`;
  return new DiskError(path, code, `${path}: ${DISK_CODES[code]} (${code})${bytes}${o.cleanup ? `; ${o.cleanup}` : ""}`);
}
