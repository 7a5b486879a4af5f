// `tartan index verify DIR…`: recomputes the size and CRC-32 of every file an index's manifest lists and
// checks what opening checks (BM25 file headers and build id), and what the kind adds (an entity
// index's alias file: SHA-256, every line, the key index rebuilt), by src/retrieval/verify.ts; prints
// OK or each bad file, exit 1 if any. Also removes what killed pulls into DIR left beside it (their
// temporary directories, once their process is gone) and says so on stderr.

import type { Command } from "commander";
import { verifyIndexDir } from "../../retrieval/verify.js";
import { cleanStalePulls } from "../../artefacts/pull.js";
import { formatBytes } from "../../util/progress.js";
import { indexCommand } from "./index-build.js";

export function registerIndexVerify(program: Command): void {
  indexCommand(program)
    .command("verify")
    .description("check an index directory's files against the sizes and checksums in its manifest")
    .argument("<dirs...>", "index directories")
    .action(async (dirs: string[]) => {
      let bad = 0;
      for (const dir of dirs) {
        for (const line of cleanStalePulls(dir)) process.stderr.write(`tartan: ${line}\n`);
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
