// The stage seam (src/retrieval/stages/): every wrapper between opening and output is a registered stage,
// applied by name, on the calling thread and in every search worker alike. On the SQuAD BM25 paragraph
// index: an `rrf` stage over one index gives its ranking with scores 1/(k0 + rank), the same through a
// two-thread pool (the worker applies it too) as on one thread; unknown stages, wrong arity and a rerank
// stage without its reranker are refused.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { squadBm25Paragraphs } from "../fixtures/squad-bm25.js";
import { openIndex, openIndexes } from "../../src/retrieval/open.js";
import { SearchPool } from "../../src/retrieval/pool.js";
import { STAGES, applyStage } from "../../src/retrieval/stages/index.js";
import type { Retriever } from "../../src/retrieval/types.js";
import { FeedbackRetriever } from "../../src/retrieval/feedback/retriever.js";
import type { FeedbackSpec } from "../../src/retrieval/feedback/params.js";
import type { Bm25Retriever } from "../../src/retrieval/bm25/search.js";
import { buildIndex } from "../../src/retrieval/build.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-stages-"));
let dir = "";
let plain: Retriever;
let queries: string[] = [];

beforeAll(async () => {
  ({ dir, queries } = await squadBm25Paragraphs(tmp, 600));
  plain = await openIndex(dir);
}, 300_000);

afterAll(async () => {
  await plain?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe("stages", () => {
  it("are one registry: markers, rrf, the score fusions, rerank and the feedback stages", () => {
    expect(STAGES.names()).toEqual(["markers", "rrf", "wsum", "combsum", "combmnz", "combmax", "combanz", "rerank", "rm3", "rocchio"]);
    expect(STAGES.all().map((s) => s.takes)).toEqual(["one", "many", "many", "many", "many", "many", "many", "one", "one", "one"]);
  });

  it("rrf over one index keeps its ranking with scores 1/(k0 + rank), on the calling thread and in the pool's worker", async () => {
    const staged = await openIndexes([dir], { stages: [{ name: "rrf", options: { k0: 10, depth: 20 } }] });
    expect(staged.kind).toBe("hybrid");
    const pool = new SearchPool(staged, [dir], { threads: 2, chunk: 8, stages: [{ name: "rrf", options: { k0: 10, depth: 20 } }] });
    // the worker starts while the calling thread answers: search until it has answered some (a loaded machine)
    let pooled = await pool.search(queries, 10);
    for (let tries = 0; tries < 200 && !(pool.lastShares()[1] > 0); tries++) pooled = await pool.search(queries, 10);
    const shares = pool.lastShares();
    await pool.close();
    expect(shares[1]).toBeGreaterThan(0);
    for (let i = 0; i < queries.length; i++) {
      const base = await plain.search(queries[i], 20);
      // RRF over one ranking: the same order (ties of equal BM25 score keep their unit order), 1/(10 + rank).
      expect(pooled[i].map((h) => h.unit)).toEqual(base.slice(0, 10).map((h) => h.unit));
      expect(pooled[i].map((h) => h.score)).toEqual(pooled[i].map((_, r) => 1 / (10 + r + 1)));
      expect(pooled[i]).toEqual(await staged.search(queries[i], 10));
    }
    await staged.close();
  });

  it("refuses an unknown stage naming the known ones, and a one-input stage given several", async () => {
    await expect(openIndexes([dir], { stages: [{ name: "rm4" }] })).rejects.toThrow('--stage: unknown stage "rm4" (known: markers, rrf, wsum, combsum, combmnz, combmax, combanz, rerank, rm3, rocchio)');
    await expect(openIndexes([dir], { stages: [{ name: "rm3", options: { fbTerms: 0 } }] })).rejects.toThrow("stage rm3: fbTerms must be a whole number from 1 to 100000, got 0");
    await expect(openIndexes([dir], { stages: [{ name: "rocchio", options: { fbDocs: 3 } }] })).rejects.toThrow('stage rocchio: rocchio has no parameter "fbDocs"');
    await expect(openIndexes([dir], { stages: [{ name: "rerank" }] })).rejects.toThrow("stage rerank: the reranker option (a reranker spec) is required");
    await expect(openIndexes([dir], { stages: [{ name: "rerank", options: { reranker: "llm-listwise:model=m", depth: 0 } }] })).rejects.toThrow("stage rerank: depth must be a positive integer, not 0");
    const a = await openIndex(dir);
    const b = await openIndex(dir);
    await expect(applyStage([a, b], { name: "markers" })).rejects.toThrow("stage markers wraps one retriever, given 2");
  });

  it("rm3 and rocchio search the index with the query expanded, on the calling thread and in the pool's worker; a call's own feedback wins", async () => {
    const base = (plain as unknown as { inner: Bm25Retriever }).inner;
    for (const stage of [{ name: "rm3", options: { fbDocs: 5 } }, { name: "rocchio", options: { useNegative: true, depth: 50 } }]) {
      const stages = [stage];
      const staged = await openIndexes([dir], { stages });
      expect(staged).toBeInstanceOf(FeedbackRetriever);
      const pool = new SearchPool(staged, [dir], { threads: 2, chunk: 8, stages });
      let pooled = await pool.search(queries, 10);
      for (let tries = 0; tries < 200 && !(pool.lastShares()[1] > 0); tries++) pooled = await pool.search(queries, 10);
      const shares = pool.lastShares();
      await pool.close();
      expect(shares[1]).toBeGreaterThan(0);
      const feedback = { method: stage.name, ...stage.options } as FeedbackSpec;
      let moved = 0;
      for (let i = 0; i < queries.length; i += 5) {
        const want = await base.search(queries[i], 10, { feedback });
        expect(pooled[i]).toEqual(want);
        expect(await staged.search(queries[i], 10)).toEqual(want);
        if (JSON.stringify(want) !== JSON.stringify(await base.search(queries[i], 10))) moved++;
        // the call's feedback over the stage's
        expect(await staged.search(queries[i], 10, { feedback: { method: "rm3", fbTerms: 3 } })).toEqual(await base.search(queries[i], 10, { feedback: { method: "rm3", fbTerms: 3 } }));
      }
      expect(moved).toBeGreaterThan(0);
      await staged.close();
    }
  });

  it("a feedback stage over an index that is not BM25 is refused naming it", async () => {
    const tfidf = join(tmp, "tfidf-paragraph");
    await buildIndex({ pages: join(tmp, "pages.jsonl"), kind: "tfidf", unit: "paragraph", out: tfidf }, () => {});
    await expect(openIndexes([tfidf], { stages: [{ name: "rm3" }] })).rejects.toThrow("stage rm3: query feedback needs a BM25 index directory (or a fusion holding one); given tfidf");
    // a fusion holding a BM25 index takes it: the BM25 member expands, the other searches the text
    const fused = await openIndexes([dir, tfidf], { stages: [{ name: "rm3" }] });
    expect(fused).toBeInstanceOf(FeedbackRetriever);
    await fused.close();
  });

  it("a score fusion over one index is its min-max normalised ranking (combmax), in the pool's worker too", async () => {
    const stages = [{ name: "combmax", options: { depth: 20 } }];
    const staged = await openIndexes([dir], { stages });
    const pool = new SearchPool(staged, [dir], { threads: 2, chunk: 8, stages });
    // the worker starts while the calling thread answers: search until it has answered some (a loaded machine)
    let pooled = await pool.search(queries, 10);
    for (let tries = 0; tries < 200 && !(pool.lastShares()[1] > 0); tries++) pooled = await pool.search(queries, 10);
    const shares = pool.lastShares();
    await pool.close();
    expect(shares[1]).toBeGreaterThan(0);
    for (let i = 0; i < queries.length; i += 7) {
      const base = await plain.search(queries[i], 20);
      if (base.length === 0) continue;
      const [max, min] = [base[0].score, base[base.length - 1].score];
      expect(pooled[i]).toEqual(base.slice(0, 10).map((h) => ({ unit: h.unit, score: (h.score - min) / Math.max(max - min, 1e-9) })));
    }
    await staged.close();
  });
});
