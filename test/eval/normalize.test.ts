// normalize_answer as Python computes it: Unicode word boundaries for the articles, Python's
// whitespace set, ASCII-only punctuation; and the fast byte route agrees with the regex route.

import { describe, expect, it } from "vitest";
import { normalizeAnswer, normalizeAnswerRegex, normalizedTokens } from "../../src/eval/normalize.js";

describe("normalizeAnswer", () => {
  it.each([
    ["The Beatles!", "beatles"],
    ["paris.", "paris"],
    ["  a  ", ""],
    ["the", ""],
    ["l'amour", "lamour"],
    ["the_end", "theend"],
    ["x the y", "x y"],
    ["an apple a day", "apple day"],
    ["thethe", "thethe"],
    ["“quoted” – dash", "“quoted” – dash"],
    ["éthe", "éthe"], // Python's \b is Unicode: é is a word character, so "the" is not a word here
    ["é the x", "é x"],
    ["x\u0085y", "x y"], // NEL is whitespace to Python's str.split
    ["x\u001cy", "x y"],
    ["x\ufeffy", "x\ufeffy"], // BOM is not (JavaScript's \s would split here)
    ["İstanbul", "i̇stanbul"],
    ["U.S. costs 3.5 dollars", "us costs 35 dollars"],
    ["x\u0001the\u0001y", "x\u0001 \u0001y"],
  ])("%j -> %j", (input, expected) => {
    expect(normalizeAnswer(input)).toBe(expected);
    expect(normalizeAnswerRegex(input)).toBe(expected);
  });

  it("tokens are the normalized text split on single spaces", () => {
    expect(normalizedTokens(normalizeAnswer("The  cat,\tthe hat"))).toEqual(["cat", "hat"]);
    expect(normalizedTokens("")).toEqual([]);
  });

  it("the single-pass route equals the regular-expression route on 200,000 random ASCII strings", () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pieces = ["a", "n", "t", "h", "e", "A", "The", "AN", "x", " ", "  ", "\t", ".", "'", "_", "-", "\x01", "\x1c", "the", "an", "b", "0", "\x0b", "!", "\n"];
    let mismatches = 0;
    for (let i = 0; i < 200_000; i++) {
      let s = "";
      const len = Math.floor(rnd() * 12);
      for (let j = 0; j < len; j++) s += pieces[Math.floor(rnd() * pieces.length)];
      if (normalizeAnswer(s) !== normalizeAnswerRegex(s)) mismatches++;
    }
    expect(mismatches).toBe(0);
  });
});
