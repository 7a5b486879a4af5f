// The state file of a resumable build (BM25 segments, entity alias runs): written atomically after each
// finished piece, and read back on a re-run only when it was written by a build with the same arguments,
// over the same input (./input-identity.ts: size, modification time, sampled checksum), and every file
// it lists still has its recorded size; otherwise the build starts afresh, saying why when the input changed.

import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFileSafe } from "./safe-output.js";
import { identityChange, type FileIdentity } from "./input-identity.js";

/** What every build state holds: the key of the build's arguments, and its input's identity. */
export interface BuildStateBase {
  /** The arguments the build was started with; a different key starts afresh. */
  key: string;
  /** The input's identity when the build began (null: none, e.g. standard input). */
  inputs?: FileIdentity[] | null;
}

/** Writes `dir/file` atomically (exclusive temporary, then rename). */
export function writeBuildState(dir: string, file: string, state: BuildStateBase): void {
  writeFileSafe(join(dir, file), JSON.stringify(state));
}

/**
 * `dir/file`'s state when it exists, parses, has `key` and every file `pieces(state)` lists has its
 * recorded size; otherwise null (the build starts afresh).
 */
export function readBuildState<S extends BuildStateBase>(
  dir: string,
  file: string,
  key: string,
  pieces: (state: S) => readonly { file: string; size: number }[],
  input?: { inputs: FileIdentity[] | null; onChanged: (why: string) => void },
): S | null {
  const path = join(dir, file);
  if (!existsSync(path)) return null;
  try {
    const state = JSON.parse(readFileSync(path, "utf8")) as S;
    if (state.key !== key) return null;
    if (input) {
      const why = identityChange(state.inputs, input.inputs);
      if (why !== null) {
        input.onChanged(why);
        return null;
      }
    }
    for (const p of pieces(state)) if (statSync(join(dir, p.file)).size !== p.size) return null;
    return state;
  } catch {
    return null;
  }
}
