// Verifying an index directory (`tartan index verify`): every file's size and CRC-32 against the
// manifest (./manifest.ts), then what opening checks (e.g. BM25's file headers and build id), then what
// the kind's descriptor adds (./kinds/: the entity index's full alias-file check).

import { indexKind } from "./kinds/index.js";
import { readManifest, verifyIndex } from "./manifest.js";
import { openRaw } from "./open.js";

/** What {@link verifyIndexDir} found: the problems (empty when the index is intact), files and bytes checked. */
export interface IndexVerifyResult {
  problems: string[];
  files: number;
  bytes: number;
}

/** Verifies one index directory; returns the problems found (empty when it is intact). */
export async function verifyIndexDir(dir: string): Promise<IndexVerifyResult> {
  let result: ReturnType<typeof verifyIndex>;
  try {
    result = verifyIndex(dir);
  } catch (e) {
    return { problems: [(e as Error).message], files: 0, bytes: 0 };
  }
  const problems = [...result.problems];
  if (problems.length === 0) {
    try {
      await (await openRaw(dir)).close();
      await indexKind(readManifest(dir).kind, dir).verify?.(dir);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  return { problems, files: result.files, bytes: result.bytes };
}
