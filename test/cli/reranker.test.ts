// `tartan reranker train` and `--reranker learned:MODEL.json` from the command line, on a BM25 run of SQuAD
// questions (every 40th of the quick start's training articles): the command writes the model the library
// call trains (same weights with the same seed), prints its summary, and `tartan rerank` and
// `tartan retrieve --reranker` use the model file; a bad model file stops them naming the file and field.
// The reranker's quality and features: test/retrieval/rerank/learned.test.ts.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerRerank } from "../../src/cli/commands/rerank.js";
import { registerReranker } from "../../src/cli/commands/reranker.js";
import { registerRetrieve } from "../../src/cli/commands/retrieve.js";
import { trainRerankerFromFiles } from "../../src/pipeline/reranker-train.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { squadBm25Paragraphs } from "../fixtures/squad-bm25.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-cli-reranker-"));
const f = (n: string) => join(tmp, n);
let dir = "";
const logged: string[] = [];

async function cli(args: string[]): Promise<void> {
  const program = new Command().exitOverride();
  registerRetrieve(program);
  registerRerank(program);
  registerReranker(program);
  const err = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => (logged.push(String(s)), true)) as typeof process.stderr.write;
  try {
    await program.parseAsync(["node", "tartan", ...args]);
  } finally {
    process.stderr.write = err;
  }
}

beforeAll(async () => {
  ({ dir } = await squadBm25Paragraphs(tmp, 1));
  const all = await readJsonlAll<KiltRecord>(f("questions.jsonl"));
  writeFileSync(f("train.jsonl"), all.filter((r, i) => (r.meta!.article_index as number) < 24 && i % 40 === 0).map((r) => JSON.stringify(r)).join("\n") + "\n");
  await cli(["retrieve", "--index", dir, "--input", f("train.jsonl"), "--out", f("bm25.jsonl"), "--top-k", "10", "--text", "full", "--threads", "1"]);
}, 300_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("tartan reranker train", () => {
  it("writes the model the library trains, and rerank and retrieve --reranker read it", async () => {
    await cli(["reranker", "train", "--records", f("train.jsonl"), "--run", f("bm25.jsonl"), "--out", f("model.json"), "--epochs", "50", "--seed", "5", "--features", "rank,score,overlap,page_rank"]);
    const lib = await trainRerankerFromFiles({ records: f("train.jsonl"), run: f("bm25.jsonl"), out: f("lib.json"), epochs: 50, seed: 5, features: ["rank", "score", "overlap", "page_rank"] }, () => {});
    const model = JSON.parse(readFileSync(f("model.json"), "utf8"));
    expect(model.features).toEqual(["rank", "score", "overlap", "page_rank"]);
    expect(model.weights).toEqual(lib.model.weights);
    expect(logged.join("")).toMatch(new RegExp(`learned reranker trained on ${lib.used} of ${lib.queries} queries \\(${lib.pairs.toLocaleString("en-US")} pairs, 4 features, 50 epochs\\): loss .* → .*; model → `, "u"));
    await cli(["rerank", "--input", f("bm25.jsonl"), "--records", f("train.jsonl"), "--reranker", `learned:${f("model.json")}`, "--depth", "10", "--out", f("reranked.jsonl"), "--threads", "1"]);
    await cli(["retrieve", "--index", dir, "--input", f("train.jsonl"), "--out", f("retrieved.jsonl"), "--top-k", "10", "--reranker", `learned:${f("model.json")}`, "--threads", "1"]);
    const a = await readJsonlAll<KiltRecord>(f("reranked.jsonl"));
    const b = await readJsonlAll<KiltRecord>(f("retrieved.jsonl"));
    expect(b.map((r) => r.output![0].provenance!.map((p) => p.start_paragraph_id))).toEqual(a.map((r) => r.output![0].provenance!.map((p) => p.start_paragraph_id)));
    const settings = JSON.parse(readFileSync(f("reranked.jsonl.settings.json"), "utf8"));
    expect(settings.settings).toMatchObject({ reranker: "learned", model: f("model.json"), features: model.features, weights: model.weights });
  }, 120_000);

  it("a bad model file stops rerank naming the file and the field", async () => {
    writeFileSync(f("bad.json"), JSON.stringify({ format: "tartan-learned-reranker", version: 1, objective: "pairwise-logistic", features: ["rank"], mean: [0], scale: [1], weights: ["x"] }));
    await expect(cli(["rerank", "--input", f("bm25.jsonl"), "--records", f("train.jsonl"), "--reranker", `learned:${f("bad.json")}`, "--out", f("bad-out.jsonl")])).rejects.toThrow(`${f("bad.json")}: field weights[0]: "x" is not a finite number`);
    await expect(cli(["reranker", "train", "--records", f("train.jsonl"), "--run", f("bm25.jsonl"), "--out", f("m.json"), "--features", "rank,bm25"])).rejects.toThrow('--features: unknown feature "bm25"');
  });
});
