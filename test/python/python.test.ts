// The Python package (python/) in CI: `pip install ./python` into a temporary directory (standard
// library only; the build backend, setuptools, comes from pip's index or wheel cache), then its
// unittest suite with the machine's python3, importing the installed copy, against the built CLI:
// every result equal to the CLI's --json exactly (python/tests/test_tartan.py).

import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const REPO = new URL("../../", import.meta.url).pathname;
const CLI = join(REPO, "dist", "src", "cli", "main.js");
const dir = mkdtempSync(join(tmpdir(), "tartan-pip-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the Python package", () => {
  it("installs with pip, standard library only", () => {
    const r = spawnSync("python3", ["-m", "pip", "install", "--no-deps", "--target", join(dir, "site"), join(REPO, "python")], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(join(dir, "site")).filter((f) => !f.startsWith(".")).sort()).toEqual(["tartan", "tartan_kilt-0.1.0.dist-info"]);
    expect(readdirSync(join(dir, "site", "tartan")).filter((f) => f.endsWith(".py")).sort()).toEqual(["__init__.py", "_cli.py", "_frames.py", "_server.py"]);
  }, 120_000);

  it("passes its tests against the CLI, results equal to the CLI's JSON", () => {
    const r = spawnSync("python3", ["-m", "unittest", "discover", "-s", join(REPO, "python", "tests"), "-v"], {
      encoding: "utf8",
      cwd: dir,
      env: { ...process.env, TARTAN_BIN: CLI, TARTAN_TEST_INSTALLED: "1", PYTHONPATH: join(dir, "site"), PYTHONDONTWRITEBYTECODE: "1" },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\nRan 20 tests in [\d.]+s\n\nOK\n$/);
    expect(r.stderr.match(/ \.\.\. ok$/gm)?.length).toBe(20);
  }, 600_000);
});
