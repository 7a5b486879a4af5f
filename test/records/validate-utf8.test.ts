// `tartan validate` on bytes that are not UTF-8 (a KILT dev file re-encoded as Latin-1): the line and
// byte offset are reported as an error instead of decoding to U+FFFD silently; standard input is `-`.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { validateFile } from "../../src/records/validate.js";

const NQ = fileURLToPath(new URL("../../../shared/data/kilt-samples/nq-dev-kilt.jsonl", import.meta.url));
const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-utf8-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The NQ sample with one character of its third line's input replaced by "é" in Latin-1 (one byte). */
function latin1Copy(): { file: string; line: number; byte: number } {
  const lines = readFileSync(NQ, "utf8").split("\n");
  const line = 2;
  const at = lines[line].indexOf('"input"') + 12;
  const before = Buffer.from(`${lines.slice(0, line).join("\n")}\n${lines[line].slice(0, at)}`);
  const file = join(dir, "nq-latin1.jsonl");
  writeFileSync(file, Buffer.concat([before, Buffer.from([0xe9]), Buffer.from(`${lines[line].slice(at + 1)}\n${lines.slice(line + 1).join("\n")}`)]));
  return { file, line: line + 1, byte: before.length };
}

describe("tartan validate and invalid UTF-8", () => {
  it("reports the line and byte offset as an error", async () => {
    const { file, line, byte } = latin1Copy();
    const r = await validateFile(file);
    expect(r.valid).toBe(false);
    const p = r.problems.find((q) => q.problem === "invalid UTF-8");
    expect(p?.severity).toBe("error");
    expect(p?.lines).toEqual([line]);
    const lineStart = Buffer.byteLength(readFileSync(NQ, "utf8").split("\n").slice(0, line - 1).join("\n")) + 1;
    expect(p?.example.detail).toBe(`invalid UTF-8 at byte ${byte} of the file (byte ${byte - lineStart} of the line)`);
    const cli = spawnSync("node", [CLI, "validate", file], { encoding: "utf8" });
    expect(cli.status).toBe(1);
    expect(cli.stdout).toContain("invalid UTF-8");
    expect(cli.stdout).toContain(`invalid UTF-8 at byte ${byte} of the file`);
  });

  it("reads standard input given as -", () => {
    const cli = spawnSync("node", [CLI, "validate", "-"], { encoding: "utf8", input: readFileSync(NQ) });
    expect(cli.status).toBe(0);
    expect(cli.stdout.split("\n")[0]).toMatch(/^-: \d+ task records/u);
  });
});
