// A ClickHouse BM25 build interrupted and run again, on the SQuAD paragraphs and a 2-shard cluster
// (tartan's cluster scripts): stopped after a chunk with a shard holding part of the next one, and
// `tartan index build --backend` killed with SIGKILL while it writes postings. The re-run goes on (or
// starts that chunk again) and its tables are, shard by shard, the ones an uninterrupted build writes:
// the same postings, units and document frequencies, the same statistics, the same rankings.

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBm25ClickHouse, openClickHouseBm25 } from "../../src/backends/clickhouse/bm25.js";
import { ClickHouseDatabase } from "../../src/backends/clickhouse/client.js";
import { readMeta } from "../../src/backends/clickhouse/schema.js";
import { openRetriever } from "../../src/backends/open.js";
import { buildIndex } from "../../src/retrieval/build.js";
import { convertSquad, fromSquad } from "../../src/knowledge/build.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { unitsFromPagesFile } from "../../src/retrieval/sources.js";
import { startTestCluster, type TestCluster } from "./cluster-fixture.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-ch-bm25-resume-"));
const pagesFile = join(tmp, "pages.jsonl");
const questionsFile = join(tmp, "questions.jsonl");
const params = { unit: "paragraph" as const, source: pagesFile };
let cluster: TestCluster;
let queries: string[];

/** Per shard and table: rows and the sum of their hashes (the same multiset of rows gives the same pair). */
async function digest(name: string): Promise<string[]> {
  const db = await ClickHouseDatabase.connect(cluster.url("resume", name));
  const out: string[] = [];
  try {
    for (const s of db.shards) {
      out.push(await s.text(`SELECT 'postings', count(), sum(cityHash64(term, unit, tf, norm)) FROM resume.${name}_postings_local`));
      out.push(await s.text(`SELECT 'units', count(), sum(cityHash64(unit, data)) FROM resume.${name}_units_local`));
      out.push(await s.text(`SELECT 'terms', count(), sum(cityHash64(term, df)) FROM resume.${name}_terms_local`));
    }
  } finally {
    await db.close();
  }
  return out;
}

async function stats(name: string): Promise<Record<string, string>> {
  const db = await ClickHouseDatabase.connect(cluster.url("resume", name));
  try {
    const m = (await readMeta(db, name))!;
    return { complete: m.complete, units: m.units, docCount: m.docCount, sumTotalTermFreq: m.sumTotalTermFreq, terms: m.terms, postings: m.postings };
  } finally {
    await db.close();
  }
}

async function rankings(name: string) {
  const r = await openRetriever(cluster.url("resume", name));
  try {
    return await r.searchBatch!(queries, 20);
  } finally {
    await r.close();
  }
}

let whole: { digest: string[]; stats: Record<string, string>; rankings: Awaited<ReturnType<typeof rankings>> };

beforeAll(async () => {
  await fromSquad(V11, pagesFile, () => {});
  await convertSquad(V11, { out: questionsFile }, () => {});
  queries = (await readJsonlAll<KiltRecord>(questionsFile)).filter((_, i) => i % 50 === 0).map((r) => r.input!);
  cluster = await startTestCluster(2);
  // The reference: one uninterrupted build (one chunk), whose rankings equal the embedded index's.
  await buildBm25ClickHouse(unitsFromPagesFile(pagesFile, { unit: "paragraph" }), cluster.url("resume", "whole"), params);
  whole = { digest: await digest("whole"), stats: await stats("whole"), rankings: await rankings("whole") };
  const embedded = join(tmp, "embedded");
  await buildIndex({ pages: pagesFile, kind: "bm25", unit: "paragraph", out: embedded }, () => {});
  const e = await openRetriever([embedded]);
  expect(whole.rankings).toEqual(await e.searchBatch!(queries, 20));
  await e.close();
}, 600_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe("ClickHouse BM25 build: interrupted and run again", () => {
  it("stopped after chunk 3 of 7, a shard holding part of chunk 4: the re-run goes on and writes the same tables", async () => {
    const url = cluster.url("resume", "chunks");
    await expect(
      buildBm25ClickHouse(unitsFromPagesFile(pagesFile, { unit: "paragraph" }), url, params, undefined, {
        chunkUnits: 300,
        onChunk: (c) => {
          if (c === 2) throw new Error("stopped");
        },
      }),
    ).rejects.toThrow("stopped");
    const db = await ClickHouseDatabase.connect(url);
    // Each shard recorded chunks 0-2; what a kill inside chunk 3 can leave: rows of it on shard 1 only.
    for (const s of db.shards) expect((await readMeta(db, "chunks", s))?.chunks_done).toBe("3");
    await db.shards[1].insertTsv("resume.chunks_units_local", "901\t{}\n903\t{}\n");
    await db.shards[1].insertTsv("resume.chunks_postings_local", "zzz\t901\t1\t7\nsuper\t903\t4\t9\n");
    await db.close();
    await expect(openClickHouseBm25(url)).rejects.toThrow(/\(table resume\.chunks_meta_local\): its build did not finish; run `tartan index build --kind bm25 --backend` again/);

    const s = await buildBm25ClickHouse(unitsFromPagesFile(pagesFile, { unit: "paragraph" }), url, params, undefined, { chunkUnits: 300 });
    expect({ units: s.units, resumedUnits: s.resumedUnits, shards: s.shards }).toEqual({ units: 2067, resumedUnits: 900, shards: 2 });
    expect(await digest("chunks")).toEqual(whole.digest);
    expect(await stats("chunks")).toEqual(whole.stats);
    expect(await rankings("chunks")).toEqual(whole.rankings);
  }, 300_000);

  it("`tartan index build --backend` killed with SIGKILL while it writes: the re-run ends with the same tables", async () => {
    const url = cluster.url("resume", "killed");
    const args = [CLI, "index", "build", "--kind", "bm25", "--unit", "paragraph", "--pages", pagesFile, "--backend", url];
    const child = spawn(process.execPath, args, { stdio: "ignore" });
    const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
    let finished = false;
    void exited.then(() => (finished = true));
    // Killed once the units table has rows: in the middle of the analysis and the inserts.
    const db = await ClickHouseDatabase.connect(url);
    while (!finished) {
      const n = await db.main.text("SELECT count() FROM system.parts WHERE active AND database = 'resume' AND table = 'killed_units_local'").catch(() => "0");
      if (Number(n) > 0) {
        child.kill("SIGKILL");
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await exited).toBe(null);
    expect((await readMeta(db, "killed"))?.complete).toBe("0");
    await db.close();
    const again = spawnSync(process.execPath, args, { encoding: "utf8" });
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr + again.stdout).toMatch(/bm25 index of 2,067 paragraph units \([\d,]+ terms, [\d,]+ postings on 2 shards, [\d.]+ MB\) from /);
    expect(await digest("killed")).toEqual(whole.digest);
    expect(await stats("killed")).toEqual(whole.stats);
    expect(await rankings("killed")).toEqual(whole.rankings);
  }, 300_000);
});
