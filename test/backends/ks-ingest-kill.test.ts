// `tartan ks ingest FILE --ks clickhouse://…` killed with SIGKILL at random moments on a 2-shard
// cluster: each re-run resumes from the checkpoint, and at the end every page is stored exactly once
// (in the pages table and in the id and title keys), in input order, equal to its input line.

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClickHouseDatabase } from "../../src/backends/clickhouse/client.js";
import { fnv1a, readMeta, tsvField } from "../../src/backends/clickhouse/schema.js";
import { ingestClickHouse } from "../../src/backends/clickhouse/knowledge.js";
import { openKnowledgeSource } from "../../src/backends/open.js";
import { writeSyntheticKnowledgeSource } from "../../src/knowledge/synthetic.js";
import { startTestCluster, type TestCluster } from "./cluster-fixture.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const PAGE_COUNT = 6000;
const dir = mkdtempSync(join(tmpdir(), "tartan-ch-kill-"));
const file = join(dir, "pages.jsonl");
let cluster: TestCluster;
let lines: string[] = [];

beforeAll(async () => {
  await writeSyntheticKnowledgeSource(file, { pages: PAGE_COUNT, seed: 5, scale: 0.5 });
  lines = readFileSync(file, "utf8").trimEnd().split("\n");
  cluster = await startTestCluster(2);
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("tartan ks ingest --ks clickhouse:// killed at random moments", () => {
  it("resumes after every SIGKILL and ends with each page exactly once", async () => {
    const url = cluster.url("kill_test");
    const db = await ClickHouseDatabase.connect(url);
    const checkpoint = async () => Number((await readMeta(db, "ks").catch(() => null))?.checkpoint_line ?? 0);
    const seed0 = Date.now() % 100_000;
    let seed = seed0;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const targets = Array.from({ length: 4 }, () => Math.floor(random() * 0.8 * PAGE_COUNT)).sort((a, b) => a - b);
    const checkpoints: number[] = [];
    for (const target of targets) {
      const child = spawn(process.execPath, [CLI, "ks", "ingest", file, "--ks", url, "--commit-mb", "1"], { stdio: "ignore" });
      const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
      let stop = false;
      void exited.then(() => (stop = true));
      // Kill once the checkpoint passed the target, after a random delay (anywhere inside a batch).
      while (!stop) {
        if ((await checkpoint()) >= target) {
          await new Promise((r) => setTimeout(r, Math.floor(random() * 150)));
          child.kill("SIGKILL");
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      const code = await exited;
      if (code === 0) break;
      checkpoints.push(await checkpoint());
    }
    const midway = checkpoints.filter((c) => c > 0 && c < PAGE_COUNT);
    expect(midway.length, `checkpoints after kills: ${checkpoints.join(", ")} (seed ${seed0})`).toBeGreaterThanOrEqual(2);

    const last = spawnSync(process.execPath, [CLI, "ks", "ingest", file, "--ks", url], { encoding: "utf8" });
    expect(last.status, last.stderr).toBe(0);
    expect(last.stdout).toMatch(/^(6,000 pages from .* \(2 shards\); resumed after line [\d,]+|.* already holds all 6,000 pages of )/);

    // Exactly once, counted directly in the shards' tables.
    const counts = await db.main.rows<{ n: string; seqs: string; ids: string }>(
      "SELECT count() AS n, uniqExact(seq) AS seqs, uniqExact(wikipedia_id) AS ids FROM kill_test.ks_pages",
    );
    expect(counts[0]).toEqual({ n: String(PAGE_COUNT), seqs: String(PAGE_COUNT), ids: String(PAGE_COUNT) });
    const keys = await db.main.rows<{ n: string }>("SELECT count() AS n FROM kill_test.ks_keys");
    expect(keys[0].n).toBe(String(2 * PAGE_COUNT));
    await db.close();

    const ks = await openKnowledgeSource(url);
    expect(await ks.count()).toBe(PAGE_COUNT);
    let i = 0;
    for await (const page of ks.pages(1000)) {
      expect(page.wikipedia_id).toBe((JSON.parse(lines[i]) as { wikipedia_id: string }).wikipedia_id);
      if (i % 500 === 0) expect(page).toEqual(JSON.parse(lines[i]));
      i++;
    }
    expect(i).toBe(PAGE_COUNT);
    await ks.close();
  }, 600_000);

  it("does not store twice the rows of a batch that got in before the kill (pages without keys, keys without pages)", async () => {
    const url = cluster.url("partial_test");
    let commits = 0;
    await expect(
      ingestClickHouse(file, url, {
        commitBytes: 1 << 20,
        onCommit: () => {
          if (++commits === 2) throw new Error("killed");
        },
      }),
    ).rejects.toThrow("killed");
    const db = await ClickHouseDatabase.connect(url);
    const cp = Number((await readMeta(db, "ks"))!.checkpoint_line);
    expect(cp).toBeGreaterThan(0);
    // What a kill inside the next commit can leave: page cp+1 without its keys, the keys of cp+2 without the page.
    const a = JSON.parse(lines[cp]) as { wikipedia_id: string; wikipedia_title: string };
    const b = JSON.parse(lines[cp + 1]) as { wikipedia_id: string; wikipedia_title: string };
    await db.shards[fnv1a(a.wikipedia_id) % 2].insertTsv("partial_test.ks_pages_local", `${cp + 1}\t${tsvField(a.wikipedia_id)}\t${tsvField(a.wikipedia_title)}\t${tsvField(lines[cp])}\n`);
    await db.shards[fnv1a(b.wikipedia_id) % 2].insertTsv("partial_test.ks_keys_local", `0\t${tsvField(b.wikipedia_id)}\t${cp + 2}\n1\t${tsvField(b.wikipedia_title.toLowerCase())}\t${cp + 2}\n`);
    const r = await ingestClickHouse(file, url);
    expect({ pages: r.pages, duplicates: r.duplicates, resumedAt: r.resumedAt }).toEqual({ pages: PAGE_COUNT, duplicates: 0, resumedAt: { line: cp } });
    const counts = await db.main.rows<{ n: string; seqs: string }>("SELECT count() AS n, uniqExact(seq) AS seqs FROM partial_test.ks_pages");
    expect(counts[0]).toEqual({ n: String(PAGE_COUNT), seqs: String(PAGE_COUNT) });
    const keys = await db.main.rows<{ n: string; k: string }>("SELECT count() AS n, uniqExact(kind, key) AS k FROM partial_test.ks_keys");
    expect(keys[0]).toEqual({ n: String(2 * PAGE_COUNT), k: String(PAGE_COUNT + new Set(lines.map((l) => (JSON.parse(l) as { wikipedia_title: string }).wikipedia_title.toLowerCase())).size) });
    await db.close();
    const ks = await openKnowledgeSource(url);
    expect(await ks.getPageById(a.wikipedia_id)).toEqual(JSON.parse(lines[cp]));
    expect(await ks.getPageByTitle(b.wikipedia_title.toUpperCase())).toEqual(JSON.parse(lines[cp + 1]));
    await ks.close();
  }, 300_000);
});
