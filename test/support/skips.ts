// Tests skipped for want of something on this machine say so: `noteSkip` records the file and the reason
// in the run's temporary directory (test/global-setup.ts), and the run's teardown prints every one. Files
// left out whole because a system package is missing (TARTAN_TEST_MISSING=skip) are listed by
// vitest.config.ts the same way.
import { appendFileSync } from "node:fs";
import { join } from "node:path";

/** The file, in the run directory, that collects the skip lines. */
export const SKIPS_FILE = "skipped.txt";

/** Records that `file`'s tests are skipped and why (call it where the skipIf is decided). */
export function noteSkip(file: string, reason: string): void {
  const root = process.env.TARTAN_TEST_RUN_DIR;
  if (!root) return;
  const rel = new URL(file).pathname.replace(/^.*?\/test\//u, "test/");
  appendFileSync(join(root, SKIPS_FILE), `${rel}: ${reason}\n`);
}
