// The SIMD kernel for string contents: its stops equal a byte-by-byte reference at every offset and
// length, and a line scanned in the kernel's memory (as the line reader places it) reads exactly as
// the same line in an ordinary Buffer (the JavaScript route), valid or not.

import { describe, expect, it } from "vitest";
import { textOf } from "../../src/eval/json-scanner.js";
import { normalizeAnswer, normalizeAsciiBytes } from "../../src/eval/normalize.js";
import { ContextMatcher } from "../../src/eval/provenance.js";
import { scanRecord, type RecordView, type ScanSpec } from "../../src/eval/scan.js";
import { kernelFor, LineMemory } from "../../src/eval/string-kernel.js";
// @ts-expect-error: plain JavaScript module shared with the differential script
import { generateCase } from "../../bench/eval-diff/generate.mjs";

const SPEC: ScanSpec = { provKeys: ["wikipedia_id", "title", "bleu_score"], texts: true };

/** The first byte of `[p, end)` that is '"', '\', a control byte or >= 0x80, or `end`. */
function reference(b: Uint8Array, p: number, end: number): number {
  for (; p < end; p++) if (b[p] === 0x22 || b[p] === 0x5c || b[p] < 0x20 || b[p] >= 0x80) return p;
  return end;
}

/** Everything a view holds, as plain data (texts decoded). */
function dump(v: RecordView | null): unknown {
  if (v === null) return null;
  return {
    id: v.id?.str,
    input: v.input?.str,
    outputs: v.outputs.map((o) => ({
      answer: o.answer?.str,
      provenance: o.provenance.map((p) => ({ vals: p.vals.map((x) => x?.str), text: p.text ? textOf(p.text) : undefined, hasText: p.hasText })),
    })),
  };
}

describe("string kernel", () => {
  const memory = new LineMemory(1 << 16);
  const plainEnd = kernelFor(memory.buf)?.plainEnd;

  it("runs here (WebAssembly SIMD)", () => {
    expect(typeof plainEnd).toBe("function");
  });

  it("stops where the byte-by-byte reference stops, at every offset and length", () => {
    let seed = 3;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const buf = memory.buf;
    const stops = [0x22, 0x5c, 0x00, 0x1f, 0x80, 0xff, 0xc3];
    for (let c = 0; c < 20000; c++) {
      const len = Math.floor(rnd() * 80);
      const at = Math.floor(rnd() * 64);
      for (let i = 0; i < len + 32; i++) buf[at + i] = 0x20 + Math.floor(rnd() * 0x5f);
      // Zero, one or two stop bytes anywhere (also past the end, where the kernel must not look).
      const k = Math.floor(rnd() * 3);
      for (let i = 0; i < k; i++) buf[at + Math.floor(rnd() * (len + 16))] = stops[Math.floor(rnd() * stops.length)];
      expect(plainEnd!(buf.byteOffset + at, buf.byteOffset + at + len) - buf.byteOffset).toBe(reference(buf, at, at + len));
    }
  });

  it("every byte value stops or passes as the reference says", () => {
    const buf = memory.buf;
    for (let v = 0; v < 256; v++) {
      buf.fill(0x61, 0, 64);
      buf[37] = v;
      expect(plainEnd!(buf.byteOffset, buf.byteOffset + 64) - buf.byteOffset).toBe(reference(buf, 0, 64));
    }
  });

  it("normalizes ASCII bytes as the JavaScript route does, and refuses non-ASCII", () => {
    let seed = 5;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pieces = ["a", "A", "an", "An", "the", "THE", "The", "thé", "x", "anne", "then", " ", "  ", "\t", "\n", "\x0b", "\x1c", "\x01", "\x7f", ".", ",", "'", "-", "_", "a.n", "t-he", "Cat", "dog9", "0", "é"];
    // Mostly words and single spaces too: the kernel's 16-bytes-at-a-time route.
    const words = ["a", "A", "an", "An", "aN", "the", "The", "THE", "tHe", "cat", "Dog9", "x", "anne", "then", "theme", "ANT", "2024", " ", " ", " ", " ", " ", "  ", "."];
    const k = kernelFor(memory.buf)!;
    const js = Buffer.alloc(4096);
    for (let c = 0; c < 40000; c++) {
      let str = "";
      const fast = c % 2 === 1;
      const n = Math.floor(rnd() * (fast ? 40 : 14));
      for (let i = 0; i < n; i++) str += fast ? words[Math.floor(rnd() * words.length)] : pieces[Math.floor(rnd() * pieces.length)];
      const bytes = Buffer.from(str, "utf8");
      const buf = memory.buf;
      const at = Math.floor(rnd() * 8);
      bytes.copy(buf, at);
      const outAt = Math.floor(rnd() * 8);
      const want = normalizeAsciiBytes(buf, at, at + bytes.length, js, outAt);
      const got = k.normalize(buf.byteOffset + at, buf.byteOffset + at + bytes.length, k.outAt + outAt);
      if (want < 0) expect([JSON.stringify(str), got]).toEqual([JSON.stringify(str), -1]);
      else expect([JSON.stringify(str), k.out.toString("latin1", outAt, got - k.outAt)]).toEqual([JSON.stringify(str), js.toString("latin1", outAt, want)]);
    }
  });

  it("finds byte strings where Buffer.indexOf does", () => {
    let seed = 9;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const k = kernelFor(memory.buf)!;
    const out = k.out;
    for (let c = 0; c < 20000; c++) {
      // A haystack over a small alphabet (many partial matches), a needle cut from it or made up.
      const len = Math.floor(rnd() * 120);
      for (let i = 0; i < len + 64; i++) out[i] = 0x61 + Math.floor(rnd() * 3);
      const nlen = 1 + Math.floor(rnd() * 6);
      const nat = len + 32;
      const from = Math.floor(rnd() * (len + 2));
      if (rnd() < 0.5 && len > nlen) out.copy(out, nat, Math.floor(rnd() * (len - nlen)), len);
      else for (let i = 0; i < nlen; i++) out[nat + i] = 0x61 + Math.floor(rnd() * 3);
      const want = out.subarray(0, len).indexOf(out.subarray(nat, nat + nlen), from);
      const got = k.find(k.outAt + from, k.outAt + len, k.outAt + nat, nlen);
      expect(got < 0 ? -1 : got - k.outAt).toBe(want);
    }
  });

  it("lines in the kernel's memory scan as in an ordinary Buffer", () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pieces = ["a", "bcdefghijklmnopq", " ", "\\\"", "\\\\", "\\n", "\\u00e9", "\\u12", "\\x", "\t", "\u0001", "é", "東京", "😀", '"', "\\", "0123456789abcdefghijklmnopqrstuv"];
    const lines: string[] = [];
    for (let seedCase = 0; seedCase < 300; seedCase++) {
      const c = generateCase(seedCase);
      lines.push(...`${c.gold}${c.guess}`.split("\n").filter(Boolean));
    }
    for (let c = 0; c < 5000; c++) {
      let str = "";
      const n = Math.floor(rnd() * 16);
      for (let i = 0; i < n; i++) str += pieces[Math.floor(rnd() * pieces.length)];
      lines.push(`{"id": "q${c}", "output": [{"answer": "${str}", "provenance": [{"wikipedia_id": "1", "title": "${str}", "text": "${str}"}]}]}`);
    }
    const bad: string[] = [];
    for (const [i, line] of lines.entries()) {
      const bytes = Buffer.from(line, "utf8");
      const shift = i % 4;
      const plain = Buffer.alloc(bytes.length + shift + 8, 0x20);
      bytes.copy(plain, shift);
      const want = JSON.stringify(dump(scanRecord(plain, shift, shift + bytes.length, SPEC)));
      const inMemory = memory.buf.length >= bytes.length + shift + 8 ? memory.buf : memory.grow(2 * (bytes.length + shift + 8), 0);
      inMemory.fill(0x20, 0, bytes.length + shift + 8);
      bytes.copy(inMemory, shift);
      const got = JSON.stringify(dump(scanRecord(inMemory, shift, shift + bytes.length, SPEC)));
      if (got !== want) bad.push(`${line}: ${got} != ${want}`);
    }
    expect(bad.slice(0, 3)).toEqual([]);
  });

  it("context metrics on passages in the kernel's memory equal the string definition", () => {
    let seed = 13;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const words = ["the", "a", "An", "cat", "Cat", "dog", "Title 12 Foo", "x.y", " ", "  ", "-", "ab", "abcdefghijklmnop", "é", "\"", "\t"];
    const phrase = (n: number) => Array.from({ length: n }, () => words[Math.floor(rnd() * words.length)]).join(rnd() < 0.7 ? " " : "");
    const m = new ContextMatcher();
    for (let c = 0; c < 3000; c++) {
      const texts = Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => (rnd() < 0.1 ? undefined : phrase(Math.floor(rnd() * 20))));
      const answers = Array.from({ length: Math.floor(rnd() * 3) }, () => normalizeAnswer(phrase(1 + Math.floor(rnd() * 3))));
      const titles = Array.from({ length: Math.floor(rnd() * 3) }, () => normalizeAnswer(phrase(1 + Math.floor(rnd() * 2))));
      const maxK = 1 + Math.floor(rnd() * 8);
      const prov = texts.map((t, i) => (t === undefined ? { wikipedia_id: String(i) } : { wikipedia_id: String(i), text: t }));
      const bytes = Buffer.from(JSON.stringify({ id: "q", output: [{ provenance: prov }] }), "utf8");
      const buf = memory.buf.length >= bytes.length ? memory.buf : memory.grow(2 * bytes.length, 0);
      bytes.copy(buf, 1);
      const view = scanRecord(buf, 1, 1 + bytes.length, { provKeys: ["wikipedia_id"], texts: true })!;
      m.match(view.outputs[0].provenance, maxK, answers, titles);
      const n = Math.min(texts.length, maxK);
      const norm = texts.slice(0, n).map((t) => (t === undefined ? undefined : normalizeAnswer(t)));
      const has = (i: number, needles: string[]) => norm[i] !== undefined && needles.some((a) => norm[i]!.includes(a));
      const firstOf = (f: (i: number) => boolean) => {
        for (let i = 0; i < n; i++) if (f(i)) return i;
        return n;
      };
      const want = { firstAnswer: firstOf((i) => has(i, answers)), firstTitle: firstOf((i) => has(i, titles)), firstBoth: firstOf((i) => has(i, answers) && has(i, titles)) };
      expect({ c, firstAnswer: m.firstAnswer, firstTitle: m.firstTitle, firstBoth: m.firstBoth }).toEqual({ c, ...want });
    }
  });

  it("keeps its bytes when it grows", () => {
    const m = new LineMemory(1 << 16);
    m.buf.write("hello", 100, "latin1");
    const bigger = m.grow(1 << 18, 105);
    expect(bigger.length).toBe(1 << 18);
    expect(bigger.toString("latin1", 100, 105)).toBe("hello");
    expect(typeof kernelFor(bigger)?.plainEnd).toBe("function");
  });
});
