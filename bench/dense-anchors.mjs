// Same-run anchors for tartan's compressed dense index (npm run bench:dense-anchors -- --dir DIR …).
//
// Reads DIR/vectors.npy, DIR/queries.npy (written by `node bench/dense-scale.mjs --npy --stages export`) and
// DIR/truth.json (the exact top-100 of each query, `{n, queries, ids}`), and runs, each step in its own child
// process so that its peak RSS is its own:
//   zvec     @zvec/zvec IVF_RABITQ (defaults: 7 bits, its refiner on, scaleFactor 10); grid over nprobe
//   usearch  usearch HNSW (connectivity 16, expansion_add 128, the defaults) with i8 and with f16 scalars,
//            built on 2 threads; grid over expansion_search
//   faiss    FAISS 1.7.3 from Debian (python3-faiss, a generic build without AVX2; ./dense-anchors.py):
//            IVF-PQ + IndexRefine over SQ8, IVF-PQ + IndexRefine over flat vectors, IVF-PQ 4-bit fast scan +
//            IndexRefine over flat vectors; grid over nprobe × k_factor (k_factor = candidates ÷ 100)
//   lancedb  @lancedb/lancedb IVF_PQ (dim/8 sub-vectors of 8 bits, dot product); grid over nprobes × refine_factor
// Every search: inner product on the (unit) vectors, top 100, one query at a time, one thread (each library's
// own knob; the CPU-seconds ÷ wall-seconds of the timed loop are reported as "cores" to show it), after a
// short untimed warm-up. Reported per anchor: build wall and CPU, build and search peak RSS, bytes on disk
// (and in RAM where the library's layout says it), the recall@100 / queries-per-second curve and the q/s at
// recall@100 0.95 read from its upper envelope (linear between the two points around 0.95).
//
// The anchors are not dependencies of tartan: they are resolved from --anchors DIR (default env
// TARTAN_ANCHORS, else the project's own node_modules), e.g. after `npm install --prefix /work/anchors
// @zvec/zvec usearch@2.25.3 @lancedb/lancedb@0.31.0`. This bench installs nothing; a missing or unloadable
// package is named and skipped. FAISS needs /usr/bin/python3 with python3-faiss (TARTAN_PYTHON overrides).
//
// Options: --dir DIR (required)  --work DIR (indexes; default DIR/anchors)  --only zvec,usearch,faiss,lancedb
//   --queries N (default all of truth.json)  --lists L (IVF lists of FAISS and LanceDB; default ≈ 4·√n,
//   a multiple of 64)  --zvec-lists L (default --lists)  --keep (reuse built indexes in --work)
//   --zvec-grid, --usearch-grid, --faiss-grid, --lancedb-grid (JSON)  --lancedb-sample-rate R, --lancedb-iterations I
//   (Lance's k-means; its defaults otherwise); FAISS_SAMPLE, FAISS_PQ_SAMPLE, FAISS_NITER (see ./dense-anchors.py)
// Results: bench/out/dense-anchors-N.json and a Markdown table on stdout (--only none: no run, the table of
// what the file holds). A run of some anchors (--only) keeps
// the other anchors' results of an earlier run on the same --dir in that file; with --keep a reused index
// keeps the build figures recorded for it there.

import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const DIR = opt("dir", null);
if (!DIR) throw new Error("dense-anchors: --dir DIR is required (DIR/vectors.npy, DIR/queries.npy, DIR/truth.json)");
const WORK = resolve(opt("work", join(DIR, "anchors")));
const ANCHORS = resolve(opt("anchors", process.env.TARTAN_ANCHORS ?? root));
const PYTHON = process.env.TARTAN_PYTHON ?? "/usr/bin/python3";
const OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread";
const child = opt("child", null);
const K = 100;

const cpuS = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const rssMiB = () => process.resourceUsage().maxRSS / 1024;
const load = () => loadavg().map((x) => x.toFixed(1)).join("/");
const du = (p) => (!existsSync(p) ? 0 : statSync(p).isDirectory() ? readdirSync(p).reduce((s, f) => s + du(join(p, f)), 0) : statSync(p).size);
const log = (s) => process.stderr.write(s + "\n");

/** The header of a little-endian float32 C-order .npy file: rows, columns and where the data start. */
function npyHeader(path) {
  const fd = openSync(path, "r");
  const head = Buffer.alloc(4096);
  readSync(fd, head, 0, 4096, 0);
  closeSync(fd);
  if (head.toString("latin1", 1, 6) !== "NUMPY") throw new Error(`${path}: not a .npy file (no NUMPY magic)`);
  const major = head[6];
  const len = major === 1 ? head.readUInt16LE(8) : head.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const text = head.toString("latin1", start, start + len);
  if (!/'descr':\s*'<f4'/.test(text)) throw new Error(`${path}: header field descr must be '<f4' (float32), got ${text.trim()}`);
  if (/'fortran_order':\s*True/.test(text)) throw new Error(`${path}: header field fortran_order must be False`);
  const shape = /'shape':\s*\((\d+),\s*(\d+)\)/.exec(text);
  if (!shape) throw new Error(`${path}: header field shape must be (rows, columns), got ${text.trim()}`);
  return { rows: Number(shape[1]), dim: Number(shape[2]), offset: start + len };
}

/** Rows [r, r+m) of a float32 .npy file. */
function npyRows(path, h, r, m) {
  const out = new Float32Array(m * h.dim);
  const fd = openSync(path, "r");
  readSync(fd, new Uint8Array(out.buffer), 0, out.byteLength, h.offset + r * h.dim * 4);
  closeSync(fd);
  return out;
}

function data() {
  const vp = join(DIR, "vectors.npy"), qp = join(DIR, "queries.npy"), tp = join(DIR, "truth.json");
  for (const p of [vp, qp, tp]) if (!existsSync(p)) throw new Error(`dense-anchors: ${p} is missing (node bench/dense-scale.mjs --n N --dir ${DIR} --npy --stages export,truth writes it)`);
  const vh = npyHeader(vp), qh = npyHeader(qp);
  const truth = JSON.parse(readFileSync(tp, "utf8"));
  for (const f of ["n", "queries", "ids"]) if (!(f in truth)) throw new Error(`${tp}: field ${f} is missing`);
  if (truth.n !== vh.rows) throw new Error(`${tp}: field n is ${truth.n}, but ${vp} holds ${vh.rows} rows`);
  if (truth.ids.length !== truth.queries * K) throw new Error(`${tp}: field ids holds ${truth.ids.length} ids, expected queries × ${K} = ${truth.queries * K}`);
  if (qh.dim !== vh.dim) throw new Error(`${qp}: ${qh.dim} columns, but ${vp} has ${vh.dim}`);
  const nq = Math.min(Number(opt("queries", String(truth.queries))), truth.queries, qh.rows);
  return { vp, vh, nq, dim: vh.dim, n: vh.rows, queries: npyRows(qp, qh, 0, nq), truth: Int32Array.from(truth.ids) };
}

const LISTS = Number(opt("lists", "0")) || null;
const listsFor = (n) => LISTS ?? Math.max(64, Math.round((4 * Math.sqrt(n)) / 64) * 64);

/** Resolves an anchor package from --anchors, or says which package to install. */
function anchor(pkg, install) {
  const req = createRequire(join(ANCHORS, "noop.js"));
  try {
    const mod = req(pkg);
    let dir = dirname(req.resolve(pkg)), version = null;
    for (; dir !== dirname(dir) && version == null; dir = dirname(dir)) {
      const pj = join(dir, "package.json");
      if (existsSync(pj)) {
        const j = JSON.parse(readFileSync(pj, "utf8"));
        if (j.name === pkg) version = j.version;
      }
    }
    return { mod, version, req };
  } catch (e) {
    throw new Error(`${pkg} cannot be loaded from ${ANCHORS}/node_modules (${String(e.message).split("\n")[0]}); install it outside the project, e.g. npm install --prefix ${ANCHORS} ${install}, and pass --anchors ${ANCHORS}`);
  }
}

/** Times one pass over the queries at one setting: recall@10/@100 against exact, q/s, cores, p50/p99. */
async function timedPass(d, search, warm = 20) {
  for (let q = 0; q < Math.min(warm, d.nq); q++) await search(d.queries.subarray(q * d.dim, (q + 1) * d.dim));
  const lat = [];
  let hit10 = 0, hit100 = 0;
  const t0 = performance.now(), c0 = cpuS();
  const found = [];
  for (let q = 0; q < d.nq; q++) {
    const s = performance.now();
    found.push(await search(d.queries.subarray(q * d.dim, (q + 1) * d.dim)));
    lat.push(performance.now() - s);
  }
  const wall = (performance.now() - t0) / 1000, cpu = cpuS() - c0;
  for (let q = 0; q < d.nq; q++) {
    const t = d.truth.subarray(q * K, q * K + K);
    const all = new Set(t), top10 = new Set(t.subarray(0, 10));
    const f = found[q];
    for (let i = 0; i < f.length && i < K; i++) if (all.has(f[i])) hit100++;
    for (let i = 0; i < f.length && i < 10; i++) if (top10.has(f[i])) hit10++;
  }
  lat.sort((a, b) => a - b);
  return { recall10: hit10 / (10 * d.nq), recall100: hit100 / (K * d.nq), qps: d.nq / wall, cores: cpu / wall, p50ms: lat[lat.length >> 1], p99ms: lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.99))] };
}

// ---- child steps -------------------------------------------------------------------------------------------

async function zvecBuild(d) {
  const { mod: z, version } = anchor("@zvec/zvec", "@zvec/zvec");
  const lists = Number(opt("zvec-lists", String(listsFor(d.n))));
  z.ZVecInitialize({ logLevel: z.ZVecLogLevel.WARN, optimizeThreads: 2, queryThreads: 1 });
  const path = join(WORK, "zvec");
  rmSync(path, { recursive: true, force: true });
  const schema = new z.ZVecCollectionSchema({ name: "anchors", vectors: { name: "v", dataType: z.ZVecDataType.VECTOR_FP32, dimension: d.dim, indexParams: { indexType: z.ZVecIndexType.IVF_RABITQ, metricType: z.ZVecMetricType.IP, nList: lists } } });
  const t0 = performance.now(), c0 = cpuS();
  const col = z.ZVecCreateAndOpen(path, schema);
  const B = 1024; // zvec's largest write batch
  for (let r = 0; r < d.n; r += B) {
    const m = Math.min(B, d.n - r);
    const rows = npyRows(d.vp, d.vh, r, m);
    const docs = [];
    for (let i = 0; i < m; i++) docs.push({ id: String(r + i), vectors: { v: rows.subarray(i * d.dim, (i + 1) * d.dim) } });
    const st = col.insertSync(docs);
    const bad = st.find((s) => !s.ok);
    if (bad) throw new Error(`zvec insert failed at row ${r}: ${bad.code} ${bad.message}`);
  }
  const insert = { wallS: (performance.now() - t0) / 1000, cpuS: cpuS() - c0 };
  log(`zvec: inserted ${d.n} rows in ${insert.wallS.toFixed(1)} s; optimizing (trains IVF_RABITQ, ${lists} lists)`);
  col.optimizeSync({ concurrency: 2 });
  const stats = col.stats;
  col.closeSync();
  return { version, lists, threads: 2, insert, wallS: (performance.now() - t0) / 1000, cpuS: cpuS() - c0, diskBytes: du(path), indexCompleteness: stats.indexCompleteness, docCount: stats.docCount, peakRssMiB: rssMiB() };
}

async function zvecSearch(d) {
  const { mod: z, version } = anchor("@zvec/zvec", "@zvec/zvec");
  z.ZVecInitialize({ logLevel: z.ZVecLogLevel.WARN, queryThreads: 1, optimizeThreads: 1 });
  const col = z.ZVecOpen(join(WORK, "zvec"), { readOnly: true });
  const rows = [];
  for (const nprobe of JSON.parse(opt("zvec-grid", "[4,8,16,32,64,128,256]"))) {
    const params = { indexType: z.ZVecIndexType.IVF_RABITQ, nprobe, isUsingRefiner: true };
    const r = await timedPass(d, (v) => col.querySync({ fieldName: "v", topk: K, vector: v, outputFields: [], params }).map((x) => Number(x.id)));
    rows.push({ nprobe, ...r });
    log(`zvec nprobe ${nprobe}: recall@100 ${r.recall100.toFixed(4)}, ${r.qps.toFixed(1)} q/s, cores ${r.cores.toFixed(2)}`);
  }
  col.closeSync();
  return { version, rows, peakRssMiB: rssMiB() };
}

async function usearchBuild(d, scalar) {
  const { mod: u, version } = anchor("usearch", "usearch@2.25.3");
  const index = new u.Index({ dimensions: d.dim, metric: u.MetricKind.IP, quantization: scalar, connectivity: 16, expansion_add: 128, expansion_search: 64, multi: false });
  const t0 = performance.now(), c0 = cpuS();
  const B = 16384;
  for (let r = 0; r < d.n; r += B) {
    const m = Math.min(B, d.n - r);
    const keys = new BigUint64Array(m);
    for (let i = 0; i < m; i++) keys[i] = BigInt(r + i);
    index.add(keys, npyRows(d.vp, d.vh, r, m), 2);
    if (process.stderr.isTTY) process.stderr.write(`\rusearch ${scalar} ${r + m}/${d.n}`);
  }
  const wallS = (performance.now() - t0) / 1000, c = cpuS() - c0;
  mkdirSync(WORK, { recursive: true });
  const path = join(WORK, `usearch-${scalar}.usearch`);
  index.save(path + ".tmp");
  renameSync(path + ".tmp", path);
  return { version, scalar, connectivity: 16, expansionAdd: 128, threads: 2, size: index.size(), wallS, cpuS: c, diskBytes: du(path), peakRssMiB: rssMiB() };
}

async function usearchSearch(d, scalar) {
  const { mod: u, version } = anchor("usearch", "usearch@2.25.3");
  const path = join(WORK, `usearch-${scalar}.usearch`);
  const rows = [];
  let index = null;
  for (const ef of JSON.parse(opt("usearch-grid", "[100,128,192,256,384,512,768]"))) {
    // expansion_search is a constructor setting: a fresh index object per setting, the saved graph loaded into RAM
    index = new u.Index({ dimensions: d.dim, metric: u.MetricKind.IP, quantization: scalar, connectivity: 16, expansion_add: 128, expansion_search: ef, multi: false });
    index.load(path);
    const r = await timedPass(d, (v) => Array.from(index.search(v, K, 1).keys, Number));
    rows.push({ expansionSearch: ef, ...r });
    log(`usearch ${scalar} expansion_search ${ef}: recall@100 ${r.recall100.toFixed(4)}, ${r.qps.toFixed(1)} q/s, cores ${r.cores.toFixed(2)}`);
  }
  return { version, scalar, ramBytes: du(path), rows, peakRssMiB: rssMiB() };
}

async function lancedbBuild(d) {
  const { mod: lancedb, version, req } = anchor("@lancedb/lancedb", "@lancedb/lancedb@0.31.0");
  const arrow = createRequire(req.resolve("@lancedb/lancedb"))("apache-arrow");
  const lists = listsFor(d.n);
  const path = join(WORK, "lancedb");
  rmSync(path, { recursive: true, force: true });
  const t0 = performance.now(), c0 = cpuS();
  const db = await lancedb.connect(path);
  const vtype = new arrow.FixedSizeList(d.dim, new arrow.Field("item", new arrow.Float32(), true));
  const schema = new arrow.Schema([new arrow.Field("id", new arrow.Int32(), false), new arrow.Field("vector", vtype, false)]);
  const batch = (r, m) => {
    const ids = new Int32Array(m).map((_, i) => r + i);
    const idData = arrow.makeData({ type: new arrow.Int32(), length: m, nullCount: 0, data: ids });
    const vals = arrow.makeData({ type: new arrow.Float32(), length: m * d.dim, nullCount: 0, data: npyRows(d.vp, d.vh, r, m) });
    const vecData = arrow.makeData({ type: vtype, length: m, nullCount: 0, child: vals });
    const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: m, nullCount: 0, children: [idData, vecData] });
    return new arrow.Table(schema, new arrow.RecordBatch(schema, struct));
  };
  const B = 65536;
  let table = null;
  for (let r = 0; r < d.n; r += B) {
    const t = batch(r, Math.min(B, d.n - r));
    if (!table) table = await db.createTable("v", t);
    else await table.add(t);
  }
  const insert = { wallS: (performance.now() - t0) / 1000, cpuS: cpuS() - c0 };
  log(`lancedb: wrote ${d.n} rows in ${insert.wallS.toFixed(1)} s; training IVF_PQ (${lists} partitions, ${d.dim / 8} sub-vectors)`);
  const t1 = performance.now(), c1 = cpuS();
  // Lance's defaults (sample_rate 256 rows a partition, 50 k-means iterations) unless --lancedb-sample-rate / --lancedb-iterations
  const tune = { ...(opt("lancedb-sample-rate") ? { sampleRate: Number(opt("lancedb-sample-rate")) } : {}), ...(opt("lancedb-iterations") ? { maxIterations: Number(opt("lancedb-iterations")) } : {}) };
  await table.createIndex("vector", { config: lancedb.Index.ivfPq({ numPartitions: lists, numSubVectors: d.dim / 8, numBits: 8, distanceType: "dot", ...tune }) });
  const index = { wallS: (performance.now() - t1) / 1000, cpuS: cpuS() - c1 };
  const rowsIn = await table.countRows();
  table.close?.();
  return { version, lists, subVectors: d.dim / 8, ...tune, insert, index, wallS: (performance.now() - t0) / 1000, cpuS: cpuS() - c0, rows: rowsIn, diskBytes: du(path), vectorBytes: d.n * d.dim * 4, peakRssMiB: rssMiB() };
}

async function lancedbSearch(d) {
  const { mod: lancedb, version } = anchor("@lancedb/lancedb", "@lancedb/lancedb@0.31.0");
  const db = await lancedb.connect(join(WORK, "lancedb"));
  const table = await db.openTable("v");
  const rows = [];
  for (const [nprobes, refine] of JSON.parse(opt("lancedb-grid", "[[8,2],[16,2],[16,5],[32,2],[32,5],[32,10],[64,5],[64,10],[128,10]]"))) {
    const r = await timedPass(d, async (v) => (await table.vectorSearch(v).distanceType("dot").nprobes(nprobes).refineFactor(refine).limit(K).select(["id"]).toArray()).map((x) => x.id), 10);
    rows.push({ nprobes, refineFactor: refine, candidates: K * refine, ...r });
    log(`lancedb nprobes ${nprobes} refine_factor ${refine}: recall@100 ${r.recall100.toFixed(4)}, ${r.qps.toFixed(1)} q/s, cores ${r.cores.toFixed(2)}`);
  }
  return { version, rows, peakRssMiB: rssMiB() };
}

if (child) {
  const d = data();
  const [name, step, arg] = child.split(":");
  const steps = { zvec: { build: zvecBuild, search: zvecSearch }, usearch: { build: usearchBuild, search: usearchSearch }, lancedb: { build: lancedbBuild, search: lancedbSearch } };
  const r = await steps[name][step](d, arg);
  process.stdout.write("RESULT " + JSON.stringify({ load: load(), ...r }) + "\n");
  process.exit(0);
}

// ---- parent ------------------------------------------------------------------------------------------------

/** Runs one step in a child process; its RESULT line, or null (the error printed) when it fails. */
function run(label, cmd, args, env = process.env) {
  log(`-- ${label}`);
  const p = spawnSync(cmd, args, { stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26, env });
  const line = p.stdout?.toString().split("\n").find((l) => l.startsWith("RESULT "));
  if (p.status !== 0 || !line) {
    log(`${label} failed (exit ${p.status}${p.signal ? `, ${p.signal}` : ""})${p.error ? `: ${p.error.message}` : ""}`);
    return null;
  }
  return JSON.parse(line.slice(7));
}
const node = (step, extraEnv = {}) => run(step, process.execPath, [fileURLToPath(import.meta.url), ...argv, "--child", step], { ...process.env, ...extraEnv });

/** q/s at a recall@100 target, read from the upper envelope of the curve (linear between neighbours). */
export function qpsAt(rows, target = 0.95) {
  const pts = rows.map((r) => [r.recall100, r.qps]).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const env = [];
  for (let i = pts.length - 1; i >= 0; i--) if (!env.length || pts[i][1] > env[env.length - 1][1]) env.push(pts[i]); // recall descending, q/s rising
  env.reverse(); // recall ascending, q/s falling
  if (!env.length || env[env.length - 1][0] < target) return { qps: null, note: `not reached (best recall@100 ${env.length ? env[env.length - 1][0].toFixed(3) : "-"})` };
  if (env[0][0] >= target) return { qps: env[0][1], note: `≥ (lowest point already at ${env[0][0].toFixed(3)})` };
  for (let i = 1; i < env.length; i++) {
    if (env[i][0] >= target) {
      const [r0, q0] = env[i - 1], [r1, q1] = env[i];
      return { qps: q0 + ((q1 - q0) * (target - r0)) / (r1 - r0), note: `between ${r0.toFixed(3)} and ${r1.toFixed(3)}` };
    }
  }
  return { qps: null, note: "not reached" };
}

const d0 = (() => {
  const d = data();
  // the metric is inner product: the bench assumes unit vectors, so cosine = inner product; check a sample
  let worst = 0;
  const rows = npyRows(d.vp, d.vh, 0, Math.min(d.n, 2000));
  for (let i = 0; i < rows.length / d.dim; i++) {
    let s = 0;
    for (let j = 0; j < d.dim; j++) s += rows[i * d.dim + j] ** 2;
    worst = Math.max(worst, Math.abs(Math.sqrt(s) - 1));
  }
  for (let i = 0; i < d.nq; i++) {
    let s = 0;
    for (let j = 0; j < d.dim; j++) s += d.queries[i * d.dim + j] ** 2;
    worst = Math.max(worst, Math.abs(Math.sqrt(s) - 1));
  }
  if (worst > 1e-3) throw new Error(`dense-anchors: vectors are not unit length (|norm − 1| up to ${worst}); the anchors use inner product`);
  return { n: d.n, dim: d.dim, nq: d.nq, normError: worst };
})();
const ONLY = opt("only", "zvec,usearch,faiss,lancedb").split(",");
const KEEP = argv.includes("--keep");
const lists = listsFor(d0.n);
mkdirSync(WORK, { recursive: true });
mkdirSync(join(root, "bench", "out"), { recursive: true });
log(`bench:dense-anchors — ${d0.n.toLocaleString("en")} × ${d0.dim} from ${DIR}, ${d0.nq} queries, ${lists} lists, anchors from ${ANCHORS}; ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, load ${load()}`);
const out = { n: d0.n, dim: d0.dim, queries: d0.nq, lists, dir: resolve(DIR), anchors: ANCHORS, cpus: cpus().length, cpuModel: cpus()[0]?.model, load: load(), startedAt: new Date().toISOString(), systems: [], skipped: [] };
const loadable = (pkg, install) => {
  try {
    anchor(pkg, install);
    return true;
  } catch (e) {
    log(String(e.message));
    out.skipped.push({ anchor: pkg, why: String(e.message) });
    return false;
  }
};
const have = (p) => KEEP && existsSync(p);
const outFile = join(root, "bench", "out", `dense-anchors-${d0.n}.json`);
const prev = existsSync(outFile) ? JSON.parse(readFileSync(outFile, "utf8")) : null;
/** With --keep, the build figures of an index reused from an earlier run (its result file), else a bare note. */
const reused = (anchorName, match, p) => {
  const old = prev?.dir === resolve(DIR) && prev.systems.find((s) => s.anchor === anchorName && s.system.includes(match));
  return old ? { ...old.build, reused: true } : { reused: true, diskBytes: du(p) };
};

if (ONLY.includes("zvec") && loadable("@zvec/zvec", "@zvec/zvec")) {
  const b = have(join(WORK, "zvec")) ? reused("zvec", "IVF_RABITQ", join(WORK, "zvec")) : node("zvec:build");
  const s = b && node("zvec:search");
  if (s) out.systems.push({ anchor: "zvec", system: `zvec ${s.version} IVF_RABITQ (defaults, refiner on), ${b.lists ?? opt("zvec-lists", lists)} lists`, param: "nprobe", build: b, search: s, diskBytes: b.diskBytes, ramBytes: null, rows: s.rows });
}
if (ONLY.includes("usearch") && loadable("usearch", "usearch@2.25.3")) {
  for (const scalar of ["i8", "f16"]) {
    const p = join(WORK, `usearch-${scalar}.usearch`);
    const b = have(p) ? reused("usearch", ` ${scalar} `, p) : node(`usearch:build:${scalar}`);
    const s = b && node(`usearch:search:${scalar}`);
    if (s) out.systems.push({ anchor: "usearch", system: `usearch ${s.version} HNSW ${scalar} (M 16, ef_add 128; built on 2 threads)`, param: "expansion_search", build: b, search: s, diskBytes: b.diskBytes, ramBytes: s.ramBytes, rows: s.rows });
  }
}
if (ONLY.includes("faiss")) {
  const env = existsSync(join(OPENBLAS, "libblas.so.3")) ? { ...process.env, LD_LIBRARY_PATH: [OPENBLAS, process.env.LD_LIBRARY_PATH].filter(Boolean).join(":") } : process.env;
  const py = join(root, "bench", "dense-anchors.py");
  const probe = spawnSync(PYTHON, ["-c", "import faiss; print(faiss.__version__)"], { env });
  if (probe.status !== 0) {
    const why = `${PYTHON} cannot import faiss (apt-get install python3-faiss, or set TARTAN_PYTHON)`;
    log(why);
    out.skipped.push({ anchor: "faiss", why });
  } else {
    const built = KEEP && ["ivfpq", "ivfpq4fs", "sq8"].every((f) => existsSync(join(WORK, `${f}.index`)));
    const b = built ? { parts: {}, ...reused("faiss", "IndexRefine", WORK) } : run("faiss:build", PYTHON, [py, "build", DIR, WORK, String(lists)], env);
    const grid = opt("faiss-grid", JSON.stringify([8, 16, 32, 64, 128].flatMap((np) => [2, 5, 10, 20].map((kf) => [np, kf]))));
    for (const [base, refine] of [["ivfpq", "sq8"], ["ivfpq", "flat"], ["ivfpq4fs", "flat"]]) {
      const s = b && run(`faiss:search:${base}+${refine}`, PYTHON, [py, "search", DIR, WORK, base, refine, String(d0.nq), grid], env);
      if (!s) continue;
      const parts = b.parts ?? {};
      const wallS = (parts.coarse?.wallS ?? 0) + (parts[base]?.wallS ?? 0) + (parts[refine]?.wallS ?? 0);
      const cpuS2 = (parts.coarse?.cpuS ?? 0) + (parts[base]?.cpuS ?? 0) + (parts[refine]?.cpuS ?? 0);
      const name = `${parts[base]?.name ?? base} + IndexRefine(${refine === "sq8" ? "SQ8" : "Flat"})`;
      out.systems.push({
        anchor: "faiss",
        system: `FAISS ${s.faiss} ${name} — generic build, no AVX2`,
        param: "nprobe × k_factor",
        build: { ...b, wallS, cpuS: cpuS2, threads: 2, note: "coarse k-means shared by the IVF-PQ and fast-scan indexes; its time is counted in each" },
        search: s,
        diskBytes: (parts[base]?.bytes ?? du(join(WORK, `${base}.index`))) + (parts[refine]?.bytes ?? (refine === "flat" ? du(join(DIR, "vectors.npy")) : du(join(WORK, `${refine}.index`)))),
        ramBytes: s.ramBytes,
        rows: s.rows,
      });
    }
  }
}
if (ONLY.includes("lancedb") && loadable("@lancedb/lancedb", "@lancedb/lancedb@0.31.0")) {
  const b = have(join(WORK, "lancedb")) ? reused("lancedb", "IVF_PQ", join(WORK, "lancedb")) : node("lancedb:build");
  // one thread: LanceDB's CPU pool (LANCE_CPU_THREADS), its I/O pool and rayon; the cores column checks it
  const s = b && node("lancedb:search", { LANCE_CPU_THREADS: "1", LANCE_IO_THREADS: "1", RAYON_NUM_THREADS: "1", TOKIO_WORKER_THREADS: "1" });
  if (s) out.systems.push({ anchor: "lancedb", system: `LanceDB ${s.version} IVF_PQ (${b.lists ?? lists} partitions, PQ${d0.dim / 8}) + refine_factor`, param: "nprobes × refine_factor", build: b, search: s, diskBytes: b.diskBytes, ramBytes: null, rows: s.rows });
}

out.finishedAt = new Date().toISOString();
const file = outFile;
// a run of some anchors (--only) keeps the other anchors' results of an earlier run on the same data
if (existsSync(file)) {
  const old = JSON.parse(readFileSync(file, "utf8"));
  if (old.dir === out.dir && old.n === out.n && old.queries === out.queries) {
    out.systems = [...old.systems.filter((s) => !ONLY.includes(s.anchor)), ...out.systems];
    out.skipped = [...(old.skipped ?? []).filter((s) => !ONLY.some((a) => s.anchor.includes(a))), ...out.skipped];
    out.earlierRuns = [...(old.earlierRuns ?? []), { only: old.only, startedAt: old.startedAt, load: old.load }];
  }
}
out.only = ONLY;
// q/s per CPU-second (q/s ÷ cores): the one-thread speed with the machine's other load taken out
for (const sys of out.systems) {
  for (const r of sys.rows) r.qpsPerCpu = r.qps / r.cores;
  sys.at95 = qpsAt(sys.rows);
  sys.at95PerCpu = qpsAt(sys.rows.map((r) => ({ ...r, qps: r.qpsPerCpu })));
}
writeFileSync(file + ".tmp", JSON.stringify(out, null, 2));
renameSync(file + ".tmp", file);

const f1 = (x) => (x == null ? "–" : x.toFixed(1));
const mib = (x) => (x == null ? "–" : (x / 2 ** 20).toFixed(0));
const paramOf = (r) => ["nprobe", "kFactor", "expansionSearch", "nprobes", "refineFactor"].filter((k) => k in r).map((k) => `${k} ${r[k]}`).join(", ");
console.log(`\n### Anchors at ${d0.n.toLocaleString("en")} × ${d0.dim}, ${d0.nq} queries, top 100, inner product, one thread, one query at a time (load ${out.load} → ${load()})\n`);
console.log("| system | build wall s | build CPU s | build peak RSS MiB | search peak RSS MiB | disk MiB | in RAM MiB | q/s at recall@100 0.95 | q/s per CPU-s at 0.95 | best recall@100 |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const s of out.systems) {
  const best = Math.max(...s.rows.map((r) => r.recall100));
  console.log(`| ${s.system} | ${f1(s.build.wallS)} | ${f1(s.build.cpuS)} | ${f1(s.build.peakRssMiB)} | ${f1(s.search.peakRssMiB)} | ${mib(s.diskBytes)} | ${mib(s.ramBytes)} | ${s.at95.qps == null ? "–" : s.at95.qps.toFixed(1)} (${s.at95.note}) | ${s.at95PerCpu.qps == null ? "–" : s.at95PerCpu.qps.toFixed(1)} | ${best.toFixed(3)} |`);
}
for (const s of out.skipped) console.log(`\nskipped ${s.anchor}: ${s.why}`);
for (const s of out.systems) {
  console.log(`\n#### ${s.system}\n\n| ${s.param} | recall@10 | recall@100 | q/s | cores | q/s per CPU-s | p50 ms | p99 ms |\n|---|---|---|---|---|---|---|---|`);
  for (const r of s.rows) console.log(`| ${paramOf(r)} | ${r.recall10.toFixed(3)} | ${r.recall100.toFixed(3)} | ${r.qps.toFixed(1)} | ${r.cores.toFixed(2)} | ${r.qpsPerCpu.toFixed(1)} | ${r.p50ms.toFixed(2)} | ${r.p99ms.toFixed(2)} |`);
}
console.log(`\nwritten ${file}`);
