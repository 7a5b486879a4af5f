// The BM25 analyzers against outputs of Lucene 8.7 itself (bench/lucene/Analyze.java) on exact inputs.
import { describe, expect, it } from "vitest";
import { englishAnalyzer, getAnalyzer, javaLowerCase, lowercaseAnalyzer, stripPossessive } from "../../../src/retrieval/bm25/analyzer.js";
import { ENGLISH_STOP_WORDS } from "../../../src/retrieval/bm25/stopwords.js";
import { classify, standardTokens, WB } from "../../../src/retrieval/bm25/word-break.js";

const english = (s: string) => englishAnalyzer.analyze(s);
const tokens = (s: string) => {
  const out: string[] = [];
  standardTokens(s, (a, b) => out.push(s.slice(a, b)));
  return out;
};

describe("english analyzer (Lucene EnglishAnalyzer)", () => {
  it("matches Lucene on a line of mixed cases", () => {
    // Lucene 8.7 EnglishAnalyzer output for exactly this line.
    const line =
      "The dog's bone isn't John's. U.S.A. 1,000.5 a:b foo-bar e-mail me@x.com http://x.org/a_b 3.14abc _x_ ___ 東京大学 ひらがな カタカナ 😀👍🏽 🇺🇸 ΟΔΟΣ İstanbul";
    expect(english(line)).toEqual([
      "dog", "bone", "isn't", "john", "u.s.a", "1,000.5", "a:b", "foo", "bar", "e", "mail", "me", "x.com", "http", "x.org", "a_b",
      "3.14abc", "_x_", "東", "京", "大", "学", "ひ", "ら", "が", "な", "カタカナ", "😀", "👍🏽", "🇺🇸", "οδοσ", "istanbul",
    ]);
  });

  it("removes possessives before stop words and stems", () => {
    expect(english("running runs ran easily it's THEIR there's")).toEqual(["run", "run", "ran", "easili"]);
    expect(english("Obama’s policies")).toEqual(["obama", "polici"]);
    expect(english("the dogs' bone O'Neil's")).toEqual(["dog", "bone", "o'neil"]);
    expect(stripPossessive("JOHN'S")).toBe("JOHN");
    expect(stripPossessive("'s")).toBe("");
    expect(stripPossessive("cats")).toBe("cats");
  });

  it("drops exactly Lucene's 33 English stop words", () => {
    expect(ENGLISH_STOP_WORDS).toHaveLength(33);
    expect(english(ENGLISH_STOP_WORDS.join(" "))).toEqual([]);
    // Common words that are not in Lucene's set survive (stemmed).
    expect(english("was were has have he she which what")).toEqual(["were", "ha", "have", "he", "she", "which", "what"]);
  });

  it("keeps numbers, decimal points and thousands separators; splits hyphens and slashes", () => {
    expect(english("In 1,234,567 cases 3.14 2nd 10-12 1/2 $5 50%")).toEqual(["1,234,567", "case", "3.14", "2nd", "10", "12", "1", "2", "5", "50"]);
    expect(english("state-of-the-art well-known")).toEqual(["state", "art", "well", "known"]);
  });

  it("stems with Porter (Lucene's PorterStemFilter)", () => {
    expect(english("generalizations caresses ponies relational conditional hopping happy sky")).toEqual([
      "gener", "caress", "poni", "relat", "condit", "hop", "happi", "sky",
    ]);
  });

  it("cuts a 2 MB token into 255-unit pieces in linear time (ASCII and Thai runs)", () => {
    expect(tokens("a".repeat(2_000_000)).length).toBe(Math.ceil(2_000_000 / 255));
    expect(tokens("\u0e01".repeat(2_000_000)).length).toBe(Math.ceil(2_000_000 / 255));
  });

  it("cuts words at 255 code units like Lucene's scanner buffer", () => {
    // Lucene: 254 a's (the apostrophe needs a letter after it, which lies beyond the buffer), then "s".
    expect(english(`${"a".repeat(254)}'s`)).toEqual(["a".repeat(254), "s"]);
    expect(tokens("x".repeat(300)).map((t) => t.length)).toEqual([255, 45]);
  });

  it("classifies code points as Lucene's grammar does", () => {
    expect(classify(0x61)).toBe(WB.Letter);
    expect(classify(0x3a)).toBe(WB.MidLetter);
    expect(classify(0x2c)).toBe(WB.MidNum);
    expect(classify(0x2e)).toBe(WB.MidNumLet);
    expect(classify(0x27)).toBe(WB.SingleQuote);
    expect(classify(0x5f)).toBe(WB.ExtendNumLet);
    expect(classify(0x301)).toBe(WB.Extend);
    expect(classify(0x6771)).toBe(WB.Ideographic);
    expect(classify(0x30ab)).toBe(WB.Katakana);
    expect(classify(0xe01)).toBe(WB.SouthEastAsian);
    expect(classify(0x1f600)).toBe(WB.Emoji);
    expect(classify(0x23)).toBe(WB.KeycapBase);
    // Letters newer than Lucene's Unicode tables are not letters to Lucene (U+0870, Arabic, Unicode 14).
    expect(classify(0x870)).toBe(WB.Other);
  });

  it("handles emoji sequences, keycaps, Hebrew quotes and katakana joins", () => {
    expect(english("👨\u200d👩\u200d👧 #️⃣ 🇺🇸🇫🇷🇩")).toEqual(["👨\u200d👩\u200d👧", "#️⃣", "🇺🇸", "🇫🇷"]);
    expect(tokens("\u05d0' \u05d0\"\u05d1 \u30ab_a a_\u30ab a\u30ab")).toEqual(["\u05d0'", "\u05d0\"\u05d1", "\u30ab_a", "a_\u30ab", "a", "\u30ab"]);
  });
});

describe("lowercase analyzer (WhitespaceTokenizer + LowerCaseFilter)", () => {
  it("splits on Java whitespace only and lowercases code point by code point", () => {
    expect(lowercaseAnalyzer.analyze("ΟΔΟΣ İstanbul  Hello\u00a0World Don't U.S.A.")).toEqual(["οδοσ", "istanbul", "hello\u00a0world", "don't", "u.s.a."]);
    expect(lowercaseAnalyzer.analyze("a\u2003b\u2007c\u3000d\u0085e")).toEqual(["a", "b\u2007c", "d\u0085e"]);
  });

  it("lowercases like Java, not like JavaScript", () => {
    expect(javaLowerCase("ΣΑΣ")).toBe("σασ"); // JavaScript: "σας"
    expect(javaLowerCase("İ")).toBe("i"); // JavaScript: "i̇"
    expect(javaLowerCase("ABC")).toBe("abc");
  });

  it("cuts tokens at 255 code units", () => {
    expect(lowercaseAnalyzer.analyze("y".repeat(600)).map((t) => t.length)).toEqual([255, 255, 90]);
  });

  it("rejects unknown analyzer names", () => {
    expect(() => getAnalyzer("porter" as never)).toThrow(/unknown analyzer/);
  });
});
