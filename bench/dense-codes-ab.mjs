// Dense code types before and after a change (issue 35 §5), on the bench generator's vectors
// (./dense-gen.mjs): for every code type of `--quantize`, an index is built with the old tree's CLI and
// with this tree's (`tartan index build --kind dense --vectors --ids --quantize K`), each is searched by
// its own CLI (`tartan retrieve --query-vectors --top-k 100 --nprobe --rerank`), and the two ranking
// files are compared byte for byte. Then the speed: the old-built index is opened by both trees' IvfIndex
// in this process, one thread, and the queries are searched one at a time in alternating rounds (old,
// new, new, old, …), so neither gets the quieter slices; queries/s per tree and their ratio (new ÷ old).
//
// usage: node bench/dense-codes-ab.mjs --old /tmp/OLD_TREE [--dir DIR] [--rows 100000] [--dim 256]
//        [--queries 500] [--rounds 4] [--quantize binary,pq,pq4,int8] [--speed-only]   (both trees built first)
// --speed-only reuses DIR's indexes and ranking files of an earlier run and measures the speed again.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, ROOT, load, opt as parseOptions } from "./lib.mjs";
import { generator } from "./dense-gen.mjs";

const o = parseOptions(
  { old: { type: "string" }, dir: { type: "string" }, rows: { type: "string", default: "100000" }, dim: { type: "string", default: "256" }, queries: { type: "string", default: "500" }, rounds: { type: "string", default: "4" }, quantize: { type: "string", default: "binary,pq,pq4,int8" }, "speed-only": { type: "boolean" } },
  "usage: node bench/dense-codes-ab.mjs --old OLD_TREE [--dir DIR] [--rows N] [--dim D] [--queries Q] [--rounds R] [--quantize binary,pq,…] [--speed-only]",
);
if (!o.old) throw new Error("--old OLD_TREE is required (a built checkout of the commit to compare with)");
const N = Number(o.rows), DIM = Number(o.dim), NQ = Number(o.queries), ROUNDS = Number(o.rounds);
const DIR = o.dir ?? join(ROOT, "bench", "out", `dense-codes-ab-${N}x${DIM}`);
const trees = { old: o.old, new: ROOT };
const cli = { old: join(o.old, "dist", "src", "cli", "main.js"), new: CLI };
mkdirSync(DIR, { recursive: true });

function npy(rows, data) {
  let h = `{'descr': '<f4', 'fortran_order': False, 'shape': (${rows}, ${DIM}), }`;
  h += " ".repeat(63 - ((10 + h.length) % 64)) + "\n";
  const head = Buffer.alloc(10);
  head.write("\x93NUMPY", 0, "latin1");
  head[6] = 1;
  head.writeUInt16LE(h.length, 8);
  return Buffer.concat([head, Buffer.from(h, "latin1"), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]);
}

const g = generator({ count: N, dim: DIM });
const qs = g.queries(NQ);
if (!existsSync(join(DIR, "records.jsonl"))) {
  writeFileSync(join(DIR, "passages.npy"), npy(N, g.read(0, N)));
  writeFileSync(join(DIR, "ids.txt"), Array.from({ length: N }, (_, i) => `${Math.floor(i / 4)}\t${(i % 4) + 1}\t${(i % 4) + 1}\n`).join(""));
  writeFileSync(join(DIR, "queries.npy"), npy(NQ, qs));
  writeFileSync(join(DIR, "records.jsonl"), Array.from({ length: NQ }, (_, j) => `${JSON.stringify({ id: `q${j}`, input: `query ${j}` })}\n`).join(""));
}
const run = (which, args) => {
  const r = spawnSync(process.execPath, [cli[which], ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${which}: tartan ${args.join(" ")}\n${r.stderr}`);
};

const kinds = o.quantize.split(",");
const depth = { nprobe: 16, refine: 200 };
const rows = [];
for (const kind of kinds) {
  const same = {};
  for (const which of ["old", "new"]) {
    const out = join(DIR, `index-${kind}-${which}`);
    if (o["speed-only"]) {
      same[which] = readFileSync(join(DIR, `run-${kind}-${which}.jsonl`));
      continue;
    }
    rmSync(out, { recursive: true, force: true });
    run(which, ["index", "build", "--kind", "dense", "--vectors", join(DIR, "passages.npy"), "--ids", join(DIR, "ids.txt"), "--unit", "paragraph", "--quantize", kind, "--out", out]);
    run(which, ["retrieve", "--index", out, "--query-vectors", join(DIR, "queries.npy"), "--input", join(DIR, "records.jsonl"), "--out", join(DIR, `run-${kind}-${which}.jsonl`), "--top-k", "100", "--nprobe", String(depth.nprobe), "--refine", String(depth.refine), "--threads", "1"]);
    same[which] = readFileSync(join(DIR, `run-${kind}-${which}.jsonl`));
  }
  const identical = same.old.equals(same.new);
  // speed: the old-built index opened by both trees, one thread, query by query, alternating rounds
  const idx = {};
  for (const which of ["old", "new"]) {
    const { IvfIndex } = await import(join(trees[which], "dist", "src", "retrieval", "dense", "ivf-search.js"));
    const { readManifest } = await import(join(trees[which], "dist", "src", "retrieval", "manifest.js"));
    const dir = join(DIR, `index-${kind}-old`);
    idx[which] = IvfIndex.open(dir, readManifest(dir), { threads: 1 });
  }
  const time = { old: 0, new: 0 };
  const hits = { old: [], new: [] };
  // one untimed pass each first (JIT, page cache), then the timed rounds
  for (const which of ["old", "new"]) for (let q = 0; q < NQ; q++) hits[which].push(idx[which].search(qs.subarray(q * DIM, (q + 1) * DIM), 100, depth)[0]);
  const before = load();
  for (let r = 0; r < ROUNDS; r++) {
    for (const which of r % 2 === 0 ? ["old", "new"] : ["new", "old"]) {
      const t0 = performance.now();
      for (let q = 0; q < NQ; q++) idx[which].search(qs.subarray(q * DIM, (q + 1) * DIM), 100, depth);
      time[which] += performance.now() - t0;
    }
  }
  for (const which of ["old", "new"]) await idx[which].close();
  const sameHits = JSON.stringify(hits.old) === JSON.stringify(hits.new);
  const qps = { old: (NQ * ROUNDS) / (time.old / 1000), new: (NQ * ROUNDS) / (time.new / 1000) };
  rows.push({ kind, identicalRankings: identical, sameHitsInProcess: sameHits, qpsOld: qps.old, qpsNew: qps.new, ratio: qps.new / qps.old, load: `${before} → ${load()}` });
  process.stderr.write(`${kind}: rankings ${identical ? "identical" : "DIFFER"}, q/s old ${qps.old.toFixed(1)} new ${qps.new.toFixed(1)} (×${(qps.new / qps.old).toFixed(3)})\n`);
}
console.log(`${N.toLocaleString("en-US")} × ${DIM} generator vectors, ${NQ} queries, top 100, nprobe ${depth.nprobe}, refine ${depth.refine}, one thread, one warm-up pass each, then ${ROUNDS} alternating rounds\n`);
console.log("| code type | rankings (old build + old CLI vs new build + new CLI) | q/s old | q/s new | new ÷ old | load before → after |");
console.log("|---|---|---|---|---|---|");
for (const r of rows) console.log(`| ${r.kind} | ${r.identicalRankings && r.sameHitsInProcess ? "identical" : "DIFFER"} | ${r.qpsOld.toFixed(1)} | ${r.qpsNew.toFixed(1)} | ${r.ratio.toFixed(3)} | ${r.load} |`);
writeFileSync(join(DIR, "result.json"), JSON.stringify(rows, null, 2));
if (rows.some((r) => !r.identicalRankings || !r.sameHitsInProcess)) process.exitCode = 1;
