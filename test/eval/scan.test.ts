// The byte-level scanner against JSON.parse: on every line of the shared evaluator fixtures, the real
// fixtures, the KILT dev files and 1,000 generated cases, the scanner accepts exactly the lines JSON.parse
// accepts (as objects) and pulls the same values; numbers keep Python's spelling of their token.

import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Kind, textOf, type PyValue } from "../../src/eval/json-scanner.js";
import { MAX_DEPTH, scanRecord, scanSawNonAscii, viewOfValue, type RecordView, type ScanSpec } from "../../src/eval/scan.js";
import { invalidUtf8At } from "../../src/records/jsonl.js";
// @ts-expect-error: plain JavaScript module shared with the differential script
import { generateCase } from "../../bench/eval-diff/generate.mjs";

const SHARED = fileURLToPath(new URL("../../../shared/", import.meta.url));
const REAL = fileURLToPath(new URL("./fixtures/real/", import.meta.url));
const SPEC: ScanSpec = {
  provKeys: ["wikipedia_id", "title", "section", "start_paragraph_id", "end_paragraph_id", "start_character", "bleu_score", "wikipedia_title"],
  texts: true,
};
/** The same keys with views, outputs and provenance entries recycled from line to line (the evaluator's mode). */
const REUSE: ScanSpec = { ...SPEC, reuse: true };

function lines(file: string): string[] {
  return readFileSync(file, "utf8").split("\n").map((l) => l.replace(/\r$/, "").replace(/^\ufeff/, "")).filter((l) => l.trim());
}

function allFixtureLines(): string[] {
  const out: string[] = [];
  for (const root of [join(SHARED, "fixtures", "eval"), REAL])
    for (const d of readdirSync(root))
      for (const f of ["gold.jsonl", "guess.jsonl"]) if (existsSync(join(root, d, f))) out.push(...lines(join(root, d, f)));
  for (const f of readdirSync(join(SHARED, "data", "kilt-dev"))) out.push(...lines(join(SHARED, "data", "kilt-dev", f)));
  return out;
}

/** Values compared: strings exactly; numbers by value (JavaScript cannot see 5.0 vs 5), the scanner's spelling is Python's. */
function sameValue(a: PyValue | undefined, b: PyValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const num = (k: Kind) => k === Kind.Int || k === Kind.Float;
  if (num(a.kind) || num(b.kind)) {
    if (!(num(a.kind) && num(b.kind))) return false;
    const v = (s: string) => (s === "inf" ? Infinity : s === "-inf" ? -Infinity : Number(s));
    return v(a.str) === v(b.str) && a.falsy === b.falsy;
  }
  return a.kind === b.kind && a.str === b.str && a.falsy === b.falsy;
}

function sameView(a: RecordView, b: RecordView): string | null {
  if (a.hasId !== b.hasId || !sameValue(a.id, b.id)) return "id";
  if (a.hasInput !== b.hasInput || !sameValue(a.input, b.input)) return "input";
  if (a.hasOutput !== b.hasOutput || a.outputList !== b.outputList || a.outputs.length !== b.outputs.length) return "output";
  for (let i = 0; i < a.outputs.length; i++) {
    const x = a.outputs[i];
    const y = b.outputs[i];
    if (x.object !== y.object || x.hasAnswer !== y.hasAnswer || !sameValue(x.answer, y.answer)) return `output ${i} answer`;
    if (x.hasProvenance !== y.hasProvenance || x.provenanceList !== y.provenanceList || x.provenance.length !== y.provenance.length) return `output ${i} provenance`;
    for (let j = 0; j < x.provenance.length; j++) {
      const p = x.provenance[j];
      const q = y.provenance[j];
      if (p.object !== q.object || p.hasText !== q.hasText) return `provenance ${j}`;
      for (let k = 0; k < SPEC.provKeys.length; k++) if (!sameValue(p.vals[k], q.vals[k])) return `provenance ${j} ${SPEC.provKeys[k]}`;
      if ((p.text ? textOf(p.text) : undefined) !== (q.text ? textOf(q.text) : undefined)) return `provenance ${j} text`;
      if (!sameValue(p.textValue, q.textValue)) return `provenance ${j} text value`;
    }
  }
  return null;
}

/** `line` as the scanner sees it, placed `shift` bytes into a larger buffer (the scanner reads strings a word at a time). */
function check(line: string, shift = 0): string | null {
  const bytes = Buffer.from(line, "utf8");
  const buf = Buffer.alloc(bytes.length + shift + 3, 0x20).subarray(0, bytes.length + shift + 3);
  bytes.copy(buf, shift);
  const scanned = scanRecord(buf, shift, shift + bytes.length, SPEC);
  // A line taken without a non-ASCII string must be all ASCII (the evaluator then skips its UTF-8 check).
  if (scanned !== null && !scanSawNonAscii && bytes.some((b) => b >= 0x80)) return "non-ASCII line not flagged";
  // Recycled views read the same as fresh ones (the previous line's view is overwritten, never mixed in).
  const reused = scanRecord(buf, shift, shift + bytes.length, REUSE);
  if ((reused === null) !== (scanned === null)) return "reuse mode disagrees on validity";
  if (scanned !== null && reused !== null) {
    const why = sameView(reused, scanned);
    if (why !== null) return `reuse mode: ${why}`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return scanned === null ? null : "scanner accepted a line JSON.parse refuses";
  }
  const isObject = parsed !== null && typeof parsed === "object" && !Array.isArray(parsed);
  if (!isObject) return scanned === null ? null : "scanner accepted a non-object";
  if (scanned === null) return "scanner refused a line JSON.parse accepts";
  return sameView(scanned, viewOfValue(parsed, SPEC));
}

describe("scanRecord agrees with JSON.parse", () => {
  it("on every line of the fixtures and the KILT dev files", () => {
    const all = allFixtureLines();
    expect(all.length).toBeGreaterThan(20000);
    const bad = all.map((l, i) => [i, check(l)] as const).filter(([, r]) => r !== null);
    expect(bad.slice(0, 5)).toEqual([]);
  });

  it("on 1,000 generated cases", () => {
    const bad: string[] = [];
    for (let seed = 0; seed < 1000; seed++) {
      const c = generateCase(seed);
      for (const l of `${c.gold}${c.guess}`.split("\n").filter(Boolean)) {
        const r = check(l);
        if (r) bad.push(`seed ${seed}: ${r}`);
      }
    }
    expect(bad.slice(0, 5)).toEqual([]);
  });

  it("on malformed lines: both refuse", () => {
    for (const l of [
      '{"id": 1,}',
      '{"id": 01}',
      '{"id": 1.}',
      '{"id": -}',
      '{"id": "\\x"}',
      '{"id": "a\tb"}',
      '{"id": NaN}',
      '{"id": 1} x',
      '{"id" 1}',
      '[1, 2]',
      '"x"',
      '{"output": [{"answer": "a",}]}',
      '{"id": "\\ud83d\\ude00", "output": [[], {}, 1, "x", null]}',
      '{"id": tru}',
      '{"id": {"a": [1, {"b": null}]}}',
    ])
      expect(check(l)).toBeNull();
  });

  it("on member names sharing a first byte or a prefix with the wanted ones, empty, unterminated or escaped", () => {
    const names = ["t", "ti", "tit", "titles", "text", "texts", "tex", "w", "wikipedia_i", "wikipedia_id_", "", "s", "sec", "section", "i", "id", "ids", "in", "input", "o", "outputs", "a", "answer", "answers", "p", "provenance", "\\u0074itle", "tit\\u006ce", "\\u0074ext", "te\\\"xt", "b\\u006ceu_score"];
    const problems: string[] = [];
    for (const n of names) {
      const lines = [
        `{"${n}": "x", "id": "1", "output": [{"answer": "y", "provenance": [{"${n}": 7, "title": "T", "text": "z"}]}]}`,
        `{"id": "1", "output": [{"${n}": "y", "provenance": [{"wikipedia_id": "5", "${n}": "v"}]}], "${n}": null}`,
        `{"id": "1", "output": [{"provenance": [{"${n}`,
      ];
      for (const l of lines) {
        const why = check(l);
        if (why !== null) problems.push(`${l}: ${why}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("keeps Python's spelling of numbers, the last of duplicate keys, and a leading U+FEFF", () => {
    const line = '{"id": 5.0, "id": 12345678901234567890, "input": "\\ufeffx", "output": [{"answer": -0, "provenance": [{"wikipedia_id": 1e16, "title": 1E400, "wikipedia_id": 100000000000000000000.0}]}]}';
    const buf = Buffer.from(line);
    const v = scanRecord(buf, 0, buf.length, SPEC)!;
    expect(v.id).toEqual({ str: "12345678901234567890", kind: Kind.Int, falsy: false });
    expect(v.input!.str).toBe("\ufeffx");
    expect(v.outputs[0].answer).toEqual({ str: "0", kind: Kind.Int, falsy: true });
    expect(v.outputs[0].provenance[0].vals[0]!.str).toBe("1e+20");
    expect(v.outputs[0].provenance[0].vals[1]!.str).toBe("inf");
  });

  it("on 20,000 random string contents (escapes, controls, quotes, non-ASCII) at every alignment", () => {
    let seed = 5;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pieces = ["a", "bcd", "efghijkl", " ", "\\\"", "\\\\", "\\n", "\\u00e9", "\\u12", "\\x", "\t", "\u0001", "\u007f", "é", "東京", "😀", '"', "\\", "\\/", "~", "0123456789"];
    for (let c = 0; c < 20000; c++) {
      let str = "";
      const n = Math.floor(rnd() * 12);
      for (let i = 0; i < n; i++) str += pieces[Math.floor(rnd() * pieces.length)];
      const pad = "x".repeat(Math.floor(rnd() * 8));
      const where = Math.floor(rnd() * 3);
      const line =
        where === 0
          ? `{"id": "${pad}${str}", "output": []}`
          : where === 1
            ? `{"id": 1, "output": [{"answer": "${str}${pad}"}]}`
            : `{"id": 1, "output": [{"provenance": [{"wikipedia_id": "${pad}", "text": "${str}"}]}]}`;
      const shift = Math.floor(rnd() * 4);
      const why = check(line, shift);
      if (why !== null) expect(`${JSON.stringify(line)} at shift ${shift}: ${why}`).toBe("");
    }
  });

  it("flags every line holding invalid UTF-8: refused, or marked as having a non-ASCII string", () => {
    const lines = allFixtureLines().slice(0, 4000);
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    let flagged = 0;
    for (const l of lines) {
      const bytes = Buffer.from(l, "utf8");
      // One byte replaced by a stray continuation byte, a lone lead byte or an invalid byte, anywhere in the line.
      const at = Math.floor(rnd() * bytes.length);
      bytes[at] = [0x80, 0xbf, 0xc3, 0xe2, 0xf0, 0xff][Math.floor(rnd() * 6)];
      if (invalidUtf8At(bytes, 0, bytes.length) < 0) continue;
      flagged++;
      const v = scanRecord(bytes, 0, bytes.length, REUSE);
      if (v !== null && !scanSawNonAscii) expect(`${l.slice(0, 80)}… byte ${at}`).toBe("flagged");
    }
    expect(flagged).toBeGreaterThan(3000);
  });

  it(`refuses nesting deeper than ${MAX_DEPTH} levels without running out of stack`, () => {
    const deep = `{"id": 1, "meta": ${"[".repeat(100000)}${"]".repeat(100000)}}`;
    const buf = Buffer.from(deep);
    expect(scanRecord(buf, 0, buf.length, SPEC)).toBeNull();
    const ok = `{"id": 1, "meta": ${"[".repeat(MAX_DEPTH - 2)}${"]".repeat(MAX_DEPTH - 2)}}`;
    expect(scanRecord(Buffer.from(ok), 0, ok.length, SPEC)).not.toBeNull();
  });
});
