// Locations on a 2-shard ClickHouse cluster (tartan's cluster scripts, one cluster for the whole file):
// a URL that omits cluster=, names fewer shards than the tables span, names a shard twice, or cannot tell
// two shards on one host apart is refused, never answered from part of the data; a page lookup through
// the right URL finds every page the store holds, on either shard; `serve` over the cluster answers 503
// naming a shard that is down (no stack, no 500; a page lookup too, never "no page") and the same hits
// again once it is back.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestClickHouse } from "../../src/backends/clickhouse/knowledge.js";
import { buildIndexAt, openKnowledgeSource, openRetriever } from "../../src/backends/open.js";
import { fromSquad } from "../../src/knowledge/build.js";
import { restartShard, stopShard } from "../../src/cluster/process.js";
import { startServer, type RunningServer } from "../../src/server/listen.js";
import type { KiltPage } from "../../src/records/types.js";
import { startTestCluster, type TestCluster } from "./cluster-fixture.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-ch-locations-"));
const pagesFile = join(tmp, "pages.jsonl");
let cluster: TestCluster;
let pages: KiltPage[];
let main: string;
let other: string;

beforeAll(async () => {
  await fromSquad(V11, join(tmp, "all.jsonl"), () => {});
  // 12 articles: pages on both shards
  writeFileSync(pagesFile, readFileSync(join(tmp, "all.jsonl"), "utf8").split("\n").slice(0, 12).join("\n") + "\n");
  pages = readFileSync(pagesFile, "utf8").trim().split("\n").map((l) => JSON.parse(l) as KiltPage);
  cluster = await startTestCluster(2);
  await ingestClickHouse(pagesFile, cluster.url("loc"));
  await buildIndexAt({ pages: pagesFile, kind: "bm25", unit: "paragraph", backend: cluster.url("loc", "bm25") }, () => {});
  main = `127.0.0.1:${cluster.cluster.shards[0].httpPort}`;
  other = `127.0.0.1:${cluster.cluster.shards[1].httpPort}`;
}, 600_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe("a location that does not cover the tables", () => {
  it("without cluster= the store and the index are refused, not read from one shard", async () => {
    await expect(openKnowledgeSource(`clickhouse://${main}/loc`)).rejects.toThrow(
      `clickhouse://${main}/loc (table loc.ks_meta_local): ingested on 2 shards, and this URL names no cluster= (it would read one server's share alone): add ?cluster=NAME&shards=host:port,… as \`tartan cluster status\` prints`,
    );
    await expect(openRetriever(`clickhouse://${main}/loc/bm25`)).rejects.toThrow(`clickhouse://${main}/loc/bm25 (table loc.bm25_meta_local): built on 2 shards, and this URL names no cluster=`);
    // nor is an ingest resumed (or taken as complete) through it
    await expect(ingestClickHouse(pagesFile, `clickhouse://${main}/loc`)).rejects.toThrow(`clickhouse://${main}/loc (table loc.ks_meta_local): ingested on 2 shards, and this URL names no cluster=`);
  });

  it("shards= naming one of the two shards, or one shard twice, is refused", async () => {
    const one = `clickhouse://${main}/loc?cluster=tartan&shards=${main}`;
    await expect(openKnowledgeSource(one)).rejects.toThrow(`${one}: shards= names 1 server, cluster tartan has 2 shards (name every shard's HTTP endpoint once, as \`tartan cluster status\` prints)`);
    const twice = `clickhouse://${main}/loc/bm25?cluster=tartan&shards=${main},${main}`;
    await expect(openRetriever(twice)).rejects.toThrow(`${twice}: shards= names ${main} twice`);
  });

  it("cluster= without shards=, both shards on one host, is refused (the shards cannot be told apart)", async () => {
    const url = `clickhouse://${main}/loc/bm25?cluster=tartan`;
    await expect(openRetriever(url)).rejects.toThrow(`${url}: cluster tartan has several shards on 127.0.0.1; name each shard's HTTP endpoint with shards=host:port,…`);
  });

  it("through the right URL every page is found, by id and by title, on either shard", async () => {
    const ks = await openKnowledgeSource(cluster.url("loc"));
    try {
      expect(ks.count()).toBe(12);
      for (const p of pages) {
        expect((await ks.getPageById(p.wikipedia_id))?.wikipedia_id).toBe(p.wikipedia_id);
        expect((await ks.getPageByTitle(p.wikipedia_title))?.wikipedia_id).toBe(p.wikipedia_id);
      }
    } finally {
      await ks.close();
    }
    // the pages are on both shards (else this proves nothing)
    const counts = await Promise.all(
      cluster.cluster.shards.map(async (s) => Number((await (await fetch(`http://127.0.0.1:${s.httpPort}/`, { method: "POST", body: "SELECT count() FROM loc.ks_pages_local" })).text()).trim())),
    );
    expect(counts.every((n) => n > 0)).toBe(true);
    expect(counts[0] + counts[1]).toBe(12);
  });
});

describe("serve with a shard down", () => {
  let server: RunningServer;
  const logged: string[] = [];
  beforeAll(async () => {
    server = await startServer({ ks: cluster.url("loc"), indexes: [cluster.url("loc", "bm25")], port: 0, data: tmp, log: (l) => logged.push(l) });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it("answers 503 naming the shard, and the same hits once it is back", async () => {
    const q = `${server.url}/api/search?q=${encodeURIComponent("Super Bowl 50 AFC champion")}&k=5`;
    const before = await fetch(q);
    expect(before.status).toBe(200);
    const hits = ((await before.json()) as { hits: unknown[] }).hits;
    expect(hits.length).toBe(5);
    await stopShard(cluster.cluster, 1);
    const down = await fetch(q);
    expect(down.status).toBe(503);
    const body = (await down.json()) as { status: number; error: string };
    expect(body.status).toBe(503);
    expect(body.error).toContain(`shard 2 of 2 (${other}) does not answer`);
    expect(body.error).not.toMatch(/\n\s+at /);
    expect(logged.join("\n")).not.toMatch(/\n\s+at /);
    // a page lookup with a shard down is a 503 too, never "no page"
    const pageUrl = `${server.url}/api/pages?title=${encodeURIComponent(pages[11].wikipedia_title)}`;
    const page = await fetch(pageUrl);
    expect(page.status).toBe(503);
    expect(((await page.json()) as { error: string }).error).toContain(`shard 2 of 2 (${other}) does not answer`);
    await restartShard(cluster.cluster, 1, { timeoutMs: 90_000 });
    const back = await fetch(q);
    expect(back.status).toBe(200);
    expect(((await back.json()) as { hits: unknown[] }).hits).toEqual(hits);
    expect(((await (await fetch(pageUrl)).json()) as { wikipedia_id: string }).wikipedia_id).toBe(pages[11].wikipedia_id);
  }, 180_000);
});
