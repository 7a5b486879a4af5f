// Exclusive locks on named outputs: a writer of OUT (a file or a directory: a store, an index, a
// predictions file) creates `OUT.lock` exclusively (O_EXCL, then link(2)) holding its pid, keeps it for its whole run
// and removes it when it ends (at process exit too). A second writer of OUT is refused with a message
// naming the holder's pid. A lock whose pid is no longer running (a killed writer) is taken over,
// saying so; the takeover renames the stale lock away and checks it moved the file it examined, so two
// processes taking over one stale lock never both hold it. Locks are re-entrant within one process (the
// file goes with the last handle released, at exit, or on SIGINT, SIGTERM and SIGHUP).

import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, resolve } from "node:path";
import { alive, makeDirs } from "./safe-output.js";

/** A held lock. */
export interface OutputLock {
  /** The output locked. */
  target: string;
  /** The lock file. */
  file: string;
  /** Removes the lock file (when this process still holds it). */
  release(): void;
}

/** A refused lock: another live process writes the output. */
export class LockedError extends Error {
  constructor(
    readonly target: string,
    readonly holder: number,
    readonly file: string,
  ) {
    super(`${target} is being written by another process (pid ${holder}; lock file ${file}): wait for it to finish, or remove ${file} if that process is not writing it`);
    this.name = "LockedError";
  }
}

/** Locks this process holds: lock file → how many handles are open on it. */
const held = new Map<string, number>();
let exitHook = false;

/** The lock file of an output. */
export function lockFileOf(target: string): string {
  return `${resolve(target).replace(/\/+$/, "")}.lock`;
}

/** The pid a lock file holds (NaN when unreadable or empty: a writer killed between create and write). */
function holderOf(file: string): { pid: number; ino: number } | null {
  try {
    const ino = statSync(file).ino;
    const pid = Number.parseInt(readFileSync(file, "utf8").split("\n")[0], 10);
    return { pid, ino };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/**
 * Takes the exclusive lock on `target` for this process (until `release()` or exit). `log` hears of a
 * stale lock taken over. Throws {@link LockedError} when a live process holds it.
 */
export function lockOutput(target: string, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): OutputLock {
  const file = lockFileOf(target);
  const count = held.get(file);
  if (count !== undefined) {
    held.set(file, count + 1);
    return handle(target, file);
  }
  makeDirs(dirname(file));
  for (let attempt = 0; ; attempt++) {
    // The lock is written whole under a private name (O_EXCL) and linked into place (fails when the
    // name exists), so a lock file is never seen empty.
    const tmp = `${file}.${process.pid}-${randomBytes(4).toString("hex")}`;
    try {
      const fd = openSync(tmp, "wx", 0o644);
      try {
        writeSync(fd, `${process.pid}\n${process.argv.slice(1).join(" ").slice(0, 500)}\n${new Date().toISOString()}\n`);
      } finally {
        closeSync(fd);
      }
      linkSync(tmp, file);
      unlinkSync(tmp);
      break;
    } catch (e) {
      try {
        unlinkSync(tmp);
      } catch {
        /* not created */
      }
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw new Error(`${target}: cannot create the lock file ${file}: its directory does not exist`);
      if (code !== "EEXIST") throw new Error(`${target}: cannot create the lock file ${file}: ${(e as Error).message}`);
    }
    const h = holderOf(file);
    if (h === null) continue; // released meanwhile: try again
    if (Number.isInteger(h.pid) && h.pid > 0 && alive(h.pid)) throw new LockedError(target, h.pid, file);
    if (attempt >= 5) throw new Error(`${target}: cannot take over the stale lock ${file} (other processes keep taking it)`);
    // Stale: move it aside, and make sure the file moved is the one examined.
    const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
    try {
      renameSync(file, aside);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw e;
    }
    if (statSync(aside).ino !== h.ino) {
      // Another process took the stale lock over first: put its lock back (unless a third has one now).
      try {
        linkSync(aside, file);
      } catch {
        /* the lock name is taken again: leave it */
      }
      unlinkSync(aside);
      continue;
    }
    unlinkSync(aside);
    log(`tartan: took over the lock on ${target} left by pid ${Number.isNaN(h.pid) ? "(unknown)" : h.pid}, which is no longer running`);
  }
  held.set(file, 1);
  if (!exitHook) {
    exitHook = true;
    process.on("exit", releaseAll);
    // Interrupted (Ctrl-C, kill): remove the locks, then die of the signal as before — unless the
    // program handles the signal itself (then its handler exits, and the exit hook runs).
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      const onSignal = () => {
        releaseAll();
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      };
      process.once(signal, onSignal);
    }
  }
  return handle(target, file);
}

/** Removes the lock file when this process still holds it. */
function unlock(file: string): void {
  held.delete(file);
  const h = holderOf(file);
  if (h && h.pid === process.pid) unlinkSync(file);
}

/** One holder's handle: the lock file goes when the last handle of this process is released. */
function handle(target: string, file: string): OutputLock {
  let released = false;
  return {
    target,
    file,
    release: () => {
      if (released) return;
      released = true;
      const n = held.get(file);
      if (n === undefined) return;
      if (n > 1) held.set(file, n - 1);
      else unlock(file);
    },
  };
}

/** Releases every lock this process holds (at exit). */
export function releaseAll(): void {
  for (const file of [...held.keys()]) {
    try {
      unlock(file);
    } catch {
      /* exiting: nothing more to do */
    }
  }
}
