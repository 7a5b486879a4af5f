// The context metrics' needle store: normalized titles and answers as UTF-8 bytes, equal to
// `normalize_answer` of the text; lone surrogates refused; `holds` is Python's `in` on the strings.

import { describe, expect, it } from "vitest";
import { NeedleStore } from "../../src/eval/needles.js";
import { normalizeAnswer } from "../../src/eval/normalize.js";

describe("NeedleStore", () => {
  it("stores normalize_answer of each text as UTF-8, normalizing only when asked", () => {
    const s = new NeedleStore();
    expect(s.add("The  Cat, sat!", false)).toBe(true);
    expect(s.add("Ça  Été", false)).toBe(true);
    expect(s.add("Already Normal", true)).toBe(true);
    expect(s.add("the", false)).toBe(true);
    expect(s.count).toBe(4);
    expect([0, 1, 2, 3].map((k) => s.string(k))).toEqual(["cat sat", "ça été", "Already Normal", ""]);
    expect(s.bytes.subarray(s.at[1], s.at[2])).toEqual(Buffer.from("ça été", "utf8"));
  });

  it("refuses a text holding a lone surrogate, adding nothing", () => {
    const s = new NeedleStore();
    s.add("abc", false);
    expect(s.add("x\ud800y", false)).toBe(false);
    expect(s.add("x\udc00", true)).toBe(false);
    expect(s.count).toBe(1);
    expect(s.at[1]).toBe(3);
  });

  it("grows and truncates", () => {
    const s = new NeedleStore();
    const texts = Array.from({ length: 3000 }, (_, i) => `Word${i} an ${"x".repeat(i % 7)}`);
    for (const t of texts) s.add(t, false);
    expect(s.count).toBe(3000);
    expect(s.string(2999)).toBe(normalizeAnswer(texts[2999]));
    s.truncate(10);
    s.add("Zed", false);
    expect(s.count).toBe(11);
    expect(s.string(10)).toBe("zed");
  });

  it("holds: Python's `in` on the needles' strings", () => {
    const hay = new NeedleStore();
    const needles = new NeedleStore();
    hay.add("Über the Moon, é", false);
    const words = ["über", "moon", "ber moon", "moon é", "é", "", "the", "x", "über moon é", "über moon é!"];
    for (const w of words) needles.add(w, true);
    const got = words.map((_, j) => hay.holds(0, needles, j));
    expect(got).toEqual(words.map((w) => hay.string(0).includes(w)));
    expect(got).toEqual([true, true, true, true, true, true, false, false, true, false]);
  });
});
