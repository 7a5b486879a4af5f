// The identity of a resumable command's input, so a resume continues only what it began: per file, its
// size, modification time and a SHA-256 of its content — all of it up to 256 MiB, beyond that of 64
// samples of 64 KiB spread evenly over it (the first and the last included: 4 MiB read however large
// the file; an edit that keeps size, time and every sampled byte goes unseen). A directory input (a knowledge-source
// store, a unit table) is the identities of its files (lock, temporary and SQLite -wal/-shm files left
// out). Standard input and URLs have none (they are never resumed on identity).

import { closeSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";

/** One input file as a resume key sees it. */
export interface FileIdentity {
  path: string;
  size: number;
  mtimeMs: number;
  /** SHA-256 (hex) of the content (or its samples, past WHOLE_HASH_BYTES). */
  sample: string;
}

/** Files up to this size are hashed whole. */
export const WHOLE_HASH_BYTES = 256 * 1024 * 1024;
const SAMPLES = 64;
const SAMPLE_BYTES = 64 * 1024;

/** SHA-256 of `path`'s bytes (whole up to WHOLE_HASH_BYTES, else SAMPLES evenly spaced pieces). */
function sampleDigest(path: string, size: number): string {
  const h = createHash("sha256");
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(1 << 20);
    const read = (at: number, len: number) => {
      for (let done = 0; done < len; ) {
        const n = readSync(fd, buf, 0, Math.min(buf.length, len - done), at + done);
        if (n === 0) break;
        h.update(buf.subarray(0, n));
        done += n;
      }
    };
    if (size <= WHOLE_HASH_BYTES) read(0, size);
    else for (let i = 0; i < SAMPLES; i++) read(Math.floor(((size - SAMPLE_BYTES) * i) / (SAMPLES - 1)), SAMPLE_BYTES);
  } finally {
    closeSync(fd);
  }
  return h.digest("hex");
}

/** The identity of one file. */
export function fileIdentity(path: string): FileIdentity {
  const abs = resolve(path);
  const st = statSync(abs);
  return { path: abs, size: st.size, mtimeMs: st.mtimeMs, sample: sampleDigest(abs, st.size) };
}

/** Files of a directory input that change without its content changing. */
const VOLATILE = /(\.lock|\.partial|-wal|-shm|-journal|\.building\.json)$/;

/**
 * The identity of `source` (a file, or a directory's files), or null when it has none: undefined,
 * standard input (`-`), a URL, or a path that does not exist.
 */
export function inputIdentity(source: string | undefined): FileIdentity[] | null {
  if (source === undefined || source === "-" || /^[a-z][a-z0-9+.-]*:\/\//i.test(source)) return null;
  let st;
  try {
    st = statSync(source);
  } catch {
    return null;
  }
  if (st.isFile()) return [fileIdentity(source)];
  if (!st.isDirectory()) return null;
  return readdirSync(source)
    .sort()
    .filter((name) => !VOLATILE.test(name) && statSync(join(source, name)).isFile())
    .map((name) => fileIdentity(join(source, name)));
}

/**
 * How `now` differs from `before` in words (the first difference), or null when they are the same
 * input. `before` undefined (a state written before identities were recorded) counts as changed.
 */
export function identityChange(before: FileIdentity[] | null | undefined, now: FileIdentity[] | null): string | null {
  if (before === undefined) return "the state does not record its input's identity";
  if (before === null || now === null) return before === now ? null : "the input is not the same kind of source";
  const byPath = new Map(now.map((f) => [f.path, f]));
  for (const b of before) {
    const n = byPath.get(b.path);
    if (!n) return `${b.path} is gone`;
    if (n.size !== b.size) return `${b.path} is ${n.size} bytes, was ${b.size}`;
    if (n.mtimeMs !== b.mtimeMs) return `${b.path} was modified (${new Date(n.mtimeMs).toISOString()}, was ${new Date(b.mtimeMs).toISOString()})`;
    if (n.sample !== b.sample) return `${b.path} has other content (same size and time)`;
  }
  if (now.length !== before.length) return `${now.find((f) => !before.some((b) => b.path === f.path))!.path} is new`;
  return null;
}
