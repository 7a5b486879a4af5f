// `npm run bench:scale`: tartan at KILT's real size. A deterministic synthetic knowledge source in KILT's
// page format (src/knowledge/synthetic.ts, the knowledge-store benchmark's generator) is streamed through
// a pipe into `tartan ks ingest -`, so the ~40 GB input never sits on disk; then each stage runs as its own
// process and is timed:
//   ingest    generator | tartan ks ingest - --out DIR/ks
//   passages  tartan ks passages --ks DIR/ks --table DIR/passages      (unit table: spans into the store)
//   index     tartan index build --kind bm25 --units DIR/passages --out DIR/bm25
//   queries   the inputs of ../shared/data/kilt-dev/ (HotpotQA 5,600, Wizard of Wikipedia 3,054; entity
//             markers stripped), top 100, one thread (latency per query) and both cores (SearchPool)
// Per stage: wall and CPU seconds (GNU time), peak RSS of the process tree (summed over its processes,
// polled from /proc every 200 ms; GNU time's largest single process beside it), bytes on disk.
// With --lucene (default: on up to 1,000,000 pages) Lucene 8 (Debian's liblucene8-java, bench/lucene/) indexes
// the same passages (title + "\n" + text, EnglishAnalyzer, BM25 k1 0.9 b 0.4, docs and frequencies, one
// segment) and runs the same queries on one thread: build time, index size, queries/s, top-100 overlap.
// Prints the targets with PASS/MISS and writes DIR/results.json (and appends to bench/out/scale-runs.jsonl).
//
// --shape kilt (default) draws pages with KILT's proportions (src/knowledge/synthetic.ts KILT_SHAPE: 5,903,530
// pages → ~22.5M passages, ~37.8 GB); --shape default draws the knowledge-store benchmark's pages (twice the prose).
//
// --lucene reuse searches the Lucene index an earlier run left in DIR/lucene instead of exporting and building it.
// --lucene-docs fifo hands Lucene its input through a named pipe, exported while Lucene indexes it (at full
// size the exported text would need ~15 GB of disk); Lucene's build time then includes any wait on the export,
// which runs in its own process on the other core. Default: file (exported first, not timed).
//
// With Lucene, both engines are then also timed in alternation (--rounds, default 3: A B, B A, A B …, one
// one-thread pass over the queries each, both warmed first), so that neither gets a quieter slice of a
// shared machine; the q/s target (≥ 1.5× Lucene's) is read from these passes. --k sets the depth (default 100).
//
// usage: node bench/scale.mjs [--pages 5903530] [--dir /work/scratch/scale/run] [--seed 1] [--shape kilt|default] [--lucene auto|yes|no|reuse]
//          [--stages ingest,passages,index,queries] [--index-args "--memory 2048"] [--queries-limit N] [--k 100] [--rounds 3] [--lucene-docs file|fifo] [--keep]
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, appendFileSync, createWriteStream } from "node:fs";
import { once } from "node:events";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CLI, cpuS, load, opt as parseOptions, OUT, ROOT as root, SHARED, tartan } from "./lib.mjs";
import { compileLucene, luceneClasspath, luceneVersion } from "./lucene/lucene.mjs";

const SELF = fileURLToPath(import.meta.url);
const USAGE =
  "usage: npm run bench:scale [-- --pages 5903530] [-- --dir DIR] [-- --seed 1] [-- --shape kilt|default] [-- --lucene auto|yes|no|reuse]\n" +
  '         [-- --stages ingest,passages,index,queries] [-- --index-args "--memory 2048"] [-- --queries-limit N] [-- --k 100] [-- --rounds 3] [-- --lucene-docs file|fifo] [-- --threads N] [-- --keep] [-- --verbose]';
const GiB = 1024 ** 3;

// ---------------------------------------------------------------------------------------------------
// Child modes.

if (process.argv[2] === "--child-generate") {
  // The synthetic knowledge source on stdout, one page per line, with backpressure.
  const [, , , pages, seed, shape] = process.argv;
  const { syntheticPages, KILT_SHAPE } = await tartan("knowledge");
  let chunk = [];
  let bytes = 0;
  for (const page of syntheticPages({ pages: Number(pages), seed: Number(seed), ...(shape === "kilt" ? KILT_SHAPE : {}) })) {
    const line = `${JSON.stringify(page)}\n`;
    chunk.push(line);
    bytes += line.length;
    if (bytes >= 1 << 20) {
      if (!process.stdout.write(chunk.join(""))) await once(process.stdout, "drain");
      chunk = [];
      bytes = 0;
    }
  }
  if (chunk.length > 0 && !process.stdout.write(chunk.join(""))) await once(process.stdout, "drain");
  process.stdout.end();
  await once(process.stdout, "finish");
  process.exit(0);
}

if (process.argv[2] === "--child-docs") {
  // Lucene's input: one escaped line per unit of the table (title + "\n" + text, as tartan's BM25 indexes).
  const [, , , tableDir, docsFile] = process.argv;
  const { unitsFromTable } = await tartan("retrieval");
  const out = createWriteStream(docsFile);
  const esc = (s) => s.replace(/\\/g, "\\\\").replace(/\r\n|\r|\n/g, "\\n");
  let buf = [];
  let n = 0;
  for await (const u of unitsFromTable(tableDir)) {
    buf.push(esc(`${u.wikipedia_title}\n${u.text}`));
    n++;
    if (buf.length >= 4096) {
      if (!out.write(`${buf.join("\n")}\n`)) await once(out, "drain");
      buf = [];
    }
  }
  if (buf.length > 0) out.write(`${buf.join("\n")}\n`);
  out.end();
  await once(out, "close");
  console.log(JSON.stringify({ docs: n }));
  process.exit(0);
}

if (process.argv[2] === "--child-queries") {
  // One thread: each query timed alone (latencies); then both cores through SearchPool. Results of the
  // one-thread run are written as "unit:score …" lines for the comparison with Lucene.
  const [, , , indexDir, queriesFile, k, resultsFile, threadsArg] = process.argv;
  const { openIndex, SearchPool } = await tartan("retrieval");
  const queries = JSON.parse(readFileSync(queriesFile, "utf8"));
  const kk = Number(k);
  const t0 = performance.now();
  const r = await openIndex(indexDir);
  const openSeconds = (performance.now() - t0) / 1000;
  for (const q of queries.slice(0, 200)) await r.search(q, kk); // warm-up
  const lat = new Float64Array(queries.length);
  const results = new Array(queries.length);
  const c0 = process.cpuUsage();
  const s0 = performance.now();
  for (let i = 0; i < queries.length; i++) {
    const t = performance.now();
    results[i] = await r.search(queries[i], kk);
    lat[i] = performance.now() - t;
  }
  const single = (performance.now() - s0) / 1000;
  const cpuSeconds = cpuS(c0);
  writeFileSync(resultsFile, results.map((hits) => hits.map((h) => `${h.unit}:${h.score}`).join(" ")).join("\n") + "\n");
  const sorted = Array.from(lat).sort((a, b) => a - b);
  const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  const threads = Number(threadsArg);
  const pool = new SearchPool(r, [indexDir], { threads });
  await pool.search(queries.slice(0, 256), kk); // start and warm the workers
  const p0 = performance.now();
  const pooled = await pool.search(queries, kk);
  const multi = (performance.now() - p0) / 1000;
  let same = 0;
  for (let i = 0; i < queries.length; i++) if (pooled[i].length === results[i].length && pooled[i].every((h, j) => h.unit === results[i][j].unit)) same++;
  await pool.close();
  await r.close();
  console.log(
    JSON.stringify({
      queries: queries.length,
      openSeconds,
      single: { seconds: single, qps: queries.length / single, cpuSeconds, p50Ms: pct(50), p99Ms: pct(99), maxMs: sorted[sorted.length - 1] },
      multi: { threads, seconds: multi, qps: queries.length / multi, sameAsSingle: same / queries.length },
    }),
  );
  process.exit(0);
}

if (process.argv[2] === "--child-serve") {
  // For timing in alternation with Lucene (Bm25Bench serve, the same protocol): after a warm-up pass
  // prints {"ready":true}, then answers each "run" line on stdin with one timed one-thread pass over the
  // queries as a JSON line (wall and this process's CPU seconds); exits at EOF.
  const [, , , indexDir, queriesFile, k] = process.argv;
  const { openIndex } = await tartan("retrieval");
  const { createInterface } = await import("node:readline");
  const queries = JSON.parse(readFileSync(queriesFile, "utf8"));
  const kk = Number(k);
  const r = await openIndex(indexDir);
  let hits = 0;
  for (const q of queries) hits += (await r.search(q, kk)).length; // warm-up
  process.stdout.write(`${JSON.stringify({ ready: true, hits })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line !== "run") continue;
    const c0 = process.cpuUsage();
    const s0 = performance.now();
    for (const q of queries) hits += (await r.search(q, kk)).length;
    const seconds = (performance.now() - s0) / 1000;
    process.stdout.write(`${JSON.stringify({ seconds, cpuSeconds: cpuS(c0), hits })}\n`);
  }
  await r.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------
// Measuring a stage: GNU time for wall/CPU/largest process, /proc polling for the whole tree's RSS.

function childrenOf(pid) {
  const out = [];
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const c = readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim();
      if (c) out.push(...c.split(/\s+/).map(Number));
    }
  } catch {
    /* gone */
  }
  return out;
}

function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function treeRss(pid) {
  let sum = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop();
    sum += rssOf(p);
    stack.push(...childrenOf(p));
  }
  return sum;
}

const loads = [];
function noteLoad(stage) {
  const [l1, l5, l15] = loadavg();
  loads.push({ stage, at: new Date().toISOString(), l1, l5, l15 });
}

/**
 * Runs `cmd args` under GNU time; `stdin` may be a readable stream (a pipe from another process).
 * Resolves to {wall, cpu, user, sys, maxRssBytes (largest process), treePeakRssBytes, stdout, stderr}.
 */
function measure(name, cmd, args, { stdin = "ignore", env } = {}) {
  const timeFile = join(tmpDir, `${name}.time`);
  const child = spawn("/usr/bin/time", ["-o", timeFile, "-f", "%e %U %S %M", cmd, ...args], { stdio: [stdin, "pipe", "pipe"], env: { ...process.env, ...env } });
  let treePeak = 0;
  let loadPeak = 0;
  const poll = setInterval(() => {
    treePeak = Math.max(treePeak, treeRss(child.pid));
    loadPeak = Math.max(loadPeak, loadavg()[0]);
  }, 200);
  const out = [];
  const err = [];
  child.stdout.on("data", (d) => out.push(d));
  child.stderr.on("data", (d) => {
    err.push(d);
    if (verbose) process.stderr.write(d);
  });
  return new Promise((resolveP, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(poll);
      const stdout = Buffer.concat(out).toString();
      const stderr = Buffer.concat(err).toString();
      if (code !== 0) return reject(new Error(`${name}: ${cmd} ${args.join(" ")} exited ${code}\n${stderr.slice(-4000)}`));
      const [wall, user, sys, maxKb] = readFileSync(timeFile, "utf8").trim().split("\n").pop().split(" ").map(Number);
      resolveP({ wall, user, sys, cpu: user + sys, maxRssBytes: maxKb * 1024, treePeakRssBytes: Math.max(treePeak, maxKb * 1024), loadPeak, stdout, stderr });
    });
  });
}

function du(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((s, f) => s + du(join(path, f)), 0);
}

/**
 * A search engine in a child process answering "run" lines with one timed pass as a JSON line
 * (--child-serve here, Bm25Bench serve for Lucene): next() is its next JSON line (first {"ready":true}),
 * run() asks for a pass, close() ends its stdin and waits for it.
 */
function serveChild(name, cmd, args) {
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
  const err = [];
  child.stderr.on("data", (d) => err.push(d));
  const lines = [];
  const waiting = [];
  let failed = null;
  let buf = "";
  child.stdout.on("data", (d) => {
    buf += d;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.startsWith("{")) continue;
      if (waiting.length > 0) waiting.shift().resolve(JSON.parse(line));
      else lines.push(JSON.parse(line));
    }
  });
  const closed = once(child, "close");
  child.on("close", (code) => {
    failed = new Error(`${name}: ${cmd} exited ${code}\n${Buffer.concat(err).toString().slice(-4000)}`);
    for (const w of waiting.splice(0)) w.reject(failed);
  });
  const next = () =>
    new Promise((resolveP, reject) => {
      if (lines.length > 0) resolveP(lines.shift());
      else if (failed) reject(failed);
      else waiting.push({ resolve: resolveP, reject });
    });
  return {
    next,
    run: () => {
      child.stdin.write("run\n");
      return next();
    },
    close: () => {
      child.stdin.end();
      return closed;
    },
  };
}

// ---------------------------------------------------------------------------------------------------

const opt = parseOptions(
  {
    pages: { type: "string", default: "5903530" },
    dir: { type: "string" },
    seed: { type: "string", default: "1" },
    shape: { type: "string", default: "kilt" },
    lucene: { type: "string", default: "auto" },
    stages: { type: "string", default: "ingest,passages,index,queries" },
    "index-args": { type: "string", default: "" },
    "queries-limit": { type: "string" },
    k: { type: "string", default: "100" },
    rounds: { type: "string", default: "3" },
    "lucene-docs": { type: "string", default: "file" },
    threads: { type: "string", default: String(Math.min(2, cpus().length)) },
    keep: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
  },
  USAGE,
);
const verbose = opt.verbose;
const PAGES = Number(opt.pages);
if (opt.shape !== "kilt" && opt.shape !== "default") throw new Error("--shape must be kilt or default");
if (!Number.isInteger(PAGES) || PAGES < 1) throw new Error("--pages must be a positive integer");
const K = Number(opt.k);
if (!Number.isInteger(K) || K < 1) throw new Error("--k must be a positive integer");
const ROUNDS = Number(opt.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 0) throw new Error("--rounds must be a non-negative integer");
const DIR = resolve(opt.dir ?? join(OUT, `scale-${PAGES}`));
const stages = new Set(opt.stages.split(","));
if (!["auto", "yes", "no", "reuse"].includes(opt.lucene)) throw new Error("--lucene must be auto, yes, no or reuse");
const withLucene = opt.lucene === "yes" || opt.lucene === "reuse" || (opt.lucene === "auto" && PAGES <= 1_000_000);
const tmpDir = join(DIR, "tmp");
if (!existsSync(CLI)) throw new Error("run npm run build first");
if (stages.has("ingest")) rmSync(DIR, { recursive: true, force: true });
mkdirSync(tmpDir, { recursive: true });
const ks = join(DIR, "ks");
const passages = join(DIR, "passages");
const index = join(DIR, "bm25");
const node = process.execPath;
const report = {
  date: new Date().toISOString(),
  pages: PAGES,
  seed: Number(opt.seed),
  shape: opt.shape,
  dir: DIR,
  node: process.version,
  cpus: cpus().length,
  memGiB: Number((totalmem() / GiB).toFixed(1)),
  commit: spawnSync("git", ["-C", root, "rev-parse", "--short", "HEAD"]).stdout?.toString().trim(),
  command: `node bench/scale.mjs ${process.argv.slice(2).join(" ")}`.trim(),
  stages: {},
  loads,
};
const mb = (x) => `${(x / 1e6).toFixed(1)} MB`;
const gib = (x) => `${(x / GiB).toFixed(2)} GiB`;
const fmt = (n) => Math.round(n).toLocaleString("en-US");
function log(s) {
  process.stdout.write(`${s}\n`);
}
function printStage(name, s, extra = "") {
  log(
    `${name.padEnd(9)} wall ${s.wall.toFixed(1)} s, CPU ${s.cpu.toFixed(1)} s, peak RSS ${gib(s.treePeakRssBytes)} (tree; largest process ${gib(s.maxRssBytes)}), ` +
      `disk ${mb(s.bytes ?? 0)}, load ≤ ${s.loadPeak.toFixed(1)}${extra ? `; ${extra}` : ""}`,
  );
}
function save() {
  writeFileSync(join(DIR, "results.json"), `${JSON.stringify(report, null, 2)}\n`);
}

log(`bench:scale — ${fmt(PAGES)} synthetic pages (seed ${opt.seed}, ${opt.shape} shape) in ${DIR}; ${cpus().length} cores, ${report.memGiB} GiB; load ${load()}`);

// 1. ingest: generator | tartan ks ingest -
if (stages.has("ingest")) {
  noteLoad("ingest");
  const genTime = join(tmpDir, "generate.time");
  const gen = spawn("/usr/bin/time", ["-o", genTime, "-f", "%e %U %S %M", node, SELF, "--child-generate", String(PAGES), opt.seed, opt.shape], { stdio: ["ignore", "pipe", "inherit"] });
  // "exit", not "close": the pipe handed to the ingest stays open on this side.
  const genDone = new Promise((res, rej) => gen.on("exit", (code) => (code === 0 ? res() : rej(new Error(`generator exited ${code}`)))));
  const s = await measure("ingest", node, [CLI, "ks", "ingest", "-", "--out", ks], { stdin: gen.stdout });
  await genDone;
  const [gw, gu, gs, gk] = readFileSync(genTime, "utf8").trim().split("\n").pop().split(" ").map(Number);
  const info = spawnSync(node, [CLI, "ks", "stats", "--ks", ks, "--json"], { encoding: "utf8" });
  let inputBytes = 0;
  let pagesStored = 0;
  try {
    const j = JSON.parse(info.stdout);
    inputBytes = j.input_size;
    pagesStored = j.pages;
  } catch {
    const m = /(\d[\d,]*) pages from - in/.exec(s.stdout);
    pagesStored = m ? Number(m[1].replace(/,/g, "")) : 0;
  }
  s.bytes = du(ks);
  s.inputBytes = inputBytes;
  s.pages = pagesStored;
  s.generator = { wall: gw, cpu: gu + gs, maxRssBytes: gk * 1024 };
  s.mbPerSecond = inputBytes / 1e6 / s.wall;
  report.stages.ingest = s;
  delete s.stdout;
  delete s.stderr;
  printStage("ingest", s, `${fmt(pagesStored)} pages, input ${mb(inputBytes)} at ${s.mbPerSecond.toFixed(1)} MB/s; generator CPU ${(gu + gs).toFixed(1)} s (peak ${gib(gk * 1024)}, not counted)`);
  save();
}

// 2. passages: the unit table
if (stages.has("passages")) {
  noteLoad("passages");
  rmSync(passages, { recursive: true, force: true });
  const s = await measure("passages", node, [CLI, "ks", "passages", "--ks", ks, "--table", passages]);
  const m = /([\d,]+) passages \(chunk, 100 words\) from ([\d,]+) pages/.exec(s.stderr);
  s.passages = m ? Number(m[1].replace(/,/g, "")) : null;
  s.bytes = du(passages);
  s.passagesPerSecond = s.passages / s.wall;
  delete s.stdout;
  delete s.stderr;
  report.stages.passages = s;
  printStage("passages", s, `${fmt(s.passages)} passages, ${fmt(s.passagesPerSecond)}/s`);
  save();
}

// 3. index: BM25 over the unit table
if (stages.has("index")) {
  noteLoad("index");
  rmSync(index, { recursive: true, force: true });
  const extra = opt["index-args"].split(" ").filter(Boolean);
  const s = await measure("index", node, [CLI, "index", "build", "--kind", "bm25", "--units", passages, "--out", index, ...extra]);
  s.bytes = du(index);
  const files = {};
  for (const f of readdirSync(index)) files[f] = statSync(join(index, f)).size;
  s.files = files;
  s.unitBytes = Object.entries(files).filter(([f]) => f.startsWith("units.")).reduce((a, [, b]) => a + b, 0);
  s.bm25Bytes = s.bytes - s.unitBytes - (files["manifest.json"] ?? 0);
  s.summary = s.stderr.trim().split("\n").pop();
  delete s.stdout;
  delete s.stderr;
  report.stages.index = s;
  printStage("index", s, `BM25 files ${mb(s.bm25Bytes)} + unit table ${mb(s.unitBytes)}`);
  save();
}

// 4. queries
const queriesFile = join(DIR, "queries.json");
const queriesTxt = join(DIR, "queries.txt");
if (stages.has("queries")) {
  noteLoad("queries");
  const { stripEntityMarkers } = await tartan("retrieval");
  const { readJsonlAll } = await tartan("records");
  const shared = join(SHARED, "data", "kilt-dev");
  let queries = [];
  const perFile = {};
  for (const f of ["hotpotqa-dev-kilt.jsonl", "wow-dev-kilt.jsonl"]) {
    const recs = await readJsonlAll(join(shared, f));
    const qs = recs.map((r) => stripEntityMarkers(String(r.input ?? "")));
    perFile[f] = qs.length;
    queries.push(...qs);
  }
  // --queries-limit N: an evenly spaced sample of N (both files in proportion), not the first N.
  if (opt["queries-limit"] && Number(opt["queries-limit"]) < queries.length) {
    const n = Number(opt["queries-limit"]);
    const all = queries;
    queries = Array.from({ length: n }, (_, i) => all[Math.floor((i * all.length) / n)]);
  }
  writeFileSync(queriesFile, JSON.stringify(queries));
  writeFileSync(queriesTxt, queries.map((q) => q.replace(/\\/g, "\\\\").replace(/\r\n|\r|\n/g, "\\n")).join("\n") + "\n");
  const resultsFile = join(DIR, `tartan-top${K}.tsv`);
  const s = await measure("queries", node, [SELF, "--child-queries", index, queriesFile, String(K), resultsFile, opt.threads]);
  const q = JSON.parse(s.stdout.trim().split("\n").pop());
  delete s.stdout;
  delete s.stderr;
  s.bytes = 0;
  Object.assign(s, q, { files: perFile });
  report.stages.queries = s;
  printStage("queries", s, `${fmt(q.queries)} queries, top ${K}`);
  log(
    `          one thread ${q.single.qps.toFixed(1)} q/s (p50 ${q.single.p50Ms.toFixed(2)} ms, p99 ${q.single.p99Ms.toFixed(2)} ms, max ${q.single.maxMs.toFixed(0)} ms); ` +
      `${q.multi.threads} threads ${q.multi.qps.toFixed(1)} q/s (same rankings: ${(100 * q.multi.sameAsSingle).toFixed(1)}%); open ${q.openSeconds.toFixed(2)} s`,
  );
  save();
}

// 5. Lucene on the same passages and queries.
function parseResults(file) {
  return readFileSync(file, "utf8")
    .split("\n")
    .slice(0, -1)
    .map((line) => (line === "" ? [] : line.split(" ").map((x) => {
      const [u, sc] = x.split(":");
      return { unit: Number(u), score: Math.fround(Number(sc)) };
    })));
}

function compare(a, b, k) {
  let overlap = 0;
  let identical = 0;
  let tieOnly = 0;
  let maxDiff = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i].slice(0, k);
    const y = b[i].slice(0, k);
    const ys = new Set(y.map((h) => h.unit));
    const common = x.filter((h) => ys.has(h.unit)).length;
    overlap += Math.max(x.length, y.length) === 0 ? 1 : common / Math.max(x.length, y.length);
    if (x.length === y.length && x.every((h, j) => h.unit === y[j].unit)) identical++;
    else {
      // Differences only in the order of units with equal scores, or among units tied with the k-th?
      const sameScores = x.length === y.length && x.every((h, j) => h.score === y[j].score);
      if (sameScores) tieOnly++;
    }
    for (let j = 0; j < Math.min(x.length, y.length); j++) maxDiff = Math.max(maxDiff, Math.abs(x[j].score - y[j].score));
  }
  return { overlap: overlap / a.length, identicalOrder: identical / a.length, tieOnlyDifferences: tieOnly, maxScoreDiff: maxDiff };
}

if (withLucene && stages.has("queries")) {
  noteLoad("lucene");
  const classpath = `${luceneClasspath()}:${compileLucene()}`;
  const java = ["-Xms2g", "-Xmx8g", "-cp", classpath];
  const docs = join(DIR, "lucene-docs.txt");
  const lIndex = join(DIR, "lucene");
  // --lucene reuse: search the Lucene index a previous run left in DIR/lucene (no export, no build).
  const reuse = opt.lucene === "reuse" && existsSync(lIndex) && readdirSync(lIndex).some((f) => f.startsWith("segments_"));
  const fifo = !reuse && opt["lucene-docs"] === "fifo";
  if (!["file", "fifo"].includes(opt["lucene-docs"])) throw new Error(`--lucene-docs must be file or fifo, not ${opt["lucene-docs"]}`);
  if (fifo) {
    rmSync(docs, { force: true });
    const mk = spawnSync("mkfifo", [docs]);
    if (mk.status !== 0) throw new Error(`mkfifo ${docs} failed: ${String(mk.stderr)}`);
  }
  // fifo: the export runs beside Lucene's build (both measured; the build reads as the export writes)
  const exporting = reuse ? null : measure("lucene-docs", node, [SELF, "--child-docs", passages, docs]);
  let exp = reuse ? { wall: null, cpu: null } : fifo ? null : await exporting;
  if (!reuse) rmSync(lIndex, { recursive: true, force: true });
  const b = reuse ? { wall: null, cpu: null, treePeakRssBytes: null, loadPeak: null, stdout: "null" } : await measure("lucene-build", "java", [...java, "Bm25Bench", "index", "english", docs, lIndex, "0.9", "0.4"]);
  if (fifo) {
    exp = await exporting;
    rmSync(docs, { force: true });
    console.log(`lucene input through a named pipe: export ${exp.wall.toFixed(1)} s wall (${exp.cpu.toFixed(1)} CPU-s) beside the build`);
  }
  b.bytes = du(lIndex);
  const lRes = join(DIR, `lucene-top${K}.tsv`);
  const s = await measure("lucene-search", "java", [...java, "Bm25Bench", "search", "english", lIndex, queriesTxt, String(K), "1", lRes, "0.9", "0.4"]);
  const lq = JSON.parse(s.stdout.trim().split("\n").pop());
  const agreement = compare(parseResults(join(DIR, `tartan-top${K}.tsv`)), parseResults(lRes), K);
  const t = report.stages;
  const L = {
    version: luceneVersion(),
    docsExport: { wall: exp.wall, cpu: exp.cpu },
    build: { wall: b.wall, cpu: b.cpu, treePeakRssBytes: b.treePeakRssBytes, bytes: b.bytes, loadPeak: b.loadPeak, detail: JSON.parse(b.stdout.trim().split("\n").pop()) },
    search: { qps: lq.qps, cpuQps: lq.cpuQps, seconds: lq.seconds, openSeconds: lq.openSeconds, treePeakRssBytes: s.treePeakRssBytes },
    agreement,
  };
  L.ratios = {
    buildWall: t.index && b.wall ? t.index.wall / b.wall : null,
    buildCpu: t.index && b.cpu ? t.index.cpu / b.cpu : null,
    indexBytes: t.index ? t.index.bm25Bytes / b.bytes : null,
    qpsSingle: t.queries ? t.queries.single.qps / lq.qps : null,
    // Queries per CPU second (both processes' whole CPU: JIT, GC and other threads count).
    qpsSingleCpu: t.queries ? t.queries.queries / t.queries.single.cpuSeconds / lq.cpuQps : null,
  };
  report.lucene = L;
  log(
    `lucene ${L.version}: ${reuse ? "index reused" : `build wall ${b.wall.toFixed(1)} s, CPU ${b.cpu.toFixed(1)} s, peak RSS ${gib(b.treePeakRssBytes)}`}, index ${mb(b.bytes)}; one thread ${lq.qps.toFixed(1)} q/s (${lq.cpuQps.toFixed(1)} per CPU s); ` +
      `top-${K} overlap ${agreement.overlap.toFixed(4)}, identical order ${(100 * agreement.identicalOrder).toFixed(1)}% (+${agreement.tieOnlyDifferences} differing only among equal scores), max score diff ${agreement.maxScoreDiff}`,
  );
  log(
    `ratios tartan/Lucene: build wall ${L.ratios.buildWall?.toFixed(2)}, build CPU ${L.ratios.buildCpu?.toFixed(2)}, index bytes ${L.ratios.indexBytes?.toFixed(2)}, single-thread q/s ${L.ratios.qpsSingle?.toFixed(2)} (per CPU s ${L.ratios.qpsSingleCpu?.toFixed(2)})`,
  );
  // Both engines timed in alternation (A B B A …, one pass over the queries each time, each engine warmed
  // by a pass first), so that neither gets a quieter slice of a shared machine.
  if (ROUNDS > 0) {
    noteLoad("alternation");
    const n = JSON.parse(readFileSync(queriesFile, "utf8")).length;
    const tartan = serveChild("tartan", node, [SELF, "--child-serve", index, queriesFile, String(K)]);
    const lucene = serveChild("lucene", "java", [...java, "Bm25Bench", "serve", "english", lIndex, queriesTxt, String(K), "0.9", "0.4"]);
    await Promise.all([tartan.next(), lucene.next()]);
    const passes = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, e] of r % 2 === 0 ? [["tartan", tartan], ["lucene", lucene]] : [["lucene", lucene], ["tartan", tartan]]) {
        const load = loadavg()[0];
        passes.push({ engine: name, load, ...(await e.run()) });
      }
    }
    await Promise.all([tartan.close(), lucene.close()]);
    const sum = (name) => {
      const ps = passes.filter((p) => p.engine === name);
      const seconds = ps.reduce((a, p) => a + p.seconds, 0);
      const cpu = ps.reduce((a, p) => a + p.cpuSeconds, 0);
      return { qps: (n * ps.length) / seconds, cpuQps: (n * ps.length) / cpu, seconds, cpuSeconds: cpu };
    };
    L.alternation = { rounds: ROUNDS, k: K, queries: n, tartan: sum("tartan"), lucene: sum("lucene"), passes };
    L.ratios.qpsSingleAlternating = L.alternation.tartan.qps / L.alternation.lucene.qps;
    L.ratios.qpsSingleCpuAlternating = L.alternation.tartan.cpuQps / L.alternation.lucene.cpuQps;
    const A = L.alternation;
    log(
      `alternating (${ROUNDS} rounds, top ${K}, load ${Math.min(...passes.map((p) => p.load)).toFixed(1)}–${Math.max(...passes.map((p) => p.load)).toFixed(1)}): ` +
        `tartan ${A.tartan.qps.toFixed(1)} q/s (${A.tartan.cpuQps.toFixed(1)} per CPU s), Lucene ${A.lucene.qps.toFixed(1)} q/s (${A.lucene.cpuQps.toFixed(1)} per CPU s); ` +
        `tartan/Lucene ${L.ratios.qpsSingleAlternating.toFixed(2)} (per CPU s ${L.ratios.qpsSingleCpuAlternating.toFixed(2)})`,
    );
  }
  if (!opt.keep) rmSync(docs, { force: true });
  save();
}

// 6. Targets.
const t = report.stages;
const targets = [];
const target = (name, ok, detail) => {
  if (ok === null || ok === undefined) return;
  targets.push({ name, pass: ok, detail });
};
const stagesRun = ["ingest", "passages", "index"].filter((s) => t[s]);
if (stagesRun.length === 3) {
  const wall = t.ingest.wall + t.passages.wall + t.index.wall;
  report.rawToIndexWall = wall;
  const full = PAGES >= 5_903_530;
  target(`raw JSON to queryable index ≤ 60 min${full ? "" : " (full size only)"}`, full ? wall <= 3600 : undefined, `${(wall / 60).toFixed(1)} min`);
  log(`raw JSON → queryable index: ${(wall / 60).toFixed(1)} min wall (ingest ${(t.ingest.wall / 60).toFixed(1)} + passages ${(t.passages.wall / 60).toFixed(1)} + index ${(t.index.wall / 60).toFixed(1)})`);
  const disk = t.ingest.bytes + t.passages.bytes + t.index.bytes;
  target("store + passages + index on disk ≤ input size", disk <= t.ingest.inputBytes, `${mb(disk)} vs ${mb(t.ingest.inputBytes)} (${(disk / t.ingest.inputBytes).toFixed(2)})`);
}
for (const s of ["ingest", "passages", "index", "queries"]) if (t[s]) target(`peak RSS ≤ 3 GiB: ${s}`, t[s].treePeakRssBytes <= 3 * GiB, gib(t[s].treePeakRssBytes));
if (report.lucene) {
  const L = report.lucene;
  if (L.ratios.buildWall !== null) target("build time ≤ Lucene's", L.ratios.buildWall <= 1, `${t.index.wall.toFixed(1)} s vs ${L.build.wall.toFixed(1)} s (${L.ratios.buildWall.toFixed(2)})`);
  if (L.ratios.indexBytes !== null) target("index bytes ≤ Lucene's", L.ratios.indexBytes <= 1, `${mb(t.index.bm25Bytes)} vs ${mb(L.build.bytes)} (${L.ratios.indexBytes.toFixed(2)})`);
  if (L.ratios.qpsSingleAlternating !== undefined)
    target(
      `single-thread q/s ≥ 1.5× Lucene's at top ${K}, timed in alternation`,
      L.ratios.qpsSingleAlternating >= 1.5,
      `${L.alternation.tartan.qps.toFixed(1)} vs ${L.alternation.lucene.qps.toFixed(1)} (${L.ratios.qpsSingleAlternating.toFixed(2)}; per CPU s ${L.ratios.qpsSingleCpuAlternating.toFixed(2)})`,
    );
  if (L.ratios.qpsSingle !== null) target(`single-thread q/s ≥ Lucene's at top ${K}`, L.ratios.qpsSingle >= 1, `${t.queries.single.qps.toFixed(1)} vs ${L.search.qps.toFixed(1)} (${L.ratios.qpsSingle.toFixed(2)})`);
  target(`identical top-${K} rankings (ties aside)`, L.agreement.identicalOrder + L.agreement.tieOnlyDifferences / (t.queries?.queries ?? 1) >= 0.999, `${(100 * L.agreement.identicalOrder).toFixed(2)}% identical, ${L.agreement.tieOnlyDifferences} tie-only`);
}
// Build peak RSS against the other size's run, when one is recorded.
const runsFile = join(OUT, "scale-runs.jsonl");
if (t.index) {
  const prior = existsSync(runsFile)
    ? readFileSync(runsFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.indexPeakRssBytes && r.pages !== PAGES)
    : [];
  const other = prior.pop();
  if (other) {
    const [small, big] = other.pages < PAGES ? [other.indexPeakRssBytes, t.index.treePeakRssBytes] : [t.index.treePeakRssBytes, other.indexPeakRssBytes];
    target(`build peak RSS at the smaller size within 10% of the larger (${fmt(Math.min(other.pages, PAGES))} vs ${fmt(Math.max(other.pages, PAGES))} pages)`, Math.abs(small - big) <= 0.1 * big, `${gib(small)} vs ${gib(big)}`);
  }
  mkdirSync(dirname(runsFile), { recursive: true });
  appendFileSync(runsFile, `${JSON.stringify({ date: report.date, pages: PAGES, commit: report.commit, indexPeakRssBytes: t.index.treePeakRssBytes, indexWall: t.index.wall })}\n`);
}
report.targets = targets;
log("\ntargets:");
for (const x of targets) log(`  ${x.pass ? "PASS" : "MISS"}  ${x.name}: ${x.detail}`);
log(`load averages during the run: ${loads.map((l) => `${l.stage} ${l.l1.toFixed(1)}/${l.l5.toFixed(1)}/${l.l15.toFixed(1)}`).join(", ")}; now ${loadavg().map((x) => x.toFixed(1)).join("/")}`);
save();
log(`written ${join(DIR, "results.json")}`);
