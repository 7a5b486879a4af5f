// Dense retrieval at KILT's size (npm run bench:dense-scale -- --n N [--dim 768] [--dir DIR] …).
//
// Vectors come from the deterministic generator of ./dense-gen.mjs (streamed: the set never sits on disk
// unless --npy writes it for the FAISS anchor). Stages, each a child process so that its peak RSS is its own:
//   export  writes the vectors and queries as .npy (the FAISS anchor and tartan's .npy reader read them)
//   truth   exact top-100 of every query by a batched exact scan (SIMD kernel), its time reported
//   build   tartan's compressed index for each --configs entry (binary, pq, int8): wall, CPU, peak RSS, bytes
//   search  recall@10 / recall@100 against exact, queries/s on one thread (and per CPU-second) and on every
//           core (one batch over worker threads), p50/p99, search process RSS, and where recall goes: the
//           coverage of the probed lists alone (share of the true top-100 inside them), the share of codes
//           scanned and the candidates rescored, for each [nprobe, refine, refineFactor?] in --grid
//           (--rows-in-memory holds the int8 rescoring rows in memory instead of reading them per query)
//   faiss   FAISS 1.7.3 from Debian (python3-faiss, generic build without AVX2): IVF-PQ and binary flat at
//           the same memory, recall and queries/s on the same queries (needs --npy)
// --stages picks stages (default truth,build,search). Results: bench/out/dense-scale-N.json and Markdown.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generator } from "./dense-gen.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const N = Number(opt("n", "1000000"));
const DIM = Number(opt("dim", "768"));
const NQ = Number(opt("queries", N > 5e6 ? "200" : "500"));
const DIR = opt("dir", join(root, "bench", "out", `dense-scale-${N}`));
const CONFIGS = opt("configs", "binary").split(",");
const GRID = JSON.parse(opt("grid", "[[32,1000],[64,2000],[128,4000]]"));
const SAMPLE = Number(opt("sample", "131072"));
const child = opt("child", null);
mkdirSync(DIR, { recursive: true });
mkdirSync(join(root, "bench", "out"), { recursive: true });
const gen = () => generator({ count: N, dim: DIM, setting: opt("setting", "default") }); // --setting default|calibrated (./dense-gen.mjs SETTINGS)
const cpuS = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const rssMiB = () => process.resourceUsage().maxRSS / 1024;
const load = () => loadavg().map((x) => x.toFixed(1)).join("/");
const du = (p) => (statSync(p).isDirectory() ? readdirSync(p).reduce((s, f) => s + du(join(p, f)), 0) : statSync(p).size);
const dist = async (p) => import(join(root, "dist", "src", p));

async function stageTruth() {
  const { localRangeSearcher } = await dist("retrieval/dense/simd.js");
  const g = gen();
  const qs = g.queries(NQ);
  const K = 100;
  const ids = new Int32Array(NQ * K).fill(-1);
  const scores = new Float64Array(NQ * K).fill(-Infinity);
  const t0 = performance.now();
  const c0 = cpuS();
  const B = 65536;
  for (let r = 0; r < N; r += B) {
    const m = Math.min(B, N - r);
    const part = localRangeSearcher(g.read(r, m), DIM, r)(qs, NQ, K);
    for (let q = 0; q < NQ; q++) {
      // merge two sorted lists (ties to the lower row: rows come in order)
      const a = ids.slice(q * K, q * K + K), as = scores.slice(q * K, q * K + K);
      let i = 0, j = 0;
      for (let t = 0; t < K; t++) {
        const bj = part.ids[q * K + j];
        if (j < K && bj >= 0 && (i >= K || part.scores[q * K + j] > as[i])) {
          ids[q * K + t] = bj;
          scores[q * K + t] = part.scores[q * K + j++];
        } else {
          ids[q * K + t] = a[i];
          scores[q * K + t] = as[i++];
        }
      }
    }
    if (process.stderr.isTTY) process.stderr.write(`\rtruth ${r + m}/${N}`);
  }
  writeFileSync(join(DIR, "truth.json"), JSON.stringify({ n: N, queries: NQ, ids: Array.from(ids) }));
  return { stage: "truth", queries: NQ, wallS: (performance.now() - t0) / 1000, cpuS: cpuS() - c0, peakRssMiB: rssMiB(), load: load() };
}

async function stageBuild(kind) {
  const { buildIvfIndex } = await dist("retrieval/dense/ivf-build.js");
  const { sealIndex } = await dist("retrieval/manifest.js");
  const npy = join(DIR, "vectors.npy");
  let src;
  if (existsSync(npy) && argv.includes("--npy")) src = (await dist("retrieval/dense/vector-files.js")).openVectorFile(npy);
  else src = gen();
  const out = join(DIR, `index-${kind}`);
  function* units() {
    for (let i = 0; i < N; i++) yield { wikipedia_id: String(Math.floor(i / 4)), wikipedia_title: "", start_paragraph_id: (i % 4) + 1, end_paragraph_id: (i % 4) + 1, text: "" };
  }
  const t0 = performance.now();
  const c0 = cpuS();
  let last = 0;
  await buildIvfIndex(src, units(), out, { quantize: kind, sample: SAMPLE, ...(opt("k") ? { k1: Number(opt("k")), k2: Number(opt("k")) } : {}) }, {
    log: (l) => process.stderr.write(`${l}\n`),
    onProgress: (p) => {
      const now = performance.now();
      if (now - last > 30000) {
        last = now;
        process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] build ${kind}: ${p.phase} ${p.done}/${p.total} (${((now - t0) / 1000).toFixed(0)} s, load ${load()})\n`);
      }
    },
  });
  sealIndex(out);
  return { stage: "build", config: kind, source: src.name, wallS: (performance.now() - t0) / 1000, cpuS: cpuS() - c0, peakRssMiB: rssMiB(), bytes: du(out), load: load() };
}

async function stageSearch(kind) {
  const { IvfIndex } = await dist("retrieval/dense/ivf-search.js");
  const { readManifest } = await dist("retrieval/manifest.js");
  const truth = JSON.parse(readFileSync(join(DIR, "truth.json"), "utf8"));
  const qs = gen().queries(truth.queries);
  const out = join(DIR, `index-${kind}`);
  const t0 = performance.now();
  // one index: search() runs on this thread, searchBatch() on the worker threads over the same codes
  const rowsInMemory = argv.includes("--rows-in-memory");
  const idx = IvfIndex.open(out, readManifest(out), { threads: cpus().length, rowsInMemory });
  const openS = (performance.now() - t0) / 1000;
  const rows = [];
  // where recall goes: the share of the true top-100 inside the probed lists (the partition's part), and the
  // candidates rescored per query (the codes' part), read from the index's internals (bench only)
  const listOfUnit = new Int32Array(N);
  for (let l = 0; l + 1 < idx.offsets.length; l++) for (let p = idx.offsets[l]; p < idx.offsets[l + 1]; p++) listOfUnit[idx.ids[p]] = l;
  let rescored = 0;
  const candidatesOf = idx.store.candidates.bind(idx.store);
  idx.store.candidates = (b) => {
    const c = candidatesOf(b);
    for (const x of c) rescored += x.length;
    return c;
  };
  // an untimed warm-up (the first grid point's first 30 queries), so the first point is not the one that compiles
  for (let q = 0; q < Math.min(30, truth.queries); q++) idx.search(qs.subarray(q * DIM, (q + 1) * DIM), 100, { nprobe: GRID[0][0], refine: GRID[0][1] });
  for (const [nprobe, refine, refineFactor] of GRID) {
    const depth = refineFactor === undefined ? { nprobe, refine } : { nprobe, refine, refineFactor };
    let covered = 0;
    let scanned = 0;
    for (let q = 0; q < truth.queries; q++) {
      const b = idx.sequence.probe(qs.subarray(q * DIM, (q + 1) * DIM), 100, depth);
      const probed = new Set(b.probes[0]);
      scanned += b.totals[0];
      for (let t = 0; t < 100; t++) if (probed.has(listOfUnit[truth.ids[q * 100 + t]])) covered++;
    }
    rescored = 0;
    const lat = [];
    const c0 = cpuS();
    const w0 = performance.now();
    let r10 = 0, r100 = 0;
    for (let q = 0; q < truth.queries; q++) {
      const s = performance.now();
      const hits = idx.search(qs.subarray(q * DIM, (q + 1) * DIM), 100, depth)[0];
      lat.push(performance.now() - s);
      const T = truth.ids.slice(q * 100, q * 100 + 100);
      const t10 = new Set(T.slice(0, 10)), t100 = new Set(T);
      r10 += hits.slice(0, 10).filter((h) => t10.has(h.unit)).length / 10;
      r100 += hits.filter((h) => t100.has(h.unit)).length / 100;
    }
    const wall = (performance.now() - w0) / 1000;
    const cpu = cpuS() - c0;
    const meanRescored = rescored / truth.queries;
    lat.sort((a, b) => a - b);
    // the same queries as one batch on every core (worker threads over the shared codes): same hits
    const b0 = performance.now();
    const batch = await idx.searchBatch(qs, 100, depth);
    const wallBoth = (performance.now() - b0) / 1000;
    let r100b = 0;
    batch.forEach((hits, q) => {
      const t100 = new Set(truth.ids.slice(q * 100, q * 100 + 100));
      r100b += hits.filter((h) => t100.has(h.unit)).length / 100;
    });
    if (Math.abs(r100b - r100) > 1e-9) throw new Error(`both cores gave recall ${r100b / truth.queries}, one thread ${r100 / truth.queries}`);
    rows.push({ nprobe, refine, refineFactor: refineFactor ?? 4, coverage100: covered / truth.queries / 100, scannedShare: scanned / truth.queries / N, rescored: meanRescored, rowsInMemory, recall10: r10 / truth.queries, recall100: r100 / truth.queries, qps: truth.queries / wall, qpsPerCpu: truth.queries / cpu, qpsBothCores: truth.queries / wallBoth, p50ms: lat[Math.floor(lat.length * 0.5)], p99ms: lat[Math.floor(lat.length * 0.99)], load: load() });
    process.stderr.write(`${kind} nprobe ${nprobe} refine ${refine} refineFactor ${refineFactor ?? 4}: coverage@100 ${rows.at(-1).coverage100.toFixed(4)} (${(100 * rows.at(-1).scannedShare).toFixed(1)}% of codes scanned, ${meanRescored.toFixed(0)} rescored), recall@100 ${rows.at(-1).recall100.toFixed(4)}, ${rows.at(-1).qps.toFixed(1)} q/s one thread (${rows.at(-1).qpsPerCpu.toFixed(1)} per CPU-second), ${rows.at(-1).qpsBothCores.toFixed(1)} q/s on ${cpus().length} cores\n`);
  }
  await idx.close();
  // which kernels ran (native AVX-512/AVX2/C, or WebAssembly: TARTAN_NATIVE=0 or no addon)
  const { denseKernelsInUse } = await dist("retrieval/dense/native.js");
  process.stderr.write(`kernels: ${denseKernelsInUse()}\n`);
  return { stage: "search", config: kind, openS, rows, peakRssMiB: rssMiB(), kernels: denseKernelsInUse() };
}

async function stageExport() {
  const g = gen();
  const { openSync, writeSync, closeSync } = await import("node:fs");
  const header = (rows) => {
    let h = `{'descr': '<f4', 'fortran_order': False, 'shape': (${rows}, ${DIM}), }`;
    while ((10 + h.length + 1) % 64 !== 0) h += " ";
    h += "\n";
    const b = Buffer.alloc(10 + h.length);
    b.writeUInt8(0x93, 0);
    b.write("NUMPY", 1, "latin1");
    b.writeUInt8(1, 6);
    b.writeUInt8(0, 7);
    b.writeUInt16LE(h.length, 8);
    b.write(h, 10, "latin1");
    return b;
  };
  const write = (file, rows, read) => {
    const fd = openSync(file, "w");
    writeSync(fd, header(rows));
    for (let r = 0; r < rows; r += 65536) {
      const v = read(r, Math.min(65536, rows - r));
      writeSync(fd, new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    }
    closeSync(fd);
  };
  const t0 = performance.now();
  write(join(DIR, "vectors.npy"), N, (r, m) => g.read(r, m));
  const qs = g.queries(NQ);
  write(join(DIR, "queries.npy"), NQ, (r, m) => qs.subarray(r * DIM, (r + m) * DIM));
  return { stage: "export", wallS: (performance.now() - t0) / 1000 };
}

async function runChild() {
  const r = child === "truth" ? await stageTruth() : child === "export" ? await stageExport() : child.startsWith("build:") ? await stageBuild(child.slice(6)) : await stageSearch(child.slice(7));
  process.stdout.write(`RESULT ${JSON.stringify(r)}\n`);
}

function spawnStage(name, extra = []) {
  const p = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...argv, "--child", name, ...extra], { stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26 });
  const line = p.stdout.toString().split("\n").find((l) => l.startsWith("RESULT "));
  if (p.status !== 0 || !line) throw new Error(`stage ${name} failed (exit ${p.status})`);
  return JSON.parse(line.slice(7));
}

/**
 * Debian's OpenBLAS (libopenblas0-pthread), when installed, for FAISS's training only: Debian's FAISS links
 * libblas.so.3, and with the reference BLAS its k-means over thousands of lists takes over an hour.
 * Only this process gets it (LD_LIBRARY_PATH), whatever the system's BLAS alternative is.
 */
const OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread";

function stageFaiss() {
  const env = existsSync(join(OPENBLAS, "libblas.so.3")) ? { ...process.env, LD_LIBRARY_PATH: [OPENBLAS, process.env.LD_LIBRARY_PATH].filter(Boolean).join(":") } : process.env;
  const p = spawnSync(process.env.TARTAN_PYTHON ?? "/usr/bin/python3", [join(root, "bench", "dense-faiss.py"), DIR, String(NQ), JSON.stringify(GRID)], { stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26, env });
  const line = p.stdout.toString().split("\n").find((l) => l.startsWith("RESULT "));
  if (p.status !== 0 || !line) throw new Error(`FAISS stage failed (exit ${p.status}); is python3-faiss installed (apt-get install python3-faiss)?`);
  return JSON.parse(line.slice(7));
}

if (child) await runChild();
else {
  const stages = opt("stages", "truth,build,search").split(",");
  const report = { n: N, dim: DIM, queries: NQ, cores: cpus().length, memGiB: Math.round(totalmem() / 2 ** 30), started: new Date().toISOString(), load: load(), results: [] };
  const file = join(root, "bench", "out", `dense-scale-${N}.json`);
  const save = () => writeFileSync(file, JSON.stringify(report, null, 2));
  console.log(`bench:dense-scale — ${N.toLocaleString("en-US")} × ${DIM} synthetic vectors, ${NQ} queries, in ${DIR}; load ${load()}`);
  for (const s of stages) {
    const runs = s === "build" || s === "search" ? CONFIGS.map((c) => `${s}:${c}`) : [s];
    for (const name of runs) {
      const r = name === "faiss" ? stageFaiss() : spawnStage(name);
      report.results.push(r);
      save();
      console.log(JSON.stringify(r));
    }
  }
  console.log(`written ${file}`);
}
