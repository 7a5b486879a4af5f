// BM25's k1 and b at search time (src/retrieval/bm25/search-params.ts) against Lucene 8 itself (issue 37
// §7): SQuAD's 2,067 paragraphs in tartan's default-built index (k1 0.9, b 0.4), searched at other k1 and
// b, give for each of 2,114 of the 10,570 questions (every fifth) the top 10 — units, order and float32
// scores — of a Lucene 8.7 index built and searched with BM25Similarity(k1, b) over the same texts (title +
// "\n" + text, EnglishAnalyzer; bench/lucene/Bm25Bench.java). (All 10,570 agree too: bench:bm25-params.) Needs Debian's liblucene8-java and a JDK (declared in
// scripts/test-deps.mjs, installed by `npm test`); skipped, and listed at the end of the run, without them.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { squadBm25Paragraphs } from "../../fixtures/squad-bm25.js";
import { luceneBm25, luceneMissing } from "../../fixtures/lucene-fixture.js";
import { noteSkip } from "../../support/skips.js";
import { Bm25Retriever } from "../../../src/retrieval/bm25/search.js";
import { bm25IndexedText } from "../../../src/retrieval/bm25/build.js";
import { readJsonlAll } from "../../../src/records/jsonl.js";
import type { KiltRecord } from "../../../src/records/types.js";

const missing = luceneMissing();
if (missing !== null && process.env.CI) throw new Error(`${missing}: npm test's pretest step (scripts/test-deps.mjs) installs it`);
if (missing !== null) noteSkip(import.meta.url, missing);

const tmp = mkdtempSync(join(tmpdir(), "tartan-bm25-lucene-"));
let r: Bm25Retriever;
let docs: string[] = [];
let questions: string[] = [];

beforeAll(async () => {
  if (missing !== null) return;
  const { dir } = await squadBm25Paragraphs(tmp, 0);
  r = new Bm25Retriever(dir);
  for (let i = 0; i < r.units.count; i++) docs.push(bm25IndexedText(r.units.get(i), r.searcher.params));
  questions = (await readJsonlAll<KiltRecord>(join(tmp, "questions.jsonl"))).map((q) => q.input!).filter((_, i) => i % 5 === 0);
}, 300_000);

afterAll(async () => {
  await r?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(missing !== null)("search-time k1 and b against Lucene 8 built with them (SQuAD paragraphs)", () => {
  it("the index is tartan's default build: 2,067 paragraphs, English analyzer, title indexed, k1 0.9, b 0.4", () => {
    const p = r.searcher.params;
    expect([r.units.count, p.analyzer, p.title, p.k1, p.b]).toEqual([2067, "english", true, 0.9, 0.4]);
    expect(questions).toHaveLength(2114);
  });

  it.each([
    [1.2, 0.75],
    [2.0, 1.0],
    [0.5, 0.1],
  ])("k1 %s, b %s: every question's top 10 equals Lucene's, unit for unit and score for score", { timeout: 300_000 }, (k1, b) => {
    const lucene = luceneBm25(tmp, docs, questions, { analyzer: "english", k1, b, k: 10 });
    expect(lucene).toHaveLength(questions.length);
    let differ = 0;
    for (let i = 0; i < questions.length; i++) {
      const got = r.searcher.search(questions[i], 10, { k1, b }).map((h) => ({ unit: h.unit, score: h.score }));
      expect(got, questions[i]).toEqual(lucene[i]);
      // The parameters matter: the build's own ranking differs for many questions.
      if (JSON.stringify(r.searcher.search(questions[i], 10).map((h) => h.unit)) !== JSON.stringify(got.map((h) => h.unit))) differ++;
    }
    expect(differ).toBeGreaterThan(questions.length / 10);
  });

  it("at the build's own k1 0.9, b 0.4 the default search equals Lucene's too (the reference itself)", { timeout: 300_000 }, () => {
    const lucene = luceneBm25(tmp, docs, questions, { analyzer: "english", k1: 0.9, b: 0.4, k: 10 });
    for (let i = 0; i < lucene.length; i++) expect(r.searcher.search(questions[i], 10).map((h) => ({ unit: h.unit, score: h.score }))).toEqual(lucene[i]);
  });
});
