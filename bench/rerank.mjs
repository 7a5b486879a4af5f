// `node bench/rerank.mjs`: reranking throughput of the cross-encoder on the test graph (the random
// BERT-shaped classifier of test/fixtures/cross-encoder/make.py, 2 layers, hidden 32, pairs cut to
// --max-length tokens): (query, passage) pairs per second of 24 SQuAD questions × 8 paragraphs of their
// article, repeated --repeat times, through a RerankPool (`tartan rerank`'s path) in three set-ups, in
// alternation for --rounds rounds (best round counts): one thread with onnxruntime on one core (the
// anchor), one thread with onnxruntime on every core, and one worker per core (--threads) each on one core.
// Prints pairs/s, the ratios to the anchor, and the load average. Needs Debian's python3-onnx.
//
// usage: node bench/rerank.mjs [--repeat 10] [--rounds 3] [--threads 2] [--max-length 128] [--dir /tmp/tartan-rerank-bench]
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { ROOT, SHARED, load, opt, tartan } from "./lib.mjs";

const o = opt(
  { repeat: { type: "string", default: "10" }, rounds: { type: "string", default: "3" }, threads: { type: "string", default: String(cpus().length) }, "max-length": { type: "string", default: "128" }, dir: { type: "string", default: "/tmp/tartan-rerank-bench" } },
  "node bench/rerank.mjs [--repeat 10] [--rounds 3] [--threads 2] [--max-length 128] [--dir DIR]",
);
const dir = o.dir;
if (!existsSync(join(dir, "ref.json"))) {
  mkdirSync(dir, { recursive: true });
  const python = process.env.TARTAN_PYTHON ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
  const r = spawnSync(python, [join(ROOT, "test/fixtures/cross-encoder/make.py"), "--squad", join(SHARED, "data/squad/dev-v1.1.reconstructed.json"), "--out", dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`make.py failed (needs python3-onnx, python3-numpy):\n${r.stderr}`);
}
const { RerankPool } = await tartan("retrieval");
const ref = JSON.parse(readFileSync(join(dir, "ref.json"), "utf8"));
const items = Array.from({ length: Number(o.repeat) }, () => ref.items).flat();
const pairs = items.reduce((n, it) => n + it.passages.length, 0);
const spec = (extra) => ({ name: "cross-encoder", options: { model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), maxLength: Number(o["max-length"]), ...extra } });
const setups = [
  { name: "1 thread, onnxruntime on 1 core (anchor)", open: () => RerankPool.open(spec({ threads: 1 }), { threads: 1 }) },
  { name: `1 thread, onnxruntime on ${cpus().length} cores`, open: () => RerankPool.open(spec({}), { threads: 1 }) },
  { name: `${o.threads} workers, 1 core each (tartan rerank's default)`, open: () => RerankPool.open(spec({}), { threads: Number(o.threads), chunk: 4 }) },
];
const best = setups.map(() => 0);
for (let round = 0; round < Number(o.rounds); round++) {
  for (let s = 0; s < setups.length; s++) {
    const pool = await setups[s].open();
    await pool.rerank(items.slice(0, 8)); // warm
    const t0 = performance.now();
    await pool.rerank(items);
    const seconds = (performance.now() - t0) / 1000;
    await pool.close();
    best[s] = Math.max(best[s], pairs / seconds);
    console.log(`round ${round + 1}  ${setups[s].name.padEnd(48)} ${(pairs / seconds).toFixed(0).padStart(7)} pairs/s`);
  }
}
console.log(`\n${pairs} pairs (${items.length} queries × 8), max length ${o["max-length"]}, best of ${o.rounds} rounds; load ${load()}`);
setups.forEach((s, i) => console.log(`${s.name.padEnd(48)} ${best[i].toFixed(0).padStart(7)} pairs/s  ×${(best[i] / best[0]).toFixed(2)}`));
