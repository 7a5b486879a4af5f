// Rerankers per request and fusion in `tartan serve` and `tartan mcp` (issue 37): a server started with
// named rerankers (`--reranker NAME=SPEC`; here the listwise LLM reranker behind the loopback judge of
// test/retrieval/rerank/llm-model.ts) reranks a search that names one (`reranker`, `rerank_depth`) as the
// library's `rerank` stage does, through GET, POST (the search pool, two threads) and the MCP search tool
// (the official SDK client against the built CLI); unknown names, depths above the cap and stray depths are
// a 400 (a tool error in MCP) saying what is allowed; `reranker: none` skips the server's default reranker.
// The MCP search tool fuses several indexes (SQuAD's BM25 and TF-IDF paragraph indexes) with the fusion,
// normalisation and weights `retrieve` and `serve` take, as the library's fusion stages give.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { openIndexes } from "../../src/retrieval/open.js";
import { buildTfidfIndex } from "../../src/retrieval/tfidf/build.js";
import { unitsFromPagesFile } from "../../src/retrieval/sources.js";
import type { Retriever } from "../../src/retrieval/types.js";
import { startServer, type RunningServer } from "../../src/server/listen.js";
import { splitRerankerFlags } from "../../src/server/rerankers.js";
import type { TestServer } from "../fixtures/readers/openai-server.js";
import { squadBm25Paragraphs } from "../fixtures/squad-bm25.js";
import { startModel } from "../retrieval/rerank/llm-model.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-serve-rerankers-"));
const QUESTIONS = ["Which NFL team represented the AFC at Super Bowl 50?", "Who was the Super Bowl 50 MVP?", "What company owns the American Broadcasting Company?"];

let dir = "";
let tfidf = "";
let judge: TestServer;
let spec = "";
let server: RunningServer;
let client: Client;
let reranked: Retriever;
let plain: Retriever;

beforeAll(async () => {
  ({ dir } = await squadBm25Paragraphs(tmp, 1));
  tfidf = join(tmp, "tfidf");
  await buildTfidfIndex(unitsFromPagesFile(join(tmp, "pages.jsonl"), { unit: "paragraph" }), tfidf, { unit: "paragraph", source: join(tmp, "pages.jsonl") });
  judge = await startModel();
  spec = `llm-listwise:model=ranker-1,base-url=${judge.baseUrl}`;
  server = await startServer({ indexes: [dir, tfidf], rerankers: { judge: spec }, maxRerankDepth: 20, searchThreads: 2, port: 0 });
  client = new Client({ name: "tartan-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--index", dir, tfidf, "--reranker", `judge=${spec}`, "--max-rerank-depth", "20"], stderr: "pipe" }));
  // what the library's rerank stage gives: BM25's best 10 reranked by the judge
  reranked = await openIndexes([dir], { stages: [{ name: "rerank", options: { reranker: spec, depth: 10 } }] });
  plain = await openIndexes([dir]);
}, 300_000);

afterAll(async () => {
  await client?.close();
  await server?.close();
  await reranked?.close();
  await plain?.close();
  await judge?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const at = (r: Retriever, hits: { unit: number }[]) => hits.map((h) => [r.units.get(h.unit).wikipedia_id, r.units.get(h.unit).start_paragraph_id]);
const shown = (hits: { provenance: { wikipedia_id: string; start_paragraph_id: number } }[]) => hits.map((h) => [h.provenance.wikipedia_id, h.provenance.start_paragraph_id]);

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, body: await res.json() };
}
async function post(body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/api/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}
async function tool(args: Record<string, unknown>): Promise<{ error: string | null; body: any }> {
  const r = (await client.callTool({ name: "search", arguments: args })) as { content: { text: string }[]; structuredContent?: unknown; isError?: boolean };
  return r.isError ? { error: r.content[0].text, body: null } : { error: null, body: r.structuredContent };
}

describe("--reranker NAME=SPEC", () => {
  it("separates named rerankers from the default one, and refuses what cannot be told apart", () => {
    expect(splitRerankerFlags(["judge=llm-listwise:model=m", "cross-encoder:model=x.onnx", "ce_2=cross-encoder:model=y.onnx"])).toEqual({ reranker: "cross-encoder:model=x.onnx", rerankers: { judge: "llm-listwise:model=m", ce_2: "cross-encoder:model=y.onnx" } });
    expect(() => splitRerankerFlags(["llm-pointwise", "llm-listwise"])).toThrow('--reranker: one default reranker (a SPEC without NAME=) is allowed, given "llm-pointwise" and "llm-listwise"; name the others (--reranker NAME=SPEC)');
    expect(() => splitRerankerFlags(["a=llm-listwise", "a=llm-pointwise"])).toThrow("--reranker: the name a is given twice");
    expect(() => splitRerankerFlags(["none=llm-listwise"])).toThrow('a reranker\'s name is lower-case letters, digits, - and _ (starting with a letter), and not "none"');
    expect(() => splitRerankerFlags(["judge=llm-listwise:model=a,window"])).toThrow('--reranker judge=…: reranker spec "llm-listwise:model=a,window": "window" is not key=value');
  });
});

describe("serve: a search names a reranker", () => {
  it("GET reranker=judge&rerank_depth=10 gives the library's rerank stage; without it, BM25's hits", async () => {
    for (const q of QUESTIONS) {
      const r = await get(`/api/search?q=${encodeURIComponent(q)}&k=5&reranker=judge&rerank_depth=10`);
      expect(r.status).toBe(200);
      expect(r.body.reranker).toBe("judge");
      const want = await reranked.search(q, 5);
      expect(shown(r.body.hits)).toEqual(at(reranked, want));
      expect(r.body.hits.map((h: any) => h.score)).toEqual([10, 9, 8, 7, 6]);
      const bm25 = await get(`/api/search?q=${encodeURIComponent(q)}&k=5`);
      expect("reranker" in bm25.body).toBe(false);
      expect(bm25.body.hits.map((h: any) => h.score)).toEqual((await plain.search(q, 5)).map((h) => h.score));
    }
    // the judge reorders at least one question's top 5
    const moved = await Promise.all(QUESTIONS.map(async (q) => JSON.stringify(at(reranked, await reranked.search(q, 5))) !== JSON.stringify(at(plain, await plain.search(q, 5)))));
    expect(moved).toContain(true);
  });

  it("POST reranks a batch whose first stage goes through the search pool", async () => {
    const queries = Array.from({ length: 80 }, (_, i) => QUESTIONS[i % 3]);
    const r = await post({ queries, k: 4, reranker: "judge", rerank_depth: 10 });
    expect(r.status).toBe(200);
    expect(r.body.reranker).toBe("judge");
    const want = await reranked.searchBatch!(queries, 4);
    expect(r.body.results.map((x: any) => shown(x.hits))).toEqual(want.map((h) => at(reranked, h)));
  });

  it("lists its rerankers in /api/health and refuses what it does not allow with a 400 that says what is", async () => {
    expect((await get("/api/health")).body.rerankers).toEqual(["judge"]);
    expect(await get("/api/search?q=x&reranker=monot5")).toMatchObject({ status: 400, body: { error: 'no reranker called "monot5"; this server has: judge (or none)' } });
    expect(await get("/api/search?q=x&reranker=judge&rerank_depth=21")).toMatchObject({ status: 400, body: { error: "rerank_depth 21 is above this server's limit of 20 (--max-rerank-depth)" } });
    expect(await get("/api/search?q=x&reranker=judge&k=30")).toMatchObject({ status: 400, body: { error: "reranking k = 30 hits is above this server's limit of 20 (--max-rerank-depth): ask for k ≤ 20 or give rerank_depth ≤ 20" } });
    expect(await get("/api/search?q=x&rerank_depth=5")).toMatchObject({ status: 400, body: { error: "rerank_depth goes with reranker (a reranker's name)" } });
    expect(await post({ queries: ["x"], reranker: "judge", rerank_depth: 0 })).toMatchObject({ status: 400, body: { error: "rerank_depth must be a whole number from 1 to 20" } });
    expect(await post({ queries: ["x"], reranker: 3 })).toMatchObject({ status: 400, body: { error: "reranker must be a string: the name of one of the server's rerankers" } });
  });

  it("reranker=none skips the server's default reranker, and a named one replaces it", async () => {
    const s = await startServer({ indexes: [dir], reranker: spec, rerankDepth: 10, rerankers: { judge5: spec }, port: 0 });
    try {
      const q = QUESTIONS[0];
      const byDefault = (await (await fetch(`${s.url}/api/search?q=${encodeURIComponent(q)}&k=5`)).json()) as any;
      expect(shown(byDefault.hits)).toEqual(at(reranked, await reranked.search(q, 5)));
      const none = (await (await fetch(`${s.url}/api/search?q=${encodeURIComponent(q)}&k=5&reranker=none`)).json()) as any;
      expect(none.reranker).toBe("none");
      expect(none.hits.map((h: any) => h.score)).toEqual((await plain.search(q, 5)).map((h) => h.score));
      // the named one over BM25's best 5 (not over the default's reranked list)
      const five = await openIndexes([dir], { stages: [{ name: "rerank", options: { reranker: spec, depth: 5 } }] });
      try {
        const named = (await (await fetch(`${s.url}/api/search?q=${encodeURIComponent(q)}&k=5&reranker=judge5&rerank_depth=5`)).json()) as any;
        expect(shown(named.hits)).toEqual(at(five, await five.search(q, 5)));
      } finally {
        await five.close();
      }
    } finally {
      await s.close();
    }
  });
});

describe("mcp: the search tool reranks and fuses", () => {
  it("declares the arguments, naming the server's rerankers", async () => {
    const { tools } = await client.listTools();
    const search = tools.find((t) => t.name === "search")!;
    const props = search.inputSchema.properties as Record<string, { description?: string; enum?: string[] }>;
    expect(props.reranker.description).toBe("rerank the hits with one of the server's rerankers: judge (or none)");
    expect(props.fusion.enum).toEqual(["rrf", "wsum", "combsum", "combmnz", "combmax", "combanz"]);
    expect(props.norm.enum).toEqual(["min-max", "max", "sum", "z-score", "rank", "none"]);
  });

  it("reranker judge with rerank_depth 10 gives the library's rerank stage; the limits hold", async () => {
    for (const q of QUESTIONS) {
      const r = await tool({ query: q, k: 5, index: "bm25-paragraph", reranker: "judge", rerank_depth: 10 });
      expect(r.error).toBeNull();
      expect(r.body.reranker).toBe("judge");
      expect(shown(r.body.hits)).toEqual(at(reranked, await reranked.search(q, 5)));
    }
    expect((await tool({ query: "x", reranker: "judge", rerank_depth: 50 })).error).toContain("rerank_depth 50 is above this server's limit of 20 (--max-rerank-depth)");
    expect((await tool({ query: "x", reranker: "monot5" })).error).toContain('no reranker called "monot5"; this server has: judge (or none)');
  });

  it("fuses two indexes with the fusion, normalisation and weights of retrieve and serve", async () => {
    const cases: [Record<string, unknown>, Parameters<typeof openIndexes>[1]][] = [
      [{ fusion: "combmnz", norm: "z-score", depth: 40 }, { fusion: { name: "combmnz", options: { norm: "z-score", depth: 40 } } }],
      [{ weights: [2, 0.5], rrf_k: 10 }, { fusion: { name: "rrf", options: { weights: [2, 0.5], k0: 10 } } }],
      [{ alpha: 0.3 }, { fusion: { name: "wsum", options: { alpha: 0.3 } } }],
    ];
    for (const [args, options] of cases) {
      const lib = await openIndexes([dir, tfidf], options);
      try {
        for (const q of QUESTIONS) {
          const r = await tool({ query: q, k: 6, index: ["bm25-paragraph", "tfidf"], ...args });
          expect(r.error).toBeNull();
          expect(r.body).toMatchObject({ index: "bm25-paragraph+tfidf", kind: "hybrid", unit: "paragraph", k: 6 });
          const want = await lib.search(q, 6);
          expect(r.body.hits.map((h: any) => h.score)).toEqual(want.map((h) => h.score));
          expect(shown(r.body.hits)).toEqual(at(lib, want));
        }
      } finally {
        await lib.close();
      }
    }
    // a fusion differs from either member alone
    const fused = await tool({ query: QUESTIONS[2], k: 6, index: ["bm25-paragraph", "tfidf"], fusion: "combsum" });
    expect(fused.body.hits.map((h: any) => h.score)).not.toEqual((await plain.search(QUESTIONS[2], 6)).map((h) => h.score));
    expect((await tool({ query: "x", index: "bm25-paragraph", fusion: "combsum" })).error).toContain("fusion: fusion parameters go with several indexes (index=a&index=b)");
    expect((await tool({ query: "x", index: ["bm25-paragraph", "tfidf"], weights: [1] })).error).toContain("fusion: 1 weights for 2 members: give one per index, in order");
  });
});
