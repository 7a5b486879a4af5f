// The learned reranker (src/retrieval/rerank/learned*.ts, features.ts; src/pipeline/reranker-train.ts):
// every feature worked out by hand on a four-passage item; training is deterministic and its loss falls;
// trained (`tartan reranker train`'s library call) on BM25 runs of SQuAD questions of the quick start's training articles
// (0–23), it beats BM25 on questions of the held-out articles (24–47), through `tartan rerank`,
// `retrieve --reranker learned:MODEL.json` and serve's search alike; and the refusals (a bad model file, a passage without a
// feature's input, a run whose ids the records do not hold).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rerankRun } from "../../../src/pipeline/rerank.js";
import { retrieve } from "../../../src/pipeline/retrieve.js";
import { evaluate } from "../../../src/eval/evaluate.js";
import { gradeCandidate, trainRerankerFromFiles } from "../../../src/pipeline/reranker-train.js";
import { readJsonlAll } from "../../../src/records/jsonl.js";
import type { KiltRecord } from "../../../src/records/types.js";
import { computeFeatures, FEATURE_NAMES, queryEntities } from "../../../src/retrieval/rerank/features.js";
import { openReranker } from "../../../src/retrieval/rerank/index.js";
import { checkModel, trainLinearRanker, type TrainingExample } from "../../../src/retrieval/rerank/learned-model.js";
import { parseRerankerSpec, type RerankItem } from "../../../src/retrieval/rerank/reranker.js";
import { Resources } from "../../../src/server/resources.js";
import { squadBm25Paragraphs } from "../../fixtures/squad-bm25.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-learned-"));
const f = (n: string) => join(tmp, n);
let dir = "";
const quiet = () => {};

/** BM25's top 20 paragraphs (text in the provenance) of `input`, as `tartan retrieve --top-k 20 --text full` writes them; `stages` as `--reranker`. */
const bm25Run = (input: string, out: string, stages?: { name: string; options: Record<string, unknown> }[], threads = 1) => retrieve({ indexes: [dir], input, out, topK: 20, text: "full", threads, stages }, quiet);

const write = (file: string, rows: readonly unknown[]) => writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");

beforeAll(async () => {
  ({ dir } = await squadBm25Paragraphs(tmp, 1));
  const all = await readJsonlAll<KiltRecord>(f("questions.jsonl"));
  const article = (r: KiltRecord) => r.meta!.article_index as number;
  // every 8th question: of the training articles (the quick start's first 24) and of the held-out ones
  write(f("train.jsonl"), all.filter((r, i) => article(r) < 24 && i % 8 === 0));
  write(f("test.jsonl"), all.filter((r, i) => article(r) >= 24 && i % 8 === 0));
  await bm25Run(f("train.jsonl"), f("bm25-train.jsonl"));
  await bm25Run(f("test.jsonl"), f("bm25-test.jsonl"));
}, 300_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A hand-checked item: the query's distinct terms are when, did, tesla, build, paris, factory (EnglishAnalyzer drops "the"). */
const ITEM: RerankItem = {
  query: "When did Tesla build the Paris factory",
  passages: [
    { title: "Tesla", text: "Tesla opened a factory near Berlin.", score: 12, page: "100", paragraph: 3 },
    { title: "Paris", text: "The Paris factory was built by Tesla.", score: 8, page: "200", paragraph: 1 },
    { title: "Tesla Motors", text: "Nothing here.", score: 6, page: "300", paragraph: 7 },
    { title: "Tesla", text: "When did Tesla build it?", score: 4, page: "100", paragraph: 2 },
  ],
};

describe("features", () => {
  it("are the hand-worked values of the four-passage item", () => {
    const rows = computeFeatures(ITEM, FEATURE_NAMES);
    const col = (name: string) => rows.map((r) => r[FEATURE_NAMES.indexOf(name)]);
    expect(col("rank")).toEqual([1, 1 / 2, 1 / 3, 1 / 4]);
    expect(col("score")).toEqual([1, 0.5, 0.25, 0]);
    expect(col("score_gap")).toEqual([0, -4, -6, -8]);
    expect(col("title_match")).toEqual([1 / 6, 1 / 6, 1 / 6, 1 / 6]);
    expect(col("title_covered")).toEqual([1, 1, 0, 1]); // "motors" is no query term
    // passage terms: {tesla, open, factori, near, berlin}, {pari, factori, built, tesla}, {noth, here}, {when, did, tesla, build}
    expect(col("overlap")).toEqual([2 / 6, 3 / 6, 0, 4 / 6]);
    // df: when 1, did 1, build 1, paris 1, factory 2, tesla 3 over n = 4 texts; w = ln(1 + 4/(1 + df))
    const [w1, w2, w3] = [Math.log(3), Math.log(1 + 4 / 3), Math.log(2)];
    const all = 4 * w1 + w2 + w3;
    const idf = col("idf_overlap");
    [(w3 + w2) / all, (w1 + w2 + w3) / all, 0, (3 * w1 + w3) / all].forEach((v, i) => expect(idf[i]).toBeCloseTo(v, 14));
    // query bigrams: when did, did tesla, tesla build, build paris, paris factory
    expect(col("bigrams")).toEqual([0, 1 / 5, 0, 3 / 5]);
    // entities: Tesla and Paris (the capitalised "When" starts the query)
    expect(col("entity_overlap")).toEqual([1 / 2, 1, 1 / 2, 1 / 2]);
    expect(col("position")).toEqual([1 / 3, 1, 1 / 7, 1 / 2]);
    expect(col("page_hits")).toEqual([1 / 3, 0, 0, 1 / 3]);
    expect(col("page_first")).toEqual([1, 1, 1, 0]);
    expect(col("page_rank")).toEqual([1, 1 / 2, 1 / 3, 1]);
    expect(col("length")).toEqual([Math.log(6), Math.log(5), Math.log(3), Math.log(5)]);
  });

  it("read KILT's entity markers when the query has them", () => {
    expect(queryEntities("[START_ENT] Nikola Tesla [END_ENT] was born in which country?")).toEqual(["Nikola Tesla"]);
    expect(queryEntities("Which river flows through Paris and Rouen?")).toEqual(["Paris", "Rouen"]);
  });

  it("grade candidates against the gold: paragraph 2, page 1, neither 0", () => {
    const gold = [{ wikipedia_id: "7", start_paragraph_id: 3, end_paragraph_id: 3 }];
    expect(gradeCandidate({ wikipedia_id: "7", start_paragraph_id: 3, end_paragraph_id: 3 }, gold)).toBe(2);
    expect(gradeCandidate({ wikipedia_id: "7", start_paragraph_id: 2, end_paragraph_id: 4 }, gold)).toBe(2);
    expect(gradeCandidate({ wikipedia_id: "7", start_paragraph_id: 4 }, gold)).toBe(1);
    expect(gradeCandidate({ wikipedia_id: "8", start_paragraph_id: 3 }, gold)).toBe(0);
    expect(gradeCandidate({ wikipedia_id: "7" }, [{ wikipedia_id: "7" }])).toBe(2);
  });

  it("refuse a passage without what a feature needs, naming the feature and the passage", async () => {
    const item: RerankItem = { query: ITEM.query, passages: [ITEM.passages[0], { title: "Paris", text: "Paris." }] };
    expect(() => computeFeatures(item, ["rank", "score"])).toThrow(/feature score needs a first-stage score, and passage 2 of the query "When did Tesla build the Paris factory" has none/u);
    expect(() => computeFeatures(item, ["position"])).toThrow(/feature position needs a paragraph id/u);
    expect(() => computeFeatures(item, ["ranks"])).toThrow(/unknown feature "ranks" \(known: rank, score,/u);
    const file = f("score-model.json");
    writeFileSync(file, JSON.stringify({ format: "tartan-learned-reranker", version: 1, objective: "pairwise-logistic", features: ["score"], mean: [0], scale: [1], weights: [1] }));
    const r = await openReranker(`learned:${file}`);
    await expect(r.rerank([item])).rejects.toThrow(`reranker learned (${file}): feature score needs a first-stage score`);
  });
});

describe("training", () => {
  let examples: TrainingExample[] = [];
  beforeAll(async () => {
    const gold = new Map((await readJsonlAll<KiltRecord>(f("train.jsonl"))).map((r) => [String(r.id), r]));
    const run = await readJsonlAll<KiltRecord>(f("bm25-train.jsonl"));
    examples = run.slice(0, 80).map((g) => {
      const prov = g.output![0].provenance!;
      const record = gold.get(String(g.id))!;
      return {
        item: { query: record.input!, passages: prov.map((p) => ({ title: p.title!, text: p.text!, score: p.score!, page: String(p.wikipedia_id), paragraph: p.start_paragraph_id as number })) },
        labels: prov.map((p) => gradeCandidate(p, record.output![0].provenance!)),
      };
    });
  });

  it("is deterministic: the same seed gives the same weights, another seed other starting weights", () => {
    const a = trainLinearRanker(examples, { seed: 7, epochs: 20 });
    const b = trainLinearRanker(examples, { seed: 7, epochs: 20 });
    const c = trainLinearRanker(examples, { seed: 8, epochs: 20 });
    expect(a.model.weights).toEqual(b.model.weights);
    expect(a.loss).toEqual(b.loss);
    expect(c.loss[0]).not.toBe(a.loss[0]);
    expect(c.model.weights).not.toEqual(a.model.weights);
  });

  it("lowers the pairwise loss at every epoch", () => {
    const { loss, queries, pairs } = trainLinearRanker(examples, { seed: 1, epochs: 60 });
    expect(loss).toHaveLength(61);
    for (let e = 1; e < loss.length; e++) expect(loss[e]).toBeLessThan(loss[e - 1]);
    expect(loss[0]).toBeGreaterThan(0.69);
    expect(loss[60]).toBeLessThan(0.2);
    expect(queries).toBeGreaterThan(75);
    expect(pairs).toBeGreaterThan(queries);
  });
});

describe("trained on the training articles' BM25 run, reranking the held-out articles'", () => {
  const model = () => f("model.json");
  const metrics = async (guesses: string) => {
    const gold = f("test.jsonl");
    const para = await evaluate(gold, guesses, { ks: [5], rankKeys: ["wikipedia_id", "start_paragraph_id"] });
    const page = await evaluate(gold, guesses, { ks: [5], rankKeys: ["wikipedia_id"] });
    const r = (x: unknown) => Math.round((x as number) * 1e6) / 1e6;
    return { paraRprec: r(para.eval_retrieval!.Rprec), paraR5: r(para.eval_retrieval!["recall@5"]), pageRprec: r(page.eval_retrieval!.Rprec), pageR5: r(page.eval_retrieval!["recall@5"]) };
  };

  beforeAll(async () => {
    await trainRerankerFromFiles({ records: f("train.jsonl"), run: f("bm25-train.jsonl"), out: model(), seed: 3 }, quiet);
  }, 120_000);

  it("writes a versioned model that reads back", () => {
    const m = checkModel(JSON.parse(readFileSync(model(), "utf8")), model());
    expect(m.features).toEqual(FEATURE_NAMES);
    expect(m.version).toBe(1);
    const loss = (m.training!.loss as number[]);
    expect(loss[loss.length - 1]).toBeLessThan(loss[0]);
    expect(m.training!.seed).toBe(3);
  });

  it("beats BM25 on the held-out articles' questions, and the rerank stage (retrieve --reranker) gives rerankRun's run", async () => {
    await rerankRun({ input: f("bm25-test.jsonl"), records: f("test.jsonl"), reranker: `learned:${model()}`, depth: 20, out: f("learned-test.jsonl"), threads: 1 }, quiet);
    const before = await metrics(f("bm25-test.jsonl"));
    const after = await metrics(f("learned-test.jsonl"));
    expect({ before, after }).toEqual({
      // 610 held-out questions: paragraph R-precision 487 → 496 right at 1, page 571 → 573; paragraph recall@5 573 → 568
      before: { paraRprec: 0.798361, paraR5: 0.939344, pageRprec: 0.936066, pageR5: 0.988525 },
      after: { paraRprec: 0.813115, paraR5: 0.931148, pageRprec: 0.939344, pageR5: 0.991803 },
    });
    await bm25Run(f("test.jsonl"), f("retrieved.jsonl"), [{ name: "rerank", options: { reranker: `learned:${model()}`, depth: 20 } }], 2);
    const a = await readJsonlAll<KiltRecord>(f("learned-test.jsonl"));
    const b = await readJsonlAll<KiltRecord>(f("retrieved.jsonl"));
    expect(b.map((r) => r.output![0].provenance!.map((p) => [p.wikipedia_id, p.start_paragraph_id, p.score]))).toEqual(a.map((r) => r.output![0].provenance!.map((p) => [p.wikipedia_id, p.start_paragraph_id, p.score])));
  }, 120_000);

  it("serve's and mcp's searches (--reranker learned:MODEL.json) give the same top 5", async () => {
    const resources = await Resources.open({ indexes: [dir], reranker: `learned:${model()}`, rerankDepth: 20, searchThreads: 2 });
    try {
      const [ix] = resources.indexes;
      const records = (await readJsonlAll<KiltRecord>(f("test.jsonl"))).slice(0, 40);
      const reranked = (await readJsonlAll<KiltRecord>(f("learned-test.jsonl"))).slice(0, 40);
      const where = (hits: { unit: number }[]) => hits.map((h) => [String(ix.retriever.units.get(h.unit).wikipedia_id), ix.retriever.units.get(h.unit).start_paragraph_id]);
      expect((await ix.pool.search(records.map((r) => r.input!), 5)).map(where)).toEqual(reranked.map((r) => r.output![0].provenance!.slice(0, 5).map((p) => [String(p.wikipedia_id), p.start_paragraph_id])));
    } finally {
      await resources.close();
    }
  }, 120_000);
});

describe("refusals", () => {
  const good = { format: "tartan-learned-reranker", version: 1, objective: "pairwise-logistic", features: ["rank", "overlap"], mean: [0, 0], scale: [1, 1], weights: [1, 2] };
  const refused = async (model: unknown, message: string | RegExp) => {
    const file = f("bad-model.json");
    writeFileSync(file, typeof model === "string" ? model : JSON.stringify(model));
    await expect(openReranker({ name: "learned", options: { model: file } })).rejects.toThrow(typeof message === "string" ? `${file}: ${message}` : message);
  };

  it("a bad model file, naming the file and the field", async () => {
    await refused({ ...good, format: "lightgbm" }, 'field format: expected "tartan-learned-reranker", not "lightgbm"');
    await refused({ ...good, version: 2 }, "field version: this tartan reads version 1, not 2");
    await refused({ ...good, weights: [1] }, "field weights: 1 numbers for 2 features");
    await refused({ ...good, scale: [1, 0] }, "field scale[1]: 0 is not a positive number");
    await refused({ ...good, features: ["rank", "bm25"] }, 'field features[1]: unknown feature "bm25"');
    await refused("{ not json", /bad-model\.json: invalid JSON/u);
    await expect(openReranker(`learned:${f("none.json")}`)).rejects.toThrow(`${f("none.json")}: cannot read the learned reranker model (no such file)`);
    await expect(openReranker("learned")).rejects.toThrow("reranker learned: option model is required");
  });

  it("the spec's first bare value is its model", () => {
    expect(parseRerankerSpec("learned:m.json")).toEqual({ name: "learned", options: { model: "m.json" } });
    expect(() => parseRerankerSpec("learned:m.json,x")).toThrow('"x" is not key=value');
  });

  it("a run whose ids the records do not hold", async () => {
    const run = (await readJsonlAll<KiltRecord>(f("bm25-test.jsonl"))).slice(0, 3);
    write(f("foreign-run.jsonl"), run);
    await expect(trainRerankerFromFiles({ records: f("train.jsonl"), run: f("foreign-run.jsonl"), out: f("m2.json") }, quiet)).rejects.toThrow(`${f("foreign-run.jsonl")}:1: record ${String(run[0].id)} is not in ${f("train.jsonl")}`);
  });

  it("a TREC run", async () => {
    writeFileSync(f("run.trec"), "q1 Q0 7+3 1 12.5 bm25\n");
    await expect(trainRerankerFromFiles({ records: f("train.jsonl"), run: f("run.trec"), out: f("m3.json") }, quiet)).rejects.toThrow(`${f("run.trec")}: a TREC run; train on KILT guesses`);
  });

  it("an output that is one of its inputs", async () => {
    await expect(trainRerankerFromFiles({ records: f("train.jsonl"), run: f("bm25-train.jsonl"), out: f("bm25-train.jsonl") }, quiet)).rejects.toThrow(/bm25-train\.jsonl/u);
  });
});
