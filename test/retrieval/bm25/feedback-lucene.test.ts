// RM3 and Rocchio against Lucene in the same run: bench/lucene/Prf.java (Lucene 8's API, from Anserini's
// Rm3Reranker, RocchioReranker and FeatureVector, reading the feedback documents' stored term vectors)
// over the SQuAD paragraph index's texts, for every 150th SQuAD question (71). tartan's expansion (its
// feedback units re-analysed from the unit store) has the same terms, in the same order, with the same
// float32 weights, and its expanded search the same top 20 with the same scores; at Anserini's defaults
// and at others (Rocchio with negative feedback from a first stage of 100). Needs Java and Lucene 8
// (liblucene8-java, default-jdk-headless: scripts/test-deps.mjs); the parameters are refused naming the field.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { squadBm25Paragraphs } from "../../fixtures/squad-bm25.js";
import { readJsonlAll } from "../../../src/records/jsonl.js";
import type { KiltRecord } from "../../../src/records/types.js";
import { Bm25Retriever } from "../../../src/retrieval/bm25/search.js";
import { bm25IndexedText } from "../../../src/retrieval/bm25/build.js";
import { parseFeedback, type FeedbackSpec } from "../../../src/retrieval/feedback/params.js";
// @ts-expect-error: plain JavaScript module shared with bench/prf.mjs
import { lucenePrf } from "../../../bench/lucene/prf.mjs";
// @ts-expect-error: plain JavaScript module (npm test's pretest step)
import { missingRequirements } from "../../../scripts/test-deps.mjs";
import { noteSkip } from "../../support/skips.js";

const lucene = !missingRequirements().some((r: { packages: string[] }) => r.packages.includes("liblucene8-java"));
if (!lucene) noteSkip(import.meta.url, "Java or Lucene 8 is missing (apt-get install liblucene8-java default-jdk-headless)");

const tmp = mkdtempSync(join(tmpdir(), "tartan-prf-lucene-"));
let r: Bm25Retriever;
let texts: string[] = [];
let queries: string[] = [];

beforeAll(async () => {
  const { dir } = await squadBm25Paragraphs(tmp, 0);
  r = new Bm25Retriever(dir);
  texts = Array.from({ length: r.units.count }, (_, i) => bm25IndexedText(r.units.get(i), r.searcher.params));
  queries = (await readJsonlAll<KiltRecord>(join(tmp, "questions.jsonl"))).filter((_, i) => i % 150 === 0).map((q) => q.input!);
}, 300_000);

afterAll(async () => {
  await r?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const CASES: { name: string; spec: FeedbackSpec }[] = [
  { name: "RM3 at Anserini's defaults (10, 10, 0.5, term filter)", spec: { method: "rm3" } },
  { name: "RM3 fbDocs=5, fbTerms=20, originalQueryWeight=0.3, no term filter", spec: parseFeedback("rm3", "fbDocs=5,fbTerms=20,originalQueryWeight=0.3,filterTerms=false") },
  { name: "Rocchio at Anserini's defaults (no negative feedback)", spec: { method: "rocchio" } },
  { name: "Rocchio with negative feedback from the first 100, other weights and sizes", spec: parseFeedback("rocchio", "topFbDocs=7,topFbTerms=15,bottomFbDocs=5,bottomFbTerms=8,alpha=0.8,beta=0.6,gamma=0.25,useNegative,depth=100") },
];

describe.skipIf(!lucene)("pseudo-relevance feedback against Lucene (bench/lucene/Prf.java)", () => {
  it.each(CASES)("$name: the same expansion terms and float32 weights, and the same top 20", async ({ spec }) => {
    const p = r.searcher.params;
    const { results } = lucenePrf({ analyzer: p.analyzer, texts, queries, k: 20, k1: p.k1, b: p.b, spec }) as { results: { terms: [string, number][]; hits: [number, number][] }[] };
    expect(results).toHaveLength(queries.length);
    let expanded = 0;
    let moved = 0;
    for (let i = 0; i < queries.length; i++) {
      const ours = r.expansion(queries[i], spec).map((t) => [t.term, t.weight]);
      expect(ours, queries[i]).toEqual(results[i].terms.map(([t, w]) => [t, Math.fround(w)]));
      const hits = (await r.search(queries[i], 20, { feedback: spec })).map((h) => [h.unit, h.score]);
      expect(hits, queries[i]).toEqual(results[i].hits.map(([d, s]) => [d, Math.fround(s)]));
      // the feedback did something: terms beyond the query's, and rankings other than plain BM25's
      if (ours.length > new Set(r.searcher.analyzer.analyze(queries[i])).size) expanded++;
      const plain = (await r.search(queries[i], 20)).map((h) => h.unit);
      if (JSON.stringify(plain) !== JSON.stringify(hits.map((h) => h[0]))) moved++;
    }
    expect(expanded).toBeGreaterThan(queries.length * 0.9);
    expect(moved).toBeGreaterThan(queries.length * 0.5);
  }, 300_000);
});

describe("feedback parameters", () => {
  it("read key=value lists with Anserini's names, and are refused naming the bad one", () => {
    expect(parseFeedback("rm3", true)).toEqual({ method: "rm3" });
    expect(parseFeedback("rm3", "fbDocs=5, fbTerms=20")).toEqual({ method: "rm3", fbDocs: 5, fbTerms: 20 });
    expect(parseFeedback("rocchio", "useNegative,gamma=0.2")).toEqual({ method: "rocchio", useNegative: true, gamma: 0.2 });
    expect(() => parseFeedback("rm3", "fbdocs=5")).toThrow('--rm3: rm3 has no parameter "fbdocs" (known: fbDocs, fbTerms, originalQueryWeight, filterTerms)');
    expect(() => parseFeedback("rm3", "originalQueryWeight=1.5")).toThrow("--rm3: originalQueryWeight must be a number from 0 to 1, got 1.5");
    expect(() => parseFeedback("rocchio", "topFbDocs=0")).toThrow("--rocchio: topFbDocs must be a whole number from 1 to 100000, got 0");
    expect(() => parseFeedback("rocchio", "useNegative=yes")).toThrow('--rocchio: useNegative must be true or false, got "yes"');
    expect(() => parseFeedback("rm3", "fbTerms")).toThrow("--rm3: fbTerms needs a value (fbTerms=N)");
  });

  it("a bad spec given to the library is refused naming the field", async () => {
    await expect(r.search("a query", 5, { feedback: { method: "rm4" } as unknown as FeedbackSpec })).rejects.toThrow('feedback: method must be rm3 or rocchio, got "rm4"');
    expect(() => r.expansion("a query", { method: "rm3", fbDocs: -1 } as FeedbackSpec)).toThrow("feedback: fbDocs must be a whole number from 1 to 100000, got -1");
  });
});
