// BM25 indexes end to end: Lucene 8.7's exact rankings and scores on a tiny corpus and on the SQuAD
// paragraphs (expected values printed by bench/lucene/Bm25Bench.java), MaxScore pruning equal to
// exhaustive scoring, the on-disk format and the manifest.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cutPassages } from "../../../src/knowledge/passages.js";
import { readSquadFile, squadQuestionsToKilt, squadToPages } from "../../../src/knowledge/squad.js";
import { buildBm25Index } from "../../../src/retrieval/bm25/build.js";
import { Bm25Retriever, EXHAUSTIVE_SHARE, openBm25 } from "../../../src/retrieval/bm25/search.js";
import { maxScoreSearch } from "../../../src/retrieval/bm25/maxscore.js";
import type { Unit } from "../../../src/retrieval/units/unit.js";

const SQUAD = new URL("../../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = () => mkdtempSync(join(tmpdir(), "tartan-bm25-"));
const unit = (i: number, text: string, title = `Doc ${i}`): Unit => ({ wikipedia_id: `d${i}`, wikipedia_title: title, text });
const rounded = (hits: { unit: number; score: number }[]) => hits.map((h) => [h.unit, h.score]);

describe("tiny corpus against Lucene", () => {
  const docs = ["cat sat mat", "cat cat dog", "dog barks loudly today", "The cat's dog and the cats"];

  it("ranks and scores as Lucene 8.7 does (k1 0.9, b 0.4), ties to the lower unit", async () => {
    const dir = tmp();
    const stats = await buildBm25Index(docs.map((t, i) => unit(i, t)), dir, { title: false });
    // Terms: cat sat mat dog bark loudli todai; postings 3 + 2 + 4 + 2.
    expect(stats).toMatchObject({ units: 4, docCount: 4, terms: 7, postings: 11 });
    const r = await openBm25(dir);
    const f = Math.fround;
    expect(rounded(await r.search("cat", 10))).toEqual([[1, f(0.24835427)], [3, f(0.24835427)], [0, f(0.19050017)]]);
    expect(rounded(await r.search("cat dog", 10))).toEqual([[1, f(0.43885446)], [3, f(0.43885446)], [0, f(0.19050017)], [2, f(0.17985936)]]);
    // "dog" twice: boost 2.
    expect(rounded(await r.search("dog dog cat", 10))).toEqual([[1, f(0.6293546)], [3, f(0.6293546)], [2, f(0.3597187)], [0, f(0.19050017)]]);
    expect(await r.search("the", 10)).toEqual([]);
    expect(await r.search("zebra", 10)).toEqual([]);
    expect(await r.search("", 10)).toEqual([]);
    expect(rounded(await r.search("cat", 1))).toEqual([[1, f(0.24835427)]]);
    expect(await r.search("cat", 0)).toEqual([]);
    expect((await r.search("cat", Infinity)).map((h) => h.unit)).toEqual([1, 3, 0]);
    expect((await r.search("cat", 2.7)).map((h) => h.unit)).toEqual([1, 3]);
    await r.close();
  });

  it("takes k1 and b from the build parameters (k1 1.2, b 0.75)", async () => {
    const dir = tmp();
    await buildBm25Index(docs.map((t, i) => unit(i, t)), dir, { title: false, k1: 1.2, b: 0.75 });
    const r = await openBm25(dir);
    const f = Math.fround;
    expect(rounded(await r.search("dog dog cat", 10))).toEqual([[1, f(0.56263644)], [3, f(0.56263644)], [2, f(0.2962795)], [0, f(0.16739257)]]);
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({ kind: "bm25", unit: "passage", units: 4, params: { k1: 1.2, b: 0.75, analyzer: "english", title: false, docCount: 4, terms: 7 }, formatVersion: 2 });
    expect(r.units.get(2).text).toBe("dog barks loudly today");
    await r.close();
  });

  it("rejects bad parameters", async () => {
    await expect(buildBm25Index([], tmp(), { b: 2 })).rejects.toThrow(/b must be/);
    await expect(buildBm25Index([], tmp(), { k1: -1 })).rejects.toThrow(/k1 must be/);
    await expect(buildBm25Index([], tmp(), { analyzer: "snowball" as never })).rejects.toThrow(/unknown analyzer/);
  });

  it("indexes units with no terms and an empty corpus", async () => {
    const dir = tmp();
    const stats = await buildBm25Index([unit(0, "the and of"), unit(1, "cat")], dir, { title: false });
    expect(stats).toMatchObject({ units: 2, docCount: 1, terms: 1 });
    const r = await openBm25(dir);
    expect((await r.search("cat", 5)).map((h) => h.unit)).toEqual([1]);
    const empty = tmp();
    await buildBm25Index([], empty);
    expect(await (await openBm25(empty)).search("cat", 5)).toEqual([]);
  });
});

/** Deterministic Zipfian text for pruning tests. */
function zipfCorpus(docs: number, queries: number, seed: number) {
  let a = seed;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const vocab = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}x`);
  const cum: number[] = [];
  let s = 0;
  for (let r = 0; r < vocab.length; r++) cum.push((s += 1 / (r + 1)));
  const word = () => {
    const x = rand() * s;
    let lo = 0;
    let hi = vocab.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return vocab[lo];
  };
  const text = (n: number) => Array.from({ length: n }, word).join(" ");
  return {
    units: Array.from({ length: docs }, (_, i) => unit(i, text(5 + Math.floor(rand() * 300)))),
    queries: Array.from({ length: queries }, () => text(1 + Math.floor(rand() * 12))),
  };
}

describe("MaxScore pruning", () => {
  it("returns exactly the exhaustive top k on Zipfian text (1,500 units of 5-300 words, 400 queries, k 1-200)", async () => {
    const { units, queries } = zipfCorpus(1500, 400, 7);
    const dir = tmp();
    await buildBm25Index(units, dir, { analyzer: "lowercase", title: false });
    const r = (await openBm25(dir)) as Bm25Retriever;
    let compared = 0;
    for (const k of [1, 3, 10, 150]) {
      for (const q of queries) {
        const pruned = r.searcher.search(q, k);
        expect(pruned).toEqual(r.searcher.searchExhaustive(q, k));
        compared += pruned.length;
      }
    }
    expect(compared).toBeGreaterThan(60_000);
    // MaxScore itself at a k where search() takes the deep route
    for (const q of queries.slice(0, 100)) expect(maxScoreSearch(r.searcher, r.searcher.queryTerms(q), 200)).toEqual(r.searcher.searchExhaustive(q, 200));
  });

  it("scores every posting into one array once k reaches 1/8 of the units: the exhaustive top k, under any k1 and b", async () => {
    const { units, queries } = zipfCorpus(1500, 200, 9);
    const dir = tmp();
    await buildBm25Index(units, dir, { analyzer: "lowercase", title: false });
    const r = (await openBm25(dir)) as Bm25Retriever;
    expect(1500 / EXHAUSTIVE_SHARE).toBe(187.5);
    let compared = 0;
    for (const k of [188, 1000, 1500, 5000])
      for (const p of [undefined, { k1: 1.2, b: 0.75 }])
        for (const q of queries) {
          const deep = r.searcher.search(q, k, p);
          expect(deep).toEqual(r.searcher.searchExhaustive(q, k, p));
          compared += deep.length;
        }
    expect(compared).toBeGreaterThan(500_000);
    await r.close();
  });

  it("reads long postings in windows and skips block-max windows, still exactly the exhaustive top k", async () => {
    // 500,000 units all holding "common" 1-23 times (postings of ~330 KB: several 64 KB read windows) and
    // a few Zipfian words.
    const { units: zipf, queries } = zipfCorpus(3000, 60, 11);
    const units = Array.from({ length: 500_000 }, (_, i) => unit(i, `${"common ".repeat(1 + ((i * 7) % 23))}${zipf[i % zipf.length].text.split(" ").slice(0, 1 + (i % 7)).join(" ")}`));
    const dir = tmp();
    await buildBm25Index(units, dir, { analyzer: "lowercase", title: false });
    const r = (await openBm25(dir)) as Bm25Retriever;
    const info = r.searcher.queryTerms("common")[0].info;
    expect(info.docFreq).toBe(500_000);
    expect(info.bytes).toBeGreaterThan(4 * 64 * 1024);
    let compared = 0;
    for (const k of [10, 100]) {
      for (const q of queries.slice(0, 20)) {
        const pruned = r.searcher.search(`common ${q}`, k);
        expect(pruned).toEqual(r.searcher.searchExhaustive(`common ${q}`, k));
        compared += pruned.length;
      }
    }
    expect(compared).toBe(20 * 110);
    expect(r.searcher.stats.windowsSkipped).toBeGreaterThan(0);
    await r.close();
  });
});

describe("the score floor (pruning before the first unit is scored)", () => {
  it("decodes only the blocks that can hold a top-k unit for one term, ties at the floor included", async () => {
    // 20,000 units holding "alpha" once among 30 other words (one score for all), except 15,000-15,009
    // where it stands alone (the ten best). The 10th largest block bound is the common score: from the
    // first block on the top 10 is full at it, blocks that only tie it are skipped, and the block of the
    // ten best is decoded.
    const units = Array.from({ length: 20_000 }, (_, i) => unit(i, i >= 15_000 && i < 15_010 ? "alpha" : `alpha ${"pad ".repeat(30).trim()}`));
    const dir = tmp();
    await buildBm25Index(units, dir, { analyzer: "lowercase", title: false });
    const r = (await openBm25(dir)) as Bm25Retriever;
    const hits = r.searcher.search("alpha", 10);
    expect(hits.map((h) => h.unit)).toEqual([15_000, 15_001, 15_002, 15_003, 15_004, 15_005, 15_006, 15_007, 15_008, 15_009]);
    expect(hits).toEqual(r.searcher.searchExhaustive("alpha", 10));
    // The first block and the one or two holding 15,000-15,009, of 156.
    expect(r.searcher.stats.scored).toBeLessThanOrEqual(3 * 128);
    // Ties at the 12th: the first two of the common score (units 0 and 1) follow the ten best.
    expect(r.searcher.search("alpha", 12).map((h) => h.unit)).toEqual([15_000, 15_001, 15_002, 15_003, 15_004, 15_005, 15_006, 15_007, 15_008, 15_009, 0, 1]);
    expect(r.searcher.search("alpha", 12)).toEqual(r.searcher.searchExhaustive("alpha", 12));
    await r.close();
  });
});

describe("windowed MaxScore (term at a time in windows, block skipping)", () => {
  it("equals exhaustive scoring on adversarial postings: ties across window edges, bursts, tf > 2, boosts, k 1-1000", async () => {
    // 140,000 units (scored in chunks of 4,096; a new partition window at a chunk edge whenever the
    // threshold rises): "alpha" everywhere (tf 1-5),
    // "beta" in every third unit, "gamma" rare, "delta" a burst of high tf in short units around 70,000
    // (a few blocks with high bounds among low ones), "omega" only in the last units; many units share a
    // text, so equal scores straddle every window and chunk edge; padding varies the lengths.
    const N = 140_000;
    const units = Array.from({ length: N }, (_, i) => {
      const words: string[] = [];
      const v = i % 61; // texts repeat every 61 units: ties everywhere
      for (let t = 0; t < 1 + (v % 5); t++) words.push("alpha");
      if (v % 3 === 0) words.push(v % 2 ? "beta beta beta" : "beta");
      if (i % 997 === 0 || (i >= 65_530 && i < 65_542) || (i >= 4_090 && i < 4_100)) words.push("gamma");
      if (i >= 69_800 && i < 70_300) words.push(i % 7 === 0 ? "delta delta delta delta" : "delta");
      else if (i % 5_003 === 0) words.push("delta");
      if (i >= N - 300) words.push("omega omega");
      words.push("pad ".repeat((v * 7) % 40).trim());
      return unit(i, words.join(" "));
    });
    const dir = tmp();
    await buildBm25Index(units, dir, { analyzer: "lowercase", title: false });
    const r = (await openBm25(dir)) as Bm25Retriever;
    const queries = ["alpha", "alpha beta", "alpha alpha gamma", "delta alpha", "beta gamma delta", "alpha beta gamma delta omega", "omega alpha", "gamma gamma gamma beta", "pad alpha delta delta", "delta", "gamma omega"];
    let compared = 0;
    for (const k of [1, 7, 100, 1000]) {
      for (const q of queries) {
        const pruned = r.searcher.search(q, k);
        expect(pruned, `${q} @${k}`).toEqual(r.searcher.searchExhaustive(q, k));
        compared += pruned.length;
      }
    }
    expect(compared).toBeGreaterThan(9_000);
    expect(r.searcher.stats.blocksSkipped).toBeGreaterThan(0);
    await r.close();
  });
});

describe("SQuAD v1.1 dev paragraphs (title + text) against Lucene 8.7", () => {
  let english: Bm25Retriever;
  let lowercase: Bm25Retriever;
  let questions: string[];

  beforeAll(async () => {
    const squad = readSquadFile(SQUAD);
    const pages = squadToPages(squad);
    const units: Unit[] = pages.flatMap((p) => cutPassages(p, { unit: "paragraph" }).map((ps) => ({ wikipedia_id: ps.wikipedia_id, wikipedia_title: ps.wikipedia_title, start_paragraph_id: ps.start_paragraph_id, text: ps.text })));
    expect(units).toHaveLength(2067);
    const e = tmp();
    const l = tmp();
    await buildBm25Index(units, e, { analyzer: "english", unit: "paragraph" });
    await buildBm25Index(units, l, { analyzer: "lowercase", unit: "paragraph" });
    english = (await openBm25(e)) as Bm25Retriever;
    lowercase = (await openBm25(l)) as Bm25Retriever;
    questions = squadQuestionsToKilt(squad, { pages }).records.map((r) => r.input as string);
  });

  // [question, EnglishAnalyzer top 3, lowercase top 3] as Lucene 8.7 ranks and scores them.
  const cases: [string, [number, number][], [number, number][]][] = [
    ["Which NFL team represented the AFC at Super Bowl 50?", [[22, 15.416062], [1, 15.324494], [0, 14.7666235]], [[22, 14.923281], [12, 11.8055], [1, 11.679135]]],
    ["Where did Super Bowl 50 take place?", [[7, 9.592187], [3, 8.834389], [8, 8.748442]], [[3, 9.008823], [24, 8.709687], [53, 8.691728]]],
    [
      "What was the nickname for the test where, during abort mode, the ascent engine was started and fired?",
      [[728, 19.254961], [727, 9.636682], [701, 7.4346595]],
      [[728, 17.333672], [589, 7.7951984], [727, 6.5717783]],
    ],
    [
      "What public policy school found it's home in the building that Ludwig Mies van der Rohe designed?",
      [[1518, 24.709183], [59, 8.136722], [759, 7.8945217]],
      [[1518, 24.901735], [759, 7.441113], [1508, 6.4689527]],
    ],
    ["What is the seldom used force unit equal to one thousand newtons?", [[2030, 9.746773], [2066, 7.945614], [2038, 7.519698]], [[2066, 8.543972], [2031, 6.737312], [2062, 6.4991426]]],
  ];

  it.each(cases)("%s", async (q, wantEnglish, wantLowercase) => {
    const f = (xs: [number, number][]) => xs.map(([u, s]) => [u, Math.fround(s)]);
    expect(rounded(await english.search(q, 3))).toEqual(f(wantEnglish));
    expect(rounded(await lowercase.search(q, 3))).toEqual(f(wantLowercase));
  });

  it("prunes to exactly the exhaustive top 10 for all 10,570 questions", () => {
    expect(questions).toHaveLength(10570);
    for (const r of [english, lowercase]) {
      for (const q of questions) expect(r.searcher.search(q, 10)).toEqual(r.searcher.searchExhaustive(q, 10));
    }
  });

  it("searchBatch (on the calling thread) equals one query at a time", async () => {
    const qs = questions.slice(0, 1000);
    const batch = await english.searchBatch(qs, 20);
    expect(batch).toEqual(qs.map((q) => english.searcher.search(q, 20)));
  });

  it("finds every index term through the on-disk dictionary, and no other", () => {
    const s = english.searcher;
    let postings = 0;
    let terms = 0;
    let last = "";
    for (const [term, info] of s.dictionary.entries()) {
      expect(term > last).toBe(true);
      expect(s.dictionary.lookup(term)).toEqual(info);
      // A term just before or after this one in the order is not in the index.
      expect(s.dictionary.lookup(`${term}\u0000`)).toBeNull();
      postings += info.docFreq;
      terms++;
      last = term;
    }
    expect(terms).toBe(s.params.terms);
    expect(postings).toBe(s.params.postings);
    expect(s.dictionary.lookup("notaword")).toBeNull();
    expect(s.dictionary.lookup("")).toBeNull();
  });
});
