// `tartan retrieve --reranker SPEC --rerank-depth N` and `tartan rerank` from the command line, on SQuAD
// questions over the BM25 paragraph index, with the listwise LLM reranker behind the loopback judge
// (test/retrieval/rerank/llm-model.ts): retrieve's reranked run is BM25's top N put in the judge's order
// (one RankGPT window), on two threads; `tartan rerank` of BM25's plain run gives the same run; `tartan run
// --reranker` reads those passages, and serve's and mcp's searches (`--reranker`) give them; flags that do not go together are refused.

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerRerank } from "../../src/cli/commands/rerank.js";
import { registerRetrieve } from "../../src/cli/commands/retrieve.js";
import { registerRun } from "../../src/cli/commands/run.js";
import { ingest } from "../../src/knowledge/ingest.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { openIndex } from "../../src/retrieval/open.js";
import { Resources } from "../../src/server/resources.js";
import type { TestServer } from "../fixtures/readers/openai-server.js";
import { squadBm25Paragraphs } from "../fixtures/squad-bm25.js";
import { hits, startModel } from "../retrieval/rerank/llm-model.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-cli-rerank-"));
const f = (n: string) => join(tmp, n);
let dir = "";
let server: TestServer;
let spec = "";

async function cli(args: string[]): Promise<void> {
  const program = new Command().exitOverride();
  registerRetrieve(program);
  registerRerank(program);
  registerRun(program);
  await program.parseAsync(["node", "tartan", ...args]);
}

beforeAll(async () => {
  ({ dir } = await squadBm25Paragraphs(tmp, 1));
  await ingest(f("pages.jsonl"), { out: f("ks"), workers: 0 });
  const records = (await readJsonlAll<KiltRecord>(f("questions.jsonl"))).filter((_, i) => i % 700 === 0).slice(0, 12);
  writeFileSync(f("records.jsonl"), records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  server = await startModel();
  spec = `llm-listwise:model=ranker-1,base-url=${server.baseUrl}`;
}, 300_000);

afterAll(async () => {
  await server?.close();
});

describe("tartan retrieve --reranker and tartan rerank", () => {
  it("retrieve --reranker puts BM25's top 10 in the judge's order, and tartan rerank gives the same run", async () => {
    await cli(["retrieve", "--index", dir, "--input", f("records.jsonl"), "--out", f("reranked.jsonl"), "--top-k", "5", "--reranker", spec, "--rerank-depth", "10", "--threads", "2"]);
    const records = await readJsonlAll<KiltRecord>(f("records.jsonl"));
    const got = await readJsonlAll<KiltRecord>(f("reranked.jsonl"));
    const bm25 = await openIndex(dir);
    try {
      for (let i = 0; i < records.length; i++) {
        const q = records[i].input!;
        const base = await bm25.search(q, 10);
        // the judge sees `Title: … Content: …`, its first 300 words
        const seen = base.map((h) => `Title: ${bm25.units.get(h.unit).wikipedia_title} Content: ${bm25.units.get(h.unit).text}`.split(/\s+/u).slice(0, 300).join(" "));
        const order = base.map((_, j) => j).sort((a, b) => hits(q, seen[b]) - hits(q, seen[a]) || a - b);
        // the scores are 10 − position; ties cannot happen, so the order is the judge's
        const want = order.slice(0, 5).map((j) => [bm25.units.get(base[j].unit).wikipedia_id, bm25.units.get(base[j].unit).start_paragraph_id]);
        expect(got[i].output![0].provenance!.map((p) => [p.wikipedia_id, p.start_paragraph_id])).toEqual(want);
        expect(got[i].output![0].provenance!.map((p) => p.score)).toEqual([10, 9, 8, 7, 6]);
      }
    } finally {
      await bm25.close();
    }
    await cli(["retrieve", "--index", dir, "--input", f("records.jsonl"), "--out", f("bm25.jsonl"), "--top-k", "10"]);
    await cli(["rerank", "--input", f("bm25.jsonl"), "--ks", f("ks"), "--reranker", spec, "--depth", "10", "--out", f("rerank.jsonl"), "--threads", "2"]);
    const rr = await readJsonlAll<KiltRecord>(f("rerank.jsonl"));
    expect(rr.map((r) => r.output![0].provenance!.slice(0, 5))).toEqual(got.map((r) => r.output![0].provenance));
    const settings = JSON.parse(readFileSync(f("rerank.jsonl.settings.json"), "utf8"));
    expect(settings.settings).toMatchObject({ reranker: "llm-listwise", model: "ranker-1", window: 20, stride: 10 });
    expect(Object.values(settings.answers).every((a) => (a as unknown[]).length === 1)).toBe(true);
  });

  it("run --reranker reads the reranked passages", async () => {
    await cli(["run", "--input", f("records.jsonl"), "--out", f("run.jsonl"), "--index", dir, "--reader", "dialogue", "--top-k", "5", "--reader-k", "5", "--reranker", spec, "--rerank-depth", "10", "--no-evaluate"]);
    const ran = await readJsonlAll<KiltRecord>(f("run.jsonl"));
    const reranked = await readJsonlAll<KiltRecord>(f("reranked.jsonl"));
    const key = (p: { wikipedia_id?: unknown; start_paragraph_id?: unknown }) => `${String(p.wikipedia_id)}+${String(p.start_paragraph_id)}`;
    expect(ran.map((r) => r.id)).toEqual(reranked.map((r) => r.id));
    ran.forEach((r, i) => {
      // the reader's citations come first, then the reranked passages: the same five, with the reranker's scores
      expect(r.output![0].provenance!.map(key).sort()).toEqual(reranked[i].output![0].provenance!.map(key).sort());
      expect(r.output![0].provenance!.map((p) => p.score).sort()).toEqual([10, 6, 7, 8, 9]);
    });
  });

  it("serve's and mcp's resources (--reranker) search reranked, on the calling thread and through the pool", async () => {
    const resources = await Resources.open({ indexes: [dir], reranker: spec, rerankDepth: 10, searchThreads: 2 });
    try {
      const [ix] = resources.indexes;
      const records = await readJsonlAll<KiltRecord>(f("records.jsonl"));
      const reranked = await readJsonlAll<KiltRecord>(f("reranked.jsonl"));
      const queries = records.map((r) => r.input!);
      const want = reranked.map((r) => r.output![0].provenance!.map((p) => [p.wikipedia_id, p.start_paragraph_id]));
      const where = (hits: { unit: number }[]) => hits.map((h) => [ix.retriever.units.get(h.unit).wikipedia_id, ix.retriever.units.get(h.unit).start_paragraph_id]);
      expect((await ix.pool.search(queries, 5)).map(where)).toEqual(want);
      expect(where(await ix.retriever.search(queries[0], 5))).toEqual(want[0]);
    } finally {
      await resources.close();
    }
  });

  it("refuses --rerank-depth without --reranker, and an unknown reranker naming the known ones", async () => {
    await expect(cli(["retrieve", "--index", dir, "--input", f("records.jsonl"), "--out", f("x.jsonl"), "--rerank-depth", "10"])).rejects.toThrow("--rerank-depth goes with --reranker");
    await expect(cli(["retrieve", "--index", dir, "--input", f("records.jsonl"), "--out", f("x.jsonl"), "--reranker", "monot5", "--threads", "1"])).rejects.toThrow('--reranker: unknown reranker "monot5" (known: cross-encoder, llm-pointwise, llm-listwise, learned)');
  });
});
