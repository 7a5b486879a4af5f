// `tartan retrieve` on a terminal: a progress line with queries done of the total, queries per second and
// an ETA (the records are counted first); piped, not a single carriage return. The terminal is a real
// pseudo-terminal from util-linux's `script`.

import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-retrieve-progress-"));
const WORDS = ["river", "castle", "music", "engine", "football", "election", "physics", "opera"];

beforeAll(() => {
  writeFileSync(
    join(dir, "pages.jsonl"),
    Array.from({ length: 12 }, (_, i) => JSON.stringify({ wikipedia_id: String(100 + i), wikipedia_title: `Page ${i}`, text: [`Page ${i}\n`, `The ${WORDS[i % 8]} of page ${i}.\n`] })).join("\n") + "\n",
  );
  writeFileSync(join(dir, "q.jsonl"), Array.from({ length: 30 }, (_, i) => `${JSON.stringify({ id: `q${i}`, input: `the ${WORDS[i % 8]}` })}\n`).join(""));
  const b = spawnSync(process.execPath, [CLI, "index", "build", "--kind", "bm25", "--pages", join(dir, "pages.jsonl"), "--out", join(dir, "bm25")], { encoding: "utf8" });
  if (b.status !== 0) throw new Error(b.stderr);
});

describe("retrieve progress", () => {
  it("draws queries of the total, queries/s and an ETA on a terminal", () => {
    const cmd = [process.execPath, CLI, "retrieve", "--index", join(dir, "bm25"), "--input", join(dir, "q.jsonl"), "--out", join(dir, "tty.jsonl")].map((a) => `'${a}'`).join(" ");
    const r = spawnSync("script", ["-qec", cmd, "/dev/null"], { encoding: "utf8", timeout: 120_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/\rretrieve {2}30 \/ 30 queries \(100%\) {2}(?:[\d.,]+|-) queries\/s {2}ETA 0s\x1b\[K\r?\n/);
    expect(r.stdout).toContain("30 queries → ");
  });

  it("prints only the summary when piped", () => {
    const r = spawnSync(process.execPath, [CLI, "retrieve", "--index", join(dir, "bm25"), "--input", join(dir, "q.jsonl"), "--out", join(dir, "piped.jsonl")], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain("\r");
    expect(r.stderr).toContain("30 queries → ");
  });
});
