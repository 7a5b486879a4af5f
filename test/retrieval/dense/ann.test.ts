// HNSW (hnswlib-node) against exact search: recall@10 on clustered unit vectors, and the same answers
// after a save and load.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HnswIndex } from "../../../src/retrieval/dense/ann.js";
import { clustered } from "./clustered.js";
import { ExactIndex } from "../../../src/retrieval/dense/exact.js";
import type { Hit } from "../../../src/retrieval/types.js";

function recallAt10(approx: Hit[][], exact: Hit[][]): number {
  let found = 0;
  approx.forEach((a, q) => {
    const truth = new Set(exact[q].map((h) => h.unit));
    found += a.filter((h) => truth.has(h.unit)).length;
  });
  return found / (10 * exact.length);
}

describe("HnswIndex", () => {
  const dim = 32;
  const data = clustered(6000, dim, 40, 1);
  const queries = clustered(200, dim, 40, 2);

  it("reaches recall@10 ≥ 0.9 against exact search, and ≥ 0.99 with a larger ef", async () => {
    const exactIx = new ExactIndex(data, dim, { threads: 0 });
    const truth = await exactIx.search(queries, 10);
    const hnsw = HnswIndex.build(data, dim, { M: 16, efConstruction: 100 });
    expect(hnsw.count).toBe(6000);
    hnsw.setEf(64);
    const r64 = recallAt10(hnsw.search(queries, 10), truth);
    hnsw.setEf(400);
    const r400 = recallAt10(hnsw.search(queries, 10), truth);
    console.log(`HNSW recall@10 on 6000 × 32 clustered: ef 64 ${r64}, ef 400 ${r400}`);
    expect(r64).toBeGreaterThanOrEqual(0.9);
    expect(r400).toBeGreaterThanOrEqual(r64);
    expect(r400).toBeGreaterThanOrEqual(0.99);
    // scores are inner products (hnswlib's 1 − distance) up to float rounding
    const [first] = hnsw.search(queries.subarray(0, dim), 1);
    const best = truth[0][0];
    if (first[0].unit === best.unit) expect(Math.abs(first[0].score - best.score)).toBeLessThan(1e-5);
  });

  it("answers the same after save and load, best first", () => {
    const small = clustered(1500, dim, 10, 3);
    const hnsw = HnswIndex.build(small, dim, { M: 8, efConstruction: 50, ef: 50 });
    const file = join(mkdtempSync(join(tmpdir(), "tartan-hnsw-")), "hnsw.bin");
    hnsw.save(file);
    const again = HnswIndex.load(file, dim, 50);
    const q = queries.subarray(0, 20 * dim);
    const a = hnsw.search(q, 10);
    expect(again.search(q, 10)).toEqual(a);
    for (const hits of a) for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hits[i].score);
    // k beyond the graph's size: hnswlib returns what its search reaches (all but a few), each once
    const all = hnsw.search(q.subarray(0, dim), 5000)[0];
    expect(all.length).toBeGreaterThan(1400);
    expect(new Set(all.map((h) => h.unit)).size).toBe(all.length);
    expect(hnsw.search(q.subarray(0, dim), 0)).toEqual([[]]);
  });
});
