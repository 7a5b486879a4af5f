// The ClickHouse BM25 retriever's exact pruning against the embedded index, on a 2-shard cluster: the
// exhaustive plan (plan "scan": a first step over each query's rarest terms gives a score threshold;
// then only the units holding an essential term are scored) and the impact plan (the default: the
// threshold algorithm over impact-ordered postings, bm25-impacts.ts), each: the same units, order and float scores when the threshold is reached by
// ties (identical units on both shards), and on the SQuAD paragraphs with the smallest first step
// (the rarest term alone), where 284 of 2,000 searches are pruned.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBm25ClickHouse, openClickHouseBm25, type ClickHouseBm25Retriever } from "../../src/backends/clickhouse/bm25.js";
import { convertSquad, fromSquad } from "../../src/knowledge/build.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { buildBm25Index } from "../../src/retrieval/bm25/build.js";
import { openBm25 } from "../../src/retrieval/bm25/search.js";
import { unitsFromPagesFile } from "../../src/retrieval/sources.js";
import type { Unit } from "../../src/retrieval/units/unit.js";
import { startTestCluster, type TestCluster } from "./cluster-fixture.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-ch-prune-"));
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster(2);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const params = { analyzer: "english" as const, k1: 0.9, b: 0.4, title: false, unit: "passage" as const };

describe("ClickHouse BM25 pruning: exact, ties included", () => {
  it("a threshold reached by 20 tied units on both shards: the 10 lowest units, as the embedded index", async () => {
    // 40 units share "filler"; units 10..29 are the same text with the rare term "zephyr" (20 ties);
    // the first step (the rarest term only) finds theta = their score, "filler" alone scores far below.
    const units: Unit[] = [];
    for (let i = 0; i < 40; i++) {
      const text = i >= 10 && i < 30 ? "zephyr filler meadow" : `filler meadow ${i % 3 === 0 ? "filler" : "brook"}`;
      units.push({ wikipedia_id: String(i), wikipedia_title: `T${i}`, text });
    }
    const dir = join(tmp, "ties-embedded");
    await buildBm25Index(units, dir, params);
    const e = await openBm25(dir);
    await buildBm25ClickHouse(units, cluster.url("prune", "ties"), params);
    const r: ClickHouseBm25Retriever = await openClickHouseBm25(cluster.url("prune", "ties"), { probePostings: 0, plan: "scan" });
    const ri = await openClickHouseBm25(cluster.url("prune", "ties"));
    try {
      for (const k of [5, 10, 25]) {
        const got = await r.search("zephyr filler", k);
        expect(got).toEqual(e.searcher.search("zephyr filler", k));
        expect(await ri.search("zephyr filler", k)).toEqual(got);
        expect(got.slice(0, 10).map((h) => h.unit)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19].slice(0, Math.min(k, 10)));
      }
      // k 5 and 10 were pruned ("filler" left out of the candidates); at k 25 the 20 ties do not fill
      // the top k, so the threshold is 0 and every unit of both terms is scored.
      expect(r.pruning).toEqual({ queries: 3, probeOnly: 0, pruned: 2 });
      // the impact plan answered all three itself (none left to the exhaustive plan)
      expect(ri.pruning.queries).toBe(0);
      expect([ri.impactStats!.queries, ri.impactStats!.fallback]).toEqual([3, 0]);
    } finally {
      await r.close();
      await ri.close();
      await e.close();
    }
  }, 120_000);

  it("SQuAD paragraphs, 1,000 questions, the rarest term as first step: identical at k 10 and 100", async () => {
    const pages = join(tmp, "pages.jsonl");
    const questions = join(tmp, "questions.jsonl");
    await fromSquad(V11, pages, () => {});
    await convertSquad(V11, { out: questions }, () => {});
    const records = await readJsonlAll<KiltRecord>(questions);
    // every 10th question: all 48 articles
    const qs = records.filter((_, i) => i % 10 === 0).slice(0, 1000).map((rec) => rec.input!);
    const sp = { unit: "paragraph" as const, source: pages };
    const dir = join(tmp, "squad-embedded");
    await buildBm25Index(unitsFromPagesFile(pages, { unit: "paragraph" }), dir, sp);
    const e = await openBm25(dir);
    await buildBm25ClickHouse(unitsFromPagesFile(pages, { unit: "paragraph" }), cluster.url("prune", "squad"), sp);
    const r = await openClickHouseBm25(cluster.url("prune", "squad"), { probePostings: 0, plan: "scan" });
    const ri = await openClickHouseBm25(cluster.url("prune", "squad"));
    try {
      for (const k of [10, 100]) {
        const got = await r.searchBatch(qs, k);
        const want = qs.map((q) => e.searcher.search(q, k));
        const differ = qs.filter((_, i) => JSON.stringify(got[i]) !== JSON.stringify(want[i]));
        expect(differ).toEqual([]);
        const gotImpacts = await ri.searchBatch(qs, k);
        expect(qs.filter((_, i) => JSON.stringify(gotImpacts[i]) !== JSON.stringify(want[i]))).toEqual([]);
      }
      // the impact plan answered all 2,000 searches itself, reading 84 postings a search by rank and
      // looking up 55 (term, unit) pairs (all postings of their terms: 2,067 paragraphs, both shards)
      expect(ri.impactStats).toEqual({ queries: 2000, fallback: 0, statements: 12, prefixPostings: 167_724, lookups: 109_075 });
      expect(ri.pruning.queries).toBe(0);
      // 284 of the 2,000 searches left terms out of the candidates (the rest: a threshold of 0, fewer
      // than k paragraphs with the rarest term, or no term light enough), so both paths were compared
      expect(r.pruning.queries).toBe(2000);
      expect(r.pruning.pruned).toBe(284);
    } finally {
      await r.close();
      await ri.close();
      await e.close();
    }
  }, 600_000);
});
