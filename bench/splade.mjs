// `node bench/splade.mjs`: SPLADE encoding throughput on the test graph (the random BERT masked-language
// model of test/fixtures/splade-onnx/make.py: 2 layers, hidden 32, a 4,161-token vocabulary, texts cut
// to --max-length tokens): SQuAD paragraphs (title. text, as `index build --kind impact --encoder`
// encodes them) per second through a SpladePool (the build's path), one worker thread against one per
// core (--threads), in alternation for --rounds rounds (best round counts), wall and CPU seconds of
// the process (worker threads included); then one `index build --kind impact --encoder` of the same
// pages end to end, in this process (wall, CPU). Prints units/s, the ratio to one thread, and the load
// average. Needs Debian's python3-onnx (the fixture is made once into --dir).
//
// usage: node bench/splade.mjs [--units 600] [--rounds 3] [--threads 2] [--max-length 128] [--dir /tmp/tartan-splade-bench]
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { ROOT, SHARED, cpuS, internal, load, opt } from "./lib.mjs";

const o = opt(
  { units: { type: "string", default: "600" }, rounds: { type: "string", default: "3" }, threads: { type: "string", default: String(cpus().length) }, "max-length": { type: "string", default: "128" }, dir: { type: "string", default: "/tmp/tartan-splade-bench" } },
  "node bench/splade.mjs [--units 600] [--rounds 3] [--threads 2] [--max-length 128] [--dir DIR]",
);
const dir = o.dir;
const squad = join(SHARED, "data/squad/dev-v1.1.reconstructed.json");
if (!existsSync(join(dir, "ref.json"))) {
  mkdirSync(dir, { recursive: true });
  const python = process.env.TARTAN_PYTHON ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
  const r = spawnSync(python, [join(ROOT, "test/fixtures/splade-onnx/make.py"), "--squad", squad, "--out", dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`make.py failed (needs python3-onnx, python3-numpy):\n${r.stderr}`);
}
const { SpladePool } = await internal("retrieval/impact/encode-pool.js");
const { unitText } = await internal("retrieval/dense/build.js");
const { unitsFrom } = await internal("retrieval/sources.js");
const { fromSquad } = await internal("knowledge/build.js");

// The units: the first --units paragraphs of the SQuAD pages, in a pages file of those pages.
const all = join(dir, "all-pages.jsonl");
if (!existsSync(all)) await fromSquad(squad, all, () => {});
const want = Number(o.units);
const units = [];
for await (const u of unitsFrom({ pages: all }, { unit: "paragraph", words: 100 })) {
  units.push(u);
  if (units.length >= want) break;
}
const pagesFile = join(dir, `pages-${want}.jsonl`);
const titles = new Set(units.map((u) => u.wikipedia_id));
writeFileSync(pagesFile, readFileSync(all, "utf8").split("\n").filter((l) => l && titles.has(JSON.parse(l).wikipedia_id)).join("\n") + "\n");
const texts = units.map((u) => unitText(u, { title: true }));
const spec = { type: "splade-onnx", model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), maxLength: Number(o["max-length"]) };
const setups = [
  { name: "1 worker (onnxruntime on 1 core)", threads: 1 },
  { name: `${o.threads} workers, 1 core each (the build's default)`, threads: Number(o.threads) },
];
const best = setups.map(() => ({ rate: 0, cpu: 0 }));
for (let round = 0; round < Number(o.rounds); round++) {
  for (let s = 0; s < setups.length; s++) {
    const pool = await SpladePool.open(spec, { threads: setups[s].threads });
    await pool.encodePassages(texts.slice(0, 16)); // warm
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await pool.encodePassages(texts);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuS(c0);
    await pool.close();
    if (texts.length / seconds > best[s].rate) best[s] = { rate: texts.length / seconds, cpu };
    console.log(`round ${round + 1}  ${setups[s].name.padEnd(44)} ${(texts.length / seconds).toFixed(1).padStart(7)} units/s  ${seconds.toFixed(2)} s wall  ${cpu.toFixed(2)} CPU-s`);
  }
}
console.log(`\n${texts.length} SQuAD paragraphs, max length ${o["max-length"]}, best of ${o.rounds} rounds; load ${load()}`);
setups.forEach((s, i) => console.log(`${s.name.padEnd(44)} ${best[i].rate.toFixed(1).padStart(7)} units/s  ×${(best[i].rate / best[0].rate).toFixed(2)}  ${best[i].cpu.toFixed(2)} CPU-s`));

// End to end: the build `tartan index build --kind impact --encoder DIR` runs, over the same pages (all their paragraphs), in this process.
const { buildIndex } = await internal("retrieval/build.js");
const out = join(dir, "index");
rmSync(out, { recursive: true, force: true });
const c0 = process.cpuUsage();
const t0 = performance.now();
let line = "";
await buildIndex({ kind: "impact", pages: pagesFile, unit: "paragraph", params: { encoder: { dir, maxLength: Number(o["max-length"]) } }, threads: Number(o.threads), out }, (l) => (line = l));
console.log(`\nindex build --kind impact --encoder (${o.threads} threads): ${((performance.now() - t0) / 1000).toFixed(1)} s wall, ${cpuS(c0).toFixed(1)} CPU-s; ${line}`);
