// One contract for every RunsStore: the embedded SQLite store and ClickHouse with 2 shards (tartan's
// cluster scripts, stopped by pid), on real data: HotpotQA dev predictions (the official evaluator's
// fixture) and a second run; added, listed in order, read back bit for bit, replaced, removed, and
// the same store seen by a second client (a shared leaderboard). Each backend that holds runs databases
// (the BACKENDS registry) joins with one line in `CASES`; a guard fails naming one without a case.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRuns } from "../../src/backends/open.js";
import { BACKENDS } from "../../src/backends/registry.js";
import { ClickHouseRunsStore } from "../../src/backends/clickhouse/runs.js";
import { ClickHouseDatabase } from "../../src/backends/clickhouse/client.js";
import { createMeta, tsvField, writeMeta } from "../../src/backends/clickhouse/schema.js";
import { buildLeaderboard, makeRun, type NewRun, type RunsStore } from "../../src/runs/index.js";
import { startTestCluster, type TestCluster } from "./cluster-fixture.js";

const CASE = new URL("../../../shared/fixtures/eval/real-hotpotqa-dev-0-1499/", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "tartan-runs-contract-"));
let cluster: TestCluster;
let run: NewRun;
let other: NewRun;
const locations: Record<string, string> = {};
/** One line per backend: where its runs database for the contract is. */
const CASES: Record<string, () => Promise<string>> = {
  embedded: async () => join(dir, "runs"),
  clickhouse: async () => (cluster = await startTestCluster(2)).url("runs_contract"),
};
/** The backends of the seam: those the registry says hold runs databases. */
const SEAM = BACKENDS.all().filter((b) => b.openRuns !== undefined).map((b) => b.name);

beforeAll(async () => {
  run = await makeRun({ gold: join(CASE, "gold.jsonl"), guess: join(CASE, "guess.jsonl"), name: "hotpotqa-real", notes: "official fixture", dataset: "hotpotqa", created: new Date("2026-11-23T09:00:00Z") });
  other = await makeRun({ gold: join(CASE, "gold.jsonl"), guess: join(CASE, "gold.jsonl"), name: "hotpotqa-gold (oracle)", dataset: "hotpotqa", created: new Date("2026-11-23T09:00:00Z") });
  for (const name of SEAM.filter((n) => n in CASES)) locations[name] = await CASES[name]();
}, 300_000);

describe("RunsStore contract: the guard", () => {
  it("has a case for every backend that holds runs databases, and no case for another", () => {
    expect(SEAM.filter((n) => !(n in CASES))).toEqual([]);
    expect(Object.keys(CASES).filter((n) => !SEAM.includes(n))).toEqual([]);
  });
});

afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(SEAM.filter((n) => n in CASES))("RunsStore contract: %s", (backend) => {
  let store: RunsStore;
  beforeAll(async () => {
    store = await openRuns(locations[backend]);
  });
  afterAll(async () => store?.close());

  it("adds runs, lists them oldest first (then in recording order), reads scores back bit for bit", async () => {
    await store.add(run);
    await store.add(other);
    expect((await store.list()).map((r) => r.name)).toEqual(["hotpotqa-real", "hotpotqa-gold (oracle)"]);
    expect(await store.list({ dataset: "wow" })).toEqual([]);
    const info = await store.get("hotpotqa-real");
    expect(info?.summary).toEqual(run.summary);
    expect(info?.official).toEqual(run.official);
    expect(info?.created).toBe("2026-11-23T09:00:00.000Z");
    const scores = await store.scores("hotpotqa-real");
    expect(scores.ids).toEqual(run.scores.ids);
    expect(Object.keys(scores.metrics)).toEqual(Object.keys(run.scores.metrics));
    for (const m of Object.keys(scores.metrics)) expect(Buffer.from(scores.metrics[m].buffer)).toEqual(Buffer.from(run.scores.metrics[m].buffer));
    expect((await store.get("hotpotqa-gold (oracle)"))?.summary.em).toBe(1);
  });

  it("refuses a second run of the same name unless replacing; removes by name", async () => {
    await expect(store.add(run)).rejects.toThrow(/already recorded/);
    await store.add({ ...run, notes: "again" }, { replace: true });
    expect((await store.get("hotpotqa-real"))?.notes).toBe("again");
    const again = await openRuns(locations[backend]);
    // The replaced run was recorded last: it now lists after the other run of the same time.
    expect((await again.list()).map((r) => r.name)).toEqual(["hotpotqa-gold (oracle)", "hotpotqa-real"]);
    expect(await again.remove("hotpotqa-real")).toBe(true);
    expect(await again.remove("hotpotqa-real")).toBe(false);
    await again.close();
    expect(await store.get("hotpotqa-real")).toBeUndefined();
    await expect(store.scores("hotpotqa-real")).rejects.toThrow(/no run named "hotpotqa-real"/);
    await expect(store.add({ ...run, name: "../x" })).rejects.toThrow(/run name/);
  });

  it("keeps the system a run belongs to (its leaderboard row); a run without one has none", async () => {
    await store.add({ ...run, name: "bm25-hotpotqa", system: "BM25 + reader" });
    expect((await store.get("bm25-hotpotqa"))?.system).toBe("BM25 + reader");
    expect(await store.get("hotpotqa-gold (oracle)")).not.toHaveProperty("system");
    expect((await store.list()).map((r) => [r.name, r.system ?? null])).toEqual([
      ["hotpotqa-gold (oracle)", null],
      ["bm25-hotpotqa", "BM25 + reader"],
    ]);
    await store.add({ ...run, name: "bm25-hotpotqa", system: "BM25 alone" }, { replace: true });
    const again = await openRuns(locations[backend]);
    expect((await again.get("bm25-hotpotqa"))?.system).toBe("BM25 alone");
    // the leaderboard's rows are systems (a run without one is its own row), with the run's figures
    const board = await buildLeaderboard(again, { samples: 200, seed: 1 });
    expect(board.systems.sort()).toEqual(["BM25 alone", "hotpotqa-gold (oracle)"]);
    const cell = board.cells.downstream["BM25 alone"]?.hotpotqa;
    expect([cell?.run, cell?.metric, cell?.mean]).toEqual(["bm25-hotpotqa", "em", 0.5666666666666667]);
    await again.close();
  });
});

describe("ClickHouse runs store: tables from before the system column", () => {
  it("get the column on open; their runs keep the system recorded in their info", async () => {
    const url = cluster.url("runs_contract", "legacy");
    const db = await ClickHouseDatabase.connect(url);
    await createMeta(db, "legacy");
    await writeMeta(db, "legacy", { kind: "runs", format: "tartan-runs-ch-1", complete: 1 });
    const oldColumns = "name String, version UInt64, deleted UInt8, dataset String, created String, notes String, queries UInt32, info String";
    await db.createTable("legacy_runs", oldColumns, "MergeTree ORDER BY (name, version)");
    await db.createTable("legacy_scores", "run String, version UInt64, ids String, metrics String, scores String", "MergeTree ORDER BY (run, version)");
    const { scores: _, ...info } = { ...run, name: "old-run", system: "Old system" };
    await db.shards[0].insertTsv("runs_contract.legacy_runs_local", ["old-run", "1", "0", "hotpotqa", info.created, "", String(info.queries), JSON.stringify(info)].map(tsvField).join("\t") + "\n");
    await db.close();
    const store = await openRuns(url);
    expect((await store.get("old-run"))?.system).toBe("Old system");
    await store.add({ ...run, name: "new-run", system: "New system" });
    expect((await store.list()).map((r) => [r.name, r.system])).toEqual([
      ["old-run", "Old system"],
      ["new-run", "New system"],
    ]);
    await store.close();
    // the column itself, on the Distributed table, for SQL that groups runs by system
    const check = await ClickHouseDatabase.connect(url);
    expect(await check.main.text("SELECT name, system FROM runs_contract.legacy_runs ORDER BY version")).toBe("old-run\t\nnew-run\tNew system\n");
    await check.close();
  });
});

describe("ClickHouse runs store: errors", () => {
  it("is chosen by the URL, and refuses tables of another format naming the URL and table", async () => {
    const url = cluster.url("runs_contract", "old");
    const store = await openRuns(url);
    expect(store).toBeInstanceOf(ClickHouseRunsStore);
    await store.close();
    const db = await ClickHouseDatabase.connect(url);
    await writeMeta(db, "old", { format: "tartan-runs-ch-0" });
    await db.close();
    await expect(openRuns(url)).rejects.toThrow(/\(table runs_contract\.old_meta_local\): runs format "tartan-runs-ch-0"; this tartan reads tartan-runs-ch-1/);
  });
});
