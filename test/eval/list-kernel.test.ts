// The provenance-list kernel: a line scanned in the kernel's memory (where the list kernel reads its
// provenance lists) gives exactly the view the JavaScript route gives in an ordinary Buffer — every
// value's Python str, kind and truthiness, texts, flags, the non-ASCII mark — or both refuse it; on
// fixture lines, generated cases and 20,000 random lists of flat and not-so-flat entries. And the
// kernel does take the lists it is for: its records are checked on a typical list.

import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { textOf, type PyValue } from "../../src/eval/json-scanner.js";
import { MEMBER_INTS, nameTable, VALUE_ESCAPED, VALUE_FRACTION, VALUE_HIGH, VALUE_STRING } from "../../src/eval/list-kernel.js";
import { scanRecord, scanSawNonAscii, type RecordView, type ScanSpec } from "../../src/eval/scan.js";
import { kernelFor, LineMemory } from "../../src/eval/string-kernel.js";
// @ts-expect-error: plain JavaScript module shared with the differential script
import { generateCase } from "../../bench/eval-diff/generate.mjs";

const SHARED = fileURLToPath(new URL("../../../shared/", import.meta.url));
const REAL = fileURLToPath(new URL("./fixtures/real/", import.meta.url));
const SPEC: ScanSpec = { provKeys: ["wikipedia_id", "title", "start_paragraph_id", "bleu_score"], texts: true };
const SPECS: ScanSpec[] = [
  SPEC,
  { ...SPEC, reuse: true },
  { provKeys: ["wikipedia_id", "title"], texts: false, reuse: true, kindOnly: ["title"] },
];

const val = (v: PyValue | undefined) => (v === undefined ? null : [v.str, v.kind, v.falsy]);

/** Everything a view holds, as plain data. */
function dump(v: RecordView | null): unknown {
  if (v === null) return null;
  return {
    id: val(v.id),
    input: val(v.input),
    flags: [v.hasId, v.hasInput, v.hasOutput, v.outputList, v.compositeVals],
    outputs: v.outputs.map((o) => ({
      flags: [o.object, o.hasAnswer, o.hasProvenance, o.provenanceList],
      answer: val(o.answer),
      provenance: o.provenance.map((p) => ({
        object: p.object,
        vals: p.vals.map(val),
        hasText: p.hasText,
        text: p.text ? [textOf(p.text), p.text.escaped, p.text.ascii] : null,
        textValue: val(p.textValue),
      })),
    })),
  };
}

const memory = new LineMemory(1 << 16);

/** The view of `line` in an ordinary Buffer and in the kernel's memory, at a byte offset `shift`, per spec. */
function both(line: string, shift: number, spec: ScanSpec): [string, string] {
  const bytes = Buffer.from(line, "utf8");
  const size = bytes.length + shift + 8;
  const plain = Buffer.alloc(size, 0x20);
  bytes.copy(plain, shift);
  const want = JSON.stringify([dump(scanRecord(plain, shift, shift + bytes.length, spec)), scanSawNonAscii]);
  const inMemory = memory.buf.length >= size ? memory.buf : memory.grow(2 * size, 0);
  inMemory.fill(0x20, 0, size);
  bytes.copy(inMemory, shift);
  const got = JSON.stringify([dump(scanRecord(inMemory, shift, shift + bytes.length, spec)), scanSawNonAscii]);
  return [got, want];
}

function disagreements(lines: string[]): string[] {
  const bad: string[] = [];
  for (const [i, line] of lines.entries())
    for (const spec of SPECS) {
      const [got, want] = both(line, i % 4, spec);
      if (got !== want) bad.push(`${line}\n  kernel: ${got}\n  plain:  ${want}`);
    }
  return bad;
}

describe("provenance-list kernel", () => {
  it("runs here and writes a typical list's records", () => {
    const k = kernelFor(memory.buf)!;
    expect(k).toBeDefined();
    // Names 0-4 wanted, "é" never matches, "x" unwanted (not in the table).
    const table = nameTable(["wikipedia_id", "title", "start_paragraph_id", "bleu_score", "text", "é"].map((n) => Buffer.from(n)))!;
    expect([...table.subarray(0, 14)]).toEqual([12, ...Buffer.from("wikipedia_id"), 5]);
    expect([...table.subarray(-7)]).toEqual([4, ...Buffer.from("text"), 254, 255]);
    k.names.set(table);
    k.namesOf = null;
    const list = '[{"wikipedia_id": "12", "x": "\\u00e9", "title": "A\\u00e9", "start_paragraph_id": -3, "bleu_score": 0.5e1, "text": "x é"}, {}, { "t" : "" } ]';
    const at = 10;
    memory.buf.write(list, at, "utf8");
    const base = memory.buf.byteOffset;
    const bytes = Buffer.byteLength(list);
    const call = (end: number) => k.provList(base + at, base + at + bytes, k.recordsAt, end, k.namesAt);
    const r = call(k.recordsEnd);
    expect(r - base - at).toBe(bytes);
    const rec = k.records;
    expect([rec[0], rec[1]]).toEqual([3, 5]);
    const member = (m: number) => {
      const x = 2 + m * MEMBER_INTS;
      return [rec[x], memory.buf.toString("utf8", rec[x + 1] - base, rec[x + 2] - base), rec[x + 3]];
    };
    expect([0, 1, 2, 3, 4].map(member)).toEqual([
      [0, "12", VALUE_STRING],
      [1, "A\\u00e9", VALUE_STRING | VALUE_ESCAPED],
      [2, "-3", 0],
      [3, "0.5e1", VALUE_FRACTION],
      [4, "x é", VALUE_STRING | VALUE_HIGH],
    ]);
    // Every value's flags of the entry, the unmatched "x" included; the empty entry; one unmatched member.
    const after = 2 + 5 * MEMBER_INTS;
    expect([rec[after], rec[after + 1], rec[after + 2], rec[after + 3], rec[after + 4]]).toEqual([
      VALUE_STRING | VALUE_ESCAPED | VALUE_HIGH | VALUE_FRACTION,
      0,
      0,
      0,
      VALUE_STRING,
    ]);
    // Records past the area's end: -1, not a write past it.
    expect(call(k.recordsAt + 40)).toBe(-1);
    // Lists it leaves to the JavaScript route.
    for (const other of ['[{"a": true}]', '[{"a": [1]}]', '[{"\\u0061": 1}]', '[{"é": 1}]', '[{"a": 1.}]', '[{"a": 01}]', '[1]', '[{"a": "x"}', '[{"a" "x"}]'] as const) {
      memory.buf.write(other, at, "utf8");
      expect([other, k.provList(base + at, base + at + Buffer.byteLength(other), k.recordsAt, k.recordsEnd, k.namesAt)]).toEqual([other, -1]);
    }
  });

  it("reads fixture lines, the KILT dev files and generated cases as the JavaScript route does", () => {
    const lines: string[] = [];
    const read = (f: string) => readFileSync(f, "utf8").split("\n").map((l) => l.replace(/\r$/, "").replace(/^\ufeff/, "")).filter((l) => l.trim());
    for (const root of [join(SHARED, "fixtures", "eval"), REAL])
      for (const d of readdirSync(root))
        for (const f of ["gold.jsonl", "guess.jsonl"]) if (existsSync(join(root, d, f))) lines.push(...read(join(root, d, f)));
    for (const f of readdirSync(join(SHARED, "data", "kilt-dev"))) lines.push(...read(join(SHARED, "data", "kilt-dev", f)).slice(0, 500));
    for (let seed = 0; seed < 300; seed++) {
      const c = generateCase(seed);
      lines.push(...`${c.gold}${c.guess}`.split("\n").filter(Boolean));
    }
    expect(lines.length).toBeGreaterThan(5000);
    expect(disagreements(lines).slice(0, 3)).toEqual([]);
  });

  it("reads 20,000 random provenance lists as the JavaScript route does, valid or not", () => {
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    const names = ['"wikipedia_id"', '"title"', '"text"', '"start_paragraph_id"', '"bleu_score"', '"section"', '"meta"', '"x"', '""', '"tit"', '"texts"', '"\\u0074ext"', '"é"', '"te\\"xt"'];
    const values = [
      '"123"', '""', '"a b"', '"A\\"B"', '"\\u00e9t\\u00e9"', '"\\ud83d\\ude00"', '"é東京"', '"\\x"', '"\\u12"', '"a\tb"', '"\\/\\b\\f\\n\\r\\t"',
      "0", "-0", "7", "-12", "123456789012345678901", "0.0", "1.5", "-2.50", "1e5", "1E+2", "2e-3", "-0.0e0", "01", "1.", ".5", "-", "1e", "+1",
      "true", "false", "null", "tru", "[]", "[1]", "{}", '{"a": 1}',
    ];
    const ws = ["", "", "", " ", "  ", "\t", "\n", "\r\n"];
    const lines: string[] = [];
    for (let c = 0; c < 20000; c++) {
      const entries: string[] = [];
      const n = Math.floor(rnd() * 5);
      for (let i = 0; i < n; i++) {
        if (rnd() < 0.03) {
          entries.push(pick(["1", '"x"', "null", "[]"]));
          continue;
        }
        const members: string[] = [];
        const m = Math.floor(rnd() * 5);
        for (let j = 0; j < m; j++) {
          const v = rnd() < 0.6 ? pick(values.slice(0, 5)) : pick(values);
          members.push(`${pick(ws)}${rnd() < 0.7 ? pick(names.slice(0, 5)) : pick(names)}${pick(ws)}:${pick(ws)}${v}${pick(ws)}`);
        }
        entries.push(`{${members.join(rnd() < 0.98 ? "," : "")}${rnd() < 0.01 ? "," : ""}}`);
      }
      const list = `[${pick(ws)}${entries.join(rnd() < 0.98 ? `${pick(ws)},${pick(ws)}` : " ")}${pick(ws)}]`;
      lines.push(`{"id": "q${c}", "output": [{"answer": "a", "provenance": ${rnd() < 0.99 ? list : list.slice(0, -1)}}]}`);
    }
    expect(disagreements(lines).slice(0, 3)).toEqual([]);
  });
});
