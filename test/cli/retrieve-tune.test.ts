// `tartan retrieve --tune-on RECORDS` (src/pipeline/tune-fusion.ts): on SQuAD's BM25 and TF-IDF paragraph
// indexes, trained on questions of the quick start's training articles, the grid's chosen RRF weights and
// wsum alpha are the exact ones found once, each point's value is what `tartan eval` gives for a run
// retrieved with that point's weights, the run is the one `--weights` gives, the settings file records the
// choice and the grid; and the refusals.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerRetrieve } from "../../src/cli/commands/retrieve.js";
import { evaluate } from "../../src/eval/evaluate.js";
import { simplexGrid } from "../../src/pipeline/tune-fusion.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { buildIndex } from "../../src/retrieval/build.js";
import { squadBm25Paragraphs } from "../fixtures/squad-bm25.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-tune-"));
const f = (n: string) => join(tmp, n);
let bm25 = "";
const tfidf = f("tfidf-paragraph");
const lines: string[] = [];

async function cli(args: string[]): Promise<void> {
  const program = new Command().exitOverride();
  registerRetrieve(program);
  const err = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => (lines.push(String(s)), true)) as typeof process.stderr.write;
  try {
    await program.parseAsync(["node", "tartan", ...args]);
  } finally {
    process.stderr.write = err;
  }
}

beforeAll(async () => {
  ({ dir: bm25 } = await squadBm25Paragraphs(tmp, 1));
  await buildIndex({ pages: f("pages.jsonl"), kind: "tfidf", unit: "paragraph", out: tfidf }, () => {});
  const all = await readJsonlAll<KiltRecord>(f("questions.jsonl"));
  // every 20th question of the training articles (0–23), every 40th of the held-out ones
  writeFileSync(f("train.jsonl"), all.filter((r, i) => (r.meta!.article_index as number) < 24 && i % 20 === 0).map((r) => JSON.stringify(r)).join("\n") + "\n");
  writeFileSync(f("test.jsonl"), all.filter((r, i) => (r.meta!.article_index as number) >= 24 && i % 40 === 0).map((r) => JSON.stringify(r)).join("\n") + "\n");
}, 300_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const paragraphRprec = async (gold: string, guesses: string) => (await evaluate(gold, guesses, { ks: [1], rankKeys: ["wikipedia_id", "start_paragraph_id"], mode: "retrieval" })).eval_retrieval!.Rprec as number;

describe("retrieve --tune-on", () => {
  it("the grid: the simplex in tenths for two indexes, quarters for three", () => {
    expect(simplexGrid(2, 10)).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1].map((w) => [w, Math.round((1 - w) * 1e6) / 1e6]));
    expect(simplexGrid(3, 4)).toHaveLength(15);
    expect(simplexGrid(3, 4)[1]).toEqual([0, 0.25, 0.75]);
  });

  it("chooses RRF's weights by paragraph R-precision on the training questions, prints and records them, and retrieves with them", async () => {
    await cli(["retrieve", "--index", bm25, tfidf, "--input", f("test.jsonl"), "--tune-on", f("train.jsonl"), "--out", f("tuned.jsonl"), "--top-k", "20", "--threads", "1"]);
    const settings = JSON.parse(readFileSync(f("tuned.jsonl.settings.json"), "utf8"));
    expect(settings.fusion).toEqual({ name: "rrf", options: { k0: 60, weights: [0.9, 0.1] } });
    expect(settings.tuning.metric).toBe("Rprec");
    expect(settings.tuning.keys).toEqual(["wikipedia_id", "start_paragraph_id"]);
    expect(settings.tuning.grid.map((g: { weights: number[] }) => g.weights[0])).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);
    expect(settings.tuning.chosen).toEqual({ weights: [0.9, 0.1], value: settings.tuning.grid[9].value });
    // the best, and the first of the best
    const values: number[] = settings.tuning.grid.map((g: { value: number }) => g.value);
    expect(values.indexOf(Math.max(...values))).toBe(9);
    expect(lines.join("")).toContain(`tune-on ${f("train.jsonl")}: rrf weights 0.9,0.1 chosen, Rprec (wikipedia_id,start_paragraph_id) ${settings.tuning.chosen.value.toFixed(4)} on ${settings.tuning.queries} queries (grid of 11)`);
    // a point's value is tartan eval's for the training run retrieved with its weights; the tuned run is --weights'
    await cli(["retrieve", "--index", bm25, tfidf, "--input", f("train.jsonl"), "--out", f("train-w.jsonl"), "--top-k", "20", "--weights", "0.3,0.7", "--threads", "1"]);
    expect(await paragraphRprec(f("train.jsonl"), f("train-w.jsonl"))).toBe(settings.tuning.grid[3].value);
    await cli(["retrieve", "--index", bm25, tfidf, "--input", f("test.jsonl"), "--out", f("weighted.jsonl"), "--top-k", "20", "--weights", "0.9,0.1", "--threads", "1"]);
    expect(readFileSync(f("tuned.jsonl"), "utf8")).toBe(readFileSync(f("weighted.jsonl"), "utf8"));
  }, 120_000);

  it("tunes Pyserini's alpha for wsum over two indexes, by recall@5 when asked", async () => {
    await cli(["retrieve", "--index", bm25, tfidf, "--input", f("test.jsonl"), "--fusion", "wsum", "--tune-alpha", "--tune-metric", "recall@5", "--tune-on", f("train.jsonl"), "--out", f("alpha.jsonl"), "--top-k", "20", "--threads", "1"]);
    const settings = JSON.parse(readFileSync(f("alpha.jsonl.settings.json"), "utf8"));
    expect(settings.tuning.grid.map((g: { alpha: number }) => g.alpha)).toEqual(Array.from({ length: 21 }, (_, i) => i / 10));
    expect(settings.fusion).toEqual({ name: "wsum", options: { k0: 60, alpha: 1.6 } });
    expect(settings.tuning.metric).toBe("recall@5");
  }, 120_000);

  it("refuses what it cannot tune", async () => {
    const base = ["retrieve", "--input", f("test.jsonl"), "--tune-on", f("train.jsonl"), "--out", f("x.jsonl")];
    await expect(cli([...base, "--index", bm25])).rejects.toThrow("--tune-on tunes the weights of a fusion: give two or more indexes");
    await expect(cli([...base, "--index", bm25, tfidf, "--weights", "1,2"])).rejects.toThrow("--tune-on chooses the weights: leave --weights out");
    await expect(cli([...base, "--index", bm25, tfidf, "--fusion", "combsum"])).rejects.toThrow("--tune-on tunes rrf's or wsum's weights; combsum has none");
    await expect(cli([...base, "--index", bm25, tfidf, "--tune-alpha"])).rejects.toThrow("--tune-alpha tunes Pyserini's alpha: wsum over two indexes");
    await expect(cli([...base, "--index", bm25, tfidf, "--tune-metric", "map"])).rejects.toThrow('--tune-metric: "map" is not a retrieval metric');
    await expect(cli(["retrieve", "--index", bm25, tfidf, "--input", f("test.jsonl"), "--tune-alpha", "--out", f("x.jsonl")])).rejects.toThrow("--tune-keys and --tune-alpha go with --tune-on");
  }, 120_000);
});
