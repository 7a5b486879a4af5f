// `tartan index build --kind dense` on a terminal: a progress line with encoded units, units per second
// and an ETA (the units are counted first); piped, not a single carriage return. The terminal is a real
// pseudo-terminal from util-linux's `script`.

import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-index-progress-"));
const pages = join(dir, "pages.jsonl");
const WORDS = ["river", "castle", "music", "engine", "football", "election", "physics", "opera"];
writeFileSync(
  pages,
  Array.from({ length: 12 }, (_, i) =>
    JSON.stringify({ wikipedia_id: String(100 + i), wikipedia_title: `Page ${i}`, text: [`Page ${i}\n`, `The ${WORDS[i % 8]} of page ${i}.\n`, `A ${WORDS[(i + 3) % 8]} and a ${WORDS[(i + 5) % 8]}.\n`] }),
  ).join("\n") + "\n",
);
const args = ["index", "build", "--kind", "dense", "--pages", pages, "--unit", "paragraph"];

describe("index build --kind dense progress", () => {
  it("draws encoded units, units/s and an ETA on a terminal", () => {
    const cmd = [process.execPath, CLI, ...args, "--out", join(dir, "tty")].map((a) => `'${a}'`).join(" ");
    const r = spawnSync("script", ["-qec", cmd, "/dev/null"], { encoding: "utf8", timeout: 240_000 });
    expect(r.status).toBe(0);
    // the rate is "-" when the whole encoding took under half a second (a quiet machine): no rate is
    // shown before there is enough time to measure one (src/util/progress.ts)
    expect(r.stdout).toMatch(/\rindex dense: encoding {2}24 \/ 24 paragraph units \(100%\) {2}(?:[\d.,]+|-) paragraph units\/s {2}ETA 0s\x1b\[K\r?\n/);
    expect(r.stdout).toContain("dense index of 24 paragraph units");
  }, 300_000);

  it("prints only the summary when piped", () => {
    const r = spawnSync(process.execPath, [CLI, ...args, "--out", join(dir, "piped")], { encoding: "utf8", timeout: 240_000 });
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain("\r");
    expect(r.stderr + r.stdout).toContain("dense index of 24 paragraph units");
  }, 300_000);
});
