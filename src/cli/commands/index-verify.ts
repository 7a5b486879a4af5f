// `tartan index verify DIR…`: recomputes the size and CRC-32 of every file an index's manifest lists and
// checks what opening checks (BM25 file headers and build id), and for an entity index what opening and
// lookups leave out (the alias file's SHA-256, every line, the key index rebuilt from the lines); prints
// OK or each bad file, exit 1 if any.

import type { Command } from "commander";
import { readManifest, verifyIndex } from "../../retrieval/manifest.js";
import { openRaw } from "../../retrieval/open.js";
import { formatBytes } from "../../util/progress.js";
import { indexCommand } from "./index-build.js";

/** Verifies one index directory; returns the problems found (empty when it is intact). */
export async function verifyIndexDir(dir: string): Promise<{ problems: string[]; files: number; bytes: number }> {
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
      if (readManifest(dir).kind === "entity") (await import("../../retrieval/entity/search.js")).checkEntityIndex(dir);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  return { problems, files: result.files, bytes: result.bytes };
}

export function registerIndexVerify(program: Command): void {
  indexCommand(program)
    .command("verify")
    .description("check an index directory's files against the sizes and checksums in its manifest")
    .argument("<dirs...>", "index directories")
    .action(async (dirs: string[]) => {
      let bad = 0;
      for (const dir of dirs) {
        const r = await verifyIndexDir(dir);
        if (r.problems.length === 0) process.stdout.write(`${dir}: OK (${r.files} files, ${formatBytes(r.bytes)})\n`);
        else {
          bad++;
          for (const p of r.problems) process.stdout.write(`${dir}: BAD ${p}\n`);
        }
      }
      if (bad > 0) process.exitCode = 1;
    });
}
