// The JSON API end to end over HTTP on the SQuAD knowledge source and a BM25 paragraph index: every
// endpoint with exact values, and each answer checked against the library call the CLI makes.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cpus } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluate } from "../../src/eval/evaluate.js";
import { officialJson } from "../../src/eval/report.js";
import { KnowledgeSource } from "../../src/knowledge/store.js";
import { provenanceText } from "../../src/knowledge/span.js";
import { openBm25 } from "../../src/retrieval/bm25/search.js";
import { startServer, type RunningServer } from "../../src/server/listen.js";
import { openApiDocument } from "../../src/server/openapi.js";
import { createApp } from "../../src/server/app.js";
import { retrieve } from "../../src/pipeline/retrieve.js";
import { buildIndex } from "../../src/retrieval/build.js";
import { openIndex } from "../../src/retrieval/open.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { squadFixture, type SquadFixture } from "./fixture.js";

let f: SquadFixture;
let server: RunningServer;
const QUESTION = "Which NFL team represented the AFC at Super Bowl 50?";

beforeAll(async () => {
  f = await squadFixture();
  server = await startServer({ ks: f.ks, indexes: [f.bm25], port: 0, data: f.dir });
}, 300_000);
afterAll(async () => {
  await server?.close();
});

async function get(path: string): Promise<{ status: number; body: any; type: string | null }> {
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, type: res.headers.get("content-type"), body: await res.json() };
}

describe("GET /api/health", () => {
  it("says what is loaded", async () => {
    const r = await get("/api/health");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: "ok", version: "0.1.0", ks: { pages: 48 }, indexes: [{ name: "bm25", kind: "bm25", unit: "paragraph", units: 2067, text: true }], data: true, runs: null, rerankers: [] });
  });
});

describe("GET /api/search", () => {
  it("returns BM25 hits with provenance, text and the matched words", async () => {
    const r = await get(`/api/search?q=${encodeURIComponent(QUESTION)}&k=3`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ query: QUESTION, index: "bm25", kind: "bm25", unit: "paragraph", k: 3 });
    const hits = r.body.hits;
    expect(hits.map((h: any) => [h.rank, h.score, h.provenance.wikipedia_id, h.provenance.start_paragraph_id])).toEqual([
      [1, 15.416062355041504, "squad:Super_Bowl_50", 23],
      [2, 15.324494361877441, "squad:Super_Bowl_50", 2],
      [3, 14.766623497009277, "squad:Super_Bowl_50", 1],
    ]);
    expect(hits[0].provenance).toEqual({ wikipedia_id: "squad:Super_Bowl_50", title: "Super Bowl 50", section: "Section::::Abstract.", start_paragraph_id: 23, start_character: 0, end_paragraph_id: 23, end_character: 1025, score: 15.416062355041504 });
    expect(hits[0].highlights.slice(0, 4)).toEqual([[23, 27], [59, 62], [183, 188], [189, 193]]);
    expect(hits[0].highlights.slice(0, 4).map(([s, e]: [number, number]) => hits[0].text.slice(s, e))).toEqual(["team", "AFC", "Super", "Bowl"]);
    // The same hits and text as the library (what `tartan search` prints).
    const r2 = await openBm25(f.bm25);
    const lib = await r2.search(QUESTION, 3);
    expect(hits.map((h: any) => h.score)).toEqual(lib.map((h) => h.score));
    expect(hits.map((h: any) => h.text)).toEqual(lib.map((h) => r2.units.get(h.unit).text));
    await r2.close();
  });

  it("defaults to 10 hits and picks an index by name", async () => {
    expect((await get(`/api/search?q=Denver%20Broncos`)).body.hits).toHaveLength(10);
    expect((await get(`/api/search?q=Denver%20Broncos&index=bm25&k=1`)).body.hits).toHaveLength(1);
    expect(await get(`/api/search?q=x&index=nope`)).toMatchObject({ status: 404, body: { status: 404, error: 'no index called "nope"; loaded: bm25' } });
  });
});

describe("POST /api/search", () => {
  it("answers a batch in order, each as GET would", async () => {
    const queries = [QUESTION, "Who was the Super Bowl 50 MVP?", "Normans Normandy"];
    const res = await fetch(`${server.url}/api/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queries, k: 2 }) });
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body.results.map((r: any) => r.query)).toEqual(queries);
    for (let i = 0; i < queries.length; i++) expect(body.results[i].hits).toEqual((await get(`/api/search?q=${encodeURIComponent(queries[i])}&k=2`)).body.hits);
    expect(body.results[2].hits[0].provenance.wikipedia_id).toBe("squad:Normans");
  });
});

describe("POST /api/search over the cores", () => {
  it("a large batch on a TF-IDF index is shared with the search workers, each query answered as one search", async () => {
    const tfidf = join(f.dir, "tfidf");
    await buildIndex({ pages: f.pages, kind: "tfidf", unit: "paragraph", out: tfidf }, () => {});
    const two = await startServer({ indexes: [f.bm25, tfidf], port: 0, searchThreads: 2 });
    const r = await openIndex(tfidf);
    try {
      const queries = (await readJsonlAll<KiltRecord>(f.questions)).slice(0, 1000).map((q) => q.input!);
      const post = async () => {
        const res = await fetch(`${two.url}/api/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queries, k: 3, index: "tfidf" }) });
        expect(res.status).toBe(200);
        return ((await res.json()) as { results: { hits: { score: number; provenance: { wikipedia_id: string; start_paragraph_id: number } }[] }[] }).results;
      };
      const first = await post(); // starts the workers (the batch waits until they have opened the index)
      const results = await post();
      expect(results).toEqual(first);
      const pool = two.resources.indexes[1].pool;
      expect(pool.size).toBe(2);
      expect(server.resources.indexes[0].pool.size).toBe(Math.min(cpus().length, 16)); // the default: every core
      // The worker had opened the index before this batch: it took at least one chunk of 64.
      expect(pool.lastShares()[1]).toBeGreaterThanOrEqual(64);
      expect(pool.lastShares()[0] + pool.lastShares()[1]).toBe(1000);
      for (let i = 0; i < queries.length; i++) {
        const want = (await r.search(queries[i], 3)).map((h) => ({ score: h.score, wikipedia_id: r.units.get(h.unit).wikipedia_id, start_paragraph_id: r.units.get(h.unit).start_paragraph_id }));
        expect(results[i].hits.map((h) => ({ score: h.score, wikipedia_id: h.provenance.wikipedia_id, start_paragraph_id: h.provenance.start_paragraph_id }))).toEqual(want);
      }
    } finally {
      await r.close();
      await two.close();
    }
  });
});

describe("pages and provenance", () => {
  it("GET /api/pages/:id returns the stored page", async () => {
    const r = await get(`/api/pages/${encodeURIComponent("squad:Super_Bowl_50")}`);
    expect(r.status).toBe(200);
    const ks = KnowledgeSource.open(f.ks);
    const page = ks.getPageById("squad:Super_Bowl_50")!;
    ks.close();
    expect(r.body).toEqual({ wikipedia_id: "squad:Super_Bowl_50", wikipedia_title: "Super Bowl 50", text: page.text, anchors: [], categories: "", url: "https://en.wikipedia.org/wiki/Super_Bowl_50" });
    expect(r.body.text).toHaveLength(55);
    expect(r.body.text[0]).toBe("Super Bowl 50\n");
  });

  it("GET /api/pages?title= finds a page by exact title, then ignoring case", async () => {
    expect((await get("/api/pages?title=Super%20Bowl%2050")).body.wikipedia_id).toBe("squad:Super_Bowl_50");
    expect((await get("/api/pages?title=super%20bowl%2050")).body.wikipedia_id).toBe("squad:Super_Bowl_50");
    expect(await get("/api/pages?title=No%20Such%20Page")).toEqual({ status: 404, type: "application/json", body: { status: 404, error: 'no page titled "No Such Page"' } });
    expect((await get("/api/pages")).body).toEqual({ status: 400, error: "title is required" });
  });

  it("GET /api/provenance gives a span's text (code points, end exclusive)", async () => {
    const r = await get("/api/provenance?wikipedia_id=squad:Super_Bowl_50&start_paragraph_id=1&start_character=177&end_character=191");
    expect(r.body).toEqual({ wikipedia_id: "squad:Super_Bowl_50", wikipedia_title: "Super Bowl 50", start_paragraph_id: 1, start_character: 177, end_character: 191, text: "Denver Broncos" });
    const whole = await get("/api/provenance?wikipedia_id=squad:Super_Bowl_50&start_paragraph_id=1&end_paragraph_id=2");
    const ks = KnowledgeSource.open(f.ks);
    expect(whole.body.text).toBe(provenanceText(ks.getPageById("squad:Super_Bowl_50")!, { start_paragraph_id: 1, end_paragraph_id: 2 }));
    ks.close();
    const bad = await get("/api/provenance?wikipedia_id=squad:Super_Bowl_50&start_paragraph_id=99");
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatch(/^page squad:Super_Bowl_50 \("Super Bowl 50"\): start_paragraph_id 99/);
  });
});

describe("POST /api/eval", () => {
  it("scores uploaded gold and predictions exactly as tartan eval does", async () => {
    const gold = join(f.dir, "gold-200.jsonl");
    writeFileSync(gold, readFileSync(f.questions, "utf8").split("\n").slice(0, 200).join("\n") + "\n");
    const guess = join(f.dir, "guess-200.jsonl");
    await retrieve({ indexes: [f.bm25], input: gold, out: guess, topK: 5, threads: 1 }, () => {});
    const form = new FormData();
    form.set("gold", new Blob([readFileSync(gold)]), "gold.jsonl");
    form.set("predictions", new Blob([readFileSync(guess)]), "predictions.jsonl");
    form.set("ks", "1,5");
    form.set("rank_keys", "wikipedia_id,start_paragraph_id");
    const res = await fetch(`${server.url}/api/eval`, { method: "POST", body: form });
    expect(res.status).toBe(200);
    const body: any = await res.json();
    const lib = await evaluate(gold, guess, { ks: [1, 5], rankKeys: ["wikipedia_id", "start_paragraph_id"] });
    expect(body.result).toEqual(JSON.parse(JSON.stringify(officialJson(lib))));
    expect(body.counts).toEqual({ goldRecords: 200, guessRecords: 200, evaluated: 200, extraGuesses: 0 });
    expect(body.options).toEqual({ ks: [1, 5], rankKeys: ["wikipedia_id", "start_paragraph_id"], mode: "all" });
    expect(body.result.eval_retrieval.Rprec).toBe(lib.eval_retrieval!.Rprec);
    // Per-query scores: one row per gold record, in gold order, whose means are the summary.
    expect(body.per_query).toHaveLength(200);
    expect(body.per_query[0].id).toBe("56be4db0acb8001400a502ec");
    expect(body.per_query[0]).toEqual({
      id: "56be4db0acb8001400a502ec",
      eval_downstream: null,
      eval_retrieval: { Rprec: 0, entity_in_input: 1, "precision@1": 0, "answer_in_context@1": 0, "answer_and_ent_in_context@1": 0, "entity_in_context@1": 0, "precision@5": 0.2, "answer_in_context@5": 1, "answer_and_ent_in_context@5": 1, "entity_in_context@5": 1, "recall@5": 1, "success_rate@5": 1 },
    });
    const rows: unknown[] = [];
    await evaluate(gold, guess, { ks: [1, 5], rankKeys: ["wikipedia_id", "start_paragraph_id"], perQuery: (r) => rows.push(r) });
    expect(body.per_query).toEqual(JSON.parse(JSON.stringify(rows)));
    const mean = body.per_query.reduce((s: number, r: any) => s + r.eval_retrieval["recall@5"], 0) / 200;
    expect(mean).toBeCloseTo(body.result.eval_retrieval["recall@5"], 12);
    const lean = new FormData();
    lean.set("gold", new Blob([readFileSync(gold)]), "gold.jsonl");
    lean.set("predictions", new Blob([readFileSync(guess)]), "predictions.jsonl");
    lean.set("per_query", "false");
    const leanBody: any = await (await fetch(`${server.url}/api/eval`, { method: "POST", body: lean })).json();
    expect(leanBody.per_query).toBeNull();
    expect(leanBody.result).toEqual(JSON.parse(JSON.stringify(officialJson(await evaluate(gold, guess)))));
    // Problems name the parts, never the server's temporary files.
    expect(JSON.stringify(body.problems)).not.toContain("tartan-serve-");
  });

  it("takes a dataset name for the gold file from the data directory", async () => {
    const form = new FormData();
    form.set("dataset", "nq");
    form.set("predictions", new Blob(["{}\n"]), "p.jsonl");
    const res = await fetch(`${server.url}/api/eval`, { method: "POST", body: form });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ status: 404, error: "the dev file of nq is not in the server's data directory" });
  });
});

describe("GET /api/openapi.json", () => {
  it("describes every endpoint the server answers", async () => {
    const r = await get("/api/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(r.body.openapi).toBe("3.1.0");
    // Every route the app answers is described, with its methods, and nothing else.
    const routes = createApp(server.resources, { staticFiles: new Map() }).routes.filter((x) => x.path.startsWith("/api/") && x.path !== "/api/*" && x.method !== "ALL");
    const described = Object.entries(r.body.paths as Record<string, object>).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(described.sort()).toEqual([...new Set(routes.map((x) => `${x.method} ${x.path.replace(/:(\w+)/g, "{$1}")}`))].sort());
    expect(Object.keys(r.body.paths).sort()).toEqual(["/api/compare", "/api/eval", "/api/health", "/api/leaderboard", "/api/openapi.json", "/api/pages", "/api/pages/{id}", "/api/provenance", "/api/runs", "/api/runs/{name}", "/api/runs/{name}/records", "/api/search"]);
  });
});

describe("the web explorer", () => {
  it("serves its page, scripts and style sheet", async () => {
    const html = await fetch(`${server.url}/`);
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await html.text()).toContain('<script type="module" src="/main.js"></script>');
    for (const path of ["/main.js", "/router.js", "/api.js", "/dom.js", "/views/search.js", "/views/page.js", "/views/runs.js", "/views/compare.js", "/views/leaderboard.js", "/style.css"]) expect((await fetch(`${server.url}${path}`)).status).toBe(200);
    expect(html.headers.get("content-security-policy")).toContain("default-src 'self'");
  });
});
