// The test run: every test/**/*.test.ts, one process per file, one temporary directory per run
// (test/global-setup.ts). With TARTAN_TEST_MISSING=skip, files that need a system package this machine
// lacks (scripts/test-deps.mjs) are left out, and the run's end lists them with the reason.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { missingRequirements } from "./scripts/test-deps.mjs";

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith(".test.ts") ? [join(dir, e.name)] : []));
}

/** `FILE: reason` for each test file that needs a missing package (only when asked to skip them). */
function leftOut(): string[] {
  if (process.env.TARTAN_TEST_MISSING !== "skip") return [];
  const missing = missingRequirements();
  if (missing.length === 0) return [];
  const out: string[] = [];
  for (const file of testFiles("test")) {
    const text = readFileSync(file, "utf8");
    const need = missing.find((r) => r.uses.test(text));
    if (need) out.push(`${file}: ${need.what} is missing (apt-get install ${need.packages.join(" ")})`);
  }
  return out;
}

const skipped = leftOut();
process.env.TARTAN_TEST_LEFT_OUT = skipped.join("\n");

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["**/node_modules/**", ...skipped.map((l) => l.slice(0, l.indexOf(": ")))],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    globalSetup: ["test/global-setup.ts"],
  },
});
