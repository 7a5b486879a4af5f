// The state file of a resumable build (BM25 segments, entity alias runs): written atomically after each
// finished piece, and read back on a re-run only when it was written by a build with the same arguments
// and every file it lists still has its recorded size; otherwise the build starts afresh.

import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFileSafe } from "./safe-output.js";

/** What every build state holds: the key of the build's arguments. */
export interface BuildStateBase {
  /** The arguments the build was started with; a different key starts afresh. */
  key: string;
}

/** Writes `dir/file` atomically (exclusive temporary, then rename). */
export function writeBuildState(dir: string, file: string, state: BuildStateBase): void {
  writeFileSafe(join(dir, file), JSON.stringify(state));
}

/**
 * `dir/file`'s state when it exists, parses, has `key` and every file `pieces(state)` lists has its
 * recorded size; otherwise null (the build starts afresh).
 */
export function readBuildState<S extends BuildStateBase>(dir: string, file: string, key: string, pieces: (state: S) => readonly { file: string; size: number }[]): S | null {
  const path = join(dir, file);
  if (!existsSync(path)) return null;
  try {
    const state = JSON.parse(readFileSync(path, "utf8")) as S;
    if (state.key !== key) return null;
    for (const p of pieces(state)) if (statSync(join(dir, p.file)).size !== p.size) return null;
    return state;
  } catch {
    return null;
  }
}
