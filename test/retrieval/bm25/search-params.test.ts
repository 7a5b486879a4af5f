// BM25's k1 and b at search time (src/retrieval/bm25/search-params.ts) on SQuAD's paragraphs: an index
// built with Pyserini's k1 0.9, b 0.4 searched at k1 1.2, b 0.75 ranks and scores exactly as an index
// built with k1 1.2, b 0.75 (and back), equals exhaustive scoring at other parameters too (the block
// bounds stay valid), and still prunes; through the retriever's per-call options and the two-thread pool.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { squadBm25Paragraphs } from "../../fixtures/squad-bm25.js";
import { buildIndex } from "../../../src/retrieval/build.js";
import { Bm25Retriever } from "../../../src/retrieval/bm25/search.js";
import { parseBm25Params } from "../../../src/retrieval/bm25/search-params.js";
import { openIndex } from "../../../src/retrieval/open.js";
import { SearchPool } from "../../../src/retrieval/pool.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-bm25-params-"));
let dir = "";
const other = join(tmp, "bm25-k1.2-b0.75");
let queries: string[] = [];
let a: Bm25Retriever;
let b: Bm25Retriever;

beforeAll(async () => {
  ({ dir, queries } = await squadBm25Paragraphs(tmp, 400));
  await buildIndex({ pages: join(tmp, "pages.jsonl"), kind: "bm25", unit: "paragraph", out: other, params: { k1: 1.2, b: 0.75 } }, () => {});
  a = new Bm25Retriever(dir);
  b = new Bm25Retriever(other);
}, 300_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe("BM25 k1 and b at search time", () => {
  it("the indexes were built with different parameters and rank differently", () => {
    expect([a.manifest.params.k1, a.manifest.params.b, b.manifest.params.k1, b.manifest.params.b]).toEqual([0.9, 0.4, 1.2, 0.75]);
    let differ = 0;
    for (const q of queries) if (JSON.stringify(a.searcher.search(q, 10)) !== JSON.stringify(b.searcher.search(q, 10))) differ++;
    expect(differ).toBeGreaterThan(queries.length / 2);
  });

  it("searching at k1 1.2, b 0.75 equals the index built with them, hit for hit and score for score (and back)", async () => {
    for (const q of queries) {
      expect(a.searcher.search(q, 10, { k1: 1.2, b: 0.75 })).toEqual(b.searcher.search(q, 10));
      expect(b.searcher.search(q, 10, { k1: 0.9, b: 0.4 })).toEqual(a.searcher.search(q, 10));
      expect(await a.search(q, 5, { bm25: { k1: 1.2, b: 0.75 } })).toEqual(await b.search(q, 5));
    }
  });

  it("stays exact against exhaustive scoring at parameters far from the build's, and prunes near them", () => {
    const all = [{ k1: 1.2, b: 0.75 }, { k1: 3, b: 1 }, { k1: 0.1, b: 0 }, { b: 0.9 }, { k1: 2 }, {}, { b: 0.40000001 }];
    const share: Record<string, number> = {};
    for (const p of all) {
      const before = a.searcher.stats.scored;
      let postings = 0;
      for (const q of queries) {
        expect(a.searcher.search(q, 10, p)).toEqual(a.searcher.searchExhaustive(q, 10, p));
        for (const t of a.searcher.queryTerms(q)) postings += t.info.docFreq;
      }
      share[JSON.stringify(p)] = (a.searcher.stats.scored - before) / postings;
    }
    // (searchExhaustive leaves the counters alone.) Every search scored fewer postings than the query
    // terms have; a hair from the build's parameters, the bounds prune as much as the build's own.
    for (const [p, x] of Object.entries(share)) expect([p, x < 1]).toEqual([p, true]);
    expect(share['{"b":0.40000001}']).toBe(share["{}"]);
  });

  it("the pool's workers search with the call's k1 and b", async () => {
    const r = await openIndex(dir);
    const pool = new SearchPool(r, [dir], { threads: 2, chunk: 16 });
    let pooled = await pool.search(queries, 10, undefined, { bm25: { k1: 1.2, b: 0.75 } });
    for (let tries = 0; tries < 200 && !(pool.lastShares()[1] > 0); tries++) pooled = await pool.search(queries, 10, undefined, { bm25: { k1: 1.2, b: 0.75 } });
    expect(pool.lastShares()[1]).toBeGreaterThan(0);
    await pool.close();
    await r.close();
    expect(pooled).toEqual(queries.map((q) => b.searcher.search(q, 10)));
  });

  it("parses k1=…,b=… and refuses what BM25 cannot take", () => {
    expect(parseBm25Params("k1=1.2,b=0.75")).toEqual({ k1: 1.2, b: 0.75 });
    expect(parseBm25Params(" b = 0.3 ")).toEqual({ b: 0.3 });
    expect(() => parseBm25Params("k1=1.2;b=0.75")).toThrow('--bm25: "k1=1.2;b=0.75" is not k1=N or b=N (give e.g. k1=1.2,b=0.75)');
    expect(() => parseBm25Params("k1=0")).toThrow("--bm25: k1 must be a number above 0, got 0");
    expect(() => parseBm25Params("b=1.5")).toThrow("--bm25: b must be a number from 0 to 1, got 1.5");
    expect(() => a.searcher.search("x", 1, { b: -1 })).toThrow("bm25: b must be a number from 0 to 1, got -1");
  });
});
