#!/usr/bin/env node
// Benchmark of `tartan eval` against the official KILT evaluator measured in the same run
// (../shared/tools/official-eval/run: unmodified KILT and rouge 1.0.1 source; needs python3 and six:
// Debian's python3-six, which this script names when missing and never installs). Generates the synthetic sets
// with ../shared/tools/gen_synthetic.py (checked against the published sha256 prefixes), runs the
// official evaluator once and the compiled CLI best of N under /usr/bin/time (CPU = user + sys, peak
// RSS), prints both and their ratio, and checks that tartan's result equals the official one exactly.
// Usage: npm run bench:eval [-- --runs 3] [-- --only NAME-SUBSTRING] [-- --before OTHER/dist/src/cli/main.js]
// (--before also times another build, run for run in alternation with this one, and prints both).
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { CLI, load, opt, OUT as BENCH_OUT, SHARED } from "./lib.mjs";

const OUT = join(BENCH_OUT, "eval");
const OFFICIAL = join(SHARED, "tools", "official-eval", "run");
const o = opt(
  { runs: { type: "string", default: "3" }, only: { type: "string" }, before: { type: "string" } },
  "usage: npm run bench:eval [-- --runs N] [-- --only NAME-SUBSTRING] [-- --before OTHER/dist/src/cli/main.js]",
);
const RUNS = Number(o.runs);
const ONLY = o.only;
/** Another build's CLI (e.g. main's dist/src/cli/main.js), timed in alternation with this one: before/after in one run. */
const BEFORE = o.before;

const SETS = {
  short: { kind: "short", n: 50000, seed: 0, sha: { gold: "915a2d33", guess: "a01fbe90" } },
  eli5: { kind: "eli5", n: 5000, seed: 0, sha: { gold: "be4ebf6a", guess: "70f24709" } },
};

/**
 * The three cases of issue 11 and tartan's default (both evaluators in one pass). `official` names the
 * official run(s) whose CPU time and result this case is compared with; `pick` selects from tartan's
 * --json output what must equal the official dicts (values and key order).
 */
const CASES = [
  {
    name: "short-50000 eval_downstream",
    set: "short",
    args: ["--mode", "downstream"],
    official: [{ only: "downstream", ks: "1,5,10,20" }],
    pick: (o) => ({ eval_downstream: o }),
  },
  {
    name: "short-50000 eval_retrieval --ks 1,5,10,20",
    set: "short",
    args: ["--mode", "retrieval", "--ks", "1,5,10,20"],
    official: [{ only: "retrieval", ks: "1,5,10,20" }],
    pick: (o) => ({ eval_retrieval: o }),
  },
  {
    name: "eli5-5000 eval_downstream",
    set: "eli5",
    args: ["--mode", "downstream"],
    official: [{ only: "downstream", ks: "1,5,10,20" }],
    pick: (o) => ({ eval_downstream: o }),
  },
  {
    // The official code has no combined pass: its anchor is the sum of the two runs above.
    name: "short-50000 both evaluators in one pass (tartan default, ks 1,5,10,20)",
    set: "short",
    args: ["--mode", "all", "--ks", "1,5,10,20"],
    official: [
      { only: "downstream", ks: "1,5,10,20" },
      { only: "retrieval", ks: "1,5,10,20" },
    ],
    pick: (o) => o,
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

/** python3 with `six` (the official evaluator imports it): says what to install when missing (installs nothing). */
function ensureSix() {
  const r = spawnSync("python3", ["-c", "import six"], { stdio: "ignore" });
  if (r.error) throw new Error(`the official evaluator needs python3: install it (Debian: apt-get install python3) (${r.error.message})`);
  if (r.status !== 0) throw new Error("the official evaluator needs python3 with six: install it (Debian: apt-get install python3-six, or pip install six)");
}

/** Runs a command under /usr/bin/time: CPU seconds (user + sys), peak RSS in MiB, stdout. */
function timed(cmd, args) {
  const r = spawnSync("/usr/bin/time", ["-f", "%U %S %M", cmd, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.error) throw new Error(`/usr/bin/time is needed (Debian package "time"): ${r.error.message}`);
  const last = r.stderr.trim().split("\n").pop().split(" ");
  return { cpu: Number(last[0]) + Number(last[1]), rssMiB: Number(last[2]) / 1024, stdout: r.stdout, stderr: r.stderr, status: r.status };
}

function timeRun(args, cli = CLI) {
  const t = timed("node", [cli, "eval", ...args, "--json"]);
  if (t.status !== 0) throw new Error(`tartan eval ${args.join(" ")} exited ${t.status}:\n${t.stderr}`);
  return { ...t, out: JSON.parse(t.stdout) };
}

/** The official evaluator, once per (set, only, ks): its CPU time, peak RSS and returned dict. */
const officialRuns = new Map();
function officialRun(set, files, o) {
  const key = `${set} ${o.only} ${o.ks}`;
  if (!officialRuns.has(key)) {
    process.stderr.write(`official evaluator: ${key} …\n`);
    const t = timed(OFFICIAL, ["--only", o.only, "--ks", o.ks, files.gold, files.guess]);
    if (t.status !== 0) throw new Error(`official evaluator ${key} exited ${t.status}:\n${t.stderr.slice(-2000)}`);
    const res = JSON.parse(t.stdout);
    officialRuns.set(key, { cpu: t.cpu, rssMiB: t.rssMiB, name: `eval_${o.only}`, result: res[`eval_${o.only}`] });
  }
  return officialRuns.get(key);
}

ensureSix();
const load0 = load(1);
process.stderr.write(`load average at start: ${load0}\n`);
const rows = [];
let allEqual = true;
for (const c of CASES) {
  if (ONLY && !c.name.includes(ONLY)) continue;
  const files = await ensureSet(c.set);
  const off = c.official.map((o) => officialRun(c.set, files, o));
  const official = { cpu: off.reduce((a, o) => a + o.cpu, 0), rssMiB: Math.max(...off.map((o) => o.rssMiB)) };
  const want = Object.fromEntries(off.map((o) => [o.name, o.result]));
  let best = null;
  let peak = 0;
  let before = null;
  for (let i = 0; i < RUNS; i++) {
    if (BEFORE) {
      const b = timeRun([files.gold, files.guess, ...c.args], BEFORE);
      if (!before || b.cpu < before.cpu) before = b;
    }
    const t = timeRun([files.gold, files.guess, ...c.args]);
    peak = Math.max(peak, t.rssMiB);
    if (!best || t.cpu < best.cpu) best = t;
  }
  // Same values and the same key order as the official dicts.
  const got = c.pick(best.out);
  const ok = JSON.stringify(got) === JSON.stringify(want);
  allEqual &&= ok;
  const ratio = official.cpu / best.cpu;
  rows.push({ name: c.name, best, peak, official, ratio, ok, before });
  if (before)
    process.stdout.write(`  before (${BEFORE}): ${before.cpu.toFixed(2)} CPU-s (best of ${RUNS}), ${(official.cpu / before.cpu).toFixed(1)}x less CPU than the official code\n`);
  process.stdout.write(
    `${c.name}\n  tartan ${best.cpu.toFixed(2)} CPU-s (best of ${RUNS}), peak ${peak.toFixed(0)} MiB | official ${official.cpu.toFixed(1)} CPU-s, ${official.rssMiB.toFixed(0)} MiB | ` +
      `${ratio.toFixed(1)}x less CPU | result ${ok ? "equal to the official one" : "DIFFERS: tartan " + JSON.stringify(got) + " official " + JSON.stringify(want)}\n`,
  );
}
process.stdout.write(`\nload average at start ${load0}, at end ${load(1)}; node ${process.version}\n`);
const beforeHead = BEFORE ? " before CPU s | before ratio |" : "";
process.stdout.write(
  `\n| case |${beforeHead} tartan CPU s | tartan peak RSS MiB | official CPU s | official peak RSS MiB | CPU ratio | result |\n|---|${BEFORE ? "---|---|" : ""}---|---|---|---|---|---|\n`,
);
for (const r of rows) {
  const b = r.before ? ` ${r.before.cpu.toFixed(2)} | ${(r.official.cpu / r.before.cpu).toFixed(1)}x |` : "";
  process.stdout.write(
    `| ${r.name} |${b} ${r.best.cpu.toFixed(2)} | ${r.peak.toFixed(0)} | ${r.official.cpu.toFixed(1)} | ${r.official.rssMiB.toFixed(0)} | ${r.ratio.toFixed(1)}x | ${r.ok ? "equal" : "DIFFERS"} |\n`,
  );
}
process.exitCode = allEqual ? 0 : 1;
