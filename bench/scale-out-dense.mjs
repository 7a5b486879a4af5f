// `npm run bench:scale-out-dense`: dense retrieval on the ClickHouse cluster (src/backends/clickhouse/
// dense.ts) against the embedded compressed index it is copied from (IvfIndex, the anchor), in one run:
// vectors from bench/dense-gen.mjs (default 200,000 × 768, queries noisy neighbours of passages), a
// binary-code index built once, then for each shard count a local cluster (tartan's cluster scripts,
// 127.0.0.1, stopped by pid), the index copied in, and the queries searched alternately on the cluster
// and the embedded index (ABAB: the machine is shared): queries/s (batches of --batch), client and server
// CPU per query, hits identical to the embedded index's (units, order, scores), recall@10/@100 against
// exact search. Writes bench/out/scale-out-dense/results.json.
//
// usage: node bench/scale-out-dense.mjs [--docs 200000] [--dim 768] [--queries 500] [--shards 1,2]
//          [--nprobe 32] [--rerank 200] [--batch 50] [--rounds 2] [--dir DIR] [--base-port 19300]
import { mkdirSync, writeFileSync, readFileSync, rmSync, mkdtempSync, existsSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { generator } from "./dense-gen.mjs";
import { cpuS, internal, load, opt as parseOptions, OUT as BENCH_OUT, tartan } from "./lib.mjs";

const OUT = join(BENCH_OUT, "scale-out-dense");
const { dense, readManifest } = await tartan("retrieval");
const { buildIvfIndex, IvfIndex } = dense;
const { buildDenseClickHouse, openClickHouseDense, startCluster, stopCluster } = await tartan("backends");
// The exact-search kernel the recall is measured against (internal to the package).
const { localRangeSearcher } = await internal("retrieval/dense/simd.js");
const opt = parseOptions(
  {
    docs: { type: "string", default: "200000" },
    dim: { type: "string", default: "768" },
    queries: { type: "string", default: "500" },
    shards: { type: "string", default: "1,2" },
    nprobe: { type: "string", default: "32" },
    refine: { type: "string", default: "200" },
    batch: { type: "string", default: "50" },
    rounds: { type: "string", default: "2" },
    dir: { type: "string" },
    "base-port": { type: "string", default: "19300" },
  },
  "usage: npm run bench:scale-out-dense [-- --docs 200000] [-- --dim 768] [-- --queries 500] [-- --shards 1,2] [-- --nprobe 32] [-- --refine 200] [-- --batch 50] [-- --rounds 2] [-- --dir DIR] [-- --base-port 19300]",
);
const N = Number(opt.docs), DIM = Number(opt.dim), NQ = Number(opt.queries), K = 100, BATCH = Number(opt.batch), ROUNDS = Number(opt.rounds);
const search = { nprobe: Number(opt.nprobe), refine: Number(opt.refine) };

const cpuNow = () => cpuS();
/** CPU seconds of the processes `pids` (Linux /proc, clock ticks of 1/100 s). */
const procCpu = (pids) => pids.reduce((s, pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return s + (Number(f[11]) + Number(f[12])) / 100;
}, 0);
const log = (s) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${s} (load ${load()})\n`);

const work = opt.dir ?? mkdtempSync(join(tmpdir(), "tartan-bench-dense-ch-"));
mkdirSync(work, { recursive: true });
const g = generator({ count: N, dim: DIM });
const qs = g.queries(NQ);

// exact top-100 (the recall reference), block by block
log(`exact top-${K} of ${NQ} queries over ${N} × ${DIM}`);
const truth = Array.from({ length: NQ }, () => []);
for (let r = 0; r < N; r += 32768) {
  const m = Math.min(32768, N - r);
  const part = localRangeSearcher(g.read(r, m), DIM, r)(qs, NQ, K);
  for (let q = 0; q < NQ; q++) {
    for (let t = 0; t < K; t++) if (part.ids[q * K + t] >= 0) truth[q].push({ unit: part.ids[q * K + t], score: part.scores[q * K + t] });
    truth[q] = truth[q].sort((a, b) => b.score - a.score || a.unit - b.unit).slice(0, K);
  }
}
const recall = (hits, k) => hits.reduce((s, h, q) => {
  const want = new Set(truth[q].slice(0, k).map((x) => x.unit));
  return s + h.slice(0, k).filter((x) => want.has(x.unit)).length;
}, 0) / (hits.length * k);

const dir = join(work, "index-binary");
if (!existsSync(join(dir, "manifest.json"))) {
  log(`building the embedded binary index in ${dir}`);
  function* units() {
    for (let i = 0; i < N; i++) yield { wikipedia_id: String(Math.floor(i / 4)), wikipedia_title: "", start_paragraph_id: (i % 4) + 1, end_paragraph_id: (i % 4) + 1, text: "" };
  }
  await buildIvfIndex(g, units(), dir, { quantize: "binary", sample: Math.min(N, 50_000) });
}
const manifest = readManifest(dir);
const ivf = IvfIndex.open(dir, manifest, { threads: 1 });

/** One timed pass of the embedded index (one thread, batches of BATCH). */
function embeddedPass() {
  const t0 = performance.now(), c0 = cpuNow();
  const out = [];
  for (let i = 0; i < NQ; i += BATCH) out.push(...ivf.search(qs.subarray(i * DIM, Math.min(NQ, i + BATCH) * DIM), K, search));
  return { hits: out, qps: NQ / ((performance.now() - t0) / 1000), cpuMsPerQuery: ((cpuNow() - c0) * 1000) / NQ };
}

const report = { node: process.version, cpus: cpus().length, date: new Date().toISOString(), docs: N, dim: DIM, queries: NQ, k: K, batch: BATCH, search, lists: manifest.params.lists, loadStart: load(), embedded: [], clusters: [] };
const anchor = embeddedPass();
report.embedded.push({ qps: anchor.qps, cpuMsPerQuery: anchor.cpuMsPerQuery, load: load() });
report.recall = { exact10: recall(anchor.hits, 10), exact100: recall(anchor.hits, 100) };
log(`embedded: ${anchor.qps.toFixed(1)} q/s, recall@10 ${report.recall.exact10.toFixed(4)}, @100 ${report.recall.exact100.toFixed(4)}`);

for (const S of opt.shards.split(",").map(Number)) {
  const cdir = join(work, `cluster-${S}`);
  rmSync(cdir, { recursive: true, force: true });
  const cluster = await startCluster({ shards: S, dir: cdir, basePort: Number(opt["base-port"]) + S * 10, timeoutMs: 120_000 });
  try {
    const shardList = cluster.shards.map((s) => `${s.host}:${s.httpPort}`).join(",");
    const url = `clickhouse://${cluster.shards[0].host}:${cluster.shards[0].httpPort}/bench/dense?cluster=${cluster.name}&shards=${shardList}&timeout=600`;
    const pids = cluster.shards.map((s) => s.pid);
    let t0 = performance.now();
    const built = await buildDenseClickHouse(dir, url);
    const buildS = (performance.now() - t0) / 1000;
    log(`${S} shard(s): copied in ${buildS.toFixed(1)} s, ${(built.bytes / 1e6).toFixed(1)} MB`);
    const r = await openClickHouseDense(url, { batch: BATCH });
    const run = { shards: S, buildSeconds: buildS, bytes: built.bytes, passes: [] };
    try {
      await r.searchVectors(qs.subarray(0, BATCH * DIM), K, search); // warm the servers' caches
      for (let round = 0; round < ROUNDS; round++) {
        t0 = performance.now();
        const c0 = cpuNow(), s0 = procCpu(pids);
        const hits = await r.searchVectors(qs, K, search);
        const wall = (performance.now() - t0) / 1000;
        const pass = { qps: NQ / wall, clientCpuMsPerQuery: ((cpuNow() - c0) * 1000) / NQ, serverCpuMsPerQuery: ((procCpu(pids) - s0) * 1000) / NQ, load: load() };
        pass.identical = hits.filter((h, q) => JSON.stringify(h) === JSON.stringify(anchor.hits[q])).length;
        pass.recall100 = recall(hits, 100);
        pass.recall10 = recall(hits, 10);
        run.passes.push(pass);
        const e = embeddedPass();
        report.embedded.push({ qps: e.qps, cpuMsPerQuery: e.cpuMsPerQuery, load: load() });
        pass.embeddedQps = e.qps;
        log(`${S} shard(s) pass ${round + 1}: ${pass.qps.toFixed(1)} q/s (embedded ${e.qps.toFixed(1)}), server ${pass.serverCpuMsPerQuery.toFixed(2)} ms CPU/query, client ${pass.clientCpuMsPerQuery.toFixed(2)}, identical ${pass.identical}/${NQ}, recall@100 ${pass.recall100.toFixed(4)}`);
      }
    } finally {
      await r.close();
    }
    report.clusters.push(run);
  } finally {
    await stopCluster(cdir);
    rmSync(cdir, { recursive: true, force: true });
  }
}
await ivf.close();
report.loadEnd = load();
mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, "results.json"), JSON.stringify(report, null, 2));
console.log(`\n${N} × ${DIM} vectors, ${manifest.params.lists} lists, ${NQ} queries, top-${K}, nprobe ${search.nprobe}, refine ${search.refine}, batches of ${BATCH}`);
console.log(`embedded (1 thread): ${report.embedded.map((e) => e.qps.toFixed(1)).join(" / ")} q/s; recall@10 ${report.recall.exact10.toFixed(4)}, @100 ${report.recall.exact100.toFixed(4)}`);
for (const c of report.clusters) {
  for (const p of c.passes) console.log(`${c.shards} shard(s): ${p.qps.toFixed(1)} q/s (${(p.qps / p.embeddedQps).toFixed(2)}× the embedded pass after it), server CPU ${p.serverCpuMsPerQuery.toFixed(2)} ms/query, client ${p.clientCpuMsPerQuery.toFixed(2)} ms/query, identical hits ${p.identical}/${NQ}, recall@10 ${p.recall10.toFixed(4)}, @100 ${p.recall100.toFixed(4)}, load ${p.load}`);
}
if (!opt.dir) rmSync(work, { recursive: true, force: true });
