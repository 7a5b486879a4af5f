#!/usr/bin/env node
// Benchmark of `tartan eval` against the official KILT evaluator's recorded CPU time and memory
// (../shared/reference/official-evaluator.md §5; the official Python code cannot run here: no PyPI).
// Generates the synthetic sets with ../shared/tools/gen_synthetic.py (checked against the published
// sha256 prefixes), runs the compiled CLI under /usr/bin/time, and checks the printed figures against
// the official ones. Usage: npm run bench:eval [-- --runs 3]

import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SHARED = join(ROOT, "..", "shared");
const OUT = join(ROOT, "bench", "out", "eval");
const CLI = join(ROOT, "dist", "src", "cli", "main.js");
const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 3;

const SETS = {
  short: { kind: "short", n: 50000, seed: 0, sha: { gold: "915a2d33", guess: "a01fbe90" } },
  eli5: { kind: "eli5", n: 5000, seed: 0, sha: { gold: "be4ebf6a", guess: "70f24709" } },
};

/** The official evaluator on this machine (CPU s = user + sys, peak RSS), and the figures it printed. */
const CASES = [
  {
    name: "short-50000 eval_downstream",
    set: "short",
    args: ["--mode", "downstream"],
    official: { cpu: 91.5, rssMiB: 1.09 * 1024 },
    expect: (o) => ({
      em: [o.downstream.em, 0.60054],
      f1: [o.downstream.f1, 0.6357574285714263],
      rougel: [o.downstream.rougel, 0.4352940452014402],
      "KILT-em": [o.kilt["KILT-em"], 0.11518],
      Rprec: [o.retrieval.Rprec, 0.28575],
      "recall@5": [o.retrieval["recall@5"], 0.3776020000000036],
    }),
  },
  {
    name: "short-50000 eval_retrieval --ks 1,5,10,20",
    set: "short",
    args: ["--mode", "retrieval", "--ks", "1,5,10,20"],
    official: { cpu: 128.5, rssMiB: 1.09 * 1024 },
    expect: (o) => ({
      Rprec: [o.Rprec, 0.28575],
      "precision@1": [o["precision@1"], 0.16534],
      "recall@20": [o["recall@20"], 0.48290166666665535],
      "answer_in_context@5": [o["answer_in_context@5"], 0.68346],
    }),
  },
  {
    name: "eli5-5000 eval_downstream",
    set: "eli5",
    args: ["--mode", "downstream"],
    official: { cpu: 124.5, rssMiB: 117 },
    expect: (o) => ({
      rougel: [o.downstream.rougel, 0.25617320067317884],
      f1: [o.downstream.f1, 0.2558280566901432],
    }),
  },
  {
    name: "short-50000 both evaluators in one pass (tartan default)",
    set: "short",
    args: ["--mode", "all"],
    official: { cpu: 91.5 + 128.5, rssMiB: 1.09 * 1024 },
    expect: (o) => ({ em: [o.eval_downstream.downstream.em, 0.60054], "answer_in_context@5": [o.eval_retrieval["answer_in_context@5"], 0.68346] }),
  },
];

async function sha256(file) {
  const h = createHash("sha256");
  for await (const c of createReadStream(file)) h.update(c);
  return h.digest("hex");
}

async function ensureSet(key) {
  const s = SETS[key];
  const dir = join(OUT, `${s.kind}-${s.n}`);
  const gold = join(dir, `${s.kind}-${s.n}-gold.jsonl`);
  const guess = join(dir, `${s.kind}-${s.n}-guess.jsonl`);
  if (!existsSync(gold) || !existsSync(guess)) {
    mkdirSync(dir, { recursive: true });
    process.stderr.write(`generating ${s.kind}-${s.n} with gen_synthetic.py ...\n`);
    const r = spawnSync("python3", [join(SHARED, "tools", "gen_synthetic.py"), "--kind", s.kind, "--n", String(s.n), "--seed", String(s.seed), "--out", dir], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (r.status !== 0) throw new Error("gen_synthetic.py failed");
  }
  for (const [role, file] of [["gold", gold], ["guess", guess]]) {
    const got = await sha256(file);
    if (!got.startsWith(s.sha[role])) throw new Error(`${file}: sha256 ${got.slice(0, 8)}… is not the official ${s.sha[role]}…`);
  }
  return { gold, guess };
}

function timeRun(args) {
  const r = spawnSync("/usr/bin/time", ["-f", "%U %S %M", "node", CLI, "eval", ...args, "--json"], { encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.error) throw new Error(`/usr/bin/time is needed (Debian package "time"): ${r.error.message}`);
  const last = r.stderr.trim().split("\n").pop().split(" ");
  return { cpu: Number(last[0]) + Number(last[1]), rssMiB: Number(last[2]) / 1024, out: JSON.parse(r.stdout), status: r.status };
}

const rows = [];
let allEqual = true;
for (const c of CASES) {
  const { gold, guess } = await ensureSet(c.set);
  let best = null;
  for (let i = 0; i < RUNS; i++) {
    const t = timeRun([gold, guess, ...c.args]);
    if (!best || t.cpu < best.cpu) best = { ...t, rssMiB: Math.max(t.rssMiB, best?.rssMiB ?? 0) };
  }
  const checks = Object.entries(c.expect(best.out)).map(([k, [got, want]]) => ({ k, ok: got === want, got, want }));
  const ok = checks.every((x) => x.ok);
  allEqual &&= ok;
  rows.push({ ...c, best, ok, checks });
  process.stdout.write(
    `${c.name}\n  tartan ${best.cpu.toFixed(2)} CPU-s, peak ${best.rssMiB.toFixed(0)} MiB | official ${c.official.cpu} CPU-s, ${c.official.rssMiB.toFixed(0)} MiB | ` +
      `${(c.official.cpu / best.cpu).toFixed(1)}x less CPU | figures ${ok ? "equal to the official ones" : "DIFFER: " + JSON.stringify(checks.filter((x) => !x.ok))}\n`,
  );
}
process.stdout.write("\n| case | tartan CPU s | peak RSS MiB | official CPU s | CPU ratio | official figures |\n|---|---|---|---|---|---|\n");
for (const r of rows)
  process.stdout.write(`| ${r.name} | ${r.best.cpu.toFixed(2)} | ${r.best.rssMiB.toFixed(0)} | ${r.official.cpu} | ${(r.official.cpu / r.best.cpu).toFixed(1)}x | ${r.ok ? "equal" : "DIFFER"} |\n`);
process.exitCode = allEqual ? 0 : 1;
