#!/usr/bin/env node
// End-to-end quality on held-out SQuAD articles, per retriever, with the trained extractive reader:
// the quick start's setup (train on articles 0-23 with BM25 passages, answer articles 24-47), run with
// BM25, DrQA TF-IDF and their reciprocal-rank fusion (and dense USE lite with --dense), all over
// paragraph units. Prints the KILT table (R-prec, recall@5, EM, F1, KILT-EM, KILT-F1) and paragraph-level
// retrieval. Usage: npm run bench:pipeline [-- --dense] [-- --limit N]

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cpuS, load, opt, OUT as BENCH_OUT, SHARED, tartan } from "./lib.mjs";

const OUT = join(BENCH_OUT, "pipeline");
const { loadSquad, splitByArticle, trainReader, ExtractiveReader } = await tartan("readers");
const { buildBm25Index, buildDenseIndex, buildTfidfIndex, openBm25, openIndexes, unitsFromPages, unitProvenance } = await tartan("retrieval");
const { runPipeline, headlineTable } = await tartan("pipeline");
const { evaluate } = await tartan("eval");
const { writeJsonl } = await tartan("records");

const o = opt({ dense: { type: "boolean" }, limit: { type: "string" } }, "usage: npm run bench:pipeline [-- --dense] [-- --limit N] (N held-out questions; default all)");
const limit = o.limit ? Number(o.limit) : undefined;
const log = (s) => process.stderr.write(`${s}\n`);
log(`load average at the start: ${load()}`);

mkdirSync(OUT, { recursive: true });
const squad = loadSquad(join(SHARED, "data", "squad", "dev-v1.1.reconstructed.json"));
const { train, test: allTest } = splitByArticle(squad.records, squad.articles);
const test = limit ? allTest.slice(0, limit) : allTest;
const gold = join(OUT, "test-gold.jsonl");
await writeJsonl(gold, test);

const units = () => unitsFromPages(squad.pages, { unit: "paragraph" });
const dirs = { bm25: join(OUT, "bm25"), tfidf: join(OUT, "tfidf") };
for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
log("indexing: BM25 (english), TF-IDF (DrQA hashing)");
await buildBm25Index(units(), dirs.bm25, { unit: "paragraph", source: "squad" });
await buildTfidfIndex(units(), dirs.tfidf, { unit: "paragraph", source: "squad" });
const systems = [
  ["BM25", [dirs.bm25]],
  ["TF-IDF", [dirs.tfidf]],
  ["BM25 + TF-IDF (RRF)", [dirs.bm25, dirs.tfidf]],
];
if (o.dense) {
  dirs.dense = join(OUT, "dense");
  rmSync(dirs.dense, { recursive: true, force: true });
  log("indexing: dense (USE lite) — slow");
  await buildDenseIndex(units(), dirs.dense, { unit: "paragraph", source: "squad", encoder: { type: "use-lite" } });
  systems.push(["dense (USE lite)", [dirs.dense]], ["BM25 + dense (RRF)", [dirs.bm25, dirs.dense]]);
}

log(`training the reader on ${train.length} questions (BM25 top 5)`);
const bm25 = await openBm25(dirs.bm25);
const items = [];
for (const record of train) {
  const hits = await bm25.search(record.input ?? "", 5);
  items.push({ record, passages: hits.map((h) => ({ text: bm25.units.get(h.unit).text, provenance: unitProvenance(bm25.units.get(h.unit), h.score, false), score: h.score })) });
}
await bm25.close();
const { model } = trainReader(items, { seed: 1 });
const reader = new ExtractiveReader(model);

const results = [];
const paragraphRows = [];
for (const [name, indexDirs] of systems) {
  log(`answering ${test.length} held-out questions with ${name} + extractive reader`);
  const retriever = await openIndexes(indexDirs);
  const out = join(OUT, `pred-${name.replace(/[^A-Za-z0-9]+/g, "-")}.jsonl`);
  rmSync(out, { force: true });
  const t0 = process.cpuUsage();
  await runPipeline(gold, out, retriever, reader, { topK: 20, readerK: 5 });
  const cpu = cpuS(t0);
  await retriever.close();
  const result = await evaluate(gold, out, { ks: [1, 5, 20] });
  const para = await evaluate(gold, out, { ks: [1, 5, 20], rankKeys: ["wikipedia_id", "start_paragraph_id"], mode: "retrieval" });
  results.push({ name: `${name} + extractive`, result });
  const r = para.eval_retrieval;
  paragraphRows.push(`| ${name} + extractive | ${(100 * r.Rprec).toFixed(2)} | ${(100 * r["recall@5"]).toFixed(2)} | ${(100 * r["recall@20"]).toFixed(2)} | ${(cpu / test.length * 1000).toFixed(1)} |`);
}
const table = headlineTable(results);
process.stdout.write(`${table}\n\nparagraph level:\n| system | R-prec | recall@5 | recall@20 | CPU ms/question |\n|---|---|---|---|---|\n${paragraphRows.join("\n")}\n`);
writeFileSync(join(OUT, "table.txt"), `${table}\n`);
log(`load average at the end: ${load()}`);
