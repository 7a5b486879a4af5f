// The fusion families (src/retrieval/fusion.ts) as ranx defines them, on two small runs whose fused
// scores are worked out by hand below, then on real data: SQuAD's BM25 and TF-IDF paragraph indexes fused
// by each method, every fused score equal to the formula applied to the members' own rankings (on one
// thread and through the two-thread pool), and `retrieve --fusion` writing the same as the library.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FUSION_METHODS, fuseLists, fusionStage, normaliseScores, parseWeights, type FusionSpec } from "../../src/retrieval/fusion.js";
import { squadBm25Paragraphs } from "../fixtures/squad-bm25.js";
import { buildTfidfIndex } from "../../src/retrieval/tfidf/build.js";
import { unitsFromPagesFile } from "../../src/retrieval/sources.js";
import { openIndex, openIndexes } from "../../src/retrieval/open.js";
import { SearchPool } from "../../src/retrieval/pool.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import { retrieve } from "../../src/pipeline/retrieve.js";
import type { Hit, Retriever } from "../../src/retrieval/types.js";

// Run A: d1 3, d2 2, d3 1. Run B: d2 9, d4 6, d1 3.
const A = { keys: ["d1", "d2", "d3"], scores: [3, 2, 1] };
const B = { keys: ["d2", "d4", "d1"], scores: [9, 6, 3] };
const fused = (spec: FusionSpec) => Object.fromEntries(fuseLists([A, B], spec));

describe("normalisations (ranx's)", () => {
  it("min-max, max, sum, z-score, rank and none of A = 3, 2, 1", () => {
    expect(normaliseScores(A.scores, "min-max")).toEqual([1, 0.5, 0]); // (s − 1) / (3 − 1)
    expect(normaliseScores(A.scores, "max")).toEqual([1, 2 / 3, 1 / 3]); // s / 3
    expect(normaliseScores(A.scores, "sum")).toEqual([2 / 3, 1 / 3, 0]); // (s − 1) / (6 − 1·3)
    // mean 2, population standard deviation √(2/3)
    expect(normaliseScores(A.scores, "z-score")).toEqual([1 / Math.sqrt(2 / 3), 0, -1 / Math.sqrt(2 / 3)]);
    expect(normaliseScores(A.scores, "rank")).toEqual([1, 1 - 1 / 3, 1 - 2 / 3]); // 1 − i/n
    expect(normaliseScores(A.scores, "none")).toEqual([3, 2, 1]);
    // A flat list: the spread becomes 1e-9, as ranx's
    expect(normaliseScores([5, 5], "min-max")).toEqual([0, 0]);
    expect(normaliseScores([], "z-score")).toEqual([]);
  });
});

describe("fusion formulas on A and B (min-max: A → d1 1, d2 .5, d3 0; B → d2 1, d4 .5, d1 0)", () => {
  it("CombSUM, CombMNZ, CombMAX, CombANZ", () => {
    expect(fused({ method: "combsum" })).toEqual({ d1: 1, d2: 1.5, d3: 0, d4: 0.5 });
    expect(fused({ method: "combmnz" })).toEqual({ d1: 2, d2: 3, d3: 0, d4: 0.5 }); // sum × members that hold it
    expect(fused({ method: "combmax" })).toEqual({ d1: 1, d2: 1, d3: 0, d4: 0.5 });
    expect(fused({ method: "combanz" })).toEqual({ d1: 0.5, d2: 0.75, d3: 0, d4: 0.5 }); // sum ÷ members that hold it
  });

  it("weighted sum (a missing score 0) and its default weights (CombSUM)", () => {
    expect(fused({ method: "wsum", weights: [0.25, 0.75] })).toEqual({ d1: 0.25, d2: 0.25 * 0.5 + 0.75, d3: 0, d4: 0.75 * 0.5 });
    expect(fused({ method: "wsum" })).toEqual(fused({ method: "combsum" }));
  });

  it("other normalisations: max, sum, z-score (CombMAX over the members present only), rank, none", () => {
    expect(fused({ method: "combsum", norm: "max" })).toEqual({ d1: 1 + 1 / 3, d2: 2 / 3 + 1, d3: 1 / 3, d4: 2 / 3 });
    // B by sum: (s − 3) / (18 − 9) → d2 2/3, d4 1/3, d1 0
    expect(fused({ method: "combsum", norm: "sum" })).toEqual({ d1: 2 / 3, d2: 1 / 3 + 2 / 3, d3: 0, d4: 1 / 3 });
    // A: mean 2, σ √(2/3) → ±1/√(2/3), 0; B: mean 6, σ √6 → ±3/√6, 0
    const [za, zb] = [1 / Math.sqrt(2 / 3), 3 / Math.sqrt(6)];
    expect(fused({ method: "combmax", norm: "z-score" })).toEqual({ d1: za, d2: zb, d3: -za, d4: 0 });
    expect(fused({ method: "combsum", norm: "rank" })).toEqual({ d1: 1 + (1 - 2 / 3), d2: 1 - 1 / 3 + 1, d3: 1 - 2 / 3, d4: 1 - 1 / 3 });
    expect(fused({ method: "combsum", norm: "none" })).toEqual({ d1: 6, d2: 11, d3: 1, d4: 6 });
  });

  it("RRF Σ w/(k0 + rank), weights and k0; no normalisation changes it", () => {
    expect(fused({ method: "rrf" })).toEqual({ d1: 1 / 61 + 1 / 63, d2: 1 / 62 + 1 / 61, d3: 1 / 63, d4: 1 / 62 });
    expect(fused({ method: "rrf", k0: 1, weights: [2, 1] })).toEqual({ d1: 2 / 2 + 1 / 4, d2: 2 / 3 + 1 / 2, d3: 2 / 4, d4: 1 / 3 });
    expect(fused({ method: "rrf", norm: "z-score" })).toEqual(fused({ method: "rrf" }));
  });

  it("Pyserini's alpha: α·A + B on raw scores, a missing score that run's lowest (A 1, B 3)", () => {
    expect(fused({ method: "wsum", alpha: 0.5 })).toEqual({ d1: 0.5 * 3 + 3, d2: 0.5 * 2 + 9, d3: 0.5 * 1 + 3, d4: 0.5 * 1 + 6 });
    // with min-max the lowest is 0: the same as ranx's weighted sum with weights [α, 1]
    expect(fused({ method: "wsum", alpha: 0.5, norm: "min-max" })).toEqual(fused({ method: "wsum", weights: [0.5, 1] }));
  });

  it("refuses what does not fit, naming it", () => {
    expect(() => fused({ method: "wsum", weights: [1] })).toThrow("fusion: 1 weights for 2 members: give one per index, in order");
    expect(() => fused({ method: "combmnz", weights: [1, 2] })).toThrow("fusion: weights go with rrf or wsum");
    expect(() => fuseLists([A, B, A], { method: "wsum", alpha: 0.3 })).toThrow("fusion: alpha weighs the first of two members, given 3");
    expect(() => fused({ method: "combsum", alpha: 0.3 })).toThrow("fusion: alpha is Pyserini's weighted sum of two members (--fusion wsum), not combsum");
    expect(() => fusionStage({ fusion: "borda" })).toThrow('--fusion: unknown fusion "borda" (known: rrf, wsum, combsum, combmnz, combmax, combanz');
    expect(() => fusionStage({ fusion: "wsum", norm: "l2" })).toThrow('--norm: unknown normalisation "l2" (known: min-max, max, sum, z-score, rank, none');
    expect(() => parseWeights("0.3,x")).toThrow('--weights: weight 2 "x" is not a number');
    expect(fusionStage({ fusion: "mnz", norm: "zmuv" })).toEqual({ name: "combmnz", options: { norm: "z-score" } });
  });
});

// Real data: SQuAD's BM25 and TF-IDF paragraph indexes (the same 2,067 paragraphs, in the same order).
const tmp = mkdtempSync(join(tmpdir(), "tartan-fusion-"));
let bm25 = "";
let tfidf = "";
let queries: string[] = [];
let members: Retriever[] = [];

beforeAll(async () => {
  ({ dir: bm25, queries } = await squadBm25Paragraphs(tmp, 300));
  tfidf = join(tmp, "tfidf-paragraph");
  const pages = join(tmp, "pages.jsonl");
  await buildTfidfIndex(unitsFromPagesFile(pages, { unit: "paragraph" }), tfidf, { unit: "paragraph", source: pages });
  members = [await openIndex(bm25), await openIndex(tfidf)];
}, 300_000);

afterAll(async () => {
  for (const m of members) await m.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The fusion of the members' own top-`depth` rankings by `spec`, best `k` (ties by lower unit), computed from the lists. */
async function expected(query: string, spec: FusionSpec, depth: number, k: number): Promise<Hit[]> {
  const lists = [];
  for (const m of members) {
    const hits = await m.search(query, depth);
    lists.push({ keys: hits.map((h) => h.unit), scores: hits.map((h) => h.score) });
  }
  return [...fuseLists(lists, spec)]
    .map(([unit, score]) => ({ unit, score }))
    .sort((a, b) => b.score - a.score || a.unit - b.unit)
    .slice(0, k);
}

describe("fusion stages over SQuAD BM25 + TF-IDF paragraphs", () => {
  const specs: [string, FusionSpec][] = [
    ["rrf", { method: "rrf", weights: [2, 1] }],
    ["wsum", { method: "wsum", weights: [0.7, 0.3], norm: "z-score" }],
    ["wsum", { method: "wsum", alpha: 0.1 }],
    ["combsum", { method: "combsum", norm: "max" }],
    ["combmnz", { method: "combmnz" }],
    ["combmax", { method: "combmax", norm: "sum" }],
    ["combanz", { method: "combanz", norm: "rank" }],
  ];

  it.each(specs)("%s %j: every fused score is the formula's over the members' rankings, on one thread and in the pool", async (name, spec) => {
    const { method: _m, ...options } = spec;
    const fusion = { name, options: { ...options, depth: 30 } };
    const r = await openIndexes([bm25, tfidf], { fusion });
    expect(r).toBeInstanceOf(HybridRetriever);
    expect((r as HybridRetriever).fusion.method).toBe(spec.method);
    const pool = new SearchPool(r, [bm25, tfidf], { threads: 2, chunk: 8, fusion });
    // the worker opens the indexes with the same fusion while the calling thread answers: search until it has answered some
    let pooled = await pool.search(queries, 10);
    for (let tries = 0; tries < 200 && !(pool.lastShares()[1] > 0); tries++) pooled = await pool.search(queries, 10);
    const shares = pool.lastShares();
    await pool.close();
    expect(shares[1]).toBeGreaterThan(0);
    let changed = 0;
    for (let i = 0; i < queries.length; i++) {
      const want = await expected(queries[i], spec, 30, 10);
      expect(await r.search(queries[i], 10)).toEqual(want);
      expect(pooled[i]).toEqual(want);
      const first = await members[0].search(queries[i], 10);
      if (want.map((h) => h.unit).join() !== first.map((h) => h.unit).join()) changed++;
    }
    // The fusion is not BM25's ranking under another name.
    expect(changed).toBeGreaterThan(0);
    await r.close();
  });

  it("the manifest names the fusion; rrf without weights describes itself as before", async () => {
    const r = await openIndexes([bm25, tfidf], { fusion: { name: "combmnz", options: { norm: "z-score" } } });
    expect(r.manifest.params).toMatchObject({ fusion: "combmnz", norm: "z-score", weights: [1, 1], depth: null });
    await r.close();
    const plain = await openIndexes([bm25, tfidf]);
    expect(Object.keys(plain.manifest.params)).toEqual(["k0", "depth", "members"]);
    await plain.close();
  });

  it("retrieve --fusion wsum --weights writes the library's fused hits", async () => {
    const input = join(tmp, "questions.jsonl");
    const out = join(tmp, "fused.jsonl");
    const fusion = fusionStage({ fusion: "wsum", weights: [0.6, 0.4], norm: "min-max", depth: 50 });
    await retrieve({ indexes: [bm25, tfidf], input, out, topK: 5, threads: 2, fusion, batch: 64 }, () => {});
    const lines = readFileSync(out, "utf8").trim().split("\n").slice(0, 300).map((l) => JSON.parse(l) as { input: string; output: [{ provenance: { score: number }[] }] });
    for (let i = 0; i < lines.length; i++) {
      const want = await expected(queries[i], { method: "wsum", weights: [0.6, 0.4], norm: "min-max" }, 50, 5);
      expect(lines[i].input).toBe(queries[i]);
      expect(lines[i].output[0].provenance.map((p) => p.score)).toEqual(want.map((h) => h.score));
    }
  });

  it("lists the fusion methods", () => {
    expect([...FUSION_METHODS]).toEqual(["rrf", "wsum", "combsum", "combmnz", "combmax", "combanz"]);
  });
});
