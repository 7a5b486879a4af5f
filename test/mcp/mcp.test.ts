// `tartan mcp` driven by the MCP SDK's own client: over stdio (the built CLI as a subprocess) against a
// SQuAD knowledge source, BM25 index and runs database built here (two recorded runs of the quick
// start), every tool and resource checked against the library's own answers; and over streamable HTTP
// with `tartan serve`'s token rules.

import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { compareRuns } from "../../src/compare/compare.js";
import { evaluate } from "../../src/eval/evaluate.js";
import { officialJson } from "../../src/eval/report.js";
import { KnowledgeSource } from "../../src/knowledge/store.js";
import { provenanceText } from "../../src/knowledge/span.js";
import { startMcpHttp, type RunningMcpHttp } from "../../src/mcp/http.js";
import { openBm25 } from "../../src/retrieval/bm25/search.js";
import { unitProvenance } from "../../src/retrieval/units/unit.js";
import { openRunsStore } from "../../src/runs/open.js";
import { Resources } from "../../src/server/resources.js";
import { runsFixture, type RunsFixture } from "../server/runs-fixture.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const A = "bm25+reader";
const B = "bm25+reader-top1";

let f: RunsFixture;
let client: Client;
let guessA: string;

beforeAll(async () => {
  f = await runsFixture();
  const store = await openRunsStore(f.runs);
  guessA = (await store.get(A))!.guess.path;
  await store.close();
  client = new Client({ name: "tartan-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--ks", f.ks, "--index", f.index, "--runs", f.runs, "--files", f.work], stderr: "pipe" }));
}, 600_000);
afterAll(async () => {
  await client?.close();
});

/** A tool's structured answer (and its text, which must be the same JSON). */
async function call(name: string, args: Record<string, unknown>): Promise<any> {
  const r = (await client.callTool({ name, arguments: args })) as { content: { type: string; text: string }[]; structuredContent?: unknown; isError?: boolean };
  if (r.isError) throw new Error(r.content[0].text);
  expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
  return r.structuredContent;
}

async function callError(name: string, args: Record<string, unknown>): Promise<string> {
  const r = (await client.callTool({ name, arguments: args })) as { content: { text: string }[]; isError?: boolean };
  expect(r.isError).toBe(true);
  return r.content[0].text;
}

describe("tartan mcp over stdio", () => {
  it("names itself and lists the six tools with JSON schemas", async () => {
    expect(client.getServerVersion()?.name).toBe("tartan");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["compare_runs", "evaluate", "get_page", "get_span", "list_runs", "search"]);
    const search = tools.find((t) => t.name === "search")!;
    expect(search.inputSchema.type).toBe("object");
    expect(search.inputSchema.required).toEqual(["query"]);
    expect(Object.keys(search.inputSchema.properties!)).toEqual(["query", "k", "index", "fusion", "norm", "weights", "alpha", "rrf_k", "depth", "vector", "terms", "nprobe", "refine", "rerank", "k1", "b", "rm3", "rocchio", "reranker", "rerank_depth"]);
    // every tool declares the shape of its structured answer (the client checks each answer against it)
    for (const t of tools) expect([t.name, t.outputSchema?.type]).toEqual([t.name, "object"]);
    expect(Object.keys(search.outputSchema!.properties!)).toEqual(["query", "index", "kind", "unit", "k", "reranker", "hits"]);
    const evaluateTool = tools.find((t) => t.name === "evaluate")!;
    expect(evaluateTool.inputSchema.required).toEqual(["predictions"]);
    expect((evaluateTool.inputSchema.properties as any).mode.enum).toEqual(["all", "downstream", "retrieval"]);
  });

  it("search takes BM25's k1 and b for the call: the library's search at them", async () => {
    const q = "What company owns the American Broadcasting Company?";
    const r = await call("search", { query: q, k: 5, k1: 1.2, b: 0.75 });
    const bm25 = await openBm25(f.index);
    const at = await bm25.search(q, 5, { bm25: { k1: 1.2, b: 0.75 } });
    expect(r.hits.map((h: any) => h.score)).toEqual(at.map((h) => h.score));
    expect(at).not.toEqual(await bm25.search(q, 5));
    await bm25.close();
    expect(await callError("search", { query: q, b: 2 })).toContain("b");
  });

  it("search takes RM3 or Rocchio feedback for the call: the library's search with it", async () => {
    const q = "What company owns the American Broadcasting Company?";
    const bm25 = await openBm25(f.index);
    const r = await call("search", { query: q, k: 5, rm3: { fbDocs: 5 } });
    const want = await bm25.search(q, 5, { feedback: { method: "rm3", fbDocs: 5 } });
    expect(r.hits.map((h: any) => h.score)).toEqual(want.map((h) => h.score));
    expect(want).not.toEqual(await bm25.search(q, 5));
    const d = await call("search", { query: q, k: 5, rocchio: true });
    expect(d.hits.map((h: any) => h.score)).toEqual((await bm25.search(q, 5, { feedback: { method: "rocchio" } })).map((h) => h.score));
    await bm25.close();
    expect(await callError("search", { query: q, rm3: { originalQueryWeight: 2 } })).toContain("rm3: originalQueryWeight must be a number from 0 to 1, got 2");
  });

  it("search returns the index's hits with provenance and text", async () => {
    const r = await call("search", { query: "What company owns the American Broadcasting Company?", k: 3 });
    const bm25 = await openBm25(f.index);
    const hits = await bm25.search("What company owns the American Broadcasting Company?", 3);
    expect(r.index).toBe("index-bm25");
    expect(r.kind).toBe("bm25");
    expect(r.k).toBe(3);
    expect(r.hits.map((h: any) => h.rank)).toEqual([1, 2, 3]);
    expect(r.hits.map((h: any) => h.score)).toEqual(hits.map((h) => h.score));
    expect(r.hits.map((h: any) => h.text)).toEqual(hits.map((h) => bm25.units.get(h.unit).text));
    expect(r.hits.map((h: any) => [h.provenance.wikipedia_id, h.provenance.start_paragraph_id])).toEqual([
      ["squad:American_Broadcasting_Company", 1],
      ["squad:American_Broadcasting_Company", 4],
      ["squad:American_Broadcasting_Company", r.hits[2].provenance.start_paragraph_id],
    ]);
    expect(r.hits.map((h: any) => h.provenance)).toEqual(hits.map((h) => unitProvenance(bm25.units.get(h.unit), h.score, false)));
    expect(r.hits[0].score).toBe(9.300606727600098);
    await bm25.close();
  });

  it("get_page and get_span read the knowledge source", async () => {
    const ks = KnowledgeSource.open(f.ks);
    const page = ks.getPageByTitle("American Broadcasting Company")!;
    const byTitle = await call("get_page", { title: "American Broadcasting Company" });
    expect(byTitle.wikipedia_id).toBe(page.wikipedia_id);
    expect(byTitle.text).toEqual(page.text);
    expect(await call("get_page", { wikipedia_id: page.wikipedia_id })).toEqual(byTitle);
    const span = { wikipedia_id: page.wikipedia_id, start_paragraph_id: 1, end_paragraph_id: 1, start_character: 0, end_character: 40 };
    const r = await call("get_span", span);
    expect(r.text).toBe(provenanceText(page, span));
    expect(r.text.length).toBe(40);
    ks.close();
    expect(await callError("get_page", { wikipedia_id: "no-such-page" })).toBe('no page with wikipedia_id "no-such-page"');
    expect(await callError("get_page", {})).toBe("give wikipedia_id or title (one of them)");
  });

  it("evaluate answers what tartan eval --json prints", async () => {
    const r = await call("evaluate", { gold: f.gold, predictions: guessA });
    expect(r.result).toEqual(officialJson(await evaluate(f.gold, guessA)));
    expect(r.result.eval_downstream.downstream.em).toBe(0.21);
    expect(r.counts).toEqual({ goldRecords: 100, guessRecords: 100, evaluated: 100, extraGuesses: 0 });
    expect(r.problems).toEqual([]);
    const k1 = await call("evaluate", { gold: f.gold, predictions: guessA, ks: [1], rank_keys: ["wikipedia_id", "start_paragraph_id"], mode: "retrieval" });
    expect(k1.result).toEqual(officialJson(await evaluate(f.gold, guessA, { ks: [1], rankKeys: ["wikipedia_id", "start_paragraph_id"], mode: "retrieval" })));
    expect(k1.result).toEqual({ Rprec: 0.77, entity_in_input: 0.03, "precision@1": 0.77, "answer_in_context@1": 0.79, "answer_and_ent_in_context@1": 0.07, "entity_in_context@1": 0.08 });
    expect(await callError("evaluate", { predictions: guessA })).toBe("give gold (a KILT gold file) or dataset (with tartan mcp --data DIR)");
    expect(await callError("evaluate", { gold: join(f.work, "missing.jsonl"), predictions: guessA })).toContain(`${join(f.work, "missing.jsonl")}: no such file or directory`);
  });

  it("list_runs and compare_runs use the runs database", async () => {
    const { runs } = await call("list_runs", {});
    expect(runs.map((r: any) => [r.name, r.dataset, r.queries, r.summary.em])).toEqual([
      [A, "squad", 100, 0.21],
      [B, "squad", 100, 0.22],
    ]);
    expect((await call("list_runs", { dataset: "nq" })).runs).toEqual([]);
    const { comparison } = await call("compare_runs", { a: A, b: B, samples: 1000 });
    const store = await openRunsStore(f.runs);
    const [sa, sb] = [await store.scores(A), await store.scores(B)];
    await store.close();
    const expected = compareRuns(
      [
        { name: A, ids: sa.ids, metrics: sa.metrics },
        { name: B, ids: sb.ids, metrics: sb.metrics },
      ],
      { metrics: ["em", "KILT-em", "Rprec", "recall@5"], samples: 1000, permutations: 1000, seed: 42, test: "randomization" },
    );
    expect(comparison).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(comparison.runs[1].comparisons.em.difference).toBeCloseTo(0.01, 12);
    expect(await callError("compare_runs", { a: A, b: "nope" })).toBe('no run called "nope"');
  });

  it("lists and reads the index and run resources", async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(["tartan://indexes/index-bm25", `tartan://runs/${encodeURIComponent(A)}`, `tartan://runs/${encodeURIComponent(B)}`]);
    const ix = await client.readResource({ uri: "tartan://indexes/index-bm25" });
    const body = JSON.parse((ix.contents[0] as { text: string }).text);
    expect([body.name, body.manifest.kind, body.manifest.unit]).toEqual(["index-bm25", "bm25", "paragraph"]);
    const run = await client.readResource({ uri: `tartan://runs/${encodeURIComponent(B)}` });
    expect(JSON.parse((run.contents[0] as { text: string }).text).summary.em).toBe(0.22);
  });
});

describe("tartan mcp's process", () => {
  it("answers on stdout only, and exits 0 when the client closes stdin", async () => {
    const { spawnSync } = await import("node:child_process");
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
    const r = spawnSync(process.execPath, [CLI, "mcp"], { input: `${JSON.stringify(init)}\n`, encoding: "utf8", timeout: 30_000 });
    expect([r.status, r.stderr]).toEqual([0, ""]);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { id: number; result: { serverInfo: { name: string } } });
    expect(lines.map((l) => [l.id, l.result.serverInfo.name])).toEqual([[1, "tartan"]]);
  });
});

describe("tartan mcp over streamable HTTP", () => {
  let resources: Resources;
  let http: RunningMcpHttp;
  const TOKEN = "0123456789abcdef-token";
  beforeAll(async () => {
    resources = await Resources.open({ ks: f.ks, indexes: [f.index], runs: f.runs });
    http = await startMcpHttp(resources, { port: 0, token: TOKEN });
  });
  afterAll(async () => {
    await http?.close();
    await resources?.close();
  });

  it("refuses a non-loopback host without a token, and a short token", async () => {
    await expect(startMcpHttp(resources, { host: "0.0.0.0", port: 0 })).rejects.toThrow("--host 0.0.0.0 is reachable from other machines: give --token");
    await expect(startMcpHttp(resources, { port: 0, token: "short" })).rejects.toThrow("--token must be at least 16 characters");
  });

  it("answers a client carrying the token, refuses one without", async () => {
    const c = new Client({ name: "tartan-test", version: "1.0.0" });
    await c.connect(new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    const r = (await c.callTool({ name: "list_runs", arguments: {} })) as { structuredContent: any };
    expect(r.structuredContent.runs.map((x: any) => x.name)).toEqual([A, B]);
    await c.close();
    const res = await fetch(http.url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: "{}" });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("a bearer token is required (Authorization: Bearer TOKEN)");
  });

  it("on loopback without a token, refuses a Host that is not a loopback name", async () => {
    const open = await startMcpHttp(resources, { port: 0 });
    const c = new Client({ name: "tartan-test", version: "1.0.0" });
    await c.connect(new StreamableHTTPClientTransport(new URL(open.url)));
    expect((await c.listTools()).tools.length).toBe(6);
    await c.close();
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(open.url, { method: "POST", headers: { Host: "evil.example:80", "Content-Type": "application/json" } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on("error", reject);
      req.end("{}");
    });
    expect(status).toBe(403);
    await open.close();
  });
});
