// Dense search is never silently wrong (issue 34): row i of a query vector file is record i whatever the
// records' texts (200 records with one and the same input get 200 different result lists), a row count
// other than the records' is refused, and a call's search options reach every thread: for every dense
// kind (exact, binary, pq, pq4, int8, rabitq) `retrieve --threads 1` and `--threads 2` write the same bytes, the
// library's SearchPool over 2 threads equals one thread's batch, and `serve` and `mcp` answer the same hits.

import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromSquad } from "../../../src/knowledge/build.js";
import { buildIndex } from "../../../src/retrieval/build.js";
import { normalizeRows } from "../../../src/retrieval/dense/encoder.js";
import { openIndexes } from "../../../src/retrieval/open.js";
import { SearchPool } from "../../../src/retrieval/pool.js";
import type { Hit } from "../../../src/retrieval/types.js";
import { UnitStore } from "../../../src/retrieval/units/store.js";
import { startServer } from "../../../src/server/listen.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { rng } from "./clustered.js";
import { npyBytes } from "./npy.js";

const V11 = new URL("../../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const CLI = join(process.cwd(), "dist", "src", "cli", "main.js");
const tmp = mkdtempSync(join(tmpdir(), "tartan-qvec-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const dim = 32;
const Q = 200;
const MANY = 20_000;
const KINDS = ["none", "binary", "pq", "pq4", "int8", "rabitq"] as const;

const tartan = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8" });
const dirOf = (kind: string) => join(tmp, `dense-${kind}`);

let n = 0;
let gold: number[] = [];
let queryRows: Float32Array;
let ids: string[] = [];

beforeAll(async () => {
  const pages = join(tmp, "pages.jsonl");
  await fromSquad(V11, pages, () => {});
  writeFileSync(join(tmp, "pages3.jsonl"), `${readFileSync(pages, "utf8").split("\n").slice(0, 3).join("\n")}\n`);
  await buildIndex({ kind: "bm25", pages: join(tmp, "pages3.jsonl"), unit: "paragraph", out: join(tmp, "bm25") }, () => {});
  const units = UnitStore.open(join(tmp, "bm25"));
  n = units.count;
  for (let i = 0; i < n; i++) {
    const u = units.get(i);
    ids.push(`${u.wikipedia_id}\t${u.start_paragraph_id}\t${u.end_paragraph_id}`);
  }
  units.close();
  writeFileSync(join(tmp, "ids.txt"), `${ids.join("\n")}\n`);
  const r = rng(11);
  const v = normalizeRows(Float32Array.from({ length: n * dim }, r), dim);
  writeFileSync(join(tmp, "passages.npy"), npyBytes(n, dim, v));
  // 200 records with the same input; record i's vector is a noisy copy of paragraph (7i mod n)
  gold = Array.from({ length: Q }, (_, i) => (i * 7) % n);
  const q = new Float32Array(Q * dim);
  gold.forEach((g, i) => {
    for (let d = 0; d < dim; d++) q[i * dim + d] = v[g * dim + d] + 0.1 * r();
  });
  queryRows = normalizeRows(q, dim);
  writeFileSync(join(tmp, "queries.npy"), npyBytes(Q, dim, queryRows));
  writeFileSync(join(tmp, "records.jsonl"), Array.from({ length: Q }, (_, i) => `${JSON.stringify({ id: `q${i}`, input: "who wrote it?" })}\n`).join(""));
  // 20,000 records (two of retrieve's batches: the second surely finds the search worker started), record i
  // with the vector of record i mod 200
  const many = new Float32Array(MANY * dim);
  for (let i = 0; i < MANY; i++) many.set(queryRows.subarray((i % Q) * dim, ((i % Q) + 1) * dim), i * dim);
  writeFileSync(join(tmp, "many.npy"), npyBytes(MANY, dim, many));
  writeFileSync(join(tmp, "many.jsonl"), Array.from({ length: MANY }, (_, i) => `${JSON.stringify({ id: `m${i}`, input: "who wrote it?" })}\n`).join(""));
  // every kind built to search shallowly by default (1 list, 10 candidates), so deeper options show
  for (const kind of KINDS) {
    const b = tartan("index", "build", "--kind", "dense", "--vectors", join(tmp, "passages.npy"), "--ids", join(tmp, "ids.txt"), "--unit", "paragraph", "--quantize", kind, ...(kind === "none" ? [] : ["--lists", "3", "--nprobe", "1", "--refine", "10"]), "--out", dirOf(kind));
    if (b.status !== 0) throw new Error(b.stderr);
  }
}, 300_000);

const run = (kind: string, out: string, ...extra: string[]) => runOn("queries", "records", kind, out, ...extra);
const runOn = (vectors: string, records: string, kind: string, out: string, ...extra: string[]) => {
  const r = tartan("retrieve", "--index", dirOf(kind), "--query-vectors", join(tmp, `${vectors}.npy`), "--input", join(tmp, `${records}.jsonl`), "--out", join(tmp, out), "--top-k", "3", ...extra);
  expect(r.status, r.stderr).toBe(0);
  return readFileSync(join(tmp, out), "utf8");
};
const top1 = (text: string) => text.trim().split("\n").map((l) => (JSON.parse(l) as { output: { provenance: { wikipedia_id: string; start_paragraph_id: number }[] }[] }).output[0].provenance[0]);
const goldOf = (i: number) => ({ wikipedia_id: ids[gold[i]].split("\t")[0], start_paragraph_id: Number(ids[gold[i]].split("\t")[1]) });

describe("query vectors belong to their records", () => {
  it("gives 200 records with one input their own 200 vectors' results", () => {
    const out = top1(run("none", "exact.jsonl"));
    expect(out).toHaveLength(Q);
    out.forEach((p, i) => expect(p).toMatchObject(goldOf(i)));
    expect(new Set(out.map((p) => `${p.wikipedia_id}:${p.start_paragraph_id}`)).size).toBe(Math.min(Q, n));
  });

  it("refuses a row count other than the records', naming both counts", () => {
    writeFileSync(join(tmp, "short.jsonl"), readFileSync(join(tmp, "records.jsonl"), "utf8").split("\n").slice(0, 150).join("\n") + "\n");
    const r = tartan("retrieve", "--index", dirOf("pq"), "--query-vectors", join(tmp, "queries.npy"), "--input", join(tmp, "short.jsonl"), "--out", join(tmp, "x.jsonl"));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${join(tmp, "queries.npy")}: 200 query vectors for 150 records (row i is the query of record i)`);
  });

  it("refuses --nprobe and --refine where no index is a compressed dense one", () => {
    const r = tartan("retrieve", "--index", dirOf("none"), "--query-vectors", join(tmp, "queries.npy"), "--input", join(tmp, "records.jsonl"), "--out", join(tmp, "y.jsonl"), "--nprobe", "4");
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--nprobe and --refine set the search of a compressed dense index, and no index given is one (dense (exact))");
    const b = tartan("retrieve", "--index", join(tmp, "bm25"), "--input", join(tmp, "records.jsonl"), "--out", join(tmp, "z.jsonl"), "--refine", "40");
    expect(b.status).toBe(2);
    expect(b.stderr).toContain("no index given is one (bm25)");
  });
});

describe("fusion with a dense index built from --ids", () => {
  it("fuses with the BM25 index whose units the ids name (no titles, texts or characters needed)", async () => {
    const r = tartan("retrieve", "--index", dirOf("none"), join(tmp, "bm25"), "--query-vectors", join(tmp, "queries.npy"), "--input", join(tmp, "records.jsonl"), "--out", join(tmp, "fused.jsonl"), "--top-k", "3");
    expect(r.status, r.stderr).toBe(0);
    const fused = readFileSync(join(tmp, "fused.jsonl"), "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { output: { provenance: { score: number }[] }[] }).output[0].provenance.map((p) => p.score));
    // the library's fusion of the same members, each record searched with its own vector
    const h = await openIndexes([dirOf("none"), join(tmp, "bm25")], { threads: 1 });
    try {
      const expected = await h.searchBatch!(gold.map((_, i) => ({ text: "who wrote it?", vector: queryRows.subarray(i * dim, (i + 1) * dim) })), 3);
      expect(fused).toEqual(expected.map((hits) => hits.map((x) => x.score)));
    } finally {
      await h.close();
    }
    // BM25 alone gives every record the same list; the dense member's vectors make them differ
    expect(new Set(readFileSync(join(tmp, "fused.jsonl"), "utf8").trim().split("\n").map((l) => JSON.stringify((JSON.parse(l) as { output: unknown[] }).output))).size).toBeGreaterThan(100);
  });

  it("names the first unit that differs", () => {
    const swapped = [...ids];
    [swapped[0], swapped[1]] = [swapped[1], swapped[0]];
    writeFileSync(join(tmp, "ids-swapped.txt"), `${swapped.join("\n")}\n`);
    const b = tartan("index", "build", "--kind", "dense", "--vectors", join(tmp, "passages.npy"), "--ids", join(tmp, "ids-swapped.txt"), "--unit", "paragraph", "--out", join(tmp, "dense-swapped"));
    expect(b.status, b.stderr).toBe(0);
    const r = tartan("retrieve", "--index", join(tmp, "dense-swapped"), join(tmp, "bm25"), "--query-vectors", join(tmp, "queries.npy"), "--input", join(tmp, "records.jsonl"), "--out", join(tmp, "nofuse.jsonl"));
    expect(r.status).toBe(2);
    const [w0, p0] = ids[1].split("\t");
    const [w1, p1] = ids[0].split("\t");
    expect(r.stderr).toContain(`hybrid: unit 0 differs between ${join(tmp, "dense-swapped")} and ${join(tmp, "bm25")} (${w0} ¶${p0}–${p0} against ${w1} ¶${p1}–${p1} chars 0–`);
  });
});

describe("search options reach every thread", () => {
  it.each(KINDS)("retrieve over %s codes writes the same bytes on 1 and 2 threads", (kind) => {
    const deep = kind === "none" ? [] : ["--nprobe", "9", "--refine", String(n)];
    const one = runOn("many", "many", kind, `${kind}-t1.jsonl`, "--threads", "1", ...deep);
    const two = runOn("many", "many", kind, `${kind}-t2.jsonl`, "--threads", "2", ...deep);
    expect(two === one).toBe(true);
    const tops = top1(one);
    expect(tops).toHaveLength(MANY);
    // every list probed and every candidate rescored (or exact search): each record's own paragraph first ...
    tops.forEach((p, i) => expect(p).toMatchObject(goldOf(i % Q)));
    if (kind === "none") return;
    // ... which the shallow defaults the index was built with do not give
    const shallow = top1(run(kind, `${kind}-shallow.jsonl`, "--threads", "2"));
    expect(shallow.filter((p, i) => p.wikipedia_id !== goldOf(i).wikipedia_id || p.start_paragraph_id !== goldOf(i).start_paragraph_id).length).toBeGreaterThan(0);
  });

  it.each(KINDS.filter((k) => k !== "none"))("the library's pool over %s codes equals one thread's batch, options included", async (kind) => {
    const queries = gold.map((_, i) => ({ text: "who wrote it?", vector: queryRows.subarray(i * dim, (i + 1) * dim) }));
    // every option a call can carry (refineFactor reaches binary codes only, topProbe all)
    const options = { nprobe: 9, refine: n, topProbe: 3, refineFactor: 2 };
    const alone = await openIndexes([dirOf(kind)], { threads: 1 });
    const pooled = await openIndexes([dirOf(kind)], { threads: 1 });
    const pool = new SearchPool(pooled, [dirOf(kind)], { threads: 2, chunk: 16 });
    try {
      const expected = await alone.searchBatch!(queries, 5, options);
      // until the worker has started and taken a share of the batch (a few calls at most)
      let got: Hit[][] = [];
      for (let tries = 0; tries < 200 && !(pool.lastShares()[1] > 0); tries++) got = await pool.search(queries, 5, undefined, options);
      expect(pool.lastShares()[1]).toBeGreaterThan(0);
      expect(got).toEqual(expected);
      expect(expected.map((h: Hit[]) => h[0].unit)).toEqual(gold);
      expect(await alone.searchBatch!(queries, 5)).not.toEqual(expected);
    } finally {
      await pool.close();
      await alone.close();
      await pooled.close();
    }
  });

  it.each(KINDS.filter((k) => k !== "none"))("serve over %s codes answers batches with vectors and options as the library does, on 2 threads", async (kind) => {
    const server = await startServer({ indexes: [dirOf(kind)], port: 0, searchThreads: 2 });
    const lib = await openIndexes([dirOf(kind)], { threads: 1 });
    try {
      const vectors = gold.map((_, i) => Array.from(queryRows.subarray(i * dim, (i + 1) * dim)));
      const expected = await lib.searchBatch!(gold.map((_, i) => ({ text: "", vector: queryRows.subarray(i * dim, (i + 1) * dim) })), 5, { nprobe: 9, refine: n });
      // three times: the later batches find the pool's worker started and share it
      for (let round = 0; round < 3; round++) {
        const res = await fetch(`http://127.0.0.1:${server.port}/api/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queries: gold.map(() => "who wrote it?"), vectors, k: 5, nprobe: 9, refine: n }) });
        expect(res.status).toBe(200);
        const body = (await res.json()) as { results: { hits: { score: number; provenance: { wikipedia_id: string; start_paragraph_id: number } }[] }[] };
        expect(body.results.map((r) => r.hits.map((h) => h.score))).toEqual(expected.map((h) => h.map((x) => x.score)));
        body.results.forEach((r, i) => expect(r.hits[0].provenance).toMatchObject(goldOf(i)));
      }
      // health marks it as an index that answers vectors only
      const health = (await (await fetch(`http://127.0.0.1:${server.port}/api/health`)).json()) as { indexes: { text: boolean; kind: string }[] };
      expect(health.indexes.map((i) => [i.kind, i.text])).toEqual([["dense", false]]);
      // text on an index with no encoder is the client's to fix, with the reason
      const text = await fetch(`http://127.0.0.1:${server.port}/api/search?q=who`);
      expect(text.status).toBe(422);
      expect(((await text.json()) as { error: string }).error).toContain("names no encoder");
      const wrong = await fetch(`http://127.0.0.1:${server.port}/api/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queries: ["a"], vectors: [[1, 2]] }) });
      expect(wrong.status).toBe(400);
      expect(((await wrong.json()) as { error: string }).error).toBe("vectors[0] must be 32 finite numbers");
    } finally {
      await lib.close();
      await server.close();
    }
  });

  it("mcp's search takes a vector and options, and answers as the library does", async () => {
    const client = new Client({ name: "tartan-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--index", dirOf("pq")], stderr: "pipe" }));
    const lib = await openIndexes([dirOf("pq")], { threads: 1 });
    try {
      for (const i of [0, 57, 199]) {
        const vector = queryRows.subarray(i * dim, (i + 1) * dim);
        const r = (await client.callTool({ name: "search", arguments: { query: "who wrote it?", k: 3, vector: Array.from(vector), nprobe: 9, refine: n } })) as unknown as { structuredContent: { hits: { score: number; provenance: { wikipedia_id: string; start_paragraph_id: number } }[] } };
        const expected = await lib.search({ text: "", vector }, 3, { nprobe: 9, refine: n });
        expect(r.structuredContent.hits.map((h) => h.score)).toEqual(expected.map((h) => h.score));
        expect(r.structuredContent.hits[0].provenance).toMatchObject(goldOf(i));
      }
      const bad = (await client.callTool({ name: "search", arguments: { query: "x", vector: [1, 2, 3] } })) as { isError?: boolean; content: { text: string }[] };
      expect(bad.isError).toBe(true);
      expect(bad.content[0].text).toContain("vector must be 32 finite numbers (the index's size), got 3");
    } finally {
      await lib.close();
      await client.close();
    }
  });
});

describe("the rescoring depth is refine (issue 37: --rerank was renamed after FAISS's refine step)", () => {
  it("writes refine into a new index's manifest, and an old manifest's rerank still sets the default depth", async () => {
    const m = JSON.parse(readFileSync(join(dirOf("pq"), "manifest.json"), "utf8")) as { params: Record<string, unknown> };
    expect([m.params.nprobe, m.params.refine, "rerank" in m.params]).toEqual([1, 10, false]);
    // the same index with the manifest as tartan wrote it before the rename
    const old = join(tmp, "dense-pq-old");
    cpSync(dirOf("pq"), old, { recursive: true });
    const { refine, ...rest } = m.params;
    writeFileSync(join(old, "manifest.json"), JSON.stringify({ ...m, params: { ...rest, rerank: refine } }));
    const queries = gold.slice(0, 40).map((_, i) => ({ text: "", vector: queryRows.subarray(i * dim, (i + 1) * dim) }));
    const [a, b] = await Promise.all([openIndexes([dirOf("pq")], { threads: 1 }), openIndexes([old], { threads: 1 })]);
    try {
      const now = await a.searchBatch!(queries, 5);
      expect(await b.searchBatch!(queries, 5)).toEqual(now);
      // the depth recorded matters: deeper searches give other lists
      const deep = await a.searchBatch!(queries, 5, { nprobe: 9, refine: n });
      expect(deep).not.toEqual(now);
      // the library's old option name is a deprecated alias of refine
      expect(await a.searchBatch!(queries, 5, { nprobe: 9, rerank: n })).toEqual(deep);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("the CLI refuses the old --rerank N naming --refine (retrieve, index build, serve, mcp, run)", () => {
    const r = tartan("retrieve", "--index", dirOf("pq"), "--query-vectors", join(tmp, "queries.npy"), "--input", join(tmp, "records.jsonl"), "--out", join(tmp, "old.jsonl"), "--rerank", "40");
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("--rerank 40 was the rescoring depth of a compressed dense index: it is now --refine N; --rerank no longer exists (rerankers are --reranker SPEC with --rerank-depth N)");
    expect(existsSync(join(tmp, "old.jsonl"))).toBe(false);
    const spec = tartan("retrieve", "--index", dirOf("pq"), "--input", join(tmp, "records.jsonl"), "--out", join(tmp, "old.jsonl"), "--rerank", "cross-encoder:model=m.onnx");
    expect(spec.stderr).toContain("rerankers are given as --reranker SPEC (with --rerank-depth N); --rerank no longer exists (the rescoring depth of a compressed dense index is --refine N)");
    const b = tartan("index", "build", "--kind", "dense", "--vectors", join(tmp, "passages.npy"), "--ids", join(tmp, "ids.txt"), "--quantize", "pq", "--rerank", "10", "--out", join(tmp, "never"));
    expect(b.status).not.toBe(0);
    expect(b.stderr).toContain("it is now --refine N");
    expect(existsSync(join(tmp, "never"))).toBe(false);
    expect(tartan("serve", "--index", dirOf("pq"), "--rerank", "10").stderr).toContain("--rerank 10 was the rescoring depth of a compressed dense index: it is now a search request's refine field");
    expect(tartan("mcp", "--index", dirOf("pq"), "--rerank", "10").stderr).toContain("it is now the search tool's refine argument");
    expect(tartan("run", "--input", join(tmp, "records.jsonl"), "--rerank", "10").stderr).toContain("it is now set by tartan index build --refine N (or tartan retrieve --refine N)");
  });

  it("serve and mcp refuse a request's rerank naming refine and reranker", async () => {
    const server = await startServer({ indexes: [dirOf("pq")], port: 0 });
    const client = new Client({ name: "tartan-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--index", dirOf("pq")], stderr: "pipe" }));
    const renamed = "rerank is no longer a search option: a compressed dense index's rescoring depth is refine (rerank's old meaning), and a reranker is chosen by reranker (a name from the server's --reranker NAME=SPEC) with rerank_depth";
    try {
      const vectors = [Array.from(queryRows.subarray(0, dim))];
      const post = await fetch(`http://127.0.0.1:${server.port}/api/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queries: ["q"], vectors, rerank: 40 }) });
      expect(post.status).toBe(400);
      expect(((await post.json()) as { error: string }).error).toBe(renamed);
      const get = await fetch(`http://127.0.0.1:${server.port}/api/search?q=who&rerank=40`);
      expect(get.status).toBe(400);
      expect(((await get.json()) as { error: string }).error).toBe(renamed);
      const ok = await fetch(`http://127.0.0.1:${server.port}/api/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queries: ["q"], vectors, refine: n, nprobe: 9, k: 1 }) });
      expect(ok.status).toBe(200);
      const r = (await client.callTool({ name: "search", arguments: { query: "q", vector: vectors[0], rerank: 40 } })) as { isError?: boolean; content: { text: string }[] };
      expect(r.isError).toBe(true);
      expect(r.content[0].text).toContain(renamed);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
