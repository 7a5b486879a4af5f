// Full disks, on a 1 MiB tmpfs (mounted when running as root; skipped otherwise): `retrieve --out`,
// `ks passages --out`, `index build` and `runs add` report the error naming the path (and the bytes
// written), exit 2, leave no temporary file or `.NAME.building` folder, and leave the previous output
// untouched.

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noteSkip } from "../support/skips.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), "tartan-full-disk-"));
const disk = join(root, "disk");
mkdirSync(disk);
let mounted = false;
try {
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk], { stdio: "ignore" });
  mounted = true;
} catch {
  /* not root, or no mount namespace: the tests below are skipped */
  noteSkip(import.meta.url, "cannot mount a tmpfs (needs root and a mount namespace)");
}
afterAll(() => {
  if (mounted) execFileSync("umount", [disk]);
  rmSync(root, { recursive: true, force: true });
});

function tartan(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const pages = join(root, "pages.jsonl");
const questions = join(root, "questions.jsonl");
const index = join(root, "index");
beforeAll(() => {
  // 400 pages of 20 paragraphs: about 3 MB of pages, passages and index, more than the disk holds.
  const words = (i: number, n: number) => Array.from({ length: n }, (_, j) => `w${(i * 31 + j * 7) % 997}`).join(" ");
  writeFileSync(pages, `${Array.from({ length: 400 }, (_, i) => JSON.stringify({ wikipedia_id: `${i}`, wikipedia_title: `Page ${i}`, text: [`Page ${i}\n`, ...Array.from({ length: 20 }, (_, p) => `${words(i + p, 60)}\n`)] })).join("\n")}\n`);
  writeFileSync(questions, `${Array.from({ length: 2000 }, (_, i) => JSON.stringify({ id: `q${i}`, input: words(i, 8), output: [{ answer: "a" }] })).join("\n")}\n`);
  if (mounted) expect(tartan("index", "build", "--kind", "bm25", "--pages", pages, "--out", index).code).toBe(0);
}, 120_000);

describe.skipIf(!mounted)("a full disk", () => {
  const previous = () => join(disk, "previous.jsonl");
  beforeAll(() => writeFileSync(previous(), "the previous output\n"));
  const listing = () => readdirSync(disk).sort();

  it("retrieve --out: the error names the file and the bytes; the previous output is untouched", () => {
    const r = tartan("retrieve", "--index", index, "--input", questions, "--out", previous());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^tartan: ${previous()}: no space left on the device \\(ENOSPC\\) after [\\d,]+ bytes written \\([\\d,]+ more did not fit\\); the temporary file was removed; ${previous()} is untouched\\n$`));
    expect(readFileSync(previous(), "utf8")).toBe("the previous output\n");
    expect(listing()).toEqual(["previous.jsonl"]);
  }, 120_000);

  it("ks passages --out: exit 2, no file", () => {
    const out = join(disk, "passages.jsonl");
    const r = tartan("ks", "passages", "--pages", pages, "--out", out);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^tartan: ${out}: no space left on the device \\(ENOSPC\\) after [\\d,]+ bytes written .*${out} was not created\\n$`));
    expect(listing()).toEqual(["previous.jsonl"]);
  }, 120_000);

  it("ks passages --table: names the table and removes its temporary directory", () => {
    const ks = join(root, "ks");
    expect(tartan("ks", "ingest", pages, "--out", ks).code).toBe(0);
    const out = join(disk, "table");
    writeFileSync(join(disk, "fill"), Buffer.alloc(960 * 1024)); // a unit table is small: leave it less room
    const r = tartan("ks", "passages", "--ks", ks, "--table", out);
    rmSync(join(disk, "fill"));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^tartan: ${out}: no space left on the device \\(ENOSPC\\); removed ${out}\\.partial-\\w+; ${out} was not created\\n$`));
    expect(listing()).toEqual(["previous.jsonl"]);
  }, 120_000);

  it("index build: names the index and removes its .NAME.building folder", () => {
    const out = join(disk, "index");
    const r = tartan("index", "build", "--kind", "bm25", "--pages", pages, "--out", out);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`tartan: ${out}: no space left on the device (ENOSPC); removed ${join(disk, ".index.building")}\n`);
    expect(listing()).toEqual(["previous.jsonl"]);
  }, 120_000);

  it("runs add: names the database file", () => {
    writeFileSync(join(disk, "fill"), Buffer.alloc(900 * 1024));
    const runs = join(disk, "runs");
    const r = tartan("runs", "add", questions, "--gold", questions, "--runs", runs);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`tartan: ${join(runs, "runs.sqlite")}: database or disk is full\n`);
    rmSync(join(disk, "fill"));
  }, 120_000);
});
