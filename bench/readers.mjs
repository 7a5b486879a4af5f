#!/usr/bin/env node
// Held-out quality of the extractive reader: trains the span ranker on SQuAD v1.1 dev articles 0-23
// (`tartan reader train`, defaults, seed 1) and reads every question of articles 24-47 with the KILT
// evaluator, in two settings: (a) passages = the 5 best paragraphs of the question's own article
// (the setting of the tests), (b) passages = the 5 best BM25 paragraphs of all 48 articles (the
// tartan BM25 index, Lucene's English analyzer), where the page must be found too and KILT scores
// differ from the downstream ones. Prints a Markdown table; CPU seconds (user + sys) per step.
// Usage: npm run bench:readers [-- --limit N]

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CLI, load, opt, OUT as BENCH_OUT, SHARED } from "./lib.mjs";

const SQUAD = join(SHARED, "data", "squad", "dev-v1.1.reconstructed.json");
const OUT = join(BENCH_OUT, "readers");
const o = opt({ limit: { type: "string" } }, "usage: npm run bench:readers [-- --limit N] (N held-out questions; default all)");
const LIMIT = o.limit ? ["--limit", o.limit] : [];
process.stderr.write(`load average at the start: ${load()}\n`);

mkdirSync(OUT, { recursive: true });

/** Runs the CLI under /usr/bin/time; returns stdout and CPU seconds. */
function run(args) {
  const r = spawnSync("/usr/bin/time", ["-f", "%U %S", process.execPath, CLI, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`tartan ${args.join(" ")} failed:\n${r.stderr}`);
  const times = r.stderr.trim().split("\n").pop().split(" ").map(Number);
  return { stdout: r.stdout, cpu: times[0] + times[1] };
}

const model = join(OUT, "model.json");
const train = run(["reader", "train", "--squad", SQUAD, "--articles", "first-half", "--out", model]);
process.stderr.write(train.stdout);

// BM25 paragraph index over the 48 SQuAD pages.
const pages = join(OUT, "squad-pages.jsonl");
const index = join(OUT, "squad-bm25-paragraph");
run(["ks", "from-squad", SQUAD, "--out", pages]);
if (existsSync(index)) rmSync(index, { recursive: true });
const build = run(["index", "build", "--kind", "bm25", "--pages", pages, "--unit", "paragraph", "--out", index]);
process.stderr.write(build.stdout);

const rows = [];
for (const [name, extra] of [
  ["own article, top-5 paragraphs", []],
  ["BM25 over all 48 articles, top-5 paragraphs", ["--index", index]],
]) {
  const r = run(["reader", "eval", "--squad", SQUAD, "--model", model, "--articles", "second-half", "--json", ...LIMIT, ...extra]);
  const d = JSON.parse(r.stdout.trim().split("\n").pop());
  rows.push({ name, d, cpu: r.cpu });
}
const pct = (x) => (100 * x).toFixed(2);
console.log(`training: ${train.stdout.trim()} (${train.cpu.toFixed(1)} CPU s)\n`);
console.log("| passages | EM | F1 | KILT-EM | KILT-F1 | R-prec (page) | read + score CPU s |");
console.log("|---|---|---|---|---|---|---|");
for (const { name, d, cpu } of rows)
  console.log(`| ${name} | ${pct(d.downstream.em)} | ${pct(d.downstream.f1)} | ${pct(d.kilt["KILT-em"])} | ${pct(d.kilt["KILT-f1"])} | ${pct(d.retrieval.Rprec)} | ${cpu.toFixed(1)} |`);
