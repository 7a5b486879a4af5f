// The runs endpoints on two recorded runs of held-out SQuAD questions (the quick start's reader
// reading 5 passages, and reading 1): list, one run, records with filters, comparison, leaderboard,
// with exact values and against the library (the runs store, compareRuns).

import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareRuns } from "../../src/compare/compare.js";
import { BOARD_KINDS, buildLeaderboard, renderLeaderboard } from "../../src/runs/leaderboard.js";
import { openRunsStore } from "../../src/runs/open.js";
import { startServer, type RunningServer } from "../../src/server/listen.js";
import { runsFixture, type RunsFixture } from "./runs-fixture.js";

let f: RunsFixture;
let server: RunningServer;
const A = "bm25+reader";
const B = "bm25+reader-top1";

beforeAll(async () => {
  f = await runsFixture();
  server = await startServer({ ks: f.ks, indexes: [f.index], runs: f.runs, port: 0 });
}, 600_000);
afterAll(async () => {
  await server?.close();
});

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, body: await res.json() };
}
const enc = encodeURIComponent;

describe("GET /api/runs and /api/runs/:name", () => {
  it("lists the recorded runs with their summaries and shown metrics", async () => {
    const { body } = await get("/api/runs");
    expect(body.runs.map((r: any) => [r.name, r.dataset, r.queries, r.summary.em, r.summary["KILT-em"], r.summary.Rprec, r.metrics])).toEqual([
      [A, "squad", 100, 0.21, 0.21, 0.98, ["em", "KILT-em", "Rprec", "recall@5"]],
      [B, "squad", 100, 0.22, 0.22, 0.99, ["em", "KILT-em", "Rprec", "recall@5"]],
    ]);
    const store = await openRunsStore(f.runs);
    expect(body.runs[0].summary).toEqual((await store.get(A))!.summary);
    await store.close();
    // No local file paths in the answer.
    expect(JSON.stringify(body)).not.toContain(f.work);
    expect((await get("/api/runs?dataset=nq")).body).toEqual({ runs: [] });
    expect((await get("/api/health")).body.runs).toBe(2);
  });

  it("gives one run by name, and a 404 for any other name", async () => {
    const { body } = await get(`/api/runs/${enc(A)}`);
    expect(body.run).toMatchObject({ name: A, dataset: "squad", queries: 100, config: { tartan: "0.1.0", eval: { ks: [1, 5, 10, 20], rankKeys: ["wikipedia_id"] } } });
    expect(body.run.official.eval_downstream.downstream.em).toBe(0.21);
    expect(await get("/api/runs/nope")).toEqual({ status: 404, body: { status: 404, error: 'no run called "nope"' } });
  });
});

describe("GET /api/runs/:name/records", () => {
  it("counts and filters right, wrong and no-evidence records", async () => {
    const all = (await get(`/api/runs/${enc(A)}/records`)).body;
    expect(all).toMatchObject({ run: A, filter: "all", offset: 0, limit: 20, total: 100, counts: { all: 100, right: 21, wrong: 79, "no-evidence": 2 }, warnings: [] });
    expect(all.records).toHaveLength(20);
    const wrong = (await get(`/api/runs/${enc(A)}/records?filter=wrong&limit=2`)).body;
    expect(wrong.total).toBe(79);
    const [r0, r1] = wrong.records;
    expect(r0).toMatchObject({ index: 0, id: "57267b755951b619008f7433", input: "What company owns the American Broadcasting Company?", right: false, evidence: true });
    expect(r0.gold.answers).toEqual(["The Walt Disney Company", "Disney–ABC Television Group"]);
    expect(r0.gold.provenance.map((p: any) => [p.start_paragraph_id, p.start_character, p.end_character, p.text, p.gold])).toEqual([
      [1, 236, 259, "The Walt Disney Company", true],
      [1, 157, 184, "Disney–ABC Television Group", true],
    ]);
    expect(r0.prediction.answer).toBe("Walt Disney");
    expect(r0.prediction.provenance.slice(0, 3).map((p: any) => [p.wikipedia_id, p.start_paragraph_id, p.gold])).toEqual([
      ["squad:American_Broadcasting_Company", 1, true],
      ["squad:American_Broadcasting_Company", 4, false],
      ["squad:American_Broadcasting_Company", 96, false],
    ]);
    expect(r0.scores).toMatchObject({ em: 0, "KILT-em": 0, Rprec: 1, "recall@5": 1 });
    expect(r1).toMatchObject({ id: "57267b755951b619008f7434", input: "In what year did ABC stylize it's logo as abc?", prediction: { answer: "1993" }, scores: { em: 0, f1: 0 } });
    // Every record's em matches its filter; the right ones are the rest.
    const right = (await get(`/api/runs/${enc(A)}/records?filter=right&limit=200`)).body.records;
    expect(right).toHaveLength(21);
    expect(right.every((r: any) => r.scores.em === 1 && r.right === true)).toBe(true);
    const missing = (await get(`/api/runs/${enc(A)}/records?filter=no-evidence&limit=200`)).body.records;
    expect(missing.map((r: any) => [r.scores.Rprec, r.evidence])).toEqual([[0, false], [0, false]]);
    // Paging.
    const page2 = (await get(`/api/runs/${enc(A)}/records?filter=wrong&offset=78&limit=5`)).body;
    expect(page2.records).toHaveLength(1);
    expect(page2.records[0].index).toBe(wrong.records[0].index + 99);
  });

  it("searches within the run: input, id, gold answers or predicted answer, ignoring case", async () => {
    // The records whose texts hold "disney", read from the run's own files.
    const gold = readFileSync(f.gold, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const guess = new Map(readFileSync(join(f.work, "test-predictions.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).map((r) => [r.id, r]));
    const holds = (r: any) => [r.id, r.input, ...r.output.map((o: any) => o.answer), guess.get(r.id)?.output?.[0]?.answer].some((t) => typeof t === "string" && t.toLowerCase().includes("disney"));
    const expected = gold.filter(holds).map((r) => r.id);
    expect(expected).toHaveLength(4);
    const all = (await get(`/api/runs/${enc(A)}/records?q=DISNEY&limit=200`)).body;
    expect(all).toMatchObject({ q: "DISNEY", total: 4, counts: { all: 4, right: 2, wrong: 2, "no-evidence": 0 } });
    expect(all.records.map((r: any) => r.id)).toEqual(expected);
    expect(all.records.filter((r: any) => r.right).length).toBe(2);
    const wrong = (await get(`/api/runs/${enc(A)}/records?q=disney&filter=wrong`)).body;
    expect(wrong.records.map((r: any) => r.right)).toEqual([false, false]);
    expect(wrong.counts).toEqual(all.counts);
    expect((await get(`/api/runs/${enc(A)}/records`)).body.q).toBeNull();
    expect((await get(`/api/runs/${enc(A)}/records?q=${"x".repeat(201)}`)).body).toEqual({ status: 400, error: "q is longer than 200 characters" });
  });

  it("checks its parameters", async () => {
    expect((await get(`/api/runs/${enc(A)}/records?filter=maybe`)).body).toEqual({ status: 400, error: 'filter must be one of all, right, wrong, no-evidence, not "maybe"' });
    expect((await get(`/api/runs/${enc(A)}/records?limit=500`)).body).toEqual({ status: 400, error: "limit must be between 1 and 200, not 500" });
    expect((await get(`/api/runs/${enc(A)}/records?offset=x`)).body).toEqual({ status: 400, error: 'offset must be a whole number, not "x"' });
  });
});

describe("GET /api/compare", () => {
  it("compares two runs as tartan compare does, with the per-query differences and disagreements", async () => {
    const { status, body } = await get(`/api/compare?runs=${enc(A)},${enc(B)}`);
    expect(status).toBe(200);
    expect(body.metric).toBe("em");
    const store = await openRunsStore(f.runs);
    const [sa, sb] = [await store.scores(A), await store.scores(B)];
    await store.close();
    const lib = compareRuns(
      [
        { name: A, ids: sa.ids, metrics: sa.metrics },
        { name: B, ids: sb.ids, metrics: sb.metrics },
      ],
      { metrics: ["em", "KILT-em", "Rprec", "recall@5"] },
    );
    expect(body.comparison).toEqual(JSON.parse(JSON.stringify(lib)));
    expect(body.comparison.runs[1].comparisons.em).toEqual({ difference: 0.010000000000000009, interval: { low: -0.020000000000000018, high: 0.040000000000000036 }, pvalue: 1, adjusted: 1, significant: false, wins: 2, ties: 97, losses: 1 });
    expect(body.differences).toHaveLength(100);
    expect([body.differences.filter((d: number) => d > 0).length, body.differences.filter((d: number) => d < 0).length]).toEqual([2, 1]);
    expect(body.disagreements).toEqual({
      total: 3,
      records: [
        { id: "57267f1cdd62a815002e8741", input: "In 2007, what company purchased ABC Radio properties?", a: { answer: "Capital Cities", score: 0 }, b: { answer: "Citadel Broadcasting", score: 1 } },
        { id: "572684f5dd62a815002e87ff", input: "Who was RCA president in 1942?", a: { answer: "Blue Network", score: 0 }, b: { answer: "David Sarnoff", score: 1 } },
        { id: "5726e860708984140094d579", input: "Who was ABC's vice-president of engineering?", a: { answer: "Frank Marx", score: 1 }, b: { answer: "Capital Cities", score: 0 } },
      ],
    });
  });

  it("takes another metric, and checks its parameters", async () => {
    const f1 = (await get(`/api/compare?runs=${enc(A)},${enc(B)}&metric=f1`)).body;
    expect(f1.metric).toBe("f1");
    expect(f1.comparison.metrics).toEqual(["em", "KILT-em", "Rprec", "recall@5", "f1"]);
    expect((await get(`/api/compare?runs=${enc(A)}`)).body).toEqual({ status: 400, error: "runs must name two runs: runs=A,B" });
    expect((await get(`/api/compare?runs=${enc(A)},${enc(A)}`)).body).toEqual({ status: 400, error: "runs must name two different runs" });
    expect((await get(`/api/compare?runs=${enc(A)},nope`)).body).toEqual({ status: 404, error: 'no run called "nope"' });
    expect((await get(`/api/compare?runs=${enc(A)},${enc(B)}&metric=bleu`)).body.error).toMatch(/^metric must be one both runs have: accuracy, em, f1, /);
    expect((await get("/api/compare")).body).toEqual({ status: 400, error: "runs is required" });
  });
});

describe("GET /api/leaderboard", () => {
  it("gives tartan leaderboard's figures: each dataset's runs by KILT score, with the library's bootstrap intervals", async () => {
    const { body } = await get("/api/leaderboard");
    const store = await openRunsStore(f.runs);
    const board = await buildLeaderboard(store);
    await store.close();
    const cell = (kind: "downstream" | "kilt" | "rprec" | "recall", run: string) => board.cells[kind][run]!.squad!;
    const row = (run: string) => ({
      system: run,
      name: run,
      queries: 100,
      created: expect.any(String),
      values: { em: cell("downstream", run).mean, "KILT-em": cell("kilt", run).mean, Rprec: cell("rprec", run).mean, "recall@5": cell("recall", run).mean },
      intervals: { em: cell("downstream", run).interval, "KILT-em": cell("kilt", run).interval, Rprec: cell("rprec", run).interval, "recall@5": cell("recall", run).interval },
    });
    expect(body).toEqual({ settings: { samples: 10000, seed: 42, level: 0.95 }, datasets: [{ dataset: "squad", metrics: ["em", "KILT-em", "Rprec", "recall@5"], runs: [row(B), row(A)] }] });
    // The figures themselves (the comparison page shows the same em intervals).
    expect(body.datasets[0].runs.map((r: any) => [r.name, r.values.em, r.intervals.em, r.values.Rprec])).toEqual([
      [B, 0.22, { low: 0.14, high: 0.31 }, 0.99],
      [A, 0.21, { low: 0.13, high: 0.3 }, 0.98],
    ]);
    // The CLI's table (the same library call) prints these numbers.
    const text = renderLeaderboard(board, "markdown", BOARD_KINDS);
    expect(text).toContain("| bm25+reader-top1 | **22.00** [14.00, 31.00] |");
    expect((await get("/api/leaderboard?dataset=fever")).body).toEqual({ settings: { samples: 10000, seed: 42, level: 0.95 }, datasets: [] });
    const fewer = (await get("/api/leaderboard?samples=1000&seed=7")).body;
    expect(fewer.settings).toEqual({ samples: 1000, seed: 7, level: 0.95 });
    expect(fewer.datasets[0].runs[0].values).toEqual(body.datasets[0].runs[0].values);
    expect((await get("/api/leaderboard?samples=0")).status).toBe(400);
  });
});

describe("run names never reach the file system", () => {
  it("traversal in :name is a 404 from the database lookup", async () => {
    for (const a of ["..", "..%2F..%2Fpackage.json", "%2e%2e%2f%2e%2e%2fruns.sqlite", "..%5Cruns.sqlite", "%252e%252e%252f", "%2Fetc%2Fpasswd"]) {
      for (const path of [`/api/runs/${a}`, `/api/runs/${a}/records`]) {
        const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = request({ host: "127.0.0.1", port: server.port, path }, (res) => {
            let b = "";
            res.on("data", (c) => (b += c));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: b }));
          });
          req.on("error", reject);
          req.end();
        });
        expect(r.status, path).toBe(404);
        expect(JSON.parse(r.body).error, path).toMatch(/^(no run called |not found|no such endpoint)/);
      }
    }
  });
});
