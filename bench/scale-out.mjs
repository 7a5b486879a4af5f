// `npm run bench:scale-out`: BM25 on the embedded index (the anchor) against ClickHouse with 1, 2 and 4
// local shards in the same run, on bench:retrieval's synthetic corpus (200,000 passages, 1,000 queries,
// seed 1, English analyzer, k1 0.9, b 0.4). For each backend: build time (wall; CPU of tartan and of the
// servers), bytes on disk, queries/s one at a time and in batches (top-10 and top-100), and ranking
// identity with the embedded index (same units in the same order with the same float scores, every
// query). Each cluster is searched with both ClickHouse plans in the same run: "scan" (the exhaustive
// statements with max-score pruning, the plan before the impacts table) and "impacts" (the threshold
// algorithm over impact-ordered postings, the default): queries/s, server CPU per query, postings
// read per query (scan: the sum of the terms' df; impacts: postings read by rank plus (term, unit)
// pairs looked up) and the ratio impacts / scan. Prints the ratios to the embedded index and writes bench/out/scale-out/results.json.
// The servers are started with tartan's cluster scripts (src/cluster) on 127.0.0.1 under
// $TMPDIR or --dir, and stopped by pid.
//
// The Xapian anchor (unless --no-xapian; bench/scale-out-xapian.mjs and .py, Debian's xapian-tools and
// python3-xapian): the same passages and queries, analysed by tartan, indexed by Xapian 1.4 as one
// database and as two shards behind xapian-tcpsrv on 127.0.0.1 (started and stopped by pid), searched
// one query at a time: queries/s, server CPU and bytes read per query, top-k overlap with tartan's
// rankings, and the ratios to both ClickHouse plans at the end.
//
// Then (unless --no-squad) the SQuAD v1.1 dev paragraphs (2,067) and all 10,570 questions on 2 shards:
// ranking identity at top-10 and top-100, batched.
//
// usage: node bench/scale-out.mjs [--docs 200000] [--queries 1000] [--shards 1,2,4] [--single 200] [--no-squad]
//          [--batch 100] [--dir DIR] [--base-port 19100] [--no-xapian]
// (--batch is the most queries per SELECT; the retriever takes fewer when the shards are large:
// GROUP_BUDGET in src/backends/clickhouse/bm25.ts.)
import { mkdirSync, writeFileSync, readFileSync, rmSync, statSync, readdirSync, mkdtempSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { synthetic } from "./synthetic.mjs";
import { checkXapian, runXapian } from "./scale-out-xapian.mjs";
import { cpuS, load as loadAvg, opt as parseOptions, OUT as BENCH_OUT, SHARED, tartan } from "./lib.mjs";

const OUT = join(BENCH_OUT, "scale-out");

const { bm25, buildBm25Index, openBm25, unitsFromPagesFile } = await tartan("retrieval");
const { getAnalyzer } = bm25;
const { buildBm25ClickHouse, openClickHouseBm25, startCluster, stopCluster } = await tartan("backends");
const { fromSquad, convertSquad } = await tartan("knowledge");
const { readJsonlAll } = await tartan("records");
const opt = parseOptions(
  {
    docs: { type: "string", default: "200000" },
    queries: { type: "string", default: "1000" },
    shards: { type: "string", default: "1,2,4" },
    single: { type: "string", default: "200" },
    batch: { type: "string", default: "100" },
    dir: { type: "string" },
    "base-port": { type: "string", default: "19100" },
    "no-squad": { type: "boolean", default: false },
    "no-xapian": { type: "boolean", default: false },
  },
  "usage: npm run bench:scale-out [-- --docs 200000] [-- --queries 1000] [-- --shards 1,2,4] [-- --single 200] [-- --no-squad] [-- --batch 100] [-- --dir DIR] [-- --base-port 19100] [-- --no-xapian]",
);
if (!opt["no-xapian"]) checkXapian();

const DOCS = Number(opt.docs);
const NQ = Number(opt.queries);
const SINGLE = Math.min(NQ, Number(opt.single));
const BATCH = Number(opt.batch);
const KS = [10, 100];
const params = { analyzer: "english", k1: 0.9, b: 0.4, title: false, unit: "passage" };
const work = opt.dir ?? mkdtempSync(join(tmpdir(), "tartan-scale-out-"));
mkdirSync(work, { recursive: true });
mkdirSync(OUT, { recursive: true });

const scaleRunning = () => {
  try {
    return execFileSync("pgrep", ["-f", "bench/scale.mjs"]).toString().trim().split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
};
const load = () => ({ loadavg: loadAvg(), fullScaleBenchmarkRunning: scaleRunning() > 0 });
const cpuNow = () => cpuS();
/** CPU seconds (user + system) used so far by the processes `pids` (Linux /proc, clock ticks of 1/100 s). */
const procCpu = (pids) =>
  pids.reduce((sum, pid) => {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return sum + (Number(f[11]) + Number(f[12])) / 100;
  }, 0);
const dirBytes = (d) => readdirSync(d, { withFileTypes: true }).reduce((s, e) => s + (e.isDirectory() ? dirBytes(join(d, e.name)) : statSync(join(d, e.name)).size), 0);
const r2 = (x) => Number(x.toFixed(2));
const mb = (x) => `${(x / 1e6).toFixed(1)} MB`;

/** How many result lists equal the anchor's exactly (units, order and float scores). */
function identity(anchor, got) {
  let identical = 0;
  let firstDiff = null;
  for (let i = 0; i < anchor.length; i++) {
    const a = anchor[i];
    const b = got[i];
    if (a.length === b.length && a.every((h, j) => h.unit === b[j].unit && h.score === b[j].score)) identical++;
    else firstDiff ??= { query: i, embedded: a.slice(0, 3), clickhouse: b.slice(0, 3) };
  }
  return { identical, of: anchor.length, firstDiff };
}

/** Times one-at-a-time search over the first `n` queries and batched search over all, per k. */
async function timeQueries(r, queries, batchFn) {
  const out = {};
  for (const k of KS) {
    const c0 = cpuNow();
    const t0 = performance.now();
    const single = [];
    for (const q of queries.slice(0, SINGLE)) single.push(await r.search(q, k));
    const singleSeconds = (performance.now() - t0) / 1000;
    const singleCpu = cpuNow() - c0;
    const t1 = performance.now();
    const batched = await batchFn(queries, k);
    const batchSeconds = (performance.now() - t1) / 1000;
    out[k] = {
      single: { queries: single.length, seconds: singleSeconds, qps: single.length / singleSeconds, msPerQuery: (1000 * singleSeconds) / single.length, clientCpuSeconds: singleCpu },
      batch: { queries: queries.length, seconds: batchSeconds, qps: queries.length / batchSeconds },
      results: batched,
      singleResults: single,
    };
  }
  return out;
}

const report = { node: process.version, cpus: cpus().length, memoryBytes: totalmem(), date: new Date().toISOString(), docs: DOCS, queries: NQ, single: SINGLE, batch: BATCH, params, loadStart: load(), runs: [] };
const corpus = synthetic(DOCS, NQ);
console.log(`synthetic: ${corpus.units.length} passages, ${corpus.queries.length} queries; load ${JSON.stringify(report.loadStart)}`);

// --- The anchor: the embedded index (one process, one thread for single queries).
const embDir = join(work, "embedded");
rmSync(embDir, { recursive: true, force: true });
let c0 = cpuNow();
let t0 = performance.now();
const embStats = await buildBm25Index(corpus.units, embDir, { ...params, source: "synthetic" });
const embBuild = { seconds: (performance.now() - t0) / 1000, cpuSeconds: cpuNow() - c0 };
const embBytes = dirBytes(embDir);
const embBm25Bytes = readdirSync(embDir).filter((f) => f.startsWith("bm25.")).reduce((s, f) => s + statSync(join(embDir, f)).size, 0);
const emb = await openBm25(embDir);
await emb.search(corpus.queries[0], 10); // warm-up
const embQ = await timeQueries(emb, corpus.queries, (qs, k) => Promise.resolve(qs.map((q) => emb.searcher.search(q, k))));
await emb.close();
const anchor = { backend: "embedded", build: embBuild, postings: embStats.postings ?? null, bytes: embBytes, postingsBytes: embBm25Bytes, queries: {} };
for (const k of KS) {
  anchor.queries[k] = { single: embQ[k].single, batch: embQ[k].batch };
  const self = identity(embQ[k].results, embQ[k].singleResults.concat(embQ[k].results.slice(SINGLE)));
  if (self.identical !== NQ) throw new Error(`embedded: single and batched results differ at k=${k}`);
}
report.runs.push(anchor);
console.log(
  `embedded: build ${embBuild.seconds.toFixed(1)} s (CPU ${embBuild.cpuSeconds.toFixed(1)} s), ${mb(embBytes)} on disk (BM25 files ${mb(embBm25Bytes)}); ` +
    KS.map((k) => `top-${k}: ${embQ[k].single.qps.toFixed(0)} q/s one at a time (${embQ[k].single.msPerQuery.toFixed(2)} ms), ${embQ[k].batch.qps.toFixed(0)} q/s over all ${NQ}`).join("; "),
);

// --- The Xapian anchor: one database and two shards behind xapian-tcpsrv.
if (!opt["no-xapian"]) {
  const analyzer = getAnalyzer(params.analyzer);
  const anchorHits = Object.fromEntries(KS.map((k) => [k, embQ[k].results]));
  const xl = load();
  report.xapian = await runXapian({ units: corpus.units, queries: corpus.queries, terms: (t) => analyzer.analyze(t), anchorHits, ks: KS, dir: join(work, "xapian"), basePort: Number(opt["base-port"]) + 80 });
  report.xapian.load = { before: xl, after: load() };
  for (const c of report.xapian.configs)
    console.log(
      `${c.name}: ` +
        KS.map((k) => `top-${k}: ${c.k[k].qps.toFixed(1)} q/s one at a time, server CPU ${c.k[k].serverCpuMsPerQuery.toFixed(2)} ms and ${(c.k[k].bytesReadPerQuery / 1e3).toFixed(0)} KB read a query, overlap with tartan's top-${k} ${(100 * c.k[k].overlap).toFixed(1)}% (top-10 ${(100 * c.k[k].overlapAt10).toFixed(1)}%)`).join("; "),
    );
}

// --- ClickHouse with 1, 2, 4 shards.
for (const n of opt.shards.split(",").map(Number)) {
  const dir = join(work, `cluster-${n}`);
  rmSync(dir, { recursive: true, force: true });
  const cluster = await startCluster({ shards: n, dir, basePort: Number(opt["base-port"]), timeoutMs: 120_000 });
  const pids = cluster.shards.map((s) => s.pid);
  try {
    const shardList = cluster.shards.map((s) => `${s.host}:${s.httpPort}`).join(",");
    const url = `clickhouse://${cluster.shards[0].host}:${cluster.shards[0].httpPort}/bench/bm25?cluster=${cluster.name}&shards=${shardList}&timeout=600`;
    const loadBefore = load();
    c0 = cpuNow();
    let s0 = procCpu(pids);
    t0 = performance.now();
    const st = await buildBm25ClickHouse(corpus.units, url, { ...params, source: "synthetic" });
    const build = { seconds: (performance.now() - t0) / 1000, clientCpuSeconds: cpuNow() - c0, serverCpuSeconds: procCpu(pids) - s0 };
    // Bytes per table over all shards (active parts after OPTIMIZE FINAL).
    const bytes = {};
    for (const s of cluster.shards) {
      const res = await fetch(`http://${s.host}:${s.httpPort}/`, { method: "POST", body: "SELECT table, sum(bytes_on_disk) FROM system.parts WHERE active AND database = 'bench' GROUP BY table FORMAT TabSeparated" });
      for (const line of (await res.text()).trim().split("\n")) {
        const [t, b] = line.split("\t");
        bytes[t] = (bytes[t] ?? 0) + Number(b);
      }
    }
    const r = await openClickHouseBm25(url, { batch: BATCH, plan: "scan" });
    // Postings each query scans (the sum of its terms' df: the scoring is exhaustive), for the model.
    const dfRes = await fetch(`http://${cluster.shards[0].host}:${cluster.shards[0].httpPort}/`, { method: "POST", body: "SELECT term, sum(df) FROM bench.bm25_terms GROUP BY term FORMAT TabSeparated" });
    const dfs = new Map((await dfRes.text()).trim().split("\n").map((l) => l.split("\t")).map(([t, d]) => [t, Number(d)]));
    const scanned = corpus.queries.map((qq) => [...r.queryTerms(qq).keys()].reduce((n, t) => n + (dfs.get(t) ?? 0), 0));
    const scannedAll = KS.length * (scanned.reduce((a, b) => a + b, 0) + scanned.slice(0, SINGLE).reduce((a, b) => a + b, 0));
    await r.search(corpus.queries[0], 10); // warm-up
    c0 = cpuNow();
    s0 = procCpu(pids);
    const q = await timeQueries(r, corpus.queries, (qs, k) => r.searchBatch(qs, k));
    const queryServerCpu = procCpu(pids) - s0;
    const perStatement = r.statementSize();
    await r.close();
    // The impact plan on the same cluster, queries and k, right after.
    const ri = await openClickHouseBm25(url, { batch: BATCH });
    await ri.search(corpus.queries[0], 10); // warm-up
    const si0 = procCpu(pids);
    const statsBefore = { ...ri.impactStats };
    const qi = await timeQueries(ri, corpus.queries, (qs, k) => ri.searchBatch(qs, k));
    const impactServerCpu = procCpu(pids) - si0;
    const ist = ri.impactStats;
    const searches = KS.length * (NQ + SINGLE);
    const impacts = {
      serverCpuSeconds: impactServerCpu,
      serverCpuMsPerQuery: (1000 * impactServerCpu) / searches,
      scanServerCpuMsPerQuery: (1000 * queryServerCpu) / searches,
      prefixPostingsPerQuery: (ist.prefixPostings - statsBefore.prefixPostings) / searches,
      lookupsPerQuery: (ist.lookups - statsBefore.lookups) / searches,
      fallback: ist.fallback - statsBefore.fallback,
      statements: ist.statements - statsBefore.statements,
      queries: {},
    };
    await ri.close();
    const run = {
      backend: `clickhouse-${n}`,
      shards: n,
      build,
      postings: st.postings,
      postingsPerShard: st.postings / n,
      bytes: st.bytes,
      postingsBytes: bytes.bm25_postings_local,
      unitsBytes: bytes.bm25_units_local,
      queryServerCpuSeconds: queryServerCpu,
      queriesPerStatement: r.statementSize(),
      probePostings: r.probePostings,
      postingsScannedPerQuery: scanned.reduce((a, b) => a + b, 0) / scanned.length,
      serverCpuNsPerScannedPosting: (1e9 * queryServerCpu) / scannedAll,
      load: { before: loadBefore, after: load() },
      queries: {},
      ratios: { buildTime: r2(build.seconds / embBuild.seconds), bytes: r2(st.bytes / embBytes), postingsBytes: r2(bytes.bm25_postings_local / embBm25Bytes) },
    };
    for (const k of KS) {
      run.queries[k] = {
        single: q[k].single,
        batch: q[k].batch,
        identity: { batched: identity(embQ[k].results, q[k].results), single: identity(embQ[k].results.slice(0, SINGLE), q[k].singleResults) },
      };
      run.ratios[`singleQps@${k}`] = r2(q[k].single.qps / embQ[k].single.qps);
      run.ratios[`batchQps@${k}`] = r2(q[k].batch.qps / embQ[k].batch.qps);
      impacts.queries[k] = {
        single: qi[k].single,
        batch: qi[k].batch,
        identity: { batched: identity(embQ[k].results, qi[k].results), single: identity(embQ[k].results.slice(0, SINGLE), qi[k].singleResults) },
      };
      run.ratios[`impactsOverScanBatchQps@${k}`] = r2(qi[k].batch.qps / q[k].batch.qps);
      run.ratios[`impactsOverScanSingleQps@${k}`] = r2(qi[k].single.qps / q[k].single.qps);
    }
    run.impacts = impacts;
    report.runs.push(run);
    console.log(
      `clickhouse ${n} shard(s): build ${build.seconds.toFixed(1)} s (x${run.ratios.buildTime}; CPU tartan ${build.clientCpuSeconds.toFixed(1)} s + servers ${build.serverCpuSeconds.toFixed(1)} s), ` +
        `${st.postings} postings (${Math.round(st.postings / n)} per shard), ${mb(st.bytes)} on disk (x${run.ratios.bytes}; postings ${mb(bytes.bm25_postings_local)}, x${run.ratios.postingsBytes}); ` +
        KS.map(
          (k) =>
            `top-${k}: ${q[k].single.qps.toFixed(1)} q/s one at a time (${q[k].single.msPerQuery.toFixed(0)} ms, x${run.ratios[`singleQps@${k}`]}), ` +
            `${q[k].batch.qps.toFixed(1)} q/s in statements of ${perStatement} (x${run.ratios[`batchQps@${k}`]}), identical ${run.queries[k].identity.batched.identical}/${NQ} batched, ${run.queries[k].identity.single.identical}/${SINGLE} single`,
        ).join("; ") +
        `; server CPU over all queries ${queryServerCpu.toFixed(1)} s (${run.serverCpuNsPerScannedPosting.toFixed(1)} ns per posting scanned; ${Math.round(run.postingsScannedPerQuery)} postings per query)`,
    );
    console.log(
      `  impact plan: ` +
        KS.map(
          (k) =>
            `top-${k}: ${qi[k].single.qps.toFixed(1)} q/s one at a time (x${run.ratios[`impactsOverScanSingleQps@${k}`]} scan), ${qi[k].batch.qps.toFixed(1)} q/s batched (x${run.ratios[`impactsOverScanBatchQps@${k}`]} scan), ` +
            `identical ${impacts.queries[k].identity.batched.identical}/${NQ} batched, ${impacts.queries[k].identity.single.identical}/${SINGLE} single`,
        ).join("; ") +
        `; server CPU ${impacts.serverCpuMsPerQuery.toFixed(1)} ms a search (scan ${impacts.scanServerCpuMsPerQuery.toFixed(1)}); postings read ${Math.round(impacts.prefixPostingsPerQuery)} by rank + ${Math.round(impacts.lookupsPerQuery)} looked up a search (scan: ${Math.round(run.postingsScannedPerQuery)}); ${impacts.fallback} searches left to the scan plan`,
    );
    for (const k of KS) {
      const d = run.queries[k].identity.batched.firstDiff ?? run.queries[k].identity.single.firstDiff ?? impacts.queries[k].identity.batched.firstDiff ?? impacts.queries[k].identity.single.firstDiff;
      if (d) console.log(`  DIFFERENCE at k=${k}: ${JSON.stringify(d)}`);
    }
  } finally {
    await stopCluster(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}
rmSync(embDir, { recursive: true, force: true });

// --- SQuAD: all questions, 2 shards, identity only.
if (!opt["no-squad"]) {
  const V11 = join(SHARED, "data", "squad", "dev-v1.1.reconstructed.json");
  const pages = join(work, "squad-pages.jsonl");
  const questions = join(work, "squad-questions.jsonl");
  await fromSquad(V11, pages, () => {});
  await convertSquad(V11, { out: questions }, () => {});
  const qs = (await readJsonlAll(questions)).map((r) => r.input);
  const sp = { unit: "paragraph", source: pages };
  const dirE = join(work, "squad-embedded");
  await buildBm25Index(unitsFromPagesFile(pages, { unit: "paragraph" }), dirE, sp);
  const e = await openBm25(dirE);
  const dir = join(work, "squad-cluster");
  rmSync(dir, { recursive: true, force: true });
  const cluster = await startCluster({ shards: 2, dir, basePort: Number(opt["base-port"]), timeoutMs: 120_000 });
  try {
    const shardList = cluster.shards.map((s) => `${s.host}:${s.httpPort}`).join(",");
    const url = `clickhouse://${cluster.shards[0].host}:${cluster.shards[0].httpPort}/bench/squad?cluster=${cluster.name}&shards=${shardList}&timeout=600`;
    const st = await buildBm25ClickHouse(unitsFromPagesFile(pages, { unit: "paragraph" }), url, sp);
    const r = await openClickHouseBm25(url);
    report.squad = { units: st.units, queries: qs.length, shards: 2, identity: {} };
    for (const k of KS) {
      const t = performance.now();
      const got = await r.searchBatch(qs, k);
      const seconds = (performance.now() - t) / 1000;
      report.squad.identity[k] = { ...identity(qs.map((q) => e.searcher.search(q, k)), got), qps: qs.length / seconds };
      delete report.squad.identity[k].firstDiff;
      console.log(`squad paragraphs on 2 shards, top-${k}: identical ${report.squad.identity[k].identical}/${qs.length} (${(qs.length / seconds).toFixed(0)} q/s batched)`);
    }
    await r.close();
  } finally {
    await e.close();
    await stopCluster(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}
if (!opt.dir) rmSync(work, { recursive: true, force: true });
// --- Side by side: Xapian against both ClickHouse plans on the same number of shards.
if (report.xapian) {
  console.log("side by side (queries/s; server CPU ms a search; postings read a search):");
  for (const run of report.runs.slice(1)) {
    const scanCpu = run.queryServerCpuSeconds * 1000 / (KS.length * (NQ + SINGLE));
    const lines = [
      `  clickhouse ${run.shards}, scan: ` + KS.map((k) => `top-${k} ${run.queries[k].batch.qps.toFixed(1)} batched, ${run.queries[k].single.qps.toFixed(1)} single`).join("; ") + `; ${scanCpu.toFixed(1)} ms; ${Math.round(run.postingsScannedPerQuery)}`,
      `  clickhouse ${run.shards}, impacts: ` + KS.map((k) => `top-${k} ${run.impacts.queries[k].batch.qps.toFixed(1)} batched, ${run.impacts.queries[k].single.qps.toFixed(1)} single`).join("; ") + `; ${run.impacts.serverCpuMsPerQuery.toFixed(1)} ms; ${Math.round(run.impacts.prefixPostingsPerQuery + run.impacts.lookupsPerQuery)}`,
    ];
    for (const c of report.xapian.configs.filter((c) => c.shards === run.shards)) {
      const cpu = KS.reduce((s, k) => s + c.k[k].serverCpuMsPerQuery, 0) / KS.length;
      c.ratios ??= {};
      c.ratios[`clickhouse-${run.shards}`] = Object.fromEntries(
        KS.flatMap((k) => [
          [`qpsOverScanBatch@${k}`, r2(c.k[k].qps / run.queries[k].batch.qps)],
          [`qpsOverImpactsBatch@${k}`, r2(c.k[k].qps / run.impacts.queries[k].batch.qps)],
          [`qpsOverScanSingle@${k}`, r2(c.k[k].qps / run.queries[k].single.qps)],
          [`qpsOverImpactsSingle@${k}`, r2(c.k[k].qps / run.impacts.queries[k].single.qps)],
        ]).concat([["serverCpuOverScan", r2(cpu / scanCpu)], ["serverCpuOverImpacts", r2(cpu / run.impacts.serverCpuMsPerQuery)]]),
      );
      const x = c.ratios[`clickhouse-${run.shards}`];
      lines.push(
        `  ${c.name}: ` + KS.map((k) => `top-${k} ${c.k[k].qps.toFixed(1)} single (x${x[`qpsOverScanBatch@${k}`]} scan batched, x${x[`qpsOverImpactsBatch@${k}`]} impacts batched), overlap ${(100 * c.k[k].overlap).toFixed(1)}%`).join("; ") +
          `; ${cpu.toFixed(2)} ms (x${x.serverCpuOverScan} scan, x${x.serverCpuOverImpacts} impacts); postings not counted by Xapian (its lists hold ${Math.round(run.postingsScannedPerQuery)}), ${(KS.reduce((s, k) => s + c.k[k].bytesReadPerQuery, 0) / KS.length / 1e3).toFixed(0)} KB read`,
      );
    }
    console.log(lines.join("\n"));
  }
}
report.loadEnd = load();
writeFileSync(join(OUT, "results.json"), JSON.stringify(report, null, 2) + "\n");
console.log(`load at the end ${JSON.stringify(report.loadEnd)}\nwritten ${join(OUT, "results.json")}`);
const bad =
  report.runs.slice(1).some((r) => KS.some((k) => [r.queries[k], r.impacts.queries[k]].some((x) => x.identity.batched.identical !== NQ || x.identity.single.identical !== SINGLE))) ||
  (report.squad !== undefined && KS.some((k) => report.squad.identity[k].identical !== report.squad.queries));
if (bad) {
  console.error("rankings differ from the embedded index");
  process.exitCode = 1;
}
