// `node bench/learned-rerank.mjs`: the learned reranker's gain on held-out SQuAD articles, with the CLI a
// user would run. SQuAD v1.1 dev as KILT pages and questions; the quick start's split by article (0–23
// train, 24–47 test); BM25 paragraph runs (top --depth, text in the provenance) of both halves; `tartan
// reranker train` on the training half; `tartan rerank --reranker learned:MODEL.json` of the test half;
// `tartan compare` of BM25 and the reranked run at paragraph and page level (R-precision and recall@5,
// Fisher's randomization test, Holm). With --fusion, the same for `retrieve --tune-on` (BM25 + TF-IDF
// paragraphs, RRF weights chosen on the training half) against equal-weight RRF. Prints each command's wall
// and CPU seconds (the children's, from /proc/self's cumulative children times) and the tables.
//
// usage: node bench/learned-rerank.mjs [--dir /tmp/tartan-learned-bench] [--depth 20] [--fusion]
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, SHARED, load, opt } from "./lib.mjs";

const o = opt({ dir: { type: "string", default: "/tmp/tartan-learned-bench" }, depth: { type: "string", default: "20" }, fusion: { type: "boolean", default: false } }, "node bench/learned-rerank.mjs [--dir DIR] [--depth 20] [--fusion]");
const dir = o.dir;
mkdirSync(dir, { recursive: true });
const at = (n) => join(dir, n);
const S = join(SHARED, "data/squad/dev-v1.1.reconstructed.json");

/** Children's CPU seconds so far (user + system), from /proc/self/stat's cutime and cstime. */
function childCpu() {
  const f = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return (Number(f[13]) + Number(f[14])) / 100;
}

function run(args, { quiet = false } = {}) {
  const t0 = performance.now();
  const c0 = childCpu();
  const out = execFileSync(process.execPath, [CLI, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", quiet ? "ignore" : "inherit"], maxBuffer: 1 << 28 });
  const wall = (performance.now() - t0) / 1000;
  const cpu = childCpu() - c0;
  console.log(`  tartan ${args[0]}${args[1] && !args[1].startsWith("-") ? ` ${args[1]}` : ""}: ${wall.toFixed(1)} s wall, ${cpu.toFixed(1)} CPU-s`);
  return out;
}

if (!existsSync(at("bm25-paragraph"))) {
  run(["ks", "from-squad", S, "--out", at("squad-pages.jsonl")]);
  run(["datasets", "convert", "squad", S, "--out", at("squad-questions.jsonl")]);
  run(["index", "build", "--pages", at("squad-pages.jsonl"), "--kind", "bm25", "--unit", "paragraph", "--out", at("bm25-paragraph")]);
}
const lines = readFileSync(at("squad-questions.jsonl"), "utf8").split("\n").filter(Boolean);
const train = lines.filter((l) => JSON.parse(l).meta.article_index < 24);
const test = lines.filter((l) => JSON.parse(l).meta.article_index >= 24);
writeFileSync(at("train.jsonl"), `${train.join("\n")}\n`);
writeFileSync(at("test.jsonl"), `${test.join("\n")}\n`);
console.log(`load ${load()}; ${train.length} training questions (articles 0-23), ${test.length} held-out (24-47); depth ${o.depth}`);
for (const half of ["train", "test"]) run(["retrieve", "--index", at("bm25-paragraph"), "--input", at(`${half}.jsonl`), "--out", at(`bm25-${half}.jsonl`), "--top-k", o.depth, "--text", "full"]);
run(["reranker", "train", "--records", at("train.jsonl"), "--run", at("bm25-train.jsonl"), "--out", at("model.json"), "--depth", o.depth]);
run(["rerank", "--input", at("bm25-test.jsonl"), "--records", at("test.jsonl"), "--reranker", `learned:${at("model.json")}`, "--depth", o.depth, "--out", at("learned-test.jsonl")]);
const runs = [at("bm25-test.jsonl"), at("learned-test.jsonl")];
const names = ["bm25", "bm25 + learned"];
if (o.fusion) {
  if (!existsSync(at("tfidf-paragraph"))) run(["index", "build", "--pages", at("squad-pages.jsonl"), "--kind", "tfidf", "--unit", "paragraph", "--out", at("tfidf-paragraph")]);
  const both = ["--index", at("bm25-paragraph"), at("tfidf-paragraph"), "--input", at("test.jsonl"), "--top-k", o.depth];
  run(["retrieve", ...both, "--out", at("rrf-test.jsonl")]);
  run(["retrieve", ...both, "--tune-on", at("train.jsonl"), "--out", at("tuned-test.jsonl")]);
  runs.push(at("rrf-test.jsonl"), at("tuned-test.jsonl"));
  names.push("rrf bm25+tfidf", "rrf tuned on train");
}
for (const [level, keys] of [["paragraph", "wikipedia_id,start_paragraph_id"], ["page", "wikipedia_id"]]) {
  console.log(`\n${level} level (--rank-keys ${keys}):\n`);
  console.log(run(["compare", at("test.jsonl"), ...runs, "--name", ...names, "--metrics", "Rprec,recall@5", "--rank-keys", keys, "--format", "markdown"], { quiet: true }));
}
