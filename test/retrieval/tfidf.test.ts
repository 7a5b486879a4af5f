import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fromSquad } from "../../src/knowledge/build.js";
import { buildTfidfIndex, ngramCounts } from "../../src/retrieval/tfidf/build.js";
import { hashBucket, murmur3 } from "../../src/retrieval/tfidf/hash.js";
import { openTfidf, type TfidfRetriever } from "../../src/retrieval/tfidf/search.js";
import { drqaNgrams, drqaTokens, isFilteredWord } from "../../src/retrieval/tfidf/tokenize.js";
import { topK } from "../../src/retrieval/tfidf/topk.js";
import { unitsFromPagesFile } from "../../src/retrieval/sources.js";
import type { Unit } from "../../src/retrieval/units/unit.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-tfidf-"));

describe("murmur3 (scikit-learn murmurhash3_32, positive=True)", () => {
  it("matches scikit-learn's own test values", () => {
    expect(murmur3("foo")).toBe(4138058784);
    expect(murmur3("foo", 42)).toBe(2972666014);
    expect(murmur3("foo") | 0).toBe(-156908512); // positive=False view
  });
  it("matches MurmurHash3_x86_32 reference vectors, UTF-8 included", () => {
    expect(murmur3("")).toBe(0);
    expect(murmur3("", 1)).toBe(0x514e28b7);
    expect(murmur3("", 0xffffffff)).toBe(0x81f16f39);
    expect(murmur3("\0\0\0\0")).toBe(0x2362f9de);
    expect(murmur3("aaaa", 0x9747b28c)).toBe(0x5a97808a);
    expect(murmur3("Hello, world!", 0x9747b28c)).toBe(0x24884cba);
    expect(murmur3("ππππππππ", 0x9747b28c)).toBe(0xd58063c1);
    expect(murmur3("The quick brown fox jumps over the lazy dog", 0x9747b28c)).toBe(0x2fa826cd);
    expect(murmur3("x".repeat(3000))).toBe(murmur3("x".repeat(3000))); // buffer growth keeps results stable
  });
  it("buckets are hash mod 2^24", () => {
    expect(hashBucket("foo", 2 ** 24)).toBe(4138058784 % 2 ** 24);
  });
});

describe("DrQA tokenization and n-grams", () => {
  it("splits like SimpleTokenizer, NFD-normalized and lowercased", () => {
    expect(drqaTokens("Super Bowl 50: Denver's 24–10 win, café $5!")).toEqual(["super", "bowl", "50", ":", "denver", "'", "s", "24", "–", "10", "win", ",", "cafe\u0301", "$", "5", "!"]);
    expect(drqaTokens("snake_case  \n\t tabs")).toEqual(["snake_case", "tabs"]);
  });
  it("filters stop words and punctuation-only tokens, not symbols", () => {
    expect(isFilteredWord("the")).toBe(true);
    expect(isFilteredWord("n't")).toBe(true);
    expect(isFilteredWord("–")).toBe(true);
    expect(isFilteredWord("...")).toBe(true);
    expect(isFilteredWord("$")).toBe(false);
    expect(isFilteredWord("bowl")).toBe(false);
  });
  it("keeps n-grams with no filtered word, in DrQA's order", () => {
    expect(drqaNgrams(["the", "super", "bowl", "50", "?", "denver"], 2)).toEqual(["super", "super bowl", "bowl", "bowl 50", "50", "denver"]);
    expect(drqaNgrams(["a", "b", "c"], 3)).toEqual(["b", "b c", "c"]);
  });
  it("counts hashed n-grams of a text", () => {
    const counts = ngramCounts("Bowl bowl BOWL game", { ngram: 2, hashBits: 24 });
    expect(counts.get(hashBucket("bowl", 2 ** 24))).toBe(3);
    expect(counts.get(hashBucket("bowl bowl", 2 ** 24))).toBe(2);
    expect(counts.get(hashBucket("bowl game", 2 ** 24))).toBe(1);
    expect(counts.size).toBe(4);
  });
});

describe("topK", () => {
  it("orders by score, then by lower unit, and keeps k", () => {
    const scores = new Map([[5, 1], [2, 3], [9, 3], [1, 0.5], [7, 3]]);
    const units = [...scores.keys()];
    expect(topK(units, units.length, (u) => scores.get(u)!, 3)).toEqual([{ unit: 2, score: 3 }, { unit: 7, score: 3 }, { unit: 9, score: 3 }]);
    expect(topK(units, units.length, (u) => scores.get(u)!, 10).map((h) => h.unit)).toEqual([2, 7, 9, 5, 1]);
    expect(topK(units, units.length, (u) => scores.get(u)!, 0)).toEqual([]);
  });
});

describe("TF-IDF scores (DrQA formula)", () => {
  it("scores log1p(tf)·idf dot products and drops terms with idf ≤ 0", async () => {
    const dir = join(tmp, "tiny");
    const units: Unit[] = [
      { wikipedia_id: "1", wikipedia_title: "", text: "apple banana banana" },
      { wikipedia_id: "2", wikipedia_title: "", text: "apple cherry" },
      { wikipedia_id: "3", wikipedia_title: "", text: "durian" },
    ];
    expect(await buildTfidfIndex(units, dir, { unit: "page", source: "test", title: false })).toEqual({ units: 3, buckets: 7, postings: 8, segments: 1 });
    const r = await openTfidf(dir);
    const idf1 = Math.log(2.5 / 1.5); // a term in 1 of 3 units
    // "banana": tf 2 in unit 0; query tf 1.
    expect((await r.search("banana", 5))[0].score).toBeCloseTo(Math.log1p(1) * idf1 * Math.log1p(2) * idf1, 12);
    expect((await r.search("banana", 5)).map((h) => h.unit)).toEqual([0]);
    // "apple" is in 2 of 3 units: idf = log(1.5/2.5) < 0 → 0, so no hit at all.
    expect(await r.search("apple", 5)).toEqual([]);
    // "apple cherry": only the bigram and "cherry" count.
    const hits = await r.search("Apple cherry!", 5);
    expect(hits.map((h) => h.unit)).toEqual([1]);
    expect(hits[0].score).toBeCloseTo(2 * (Math.log1p(1) * idf1) ** 2, 12);
    await r.close();
  });
});

describe("TF-IDF on the SQuAD knowledge source", () => {
  let page: TfidfRetriever;
  let paragraph: TfidfRetriever;
  beforeAll(async () => {
    const pages = join(tmp, "pages.jsonl");
    await fromSquad(V11, pages, () => {});
    expect(await buildTfidfIndex(unitsFromPagesFile(pages, { unit: "page" }), join(tmp, "page"), { unit: "page", source: pages })).toEqual({ units: 48, buckets: 72579, postings: 121926, segments: 1 });
    expect(await buildTfidfIndex(unitsFromPagesFile(pages, { unit: "paragraph" }), join(tmp, "paragraph"), { unit: "paragraph", source: pages })).toEqual({ units: 2067, buckets: 73085, postings: 187516, segments: 1 });
    page = await openTfidf(join(tmp, "page"));
    paragraph = await openTfidf(join(tmp, "paragraph"));
  });

  const ranked = (r: TfidfRetriever, q: string, k: number) =>
    r.searchSync(q, k).map((h) => {
      const u = r.units.get(h.unit);
      return [u.wikipedia_title, u.start_paragraph_id ?? null, Number(h.score.toFixed(6))];
    });

  it("ranks pages for fixed questions", () => {
    expect(ranked(page, "Which NFL team represented the AFC at Super Bowl 50?", 3)).toEqual([
      ["Super Bowl 50", null, 129.850153],
      ["Harvard University", null, 8.24533],
      ["American Broadcasting Company", null, 6.274689],
    ]);
    expect(ranked(page, "What is the capital of Poland?", 4)).toEqual([
      ["Warsaw", null, 13.754523],
      ["European Union law", null, 4.569011],
      ["Black Death", null, 2.522651], // tied with University of Chicago: lower unit first
      ["University of Chicago", null, 2.522651],
    ]);
    expect(ranked(page, "Who did Tesla work for in Paris?", 2)).toEqual([
      ["Nikola Tesla", null, 47.304716],
      ["Huguenot", null, 3.09268],
    ]);
    expect(ranked(page, "the of and ?", 5)).toEqual([]);
  });

  it("ranks paragraphs for fixed questions", () => {
    expect(ranked(paragraph, "Which NFL team represented the AFC at Super Bowl 50?", 3)).toEqual([
      ["Super Bowl 50", 23, 118.486274],
      ["Super Bowl 50", 54, 99.219205],
      ["Super Bowl 50", 1, 97.875685],
    ]);
    expect(ranked(paragraph, "What is the capital of Poland?", 3)).toEqual([
      ["Warsaw", 20, 34.928979],
      ["Warsaw", 49, 23.842737],
      ["Warsaw", 25, 21.174638],
    ]);
  });
});
