// `tartan retrieve` over a ClickHouse BM25 index with 2,000 queries at top 100 in TREC format (the
// batch size of the reported failure "unit N was not loaded"): the run equals the embedded index's,
// line for line. The retriever keeps at most ClickHouseUnits.defaultMax units; the failure needed more
// distinct hits over the run than that while one chunk of 1,000 queries fits, so the test sets the
// limit to the first chunk's distinct hits (as 100,000 was for 257,318 passages) on a smaller corpus.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBm25ClickHouse, ClickHouseUnits } from "../../src/backends/clickhouse/bm25.js";
import { retrieve } from "../../src/pipeline/retrieve.js";
import { buildBm25Index } from "../../src/retrieval/bm25/build.js";
import { openBm25 } from "../../src/retrieval/bm25/search.js";
import type { Unit } from "../../src/retrieval/units/unit.js";
import { seededRandom } from "../../src/util/random.js";
import { startTestCluster, type TestCluster } from "./cluster-fixture.js";
import { zipfWords } from "./zipf.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-ch-batch-"));
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster(2);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** Passages of 30-50 words from a Zipfian vocabulary, and queries of 4-10 corpus words (seeded). */
function corpus(passages: number, queries: number): { units: Unit[]; queries: string[] } {
  const rand = seededRandom(25);
  const word = zipfWords(rand, 8000);
  const text = (min: number, max: number) => Array.from({ length: min + Math.floor(rand() * (max - min + 1)) }, word).join(" ");
  const units = Array.from({ length: passages }, (_, i): Unit => ({ wikipedia_id: String(1000 + i), wikipedia_title: `P${i}`, start_paragraph_id: 1, end_paragraph_id: 1, text: text(30, 50) }));
  return { units, queries: Array.from({ length: queries }, () => text(4, 10)) };
}

describe("ClickHouse BM25 in `tartan retrieve`: 2,000 queries at top 100", () => {
  it("the TREC run equals the embedded index's when the run's hits outnumber the unit cache", async () => {
    const { units, queries } = corpus(30_000, 2000);
    const params = { analyzer: "english" as const, k1: 0.9, b: 0.4, title: false, unit: "passage" as const };
    const dir = join(tmp, "embedded");
    await buildBm25Index(units, dir, params);
    const url = cluster.url("batch", "units");
    await buildBm25ClickHouse(units, url, params);
    const input = join(tmp, "queries.jsonl");
    writeFileSync(input, queries.map((q, i) => JSON.stringify({ id: `q${i}`, input: q })).join("\n") + "\n");

    // The distinct units of the first 1,000 queries' hits (the first chunk of `retrieve` on ClickHouse)
    // and of all 2,000: the cache holds the first chunk, not the run.
    const e = await openBm25(dir);
    const distinct = (qs: string[]) => new Set(qs.flatMap((q) => e.searcher.search(q, 100).map((h) => h.unit))).size;
    const firstChunk = distinct(queries.slice(0, 1000));
    const all = distinct(queries);
    await e.close();
    expect([firstChunk, all]).toEqual([28_749, 29_932]);

    const saved = ClickHouseUnits.defaultMax;
    ClickHouseUnits.defaultMax = firstChunk;
    try {
      const want = join(tmp, "embedded.trec");
      const got = join(tmp, "clickhouse.trec");
      const quiet = () => {};
      await retrieve({ indexes: [dir], input, out: want, topK: 100, format: "trec" }, quiet);
      const stats = await retrieve({ indexes: [url], input, out: got, topK: 100, format: "trec" }, quiet);
      expect(stats.records).toBe(2000);
      const lines = readFileSync(got, "utf8").split("\n");
      expect(lines.length).toBe(200_001);
      expect(readFileSync(got, "utf8")).toBe(readFileSync(want, "utf8"));
    } finally {
      ClickHouseUnits.defaultMax = saved;
    }
  }, 900_000);
});
