#!/usr/bin/env node
// Differential test of `tartan eval` against the official KILT evaluator on generated cases
// (bench/eval-diff/generate.mjs). Runs the official code (../shared/tools/official-eval/vendor,
// unmodified, in one Python process for all cases) and tartan's compiled evaluator in all three
// modes, classifies each section (compare.mjs), saves every case with a difference to OUT/diffs/SEED/
// (gold, guess, args, official.json, tartan.json, findings.json) and prints the counts.
// Usage: npm run bench:eval-diff -- [--n 1000] [--start 0] [--out DIR] [--fixtures FILE --fixture-count 300]
// [--fixture-seeds-only] (fixtures without the gold and guess texts: the test regenerates them from the
// seed; for the long cases of generate.mjs's LONG_ROUGE_FIRST_SEED)
// (npm run build first; the official code is slow: run it under nice.)

import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, renameSync } from "node:fs";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { generateCase } from "./generate.mjs";
import { classify } from "./compare.mjs";
import { opt, OUT as BENCH_OUT, SHARED, tartan } from "../lib.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const OFFICIAL = join(SHARED, "tools", "official-eval");
const { evaluate } = await tartan("eval");

const o = opt(
  {
    n: { type: "string", default: "1000" },
    start: { type: "string", default: "0" },
    out: { type: "string", default: join(BENCH_OUT, "eval-diff") },
    fixtures: { type: "string" },
    "fixture-count": { type: "string", default: "300" },
    "fixture-seeds-only": { type: "boolean" },
  },
  "usage: npm run bench:eval-diff [-- --n 1000] [-- --start 0] [-- --out DIR] [-- --fixtures FILE --fixture-count 300] [-- --fixture-seeds-only]",
);
const N = Number(o.n);
const START = Number(o.start);
const OUT = resolve(o.out);
const FIXTURES = o.fixtures;
const FIXTURE_COUNT = Number(o["fixture-count"]);
const SEEDS_ONLY = Boolean(o["fixture-seeds-only"]);

mkdirSync(join(OUT, "cases"), { recursive: true });
mkdirSync(join(OUT, "diffs"), { recursive: true });

// The official package layout, as ../shared/tools/official-eval/run sets it up.
const pyPath = join(tmpdir(), `kilt-official-eval-diff-${process.pid}`);
mkdirSync(pyPath, { recursive: true });
for (const m of ["kilt", "rouge"]) if (!existsSync(join(pyPath, m))) symlinkSync(join(OFFICIAL, "vendor", m), join(pyPath, m));

const py = spawn("python3", [join(HERE, "official_batch.py")], {
  env: { ...process.env, PYTHONPATH: `${pyPath}:${join(OFFICIAL, "stubs")}`, PYTHONDONTWRITEBYTECODE: "1", LC_ALL: "C.UTF-8", PYTHONIOENCODING: "utf-8" },
  stdio: ["pipe", "pipe", "inherit"],
});

const cases = new Map();
for (let seed = START; seed < START + N; seed++) {
  const c = generateCase(seed);
  const dir = join(OUT, "cases", String(seed));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "gold.jsonl"), c.gold);
  writeFileSync(join(dir, "guess.jsonl"), c.guess);
  writeFileSync(join(dir, "args.json"), JSON.stringify({ ks: c.ks, rank_keys: c.rankKeys }));
  cases.set(dir, c);
  py.stdin.write(`${dir}\n`);
}
py.stdin.end();

const counts = {};
/** Accepted non-equal findings by official error / tartan problem codes. */
const details = {};
const fixtures = [];
let done = 0;
let differing = 0;
const started = Date.now();
const rl = createInterface({ input: py.stdout });
for await (const line of rl) {
  const dir = line.trim();
  const c = cases.get(dir);
  if (!c) continue;
  const official = JSON.parse(readFileSync(join(dir, "official.json"), "utf8"));
  const opts = { ks: c.ks, rankKeys: c.rankKeys };
  const gold = join(dir, "gold.jsonl");
  const guess = join(dir, "guess.jsonl");
  const runs = {};
  let crash;
  try {
    for (const mode of ["all", "downstream", "retrieval"]) runs[mode] = await evaluate(gold, guess, { ...opts, mode });
  } catch (e) {
    crash = e instanceof Error ? e.stack : String(e);
  }
  const findings = crash ? [{ section: "-", kind: "tartan-threw", ok: false, detail: crash }] : classify(official, runs);
  for (const f of findings) {
    counts[`${f.section} ${f.kind}`] = (counts[`${f.section} ${f.kind}`] ?? 0) + 1;
    if (f.kind !== "equal" && f.ok) details[`${f.section} ${f.kind}: ${f.detail}`] = (details[`${f.section} ${f.kind}: ${f.detail}`] ?? 0) + 1;
  }
  const clean = findings.every((f) => f.ok);
  if (!clean) {
    differing++;
    writeFileSync(join(dir, "tartan.json"), JSON.stringify(runs.all ?? null, null, 1));
    writeFileSync(join(dir, "findings.json"), JSON.stringify(findings, null, 1));
    const to = join(OUT, "diffs", String(c.seed));
    rmSync(to, { recursive: true, force: true });
    renameSync(dir, to);
    process.stderr.write(`seed ${c.seed}: ${findings.filter((f) => !f.ok).map((f) => `${f.section} ${f.kind} ${f.detail ?? ""}`).join(" | ").slice(0, 400)}\n`);
  } else {
    const officialOut = { eval_downstream: official.eval_downstream, eval_retrieval: official.eval_retrieval };
    if (FIXTURES && fixtures.length < FIXTURE_COUNT && SEEDS_ONLY) fixtures.push({ seed: c.seed, ks: c.ks, rank_keys: c.rankKeys, official: officialOut });
    else if (FIXTURES && fixtures.length < FIXTURE_COUNT && c.gold.length + c.guess.length < 6000)
      fixtures.push({ seed: c.seed, ks: c.ks, rank_keys: c.rankKeys, gold: c.gold, guess: c.guess, official: officialOut });
    rmSync(dir, { recursive: true, force: true });
  }
  done++;
  if (done % 100 === 0) process.stderr.write(`${done}/${N} cases, ${differing} with differences, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}
rmSync(pyPath, { recursive: true, force: true });

const summary = { seeds: [START, START + N - 1], cases: done, differing, counts, accepted: Object.fromEntries(Object.entries(details).sort((a, b) => b[1] - a[1])) };
writeFileSync(join(OUT, `summary-${START}-${START + N - 1}.json`), JSON.stringify(summary, null, 1));
process.stdout.write(`${JSON.stringify(summary, null, 1)}\n`);
if (FIXTURES) {
  writeFileSync(`${FIXTURES}.partial`, fixtures.map((f) => JSON.stringify(f)).join("\n") + "\n");
  renameSync(`${FIXTURES}.partial`, FIXTURES);
  process.stdout.write(`${fixtures.length} clean cases written to ${FIXTURES}\n`);
}
process.exitCode = differing === 0 && done === N ? 0 : 1;
