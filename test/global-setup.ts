// One temporary directory per test run: every test's mkdtemp (and every child process a test starts)
// lands under it through TMPDIR, and it is removed when the run ends, passed or failed. A run killed before
// its teardown leaves its directory behind; the next run removes the directories of runs whose process
// is gone, so a machine running the suite day after day does not fill its disk.
import { existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { alive } from "../src/util/safe-output.js";

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

export default function setup(): () => void {
  const base = tmpdir();
  removeAbandoned(base);
  const root = mkdtempSync(join(base, PREFIX));
  writeFileSync(join(root, OWNER), `${process.pid}\n`);
  process.env.TMPDIR = root;
  return () => {
    process.env.TMPDIR = base;
    rmSync(root, { recursive: true, force: true });
  };
}
