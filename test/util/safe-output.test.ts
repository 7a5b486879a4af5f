// Safe outputs: an output that is an input (same path, hard link, symlink) is refused before anything
// is read, by every command that writes one; temporary files are created exclusively with unique
// names (a link planted at the old `OUT.partial` name is never followed); the temporary file of a
// killed writer is removed by the next run.

import { afterAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { JsonlWriter } from "../../src/records/jsonl.js";
import { assertOutputsNotInputs, cleanStalePartials, createTempFor } from "../../src/util/safe-output.js";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const JSONL = fileURLToPath(new URL("../../dist/src/records/jsonl.js", import.meta.url));
const NQ = fileURLToPath(new URL("../../../shared/data/kilt-samples/nq-dev-kilt.jsonl", import.meta.url));
const SQUAD = fileURLToPath(new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-safe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A fresh copy of `src` plus a hard link and a symlink to it. */
function victims(src: string, name: string): { file: string; hard: string; soft: string; bytes: Buffer } {
  const file = join(dir, name);
  copyFileSync(src, file);
  const hard = join(dir, `hard-${name}`);
  const soft = join(dir, `soft-${name}`);
  linkSync(file, hard);
  symlinkSync(file, soft);
  return { file, hard, soft, bytes: readFileSync(file) };
}

describe("assertOutputsNotInputs", () => {
  it("refuses the same path, a hard link and a symlink, and accepts another file", () => {
    const v = victims(NQ, "a.jsonl");
    expect(() => assertOutputsNotInputs([v.file], [v.file])).toThrow(`${v.file}: this output is the input ${v.file} (the same path)`);
    expect(() => assertOutputsNotInputs([v.hard], [v.file])).toThrow(`${v.hard}: this output is the input ${v.file} (a hard link to it)`);
    expect(() => assertOutputsNotInputs([v.soft], [v.file])).toThrow(`${v.soft}: this output is the input ${v.file} (a symlink to it)`);
    expect(() => assertOutputsNotInputs([join(dir, "x", "..", "a.jsonl")], [v.file])).toThrow("(the same path)");
    expect(() => assertOutputsNotInputs([join(dir, "new.jsonl")], [v.file])).not.toThrow();
    expect(() => assertOutputsNotInputs([join(dir, "o.jsonl"), join(dir, "o.jsonl")], [v.file])).toThrow("is the other output");
  });
});

describe("every command refuses --out resolving to its input, before reading anything", () => {
  const cases: [string, (input: string, out: string) => string[], string][] = [
    ["retrieve", (i, o) => ["retrieve", "--index", join(dir, "no-index"), "--input", i, "--out", o], NQ],
    ["ks passages", (i, o) => ["ks", "passages", "--pages", i, "--out", o], NQ],
    ["map", (i, o) => ["map", "--input", i, "--out", o, "--pages", NQ, "--split", "dev"], NQ],
    ["datasets convert squad", (i, o) => ["datasets", "convert", "squad", i, "--out", o], SQUAD],
    ["run", (i, o) => ["run", "--input", i, "--out", o, "--reader", "dialogue"], NQ],
    ["datasets qrels", (i, o) => ["datasets", "qrels", i, "--out", o], NQ],
    ["eval --per-query", (i, o) => ["eval", i, NQ, "--per-query", o], NQ],
    ["reader eval", (i, o) => ["reader", "eval", "--pages", NQ, "--records", i, "--model", join(dir, "no-model.json"), "--out", o], NQ],
  ];
  for (const [name, args, src] of cases)
    it(name, () => {
      const v = victims(src, `${name.replace(/ /g, "-")}.in`);
      for (const out of [v.file, v.hard, v.soft]) {
        const r = tartan(...args(v.file, out));
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`${out}: this output is the input ${v.file}`);
        expect(readFileSync(v.file).equals(v.bytes)).toBe(true);
      }
    });
});

describe("temporary files", () => {
  it("never follow a link planted at OUT.partial, and get unique names", async () => {
    const target = join(dir, "precious.txt");
    writeFileSync(target, "keep me\n");
    const out = join(dir, "planted.jsonl");
    symlinkSync(target, `${out}.partial`);
    const a = new JsonlWriter(out);
    const b = createTempFor(join(dir, "planted.jsonl"));
    expect(b.path).not.toBe(`${out}.partial`);
    await a.write({ id: 1 });
    await a.close();
    expect(readFileSync(target, "utf8")).toBe("keep me\n");
    expect(readFileSync(out, "utf8")).toBe('{"id":1}\n');
  });

  it("of a killed writer are removed by the next writer of the same path", async () => {
    const out = join(dir, "killed.jsonl");
    const script = `import { JsonlWriter } from ${JSON.stringify(JSONL)};
const w = new JsonlWriter(${JSON.stringify(out)});
for (let i = 0; i < 1000; i++) await w.write({ id: i });
await new Promise((r) => setTimeout(r, 100));
process.kill(process.pid, "SIGKILL");`;
    spawnSync("node", ["--input-type=module", "-e", script]);
    const left = readdirSync(dir).filter((f) => f.startsWith("killed.jsonl.") && f.endsWith(".partial"));
    expect(left).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
    const w = new JsonlWriter(out);
    expect(existsSync(join(dir, left[0]))).toBe(false);
    await w.write({ id: "again" });
    await w.close();
    expect(readdirSync(dir).filter((f) => f.startsWith("killed.jsonl"))).toEqual(["killed.jsonl"]);
  });

  it("leave a legacy OUT.partial in place and say where it is", () => {
    const out = join(dir, "legacy.jsonl");
    writeFileSync(`${out}.partial`, "half");
    expect(cleanStalePartials(out)).toEqual({ removed: [], left: [`${out}.partial`] });
  });
});
