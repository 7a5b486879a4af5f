// Failures of a 2-shard ClickHouse cluster (tartan's cluster scripts; servers killed, stopped and
// restarted by their pids) under the SQuAD knowledge source and its BM25 index: a shard missing, a shard
// and the URL's own server killed in the middle of a query, a frozen shard. Each gives an error naming
// the URL, the table and the shard that does not answer, in seconds, never a hang and never a partial
// result; with the shard back, the answers are the ones from before.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestClickHouse } from "../../src/backends/clickhouse/knowledge.js";
import { openKnowledgeSource, openRetriever } from "../../src/backends/open.js";
import { buildIndexAt as buildIndex } from "../../src/backends/open.js";
import { convertSquad, fromSquad } from "../../src/knowledge/build.js";
import { restartShard, stopShard } from "../../src/cluster/process.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import type { Hit, Retriever } from "../../src/retrieval/types.js";
import { startTestCluster, type TestCluster } from "./cluster-fixture.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-ch-failures-"));
const pagesFile = join(tmp, "pages.jsonl");
const questionsFile = join(tmp, "questions.jsonl");
let cluster: TestCluster;
let queries: string[];
let bm25: Retriever;
let before: Hit[][];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** "clickhouse://127.0.0.1:P/fail (table fail.T): shard i of 2 (127.0.0.1:HTTP) does not answer; …" */
function failure(table: string, shard: number, rest: string, tablePattern?: string): RegExp {
  const main = cluster.cluster.shards[0];
  const s = cluster.cluster.shards[shard];
  const esc = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  if (tablePattern === undefined) return new RegExp(`^${esc(`clickhouse://127.0.0.1:${main.httpPort}/fail (table fail.${table}): shard ${shard + 1} of 2 (127.0.0.1:${s.httpPort}) does not answer; `)}${rest}`);
  // (a killed server: the other shard may be named too, when its /ping is slow under load)
  const other = "(shard \\d of 2 \\(127\\.0\\.0\\.1:\\d+\\) does not answer, )?";
  const after = "(, shard \\d of 2 \\(127\\.0\\.0\\.1:\\d+\\) does not answer)?";
  return new RegExp(`^${esc(`clickhouse://127.0.0.1:${main.httpPort}/fail (table `)}${tablePattern}\\): ${other}${esc(`shard ${shard + 1} of 2 (127.0.0.1:${s.httpPort}) does not answer`)}${after}; ${rest}`);
}

/**
 * A batch's statements under the impact plan: each shard's local tables, and the document
 * frequencies of its next slice of queries (through the Distributed table): any may be in flight.
 */
const BATCH_TABLES = "fail\\.bm25_(impacts_local|postings_local|terms)";
/** A server killed mid-query: the statement in flight, or the next one, fails. */
const KILLED = "(the server closed the connection \\(stopped mid-query\\?\\)|connection refused \\(is the server running\\?\\))$";

/** Waits until a BM25 statement runs on `shard` (seen in its system.processes), then kills it by pid. */
async function killDuringQuery(shard: number): Promise<void> {
  const s = cluster.cluster.shards[shard];
  for (let i = 0; i < 20_000; i++) {
    const res = await fetch(`http://127.0.0.1:${s.httpPort}/`, {
      method: "POST",
      body: "SELECT count() FROM system.processes WHERE query LIKE '%fail.bm25\\_%\\_local%' AND query NOT LIKE '%system.processes%'",
    });
    if (Number((await res.text()).trim()) > 0) {
      process.kill(s.pid, "SIGKILL");
      return;
    }
    await sleep(2);
  }
  throw new Error("no BM25 statement seen on the shard");
}

beforeAll(async () => {
  await fromSquad(V11, pagesFile, () => {});
  await convertSquad(V11, { out: questionsFile }, () => {});
  queries = (await readJsonlAll<KiltRecord>(questionsFile)).map((r) => r.input!);
  cluster = await startTestCluster(2);
  await ingestClickHouse(pagesFile, cluster.url("fail"));
  await buildIndex({ pages: pagesFile, kind: "bm25", unit: "paragraph", backend: cluster.url("fail", "bm25") }, () => {});
  bm25 = await openRetriever(cluster.url("fail", "bm25"));
  before = await bm25.searchBatch!(queries.slice(0, 200), 10);
}, 600_000);

afterAll(async () => {
  await bm25?.close();
  await cluster?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe("ClickHouse cluster failures: clear errors naming the shard, no hang, no partial result", () => {
  it("a shard missing: searches, lookups and listings fail at once naming it; back, the same answers", async () => {
    await stopShard(cluster.cluster, 1);
    const t0 = performance.now();
    await expect(bm25.searchBatch!(queries.slice(0, 200), 10)).rejects.toThrow(failure("bm25_impacts_local", 1, "connection refused \\(is the server running\\?\\)$"));
    const ks = await openKnowledgeSource(cluster.url("fail"));
    await expect(ks.getPageByTitle("super bowl 50")).rejects.toThrow(failure("ks_pages", 1, "all connection tries failed"));
    await expect(
      (async () => {
        for await (const _ of ks.pages());
      })(),
    ).rejects.toThrow(failure("ks_pages", 1, "all connection tries failed"));
    expect(performance.now() - t0).toBeLessThan(15_000);
    await restartShard(cluster.cluster, 1);
    expect((await ks.getPageByTitle("super bowl 50"))?.wikipedia_title).toBe("Super Bowl 50");
    await ks.close();
    expect(await bm25.searchBatch!(queries.slice(0, 200), 10)).toEqual(before);
  }, 120_000);

  it("a shard killed in the middle of a query: the batch fails naming it", async () => {
    const pending = bm25.searchBatch!(queries, 100);
    pending.catch(() => undefined);
    await killDuringQuery(1);
    const t0 = performance.now();
    await expect(pending).rejects.toThrow(failure("", 1, "", BATCH_TABLES));
    expect(performance.now() - t0).toBeLessThan(15_000);
    await restartShard(cluster.cluster, 1);
    expect(await bm25.searchBatch!(queries.slice(0, 200), 10)).toEqual(before);
  }, 120_000);

  it("the URL's own server killed in the middle of a query: the connection's end is reported, naming it", async () => {
    const pending = bm25.searchBatch!(queries, 100);
    pending.catch(() => undefined);
    await killDuringQuery(0);
    await expect(pending).rejects.toThrow(failure("", 0, KILLED, BATCH_TABLES));
    await restartShard(cluster.cluster, 0);
    expect(await bm25.searchBatch!(queries.slice(0, 200), 10)).toEqual(before);
  }, 120_000);

  it("a frozen shard (SIGSTOP): the URL's timeout ends the first request (a fresh retriever asks for document frequencies), naming the shard", async () => {
    const url = cluster.url("fail", "bm25").replace("timeout=20", "timeout=3");
    const r = await openRetriever(url);
    const pid = cluster.cluster.shards[1].pid;
    process.kill(pid, "SIGSTOP");
    try {
      const t0 = performance.now();
      await expect(r.searchBatch!(queries.slice(0, 200), 10)).rejects.toThrow(/^clickhouse:\/\/.*\(table fail\.bm25_terms\): shard 2 of 2 \(127\.0\.0\.1:\d+\) does not answer; no answer in time/);
      expect(performance.now() - t0).toBeLessThan(10_000);
    } finally {
      process.kill(pid, "SIGCONT");
      await r.close();
    }
    expect(await bm25.searchBatch!(queries.slice(0, 200), 10)).toEqual(before);
  }, 120_000);
});
