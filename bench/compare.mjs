#!/usr/bin/env node
// Benchmark of `tartan compare`'s hot path: Fisher's randomization test of 9 runs against a baseline
// (10 runs × 5,600 queries, HotpotQA dev's size) with 10,000 sign-flip permutations each, plus the
// paired bootstrap intervals of the 10 runs (10,000 resamples). Anchor in the same run: SciPy's
// vectorized `scipy.stats.permutation_test` (permutation_type="samples") on one of the 9 pairs with
// the same 10,000 permutations, scaled to 9 pairs. Usage: npm run bench:compare [-- --repeat 3]

import { spawnSync } from "node:child_process";
import { cpuS, internal, load, opt, tartan } from "./lib.mjs";

const { randomizationTest, bootstrapMeans } = await tartan("compare");
const { seededRandom } = await internal("util/random.js");
const REPEAT = Number(opt({ repeat: { type: "string", default: "3" } }, "usage: npm run bench:compare [-- --repeat N]").repeat);
const N = 5600;
const RUNS = 10;
const PERMS = 10_000;

// per-query scores like a KILT metric: 0/1 for 60% of queries, fractions for the rest
const rand = seededRandom(2026);
const runs = Array.from({ length: RUNS }, (_, r) => Float64Array.from({ length: N }, () => (rand() < 0.6 ? (rand() < 0.35 + 0.01 * r ? 1 : 0) : Math.round(rand() * 100) / 100)));

function time(f) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const out = f();
  return { wall: (performance.now() - t0) / 1000, cpu: cpuS(c0), out };
}

const best = (f) => {
  let b;
  for (let i = 0; i < REPEAT; i++) {
    const t = time(f);
    if (!b || t.cpu < b.cpu) b = t;
  }
  return b;
};

const rnd = best(() => runs.slice(1).map((r) => randomizationTest(r, runs[0], { permutations: PERMS, seed: 42 }).pvalue));
const boot = best(() => bootstrapMeans(runs, { samples: 10_000, seed: 42 }));
console.log(`randomization: ${RUNS} runs × ${N.toLocaleString("en-US")} queries × ${PERMS.toLocaleString("en-US")} permutations (9 pairs): ${rnd.cpu.toFixed(2)} CPU-s (${rnd.wall.toFixed(2)} s wall), best of ${REPEAT}`);
console.log(`bootstrap intervals: ${RUNS} runs × ${N.toLocaleString("en-US")} queries × 10,000 resamples: ${boot.cpu.toFixed(2)} CPU-s (${boot.wall.toFixed(2)} s wall)`);

// the anchor: SciPy on one pair, same data
const py = `
import json, sys, time, numpy as np
from scipy import stats
a, b = (np.array(x) for x in json.load(sys.stdin))
d = a - b
t0 = time.process_time()
res = stats.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples", n_resamples=${PERMS}, vectorized=True, random_state=1)
print(json.dumps({"cpu": time.process_time() - t0, "p": float(res.pvalue)}))
`;
const r = spawnSync("python3", ["-c", py], { input: JSON.stringify([Array.from(runs[1]), Array.from(runs[0])]), encoding: "utf8" });
if (r.status === 0) {
  const scipy = JSON.parse(r.stdout);
  const scaled = scipy.cpu * (RUNS - 1);
  console.log(`anchor: SciPy permutation_test, one pair: ${scipy.cpu.toFixed(2)} CPU-s (p ${scipy.p.toFixed(4)}; tartan ${rnd.out[0].toFixed(4)}); 9 pairs ≈ ${scaled.toFixed(2)} CPU-s; tartan / SciPy = ${(rnd.cpu / scaled).toFixed(3)}`);
} else console.log(`anchor: SciPy not available (${r.stderr.trim().split("\n").pop()})`);
console.log(`load average at the end: ${load()}`);
