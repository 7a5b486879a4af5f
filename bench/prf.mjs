// `npm run bench:prf`: pseudo-relevance feedback over BM25 on SQuAD. The SQuAD v1.1 dev knowledge source's
// BM25 paragraph index, and the questions of the held-out articles (the second half, 24–47, as the readers'
// and pipeline benchmarks hold out). Quality: `tartan retrieve` (top 20) without feedback, with --rm3 and
// with --rocchio (Anserini's defaults), `tartan eval` page and paragraph R-precision and recall@k, and
// `tartan compare` (paired randomization test against plain BM25). Speed in the same run, on equal
// terms (one thread, in this process, CPU seconds beside wall): plain BM25, RM3, Rocchio; and the Lucene
// reference of bench/lucene/Prf.java on the same queries (its searches' CPU seconds; JIT warm-up included).
// Needs Java and Lucene 8 (liblucene8-java, default-jdk-headless) for the Lucene column only.
//
// usage: node bench/prf.mjs [--work DIR] [--no-lucene]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { lucenePrf } from "./lucene/prf.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
if (process.argv.includes("--help")) {
  console.log("usage: node bench/prf.mjs [--work DIR] [--no-lucene]   (RM3 and Rocchio on held-out SQuAD: quality, significance, q/s)");
  process.exit(0);
}
const at = process.argv.indexOf("--work");
const work = at > 0 ? process.argv[at + 1] : mkdtempSync(join(tmpdir(), "tartan-prf-bench-"));
mkdirSync(work, { recursive: true });
const T = [join(root, "dist/src/cli/main.js")];
const S = join(root, "../shared/data/squad/dev-v1.1.reconstructed.json");
const tartan = (...args) => execFileSync(process.execPath, [...T, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 28 });

const pages = join(work, "pages.jsonl");
const questions = join(work, "questions.jsonl");
const index = join(work, "bm25-paragraph");
if (!existsSync(index)) {
  tartan("ks", "from-squad", S, "--out", pages);
  tartan("datasets", "convert", "squad", S, "--out", questions);
  tartan("index", "build", "--pages", pages, "--kind", "bm25", "--unit", "paragraph", "--out", index);
}
// The held-out articles: the second half of the pages (in the file's order), and their questions.
const pageIds = readFileSync(pages, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l).wikipedia_id);
const heldOut = new Set(pageIds.slice(Math.floor(pageIds.length / 2)));
const records = readFileSync(questions, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
const held = records.filter((r) => heldOut.has(r.output[0].provenance[0].wikipedia_id));
const gold = join(work, "held-out.jsonl");
writeFileSync(gold, held.map((r) => JSON.stringify(r)).join("\n") + "\n");
console.log(`${held.length} questions of ${heldOut.size} held-out articles (of ${pageIds.length})`);

const runs = [
  { name: "bm25", flags: [] },
  { name: "bm25+rm3", flags: ["--rm3"] },
  { name: "bm25+rocchio", flags: ["--rocchio"] },
];
for (const r of runs) {
  r.file = join(work, `${r.name}.jsonl`);
  tartan("retrieve", "--index", index, "--input", gold, "--out", r.file, "--top-k", "20", "--text", "none", ...r.flags);
  for (const [level, keys] of [["page", "wikipedia_id"], ["paragraph", "wikipedia_id,start_paragraph_id"]]) {
    const e = JSON.parse(tartan("eval", gold, r.file, "--mode", "retrieval", "--rank-keys", keys, "--ks", "1,5,20", "--json"));
    r[level] = e.retrieval ?? e;
  }
}
const fmt = (x) => (x === undefined ? "–" : x.toFixed(4));
console.log("\n| run | page R-prec | page R@5 | page R@20 | paragraph R-prec | paragraph R@5 | paragraph R@20 |\n|---|---|---|---|---|---|---|");
for (const r of runs) console.log(`| ${r.name} | ${fmt(r.page.Rprec)} | ${fmt(r.page["recall@5"])} | ${fmt(r.page["recall@20"])} | ${fmt(r.paragraph.Rprec)} | ${fmt(r.paragraph["recall@5"])} | ${fmt(r.paragraph["recall@20"])} |`);
for (const [level, keys] of [["page", "wikipedia_id"], ["paragraph", "wikipedia_id,start_paragraph_id"]]) {
  console.log(`\ntartan compare (${level}: --rank-keys ${keys}):`);
  console.log(tartan("compare", gold, ...runs.map((r) => r.file), "--name", ...runs.map((r) => r.name), "--rank-keys", keys, "--metrics", "Rprec,recall@5,recall@20", "--ks", "5,20", "--format", "markdown"));
}

// Speed: one thread, this process, the same queries for each (a warm-up pass first).
const { Bm25Retriever } = await import(join(root, "dist/src/retrieval/bm25/search.js"));
const { bm25IndexedText } = await import(join(root, "dist/src/retrieval/bm25/build.js"));
const ret = new Bm25Retriever(index);
const queries = held.map((r) => r.input);
const speed = [];
for (const [name, feedback] of [["bm25", undefined], ["bm25+rm3", { method: "rm3" }], ["bm25+rocchio", { method: "rocchio" }]]) {
  const o = feedback ? { feedback } : undefined;
  for (const q of queries.slice(0, 500)) await ret.search(q, 20, o);
  const c = process.cpuUsage();
  const t = performance.now();
  for (const q of queries) await ret.search(q, 20, o);
  const u = process.cpuUsage(c);
  speed.push({ name, seconds: (performance.now() - t) / 1000, cpu: (u.user + u.system) / 1e6 });
}
const lucene = [];
if (!process.argv.includes("--no-lucene")) {
  const texts = Array.from({ length: ret.units.count }, (_, i) => bm25IndexedText(ret.units.get(i), ret.searcher.params));
  const p = ret.searcher.params;
  for (const [name, spec] of [["lucene rm3", { method: "rm3" }], ["lucene rocchio", { method: "rocchio" }]]) {
    const { timing } = lucenePrf({ analyzer: p.analyzer, texts, queries, k: 20, k1: p.k1, b: p.b, spec });
    lucene.push({ name, seconds: timing.seconds, cpu: timing.cpuSeconds });
  }
}
await ret.close();
const base = speed[0].cpu;
console.log(`\n| search (${queries.length} queries, top 20, one thread) | wall s | CPU s | q/CPU-s | CPU vs plain BM25 |\n|---|---|---|---|---|`);
for (const s of [...speed, ...lucene]) console.log(`| ${s.name} | ${s.seconds.toFixed(2)} | ${s.cpu.toFixed(2)} | ${Math.round(queries.length / s.cpu)} | ${(s.cpu / base).toFixed(2)}× |`);
