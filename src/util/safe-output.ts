// Safe output files, shared by every command that writes one: refuse an output that resolves to one of
// the inputs (same path, a hard link or a symlink to it) before anything is read; write through a
// temporary file created exclusively (O_CREAT|O_EXCL, a unique name, never through an existing link)
// and renamed into place; and clean the temporary files an interrupted run left behind.

import { closeSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { randomBytes } from "node:crypto";

/** The identity of an existing file (device and inode), or null when it does not exist. */
function identity(path: string): { dev: number; ino: number } | null {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

/**
 * Throws when an output is one of the inputs: the same path, a hard link to it or a symlink that
 * resolves to it (or two outputs are the same file). Call it before reading any input.
 */
export function assertOutputsNotInputs(outputs: readonly (string | undefined)[], inputs: readonly (string | undefined)[]): void {
  const ins = inputs.filter((p): p is string => typeof p === "string" && p !== "" && p !== "-");
  const outs = outputs.filter((p): p is string => typeof p === "string" && p !== "" && p !== "-");
  const seen: { path: string; id: { dev: number; ino: number } | null; abs: string }[] = [];
  for (const input of ins) seen.push({ path: input, id: identity(input), abs: resolve(input) });
  for (const out of outs) {
    const id = identity(out);
    const abs = resolve(out);
    for (const s of seen) {
      const same = abs === s.abs || (id !== null && s.id !== null && id.dev === s.id.dev && id.ino === s.id.ino);
      if (same) {
        const how = abs === s.abs ? "the same path" : isSymlink(out) ? "a symlink to it" : "a hard link to it";
        const role = ins.includes(s.path) ? "input" : "other output";
        throw new Error(`${out}: this output is the ${role} ${s.path} (${how}); refusing to overwrite it: choose another output path`);
      }
    }
    seen.push({ path: out, id, abs });
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

const PARTIAL = /^(.*)\.(\d+)-([0-9a-f]{8})\.partial$/u;

/** Whether process `pid` is running (EPERM: it is, under another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the temporary files of `out` that interrupted runs left (`OUT.<pid>-<hex>.partial` whose
 * process is gone) and returns their paths. A legacy `OUT.partial` is not touched: it is returned in
 * `left` so the caller can say where it is.
 */
export function cleanStalePartials(out: string): { removed: string[]; left: string[] } {
  const dir = dirname(resolve(out));
  const base = basename(out);
  const removed: string[] = [];
  const left: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { removed, left };
  }
  for (const name of names) {
    if (name === `${base}.partial`) {
      left.push(join(dir, name));
      continue;
    }
    const m = PARTIAL.exec(name);
    if (!m || m[1] !== base || alive(Number(m[2]))) continue;
    try {
      unlinkSync(join(dir, name)); // removes a planted link itself, never its target
      removed.push(join(dir, name));
    } catch {
      left.push(join(dir, name));
    }
  }
  return { removed, left };
}

/** Says on stderr what {@link cleanStalePartials} found (the default for writers without a log). */
export function reportStalePartials(out: string, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): void {
  const { removed, left } = cleanStalePartials(out);
  for (const f of removed) log(`tartan: removed ${f}, left by an interrupted run`);
  for (const f of left) log(`tartan: note: ${f} is left from an interrupted run; remove it if it is not in use`);
}

/** A temporary file for `out`, created exclusively with a unique name in the same directory. */
export interface TempFile {
  path: string;
  fd: number;
}

/**
 * Creates `OUT.<pid>-<hex>.partial` with O_CREAT|O_EXCL (fails rather than follow a planted link or
 * reuse a file) and returns its path and open descriptor. Stale temporary files of `out` are removed first.
 */
export function createTempFor(out: string, log?: (line: string) => void): TempFile {
  reportStalePartials(out, log);
  for (let attempt = 0; ; attempt++) {
    const path = `${out}.${process.pid}-${randomBytes(4).toString("hex")}.partial`;
    try {
      return { path, fd: openSync(path, "wx", 0o644) };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EEXIST" && attempt < 8) continue;
      if (code === "ENOENT") throw new Error(`${out}: cannot create the output: directory ${dirname(resolve(out))} does not exist`);
      if (code === "EACCES" || code === "EROFS") throw new Error(`${out}: cannot create the output: directory ${dirname(resolve(out))} is not writable (${code})`);
      throw new Error(`${out}: cannot create a temporary file: ${(e as Error).message}`);
    }
  }
}

/** Moves a finished temporary file into place (atomic on one file system). */
export function commitTemp(temp: TempFile | string, out: string): void {
  renameSync(typeof temp === "string" ? temp : temp.path, out);
}

/** Closes (if `fd` is given) and removes a temporary file; never throws. */
export function discardTemp(temp: TempFile | string, fd?: number): void {
  try {
    if (fd !== undefined) closeSync(fd);
  } catch {
    /* already closed */
  }
  try {
    unlinkSync(typeof temp === "string" ? temp : temp.path);
  } catch {
    /* already gone */
  }
}

/** Writes a whole small file through an exclusive temporary file and a rename. */
export function writeFileSafe(out: string, data: string | Uint8Array): void {
  const temp = createTempFor(out);
  try {
    writeFileSync(temp.fd, data);
    closeSync(temp.fd);
  } catch (e) {
    discardTemp(temp, temp.fd);
    throw e;
  }
  commitTemp(temp, out);
}

/**
 * `mkdir -p` whose errors name the directory that could not be made and why. (Node's recursive
 * mkdirSync spins forever under some parents, e.g. in /proc, and its ENOENT does not say which parent.)
 */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  let p = resolve(dir);
  for (;;) {
    try {
      if (statSync(p).isDirectory()) break;
      throw new Error(`${dir}: cannot create the directory: ${p} is not a directory`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e instanceof Error && e.message.startsWith(dir) ? e : new Error(`${dir}: cannot create the directory: ${(e as Error).message}`);
    }
    missing.push(p);
    const up = dirname(p);
    if (up === p) break;
    p = up;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EEXIST") continue;
      const why = code === "EACCES" || code === "EPERM" || code === "EROFS" ? "is not writable" : "does not allow it";
      throw new Error(`${dir}: cannot create the directory: its parent ${dirname(d)} ${why} (${code})`);
    }
  }
}
