// Tests for Python str()/strip()/split() semantics; every expected value is what CPython 3 prints.

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import {
  isPythonSpace,
  pyFloatRepr,
  pySplit,
  pyStr,
  pyStrip,
  pyStrOfNumberToken,
  pythonIdKey,
} from "../../src/records/python-str.js";

describe("pyStrip and pySplit", () => {
  it("strips Python's whitespace set, which is not JavaScript's", () => {
    // Python strips \x1c-\x1f and \x85 (trim() does not) and keeps \ufeff (trim() strips it).
    expect(pyStrip("\x1c\x1d\x1e\x1f\x85\u3000 a b\t\n\r\x0b\x0c\u00a0\u2028")).toBe("a b");
    expect(pyStrip("\ufeffa\ufeff")).toBe("\ufeffa\ufeff");
    expect("\ufeffa\ufeff".trim()).toBe("a");
    expect("\x1ca\x85".trim()).toBe("\x1ca\x85");
    expect(pyStrip("\x1c\x85\u3000 a \ufeff")).toBe("a \ufeff");
    expect(pyStrip("   ")).toBe("");
    expect(pyStrip("")).toBe("");
  });

  it("returns the same string when there is nothing to strip", () => {
    const s = "already clean";
    expect(pyStrip(s)).toBe(s);
  });

  it("splits on runs of Python whitespace only", () => {
    expect(pySplit("  a\x1cb\u3000\u3000c\n")).toEqual(["a", "b", "c"]);
    // U+200B and U+180E are not whitespace in Python 3, U+FEFF neither.
    expect(pySplit("a\u200bb c\u180ed \ufeff")).toEqual(["a\u200bb", "c\u180ed", "\ufeff"]);
    expect(pySplit(" \t ")).toEqual([]);
  });

  it("classifies code points like str.isspace()", () => {
    const spaces = [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000];
    const notSpaces = [0x00, 0x08, 0x0e, 0x1b, 0x21, 0x84, 0x86, 0x180e, 0x200b, 0xfeff];
    expect(spaces.filter((c) => !isPythonSpace(c))).toEqual([]);
    expect(notSpaces.filter((c) => isPythonSpace(c))).toEqual([]);
  });
});

describe("pyFloatRepr", () => {
  it("writes floats as Python's repr does", () => {
    expect(pyFloatRepr(5.0)).toBe("5.0");
    expect(pyFloatRepr(1e16)).toBe("1e+16");
    expect(pyFloatRepr(1e15)).toBe("1000000000000000.0");
    expect(pyFloatRepr(1e-5)).toBe("1e-05");
    expect(pyFloatRepr(0.0001)).toBe("0.0001");
    expect(pyFloatRepr(123456789012345680000)).toBe("1.2345678901234568e+20");
    expect(pyFloatRepr(0.1 + 0.2)).toBe("0.30000000000000004");
    expect(pyFloatRepr(-2.5)).toBe("-2.5");
    expect(pyFloatRepr(1.5e300)).toBe("1.5e+300");
    expect(pyFloatRepr(2 ** 53 + 2)).toBe("9007199254740994.0");
    expect(pyFloatRepr(0)).toBe("0.0");
    expect(pyFloatRepr(-0)).toBe("-0.0");
    expect(pyFloatRepr(Infinity)).toBe("inf");
    expect(pyFloatRepr(-Infinity)).toBe("-inf");
    expect(pyFloatRepr(NaN)).toBe("nan");
  });
});

describe("pyStr", () => {
  it("converts JSON values as Python str() does", () => {
    expect(pyStr(true)).toBe("True");
    expect(pyStr(false)).toBe("False");
    expect(pyStr(null)).toBe("None");
    expect(pyStr("  x ")).toBe("  x ");
    expect(pyStr(42)).toBe("42");
    expect(pyStr(-7)).toBe("-7");
    expect(pyStr(0.5)).toBe("0.5");
    expect(pyStr(1e16)).toBe("1e+16");
    expect(pyStr(["a", 1, null, "it's"])).toBe(`['a', 1, None, "it's"]`);
    expect(pyStr({ answer: "x", n: [true] })).toBe("{'answer': 'x', 'n': [True]}");
  });

  it("spells number tokens exactly, big ints included", () => {
    expect(pyStrOfNumberToken("5.0")).toBe("5.0");
    expect(pyStrOfNumberToken("5")).toBe("5");
    expect(pyStrOfNumberToken("1E5")).toBe("100000.0");
    expect(pyStrOfNumberToken("-0")).toBe("0");
    expect(pyStrOfNumberToken("13591449469826568799")).toBe("13591449469826568799");
  });
});

describe("pythonIdKey", () => {
  it("keeps a 19-digit numeric id exact by reading it from the raw line", () => {
    // NQ ids are 19-digit numbers; the KILT files quote them, a converter may not.
    const nqLine = readFileSync(new URL("../../../shared/data/kilt-samples/nq-dev-kilt.jsonl", import.meta.url), "utf8").split("\n")[1];
    const quotedId = (JSON.parse(nqLine) as { id: string }).id;
    expect(quotedId).toBe("-8366545547296627039");
    const raw = nqLine.replace(`"id": "${quotedId}"`, `"id": ${quotedId}`);
    const parsed = JSON.parse(raw) as { id: number };
    expect(typeof parsed.id).toBe("number");
    expect(String(parsed.id)).toBe("-8366545547296627000");
    expect(pythonIdKey(parsed.id, raw)).toBe("-8366545547296627039");
    expect(pythonIdKey(quotedId, nqLine)).toBe("-8366545547296627039");
  });

  it("strips string ids and spells other values as Python does", () => {
    expect(pythonIdKey(" abc\u3000")).toBe("abc");
    expect(pythonIdKey(5, '{"id": 5.0, "input": "q"}')).toBe("5.0");
    expect(pythonIdKey(5, '{"id": 5}')).toBe("5");
    expect(pythonIdKey(1e16)).toBe("1e+16");
    expect(pythonIdKey(1e16, '{"id": 10000000000000000}')).toBe("10000000000000000");
    expect(pythonIdKey(true)).toBe("True");
    expect(pythonIdKey(null)).toBe("None");
  });

  it("ignores a nested id that comes first in the raw line", () => {
    expect(pythonIdKey(7, '{"meta": {"id": 3}, "id": 7}')).toBe("7");
  });
});
