// The ClickHouse impact plan (bm25-impacts.ts) on 1 and 4 shards (2 shards: bm25-prune.test.ts and the
// retriever contract) against the embedded index: a Zipfian corpus whose common terms have long, flat
// impact lists (tf mostly 1, so queries need several rounds and many (term, unit) lookups), with
// duplicated passages (ties across shards), 300 queries at top 10 and top 100, batched and one at a
// time: the same units, order and float scores.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildBm25ClickHouse, openClickHouseBm25 } from "../../src/backends/clickhouse/bm25.js";
import { buildBm25Index } from "../../src/retrieval/bm25/build.js";
import { openBm25 } from "../../src/retrieval/bm25/search.js";
import type { Unit } from "../../src/retrieval/units/unit.js";
import { seededRandom } from "../../src/util/random.js";
import { startTestCluster } from "./cluster-fixture.js";
import { zipfWords } from "./zipf.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-ch-impacts-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const params = { analyzer: "english" as const, k1: 0.9, b: 0.4, title: false, unit: "passage" as const };

/** 3,000 passages of 20–59 words from a Zipfian vocabulary of 2,000 words; every 50th passage repeats the one before it. */
function corpus(): { units: Unit[]; queries: string[] } {
  const rand = seededRandom(7);
  const word = zipfWords(rand, 2000);
  const texts: string[] = [];
  for (let i = 0; i < 3000; i++) {
    if (i % 50 === 49) texts.push(texts[i - 1]);
    else texts.push(Array.from({ length: 20 + Math.floor(rand() * 40) }, word).join(" "));
  }
  const units = texts.map((text, i) => ({ wikipedia_id: `z${i}`, wikipedia_title: `Z ${i}`, text }) as unknown as Unit);
  const queries = Array.from({ length: 300 }, () => Array.from({ length: 3 + Math.floor(rand() * 6) }, word).join(" "));
  return { units, queries };
}

describe("ClickHouse BM25 impact plan on 1 and 4 shards equals the embedded index", () => {
  const { units, queries } = corpus();

  it.each([1, 4])("%i shard(s): every query, k 10 and 100, batched and single", async (shards) => {
    const dir = join(tmp, `embedded-${shards}`);
    await buildBm25Index(units, dir, { ...params, source: "zipf" });
    const e = await openBm25(dir);
    const cluster = await startTestCluster(shards);
    try {
      await buildBm25ClickHouse(units, cluster.url("impacts", "zipf"), { ...params, source: "zipf" });
      const r = await openClickHouseBm25(cluster.url("impacts", "zipf"));
      try {
        for (const k of [10, 100]) {
          const want = queries.map((q) => e.searcher.search(q, k));
          const got = await r.searchBatch(queries, k);
          expect(queries.filter((_, i) => JSON.stringify(got[i]) !== JSON.stringify(want[i]))).toEqual([]);
          for (let i = 0; i < 20; i++) expect(await r.search(queries[i], k)).toEqual(want[i]);
        }
        // the impact plan answered the searches itself (none left to the exhaustive plan), in rounds
        // with (term, unit) lookups: the paths compared above are the plan's own
        // (269 postings read by rank a search on 1 shard, 333 on 4, of 3,000 passages)
        expect(r.impactStats).toEqual(
          shards === 1
            ? { queries: 640, fallback: 0, statements: 114, prefixPostings: 172_136, lookups: 73_464 }
            : { queries: 640, fallback: 0, statements: 381, prefixPostings: 213_112, lookups: 115_125 },
        );
      } finally {
        await r.close();
      }
    } finally {
      await e.close();
      await cluster.stop();
    }
  }, 600_000);
});
