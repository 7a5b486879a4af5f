// One temporary directory per test run: every test's mkdtemp (and every child process a test starts)
// lands under it through TMPDIR, and it is removed when the run ends, passed or failed. A run killed before
// its teardown leaves its directory behind; the next run removes the directories of runs whose process
// is gone, so a machine running the suite day after day does not fill its disk.
import { existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { alive } from "../src/util/safe-output.js";
import { SKIPS_FILE } from "./support/skips.js";

const PREFIX = "tartan-test-";
const OWNER = "owner.pid";

/** Removes the run directories under `base` whose owning process has exited. */
function removeAbandoned(base: string): void {
  for (const name of readdirSync(base)) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(base, name);
    try {
      if (!lstatSync(dir).isDirectory()) continue; // a planted link is left alone
      const owner = join(dir, OWNER);
      if (!existsSync(owner)) continue;
      const pid = Number(readFileSync(owner, "utf8").trim());
      if (Number.isInteger(pid) && pid > 0 && !alive(pid)) rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run removed it first, or it is not ours to read: leave it
    }
  }
}

/** Prints the files left out (vitest.config.ts) and the tests skipped (support/skips.ts), with their reasons. */
function reportSkips(root: string): void {
  const lines = (process.env.TARTAN_TEST_LEFT_OUT ?? "").split("\n").filter(Boolean).map((l) => `left out ${l}`);
  try {
    lines.push(...readFileSync(join(root, SKIPS_FILE), "utf8").split("\n").filter(Boolean).map((l) => `skipped ${l}`));
  } catch {
    /* nothing skipped */
  }
  const unique = [...new Set(lines)];
  if (unique.length) process.stdout.write(`\nnot run on this machine (${unique.length}):\n${unique.map((l) => `  ${l}`).join("\n")}\n`);
}

export default function setup(): () => void {
  const base = tmpdir();
  removeAbandoned(base);
  const root = mkdtempSync(join(base, PREFIX));
  writeFileSync(join(root, OWNER), `${process.pid}\n`);
  process.env.TMPDIR = root;
  process.env.TARTAN_TEST_RUN_DIR = root;
  return () => {
    process.env.TMPDIR = base;
    reportSkips(root);
    rmSync(root, { recursive: true, force: true });
  };
}
