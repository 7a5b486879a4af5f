// The evaluator's line reader (src/eval/lines.ts) gives exactly the lines of records/jsonl.ts
// `byteLineBatches`: same bytes, line numbers, blank-line and byte counts, on the real KILT dev files
// and on files built to hit its edges (CRLF, BOM, blank lines, no final newline, lines longer than its
// buffer and across reads), and the same `file:line` error for a line over the limit; and the
// evaluator's UTF-8 warning, now checked only on lines the scanner saw a non-ASCII string in.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { byteLineBatches, DEFAULT_MAX_LINE_BYTES, setDefaultMaxLineBytes, type ScanStats } from "../../src/records/jsonl.js";
import { forEachLine } from "../../src/eval/lines.js";

const SHARED = fileURLToPath(new URL("../../../shared/", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Seen {
  lines: [number, string][];
  stats: ScanStats;
}

async function viaStreams(file: string): Promise<Seen> {
  const stats: ScanStats = { records: 0, blankLines: 0, badLines: 0, bytes: 0 };
  const lines: [number, string][] = [];
  for await (const batch of byteLineBatches(file, {}, stats)) for (const l of batch) lines.push([l.line, l.buf.toString("latin1", l.start, l.end)]);
  return { lines, stats };
}

async function viaReader(file: string): Promise<Seen> {
  const stats: ScanStats = { records: 0, blankLines: 0, badLines: 0, bytes: 0 };
  const lines: [number, string][] = [];
  await forEachLine(file, (buf, start, end, line) => lines.push([line, buf.toString("latin1", start, end)]), stats);
  return { lines, stats };
}

function write(name: string, content: string | Buffer): string {
  const f = join(dir, name);
  writeFileSync(f, content);
  return f;
}

describe("forEachLine", () => {
  it("reads the KILT dev files as byteLineBatches does", async () => {
    const root = join(SHARED, "data", "kilt-dev");
    for (const f of readdirSync(root)) {
      const want = await viaStreams(join(root, f));
      const got = await viaReader(join(root, f));
      expect(got.lines.length).toBe(want.lines.length);
      expect(got).toEqual(want);
    }
  });

  it("keeps CRLF, BOM, blank lines, a missing final newline and long lines as byteLineBatches does", async () => {
    const long = "x".repeat(3_000_000); // longer than the 1 MiB buffer: it grows
    const cases: [string, string | Buffer][] = [
      ["empty", ""],
      ["only-newlines", "\n\n\n"],
      ["crlf-bom", '\ufeff{"a": 1}\r\n\r\n  \t\r\n{"b": 2}\r\n'],
      ["no-final-newline", '{"a": 1}\n{"b": 2}'],
      ["long", `{"a": 1}\n"${long}"\n\n"${long}y"\n{"b": 2}`],
      ["across-reads", Array.from({ length: 40_000 }, (_, i) => `{"id": "${i}", "pad": "${"p".repeat(i % 97)}"}`).join("\n") + "\n"],
      ["bom-blank", "\ufeff\n{}\n"],
    ];
    for (const [name, content] of cases) {
      const f = write(`${name}.jsonl`, content);
      expect(await viaReader(f), name).toEqual(await viaStreams(f));
    }
  });

  it("stops at a line over the limit with the same file:line error", async () => {
    const f = write("limit.jsonl", `{"a": 1}\n${"z".repeat(5000)}\n{"b": 2}\n`);
    setDefaultMaxLineBytes(1000);
    try {
      const want = await viaStreams(f).then(
        () => "no error",
        (e: Error) => e.message,
      );
      const got = await viaReader(f).then(
        () => "no error",
        (e: Error) => e.message,
      );
      expect(want).toBe(`${f}:2: line longer than 1000 bytes (raise --max-line-bytes to read it)`);
      expect(got).toBe(want);
    } finally {
      setDefaultMaxLineBytes(DEFAULT_MAX_LINE_BYTES);
    }
  });

  it("names the file when it cannot be opened", async () => {
    const missing = join(dir, "missing.jsonl");
    await expect(viaReader(missing)).rejects.toThrow(missing);
  });
});

describe("evaluate on lines holding invalid UTF-8", () => {
  it("warns with file, line and byte, in strings it decodes and in strings it only skips, and scores the rest", async () => {
    const { evaluate } = await import("../../src/eval/evaluate.js");
    const fixture = join(SHARED, "fixtures", "eval", "dummy-nq-top1");
    const gold = readFileSync(join(fixture, "gold.jsonl"));
    const guess = readFileSync(join(fixture, "guess.jsonl"));
    // Guess line 1: a byte 0xFF in a provenance title (skipped); gold line 2: in the input (not decoded by --mode downstream).
    const titleAt = guess.indexOf("Therefore sign") + 3;
    guess[titleAt] = 0xff;
    const goldLine2 = gold.indexOf(0x0a) + 1;
    const inputAt = gold.indexOf('"input": "', goldLine2) + 12;
    gold[inputAt] = 0xc3;
    const g = write("bad-utf8-gold.jsonl", gold);
    const p = write("bad-utf8-guess.jsonl", guess);
    const expected = JSON.parse(readFileSync(join(fixture, "expected.json"), "utf8"));
    for (const mode of ["downstream", "all"] as const) {
      const r = await evaluate(g, p, { mode });
      const bad = r.problems.find((x) => x.code === "invalid-utf8");
      expect(bad?.examples).toEqual([
        { file: g, line: 2, detail: `at byte ${inputAt - goldLine2} of the line` },
        { file: p, line: 1, detail: `at byte ${titleAt} of the line` },
      ]);
      expect(r.eval_downstream).toEqual(expected.eval_downstream);
    }
  });
});
