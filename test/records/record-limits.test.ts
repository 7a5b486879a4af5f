// The limits every JSON-line reader shares (src/records/record-limits.ts): a line nested 100,000 levels
// deep, and a record with 300,000 provenance entries, are malformed lines named by file and line in
// `tartan validate`, the JSONL readers, `ks ingest` and the evaluator (never "Maximum call stack size
// exceeded", never gigabytes of heap).

import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/eval/evaluate.js";
import { readJsonl, scanJsonl, type LineError } from "../../src/records/jsonl.js";
import { lineLimitReason, MAX_RECORD_OBJECTS, NESTING_REASON, OBJECTS_REASON } from "../../src/records/record-limits.js";
import { formatReport, validateFile } from "../../src/records/validate.js";

const dir = mkdtempSync(join(tmpdir(), "tartan-limits-"));
const GOOD = JSON.stringify({ id: "1", input: "q", output: [{ answer: "a" }] });
const DEEP = `{"id": "2", "input": "q", "output": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
const prov = Array.from({ length: 300_000 }, (_, i) => `{"wikipedia_id": "${i}"}`).join(",");
const WIDE = `{"id": "2", "input": "q", "output": [{"answer": "a", "provenance": [${prov}]}]}`;
const deep = join(dir, "deep.jsonl");
const wide = join(dir, "wide.jsonl");
writeFileSync(deep, `${GOOD}\n${DEEP}\n`);
writeFileSync(wide, `${GOOD}\n${WIDE}\n`);
const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;

describe("lineLimitReason", () => {
  it("counts brackets and objects outside strings only", () => {
    expect(lineLimitReason(`{"a": "${"[".repeat(5000)}\\"${"{".repeat(5000)}"}`)).toBe(null);
    expect(lineLimitReason(`{"a": "x\\\\", "b": ${"[".repeat(1001)}${"]".repeat(1001)}}`)).toBe(NESTING_REASON);
    expect(lineLimitReason(`[${"[".repeat(998)}${"]".repeat(998)}]${" ".repeat(3000)}`)).toBe(null);
    expect(lineLimitReason(`[${"{},".repeat(MAX_RECORD_OBJECTS)}{}]`)).toBe(OBJECTS_REASON);
    expect(lineLimitReason(`[${"{},".repeat(MAX_RECORD_OBJECTS - 1)}{}]`)).toBe(null);
  });
});

describe("every reader refuses the line by file and line", () => {
  it("tartan validate (the library call and the command)", async () => {
    const r = await validateFile(deep);
    expect(formatReport(r)).toContain("error    nested too deep (1 record) line 2\n           e.g. line 2: nesting deeper than 1000 levels");
    expect(formatReport(await validateFile(wide))).toContain(`e.g. line 2: ${OBJECTS_REASON}`);
    const cli = spawnSync(process.execPath, [CLI, "validate", deep], { encoding: "utf8" });
    expect(cli.stdout + cli.stderr).not.toContain("Maximum call stack");
    expect(cli.stdout).toContain("e.g. line 2: nesting deeper than 1000 levels");
  });

  it("scanJsonl and readJsonl", async () => {
    const errors: string[] = [];
    await scanJsonl(wide, () => {}, { onError: (e) => errors.push(e.message) });
    expect(errors).toEqual([`${wide}:2: ${OBJECTS_REASON}`]);
    const it = readJsonl(deep);
    expect((await it.next()).value.value).toEqual({ id: "1", input: "q", output: [{ answer: "a" }] });
    const err = await it.next().catch((e: LineError) => e);
    expect(String(err)).toBe(`LineError: ${deep}:2: nesting deeper than 1000 levels`);
  });

  it("ks ingest", () => {
    const cli = spawnSync(process.execPath, [CLI, "ks", "ingest", deep, "--out", join(dir, "ks")], { encoding: "utf8" });
    expect(cli.stderr).toContain(`${deep}:2: nesting deeper than 1000 levels`);
  });

  it("the evaluator: a malformed line, and bounded memory", async () => {
    const before = process.memoryUsage().heapUsed;
    const r = await evaluate(wide, wide);
    const malformed = r.problems.find((p) => p.code === "invalid-json")!;
    expect(malformed.examples.map((x) => [x.file, x.line, x.detail])).toEqual([
      [wide, 2, OBJECTS_REASON],
      [wide, 2, OBJECTS_REASON],
    ]);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(400 * 1024 * 1024);
  });
});
