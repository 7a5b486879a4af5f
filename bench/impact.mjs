// bench:impact: the impact index (learned sparse retrieval) on a generated SPLADE-like collection
// (./impact-gen.mjs): build wall, CPU and peak RSS (`tartan index build --kind impact`, a child process
// under /usr/bin/time), index bytes, then single-thread queries per second of the MaxScore search
// against brute force over the same index (every posting of every query term scored) in the same run,
// with the rankings checked identical for every query at top 100 and top 1000. The Lucene 8 anchor of
// issue 38 is not run: Debian's liblucene8-java is not installed on this machine.
//   npm run bench:impact -- --passages 100000 --queries 200 [--scale 100]

import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { CLI, OUT, cpuS, internal, load, opt, peakMiB } from "./lib.mjs";
import { generate } from "./impact-gen.mjs";

const o = opt({ passages: { type: "string", default: "100000" }, queries: { type: "string", default: "200" }, scale: { type: "string", default: "100" } }, "npm run bench:impact -- [--passages N] [--queries Q] [--scale S]");
const passages = Number(o.passages);
const nq = Number(o.queries);
const dir = join(OUT, `impact-${passages}`);
rmSync(dir, { recursive: true, force: true });
console.log(`load ${load()}`);
const t0 = performance.now();
const stats = await generate({ passages, queries: nq, out: dir });
console.log(`generated in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(stats)}`);

const index = join(dir, "index");
const timeFile = join(dir, "time.txt");
const r = spawnSync("/usr/bin/time", ["-o", timeFile, "-f", "%e %U %S %M", process.execPath, CLI, "index", "build", "--kind", "impact", "--vectors", join(dir, "collection.jsonl"), "--ids", join(dir, "ids.tsv"), "--scale", o.scale, "--out", index], { stdio: ["ignore", "inherit", "inherit"] });
if (r.status !== 0) throw new Error(`index build failed (${r.status})`);
const [wall, user, sys, maxKiB] = readFileSync(timeFile, "utf8").trim().split("\n").pop().split(" ").map(Number);
const bytes = readdirSync(index).reduce((s, f) => s + statSync(join(index, f)).size, 0);
console.log(`build: ${wall.toFixed(1)} s wall, ${(user + sys).toFixed(1)} CPU-s, peak RSS ${(maxKiB / 1024).toFixed(0)} MiB, index ${(bytes / 2 ** 20).toFixed(1)} MiB (${(bytes / stats.postings).toFixed(2)} bytes a posting)`);

const { ImpactSearcher } = await internal("retrieval/impact/search.js");
const { readImpactQueries } = await internal("retrieval/impact/queries.js");
const queries = await readImpactQueries(join(dir, "queries.jsonl"));
const s = ImpactSearcher.open(index);
const time = (fn) => {
  const c = process.cpuUsage();
  const t = performance.now();
  const out = queries.map((q) => fn(q.weights));
  return { out, wall: (performance.now() - t) / 1000, cpu: cpuS(c) };
};
for (const k of [10, 100, 1000]) {
  // Alternating, twice each: brute force, MaxScore.
  const runs = { brute: [], maxscore: [] };
  let brute;
  let pruned;
  for (let rep = 0; rep < 2; rep++) {
    brute = time((w) => s.searchExhaustive(w, k));
    runs.brute.push(brute.cpu);
    pruned = time((w) => s.search(w, k));
    runs.maxscore.push(pruned.cpu);
  }
  const same = pruned.out.filter((h, i) => JSON.stringify(h) === JSON.stringify(brute.out[i])).length;
  const qps = (cpu) => queries.length / Math.min(...cpu);
  console.log(
    `k ${k}: MaxScore ${qps(runs.maxscore).toFixed(1)} q/CPU-s, brute force ${qps(runs.brute).toFixed(1)} q/CPU-s, ratio ${(qps(runs.maxscore) / qps(runs.brute)).toFixed(2)}×; identical rankings ${same}/${queries.length}`,
  );
}
s.close();
console.log(`search peak RSS ${peakMiB().toFixed(0)} MiB; load ${load()}`);
