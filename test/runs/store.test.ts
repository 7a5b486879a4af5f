// The runs database on real data: HotpotQA dev predictions (the official evaluator's fixture) recorded
// with their per-query scores, listed, read back bit for bit, and removed; means equal the summary.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plainMean } from "../../src/compare/compare.js";
import { makeRun, openRunsStore, SqliteRunsStore, type NewRun, type RunsStore } from "../../src/runs/index.js";
import { openKnowledgeSource, openRuns, registerBackend } from "../../src/backends/index.js";

const CASE = new URL("../../../shared/fixtures/eval/real-hotpotqa-dev-0-1499/", import.meta.url).pathname;
const gold = join(CASE, "gold.jsonl");
const guess = join(CASE, "guess.jsonl");
const expected = JSON.parse(readFileSync(join(CASE, "expected.json"), "utf8"));
const dir = mkdtempSync(join(tmpdir(), "tartan-runs-"));
let run: NewRun;
let store: RunsStore;

beforeAll(async () => {
  run = await makeRun({ gold, guess, name: "hotpotqa-real", notes: "official fixture", dataset: "hotpotqa", created: new Date("2026-11-23T09:00:00Z") });
  store = await openRunsStore(dir);
});
afterAll(async () => store.close());

describe("makeRun", () => {
  it("scores every gold record; the summary is the official evaluator's result", () => {
    expect(run.queries).toBe(1500);
    expect(run.scores.ids.length).toBe(1500);
    expect(run.summary.em).toBe(expected.eval_downstream.downstream.em);
    expect(run.summary["KILT-f1"]).toBe(expected.eval_downstream.kilt["KILT-f1"]);
    expect(run.summary.Rprec).toBe(expected.eval_retrieval.Rprec);
    expect(run.summary["recall@5"]).toBe(expected.eval_retrieval["recall@5"]);
    expect(run.official).toEqual({ eval_downstream: expected.eval_downstream, eval_retrieval: expected.eval_retrieval });
  });
  it("per-query means equal the summary exactly, for every metric", () => {
    for (const [m, values] of Object.entries(run.scores.metrics)) expect(plainMean(values), m).toBe(run.summary[m]);
  });
  it("records checksums, settings and the dataset", () => {
    expect(run.gold.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(run.gold.bytes).toBe(readFileSync(gold).length);
    expect(run.dataset).toBe("hotpotqa");
    expect(run.config.eval).toEqual({ ks: [1, 5, 10, 20], rankKeys: ["wikipedia_id"] });
    expect(run.config.tartan).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("SQLite runs store", () => {
  it("adds, lists, reads back bit for bit, refuses a second run of the same name", async () => {
    await store.add(run);
    const list = await store.list();
    expect(list.map((r) => r.name)).toEqual(["hotpotqa-real"]);
    expect(await store.list({ dataset: "wow" })).toEqual([]);
    const info = await store.get("hotpotqa-real");
    expect(info?.summary).toEqual(run.summary);
    expect(info?.created).toBe("2026-11-23T09:00:00.000Z");
    const scores = await store.scores("hotpotqa-real");
    expect(scores.ids).toEqual(run.scores.ids);
    expect(Object.keys(scores.metrics)).toEqual(Object.keys(run.scores.metrics));
    for (const m of Object.keys(scores.metrics)) expect(scores.metrics[m]).toEqual(run.scores.metrics[m]);
    await expect(store.add(run)).rejects.toThrow(/already recorded/);
    await store.add({ ...run, notes: "again" }, { replace: true });
    expect((await store.get("hotpotqa-real"))?.notes).toBe("again");
  });
  it("persists across opens and removes by name", async () => {
    const again = await openRunsStore(`sqlite:${dir}`);
    expect((await again.list()).length).toBe(1);
    expect(await again.remove("hotpotqa-real")).toBe(true);
    expect(await again.remove("hotpotqa-real")).toBe(false);
    await again.close();
    expect(await store.get("hotpotqa-real")).toBeUndefined();
    await expect(store.scores("hotpotqa-real")).rejects.toThrow(/no run named "hotpotqa-real"/);
  });
  it("rejects run names that could name files elsewhere", async () => {
    await expect(store.add({ ...run, name: "../x" })).rejects.toThrow(/run name/);
  });
  it("chooses the backend by location", async () => {
    expect(await openRunsStore(dir)).toBeInstanceOf(SqliteRunsStore);
    await expect(openRunsStore("nosuch://host/db")).rejects.toThrow(/no runs backend for "nosuch:\/\/"/);
    await expect(openRuns("nosuch://host/db")).rejects.toThrow('nosuch://host/db: no backend for "nosuch://" (known: a directory, clickhouse://)');
    // A backend that holds only runs: one registration, and openRuns picks it from the scheme.
    registerBackend({ name: "mem", version: 1, schemes: ["mem"], canonical: (l) => l, indexName: (l) => l, openRuns: async (l) => SqliteRunsStore.open(join(dir, new URL(l).hostname)) });
    const viaUrl = await openRuns("mem://other");
    expect(viaUrl.location).toBe(join(dir, "other"));
    await viaUrl.close();
    await expect(openKnowledgeSource("mem://other")).rejects.toThrow("mem://other: the mem backend holds no knowledge sources");
    expect(() => registerBackend({ name: "mem2", version: 1, schemes: ["clickhouse"], canonical: (l) => l, indexName: (l) => l })).toThrow('backend "mem2": the scheme clickhouse:// is already another backend\'s');
  });
});
