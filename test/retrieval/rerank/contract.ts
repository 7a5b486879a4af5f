// The contract every reranker keeps, declared once and run on each registered reranker
// (./contract.test.ts walks RERANKERS, ./cases.ts says how each one is set up), on real data: the SQuAD
// BM25 paragraph index's top 8 paragraphs for real SQuAD questions. Opened through the registry by its spec,
// it gives one finite score per passage in the passages' order (none for no passages), records plain-JSON
// settings naming it, scores the same twice, batches as it scores one by one, gives the same scores on two
// worker threads (RerankPool) as on the calling thread, and as the `rerank` stage over BM25 returns a
// reordering of the first stage's best hits by its scores (ties by unit), the same through the two-thread
// SearchPool (its workers open their own reranker).

import { afterAll, beforeAll, expect, it } from "vitest";
import type { RerankerSpec } from "../../../src/retrieval/rerank/reranker.js";
import { openReranker } from "../../../src/retrieval/rerank/index.js";
import { RerankPool } from "../../../src/retrieval/rerank/pool.js";
import type { Reranker, RerankItem, RerankOutput } from "../../../src/retrieval/rerank/reranker.js";
import { openIndexes } from "../../../src/retrieval/open.js";
import { SearchPool } from "../../../src/retrieval/pool.js";
import type { Hit, Retriever } from "../../../src/retrieval/types.js";

/** One reranker's contract case: its spec, and what stops what the case started. */
export interface RerankerCase {
  spec: RerankerSpec;
  /** Scores computed elsewhere (another thread, another batch) may differ by this much (float graphs); default 0. */
  tolerance?: number;
  close?: () => Promise<void>;
}

/** What the contract runs on: the BM25 index and real questions (built once by ./contract.test.ts). */
export interface ContractData {
  dir: string;
  queries: string[];
}

function same(got: RerankOutput[], want: RerankOutput[], tolerance: number): void {
  expect(got.map((o) => o.scores.length)).toEqual(want.map((o) => o.scores.length));
  got.forEach((o, i) => o.scores.forEach((s, j) => expect(Math.abs(s - want[i].scores[j])).toBeLessThanOrEqual(tolerance)));
}

/** Declares the contract for the reranker called `name`, set up by `setup`, on `data()`. */
export function rerankerContract(name: string, setup: () => Promise<RerankerCase>, data: () => ContractData): void {
  let c: RerankerCase;
  let r: Reranker;
  let bm25: Retriever;
  let items: RerankItem[] = [];
  let first: RerankOutput[] = [];
  const tol = () => c.tolerance ?? 0;

  beforeAll(async () => {
    c = await setup();
    r = await openReranker(c.spec);
    bm25 = await openIndexes([data().dir]);
    items = [];
    for (const q of data().queries) {
      const hits = await bm25.search(q, 8);
      items.push({ query: q, passages: hits.map((h) => ({ title: bm25.units.get(h.unit).wikipedia_title, text: bm25.units.get(h.unit).text })) });
    }
    first = await r.rerank(items);
  }, 300_000);
  afterAll(async () => {
    await r?.close();
    await bm25?.close();
    await c?.close?.();
  });

  it("opens by its spec through the registry, with plain-JSON settings naming it", () => {
    expect(r.name).toBe(name);
    expect(r.settings.reranker).toBe(name);
    expect(JSON.parse(JSON.stringify(r.settings))).toEqual(r.settings);
  });

  it("gives one finite score per passage, in the passages' order, and none for no passages", async () => {
    expect(items.length).toBeGreaterThanOrEqual(4);
    expect(items.every((it) => it.passages.length === 8)).toBe(true);
    expect(first.map((o) => o.scores.length)).toEqual(items.map(() => 8));
    for (const o of first) for (const s of o.scores) expect(Number.isFinite(s)).toBe(true);
    // the scores tell passages apart (not one constant)
    expect(new Set(first.flatMap((o) => o.scores)).size).toBeGreaterThan(1);
    expect((await r.rerank([{ query: items[0].query, passages: [] }]))[0].scores).toEqual([]);
    expect(await r.rerank([])).toEqual([]);
  });

  it("is deterministic, and batches as it scores one by one", async () => {
    same(await r.rerank(items), first, 0);
    const single: RerankOutput[] = [];
    for (const it of items) single.push(...(await r.rerank([it])));
    same(single, first, tol());
  });

  it("gives the same scores on two worker threads (RerankPool)", async () => {
    const pool = await RerankPool.open(c.spec, { threads: 2, chunk: 2 });
    try {
      expect(pool.threads).toBe(2);
      expect(pool.settings).toEqual(r.settings);
      same(await pool.rerank(items), first, tol());
    } finally {
      await pool.close();
    }
  });

  it("as the rerank stage: the first stage's best hits reordered by its scores, ties by unit, the same through the SearchPool", async () => {
    const stages = [{ name: "rerank", options: { reranker: c.spec, depth: 8 } }];
    const staged = await openIndexes([data().dir], { stages });
    const pool = new SearchPool(staged, [data().dir], { threads: 2, chunk: 2, stages });
    try {
      const got = await staged.searchBatch!(data().queries, 5);
      const pooled = await pool.search(data().queries, 5);
      for (let i = 0; i < items.length; i++) {
        const base = await bm25.search(data().queries[i], 8);
        const want: Hit[] = base.map((h, j) => ({ unit: h.unit, score: first[i].scores[j] })).sort((a, b) => b.score - a.score || a.unit - b.unit).slice(0, 5);
        expect(got[i].map((h) => h.unit)).toEqual(want.map((h) => h.unit));
        got[i].forEach((h, j) => expect(Math.abs(h.score - want[j].score)).toBeLessThanOrEqual(tol()));
        expect(pooled[i].map((h) => h.unit)).toEqual(want.map((h) => h.unit));
        expect(await staged.search(data().queries[i], 5)).toEqual(got[i]);
      }
    } finally {
      await pool.close();
      await staged.close();
    }
  });
}
