// Reranking run files (`tartan rerank`'s work, src/pipeline/rerank.ts) on real data: SQuAD questions
// retrieved by the BM25 paragraph index as KILT guesses (with and without passage text) and as a TREC run,
// reranked by the pointwise LLM reranker behind the loopback judge (test/retrieval/rerank/llm-model.ts) on
// two worker threads. Each query keeps its top `depth` entries, reordered by P(yes) of what the judge saw
// (ties by first-stage rank), every provenance field but the score kept; text read from the knowledge
// source equals the text the run carries; the TREC run reranks to the same order; the settings file records
// the spec, the prompt and every answer; bad input is refused naming the file.

import { readFileSync, writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingest } from "../../src/knowledge/ingest.js";
import { rerankRun } from "../../src/pipeline/rerank.js";
import { retrieve } from "../../src/pipeline/retrieve.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord, Provenance } from "../../src/records/types.js";
import type { TestServer } from "../fixtures/readers/openai-server.js";
import { squadBm25Paragraphs } from "../fixtures/squad-bm25.js";
import { pYes, startModel } from "../retrieval/rerank/llm-model.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-rerank-run-"));
const quiet = () => {};
const f = (name: string) => join(tmp, name);
let server: TestServer;
let spec = "";

beforeAll(async () => {
  const { dir } = await squadBm25Paragraphs(tmp, 1);
  await ingest(f("pages.jsonl"), { out: f("ks"), workers: 0 });
  // 20 questions spread over the dev set
  const records = (await readJsonlAll<KiltRecord>(f("questions.jsonl"))).filter((_, i) => i % 500 === 0).slice(0, 20);
  writeFileSync(f("records.jsonl"), records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  // the run's records without their input: the queries come from --records
  await retrieve({ indexes: [dir], input: f("records.jsonl"), out: f("run.jsonl"), topK: 10, text: "none", threads: 1 }, quiet);
  await retrieve({ indexes: [dir], input: f("records.jsonl"), out: f("run-text.jsonl"), topK: 10, text: "full", threads: 1 }, quiet);
  await retrieve({ indexes: [dir], input: f("records.jsonl"), out: f("run.trec"), topK: 10, format: "trec", threads: 1 }, quiet);
  const noInput = (await readJsonlAll<KiltRecord>(f("run.jsonl"))).map(({ input: _, ...r }) => r);
  writeFileSync(f("run-no-input.jsonl"), noInput.map((r) => JSON.stringify(r)).join("\n") + "\n");
  server = await startModel();
  spec = `llm-pointwise:model=judge-1,base-url=${server.baseUrl}`;
}, 300_000);

afterAll(async () => {
  await server?.close();
});

const strip = ({ score: _, ...p }: Provenance) => p;

describe("rerankRun", () => {
  it("reranks KILT guesses: the top depth by P(yes), provenance kept, the text read from the knowledge source", async () => {
    const stats = await rerankRun({ input: f("run-no-input.jsonl"), records: f("records.jsonl"), ks: f("ks"), reranker: spec, depth: 5, out: f("out.jsonl"), threads: 2 }, quiet);
    expect(stats).toMatchObject({ queries: 20, pairs: 100, format: "kilt", settings: f("out.jsonl.settings.json") });
    const before = await readJsonlAll<KiltRecord>(f("run-no-input.jsonl"));
    const texts = await readJsonlAll<KiltRecord>(f("run-text.jsonl"));
    const records = await readJsonlAll<KiltRecord>(f("records.jsonl"));
    const after = await readJsonlAll<KiltRecord>(f("out.jsonl"));
    expect(after.map((r) => r.id)).toEqual(before.map((r) => r.id));
    after.forEach((r, i) => {
      const top = before[i].output![0].provenance!.slice(0, 5);
      const text = texts[i].output![0].provenance!.slice(0, 5).map((p) => `${p.title}: ${p.text}`);
      const query = records[i].input!;
      const want = top.map((p, j) => ({ p: strip(p), score: pYes(query, text[j]), j })).sort((a, b) => b.score - a.score || a.j - b.j);
      const got = r.output![0].provenance!;
      expect(got.map(strip)).toEqual(want.map((w) => w.p));
      got.forEach((p, j) => expect(p.score).toBeCloseTo(want[j].score, 12));
      expect(r.input).toBeUndefined();
    });
    // the judge reorders some queries
    expect(after.some((r, i) => r.output![0].provenance![0].wikipedia_id !== before[i].output![0].provenance![0].wikipedia_id || r.output![0].provenance![0].start_paragraph_id !== before[i].output![0].provenance![0].start_paragraph_id)).toBe(true);
    const settings = JSON.parse(readFileSync(f("out.jsonl.settings.json"), "utf8"));
    expect(settings).toMatchObject({ command: "rerank", format: "kilt", depth: 5, reranker: spec.replace("base-url", "baseUrl"), spec: { name: "llm-pointwise", options: { model: "judge-1", baseUrl: server.baseUrl } }, threads: 2 });
    expect(settings.settings).toMatchObject({ reranker: "llm-pointwise", model: "judge-1", prompt: { system: expect.stringContaining("Yes or No") } });
    expect(Object.keys(settings.answers)).toEqual(before.map((r) => String(r.id)));
    expect(Object.values(settings.answers).every((a) => (a as unknown[]).length === 5)).toBe(true);
  });

  it("gives the same run from guesses that carry their text (no knowledge source needed)", async () => {
    await rerankRun({ input: f("run-text.jsonl"), reranker: spec, depth: 5, out: f("out-text.jsonl"), threads: 1 }, quiet);
    const a = await readJsonlAll<KiltRecord>(f("out.jsonl"));
    const b = await readJsonlAll<KiltRecord>(f("out-text.jsonl"));
    expect(b.map((r) => r.output![0].provenance!.map(({ text: _, ...p }) => p))).toEqual(a.map((r) => r.output![0].provenance));
  });

  it("reranks a TREC run to the same order, docids kept", async () => {
    await rerankRun({ input: f("run.trec"), records: f("records.jsonl"), ks: f("ks"), reranker: spec, depth: 5, out: f("out.trec") }, quiet);
    const lines = readFileSync(f("out.trec"), "utf8").trim().split("\n").map((l) => l.split(" "));
    expect(lines.length).toBe(100);
    const kilt = await readJsonlAll<KiltRecord>(f("out.jsonl"));
    for (const r of kilt) {
      const mine = lines.filter((l) => l[0] === String(r.id));
      expect(mine.map((l) => l[2])).toEqual(r.output![0].provenance!.map((p) => `${p.wikipedia_id}+${p.start_paragraph_id}`));
      expect(mine.map((l) => l[3])).toEqual(["1", "2", "3", "4", "5"]);
      expect(mine.every((l) => l[1] === "Q0" && l[5] === "tartan-bm25-rerank")).toBe(true);
    }
  });

  it("refuses what it cannot rerank, naming the file", async () => {
    await expect(rerankRun({ input: f("run.trec"), ks: f("ks"), reranker: spec, out: f("x.trec") }, quiet)).rejects.toThrow(`${f("run.trec")}: query `);
    await expect(rerankRun({ input: f("run.trec"), ks: f("ks"), reranker: spec, out: f("x.trec") }, quiet)).rejects.toThrow("a TREC run has no query texts; give --records");
    await expect(rerankRun({ input: f("run.jsonl"), reranker: spec, out: f("x.jsonl") }, quiet)).rejects.toThrow(`${f("run.jsonl")}:1: record `);
    await expect(rerankRun({ input: f("run.jsonl"), reranker: spec, out: f("x.jsonl") }, quiet)).rejects.toThrow("the provenance has no text; give --ks");
    await expect(rerankRun({ input: f("run-no-input.jsonl"), ks: f("ks"), reranker: spec, out: f("x.jsonl") }, quiet)).rejects.toThrow(`${f("run-no-input.jsonl")}:1: record`);
    await expect(rerankRun({ input: f("run.jsonl"), ks: f("ks"), reranker: spec, out: f("run.jsonl") }, quiet)).rejects.toThrow(/run\.jsonl/);
    await expect(rerankRun({ input: f("run.jsonl"), ks: f("ks"), reranker: "llm-pointwise:model=judge-1,windows=3", out: f("x.jsonl") }, quiet)).rejects.toThrow('reranker llm-pointwise: unknown option "windows"');
    // nothing half-written was left
    expect(() => readFileSync(f("x.jsonl"))).toThrow();
    expect(() => readFileSync(f("x.trec"))).toThrow();
  });
});
