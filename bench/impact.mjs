// bench:impact: the impact index (learned sparse retrieval) on a generated SPLADE-like collection
// (./impact-gen.mjs) against its anchors in the same run (issue 38):
//   - Lucene 8 (Debian's liblucene8-java, ./lucene/ImpactBench.java): the same collection quantized the same
//     way into term frequencies (Anserini's impact indexes), Anserini's ImpactSimilarity (score = query
//     weight × impact), block-max WAND through TopScoreDocCollector with a total-hits threshold of k;
//   - brute force over tartan's index (every posting of every query term scored and summed as
//     `ImpactSearcher.searchExhaustive` does, into a dense array).
// Measured: build wall, CPU and peak RSS of each engine (a child process under GNU time), index bytes;
// rankings at top 10, 100 and 1000 compared query by query (units and float scores; both break ties to the
// lower unit, so "identical" is exact, and differences only among equal scores are counted apart); single-
// thread q/s of tartan's MaxScore against Lucene's WAND, timed in alternation (--rounds passes each, both
// warmed first), and two-thread q/s (tartan's SearchPool, two Java threads over one IndexSearcher); each
// search process's peak RSS. Prints the targets with PASS/MISS and writes DIR/results.json.
//   npm run bench:impact -- --passages 100000 --queries 200 [--scale 100] [--rounds 3] [--dir DIR] [--lucene yes|no] [--reuse]
// --reuse keeps a collection and indexes an earlier run left in DIR (nothing generated or built again).

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLI, OUT, cpuS, internal, load, opt, tartan } from "./lib.mjs";
import { generate } from "./impact-gen.mjs";
import { compileLucene, luceneClasspath, luceneVersion } from "./lucene/lucene.mjs";

const SELF = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------------------
// Child: tartan's searches, answering the same stdin commands as ImpactBench's serve mode.

if (process.argv[2] === "--child-serve") {
  const [, , , index, queriesFile] = process.argv;
  const { ImpactSearcher } = await internal("retrieval/impact/search.js");
  const { readImpactQueries } = await internal("retrieval/impact/queries.js");
  const { TopK } = await internal("retrieval/bm25/top-k.js");
  const { PostingCursor } = await internal("retrieval/bm25/postings-reader.js");
  const { openIndex, SearchPool } = await tartan("retrieval");
  const queries = await readImpactQueries(queriesFile);
  const t0 = performance.now();
  const s = ImpactSearcher.open(index);
  const openSeconds = (performance.now() - t0) / 1000;
  const weights = queries.map((q) => q.weights);
  const inputs = queries.map((q) => ({ text: "", terms: Object.fromEntries(q.weights) }));
  const retriever = await openIndex(index);
  const pool = new SearchPool(retriever, [index], { threads: 2, chunk: 8 });
  // Brute force: every posting of every query term decoded and summed as ImpactSearcher.searchExhaustive
  // does (float32 products summed in a double, the total rounded to float32), into a dense array of the
  // units (a Map's cost would make it hours at 1.2M passages), then the top k with ties to the lower unit.
  const f = Math.fround;
  const acc = new Float64Array(s.units);
  const touched = new Uint8Array(s.units);
  const brute = (w, k) => {
    acc.fill(0);
    touched.fill(0);
    for (const t of s.queryTerms(w)) {
      const c = s.cursor(t.info);
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) {
        acc[d] += f(c.tf * t.weight);
        touched[d] = 1;
      }
    }
    let n = 0;
    for (let d = 0; d < s.units; d++) n += touched[d];
    const top = new TopK(Math.min(k, n));
    if (n > 0) for (let d = 0; d < s.units; d++) if (touched[d]) top.offerAny(f(acc[d]), d);
    return top.hits();
  };
  // Warm-up: three passes at each depth, on one thread and on two.
  let hits = 0;
  for (const k of [10, 100, 1000]) {
    for (let r = 0; r < 3; r++) for (const w of weights) hits += s.search(w, k).length;
    for (let r = 0; r < 3; r++) await pool.search(inputs, k);
  }
  const reply = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
  const dump = (file, results) => writeFileSync(file, results.map((h) => h.map((x) => `${x.unit}:${x.score}`).join(" ")).join("\n") + "\n");
  reply({ ready: true, queries: queries.length, hits, openSeconds });
  for await (const line of createInterface({ input: process.stdin })) {
    const [cmd, a, b] = line.trim().split(" ");
    if (cmd === "run") {
      const k = Number(a);
      const threads = Number(b);
      const c = process.cpuUsage();
      const t = performance.now();
      let h = 0;
      if (threads === 1) for (const w of weights) h += s.search(w, k).length;
      else for (const r of await pool.search(inputs, k)) h += r.length;
      reply({ seconds: (performance.now() - t) / 1000, cpuSeconds: cpuS(c), hits: h });
    } else if (cmd === "dump") {
      dump(b, weights.map((w) => s.search(w, Number(a))));
      reply({ dumped: true });
    } else if (cmd === "dump2") {
      dump(b, await pool.search(inputs, Number(a)));
      reply({ dumped: true });
    } else if (cmd === "brute") {
      const t = performance.now();
      const k = Number(a);
      dump(b, weights.map((w) => brute(w, k)));
      const seconds = (performance.now() - t) / 1000;
      // The dense brute force checked against searchExhaustive itself on the first three queries.
      const same = weights.slice(0, 3).filter((w) => JSON.stringify(brute(w, k)) === JSON.stringify(s.searchExhaustive(w, k))).length;
      reply({ dumped: true, seconds, sameAsSearchExhaustive: `${same}/${Math.min(3, weights.length)}` });
    } else if (cmd === "rss") {
      reply({ peakRssKiB: Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? -1) });
    }
  }
  await pool.close();
  await retriever.close();
  s.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------
// The run.

const USAGE = "npm run bench:impact -- [--passages N] [--queries Q] [--scale S] [--rounds R] [--dir DIR] [--lucene yes|no] [--reuse]";
const o = opt(
  {
    passages: { type: "string", default: "100000" },
    queries: { type: "string", default: "200" },
    scale: { type: "string", default: "100" },
    rounds: { type: "string", default: "3" },
    dir: { type: "string" },
    lucene: { type: "string", default: "yes" },
    reuse: { type: "boolean", default: false },
  },
  USAGE,
);
const passages = Number(o.passages);
const nq = Number(o.queries);
const ROUNDS = Number(o.rounds);
const DIR = o.dir ?? join(OUT, `impact-${passages}`);
const withLucene = o.lucene !== "no";
const KS = [10, 100, 1000];
const MiB = 2 ** 20;
const report = { date: new Date().toISOString(), commit: spawnSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim(), passages, queries: nq, scale: Number(o.scale), loads: [] };
const noteLoad = (stage) => report.loads.push({ stage, load: load() });
const save = () => writeFileSync(join(DIR, "results.json"), `${JSON.stringify(report, null, 2)}\n`);

const collection = join(DIR, "collection.jsonl");
const queriesFile = join(DIR, "queries.jsonl");
const index = join(DIR, "index");
const lIndex = join(DIR, "lucene");
const reuse = o.reuse && existsSync(join(index, "manifest.json")) && (!withLucene || (existsSync(lIndex) && readdirSync(lIndex).some((f) => f.startsWith("segments_"))));
if (!reuse) rmSync(DIR, { recursive: true, force: true });
mkdirSync(DIR, { recursive: true });
console.log(`load ${load()}${reuse ? `; reusing the collection and indexes in ${DIR}` : ""}`);

const classpath = withLucene ? `${luceneClasspath()}:${compileLucene()}` : null;
const java = ["-Xms1g", "-Xmx3g", "-XX:+UseParallelGC", "-cp", classpath];

if (!reuse) {
  noteLoad("generate");
  const t0 = performance.now();
  report.collection = await generate({ passages, queries: nq, out: DIR });
  console.log(`generated in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(report.collection)}`);
  save();
} else report.collection = JSON.parse(readFileSync(join(DIR, "results.json"), "utf8")).collection;
const stats = report.collection;

/** Runs a command under GNU time: wall, CPU (user + system of it and its children), peak RSS, stdout. */
function timed(name, cmd, args) {
  const timeFile = join(DIR, `time-${name}.txt`);
  const r = spawnSync("/usr/bin/time", ["-o", timeFile, "-f", "%e %U %S %M", cmd, ...args], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${name} failed (${r.status}): ${r.stdout}`);
  const [wall, user, sys, maxKiB] = readFileSync(timeFile, "utf8").trim().split("\n").pop().split(" ").map(Number);
  return { wall, cpu: user + sys, peakRssBytes: maxKiB * 1024, stdout: r.stdout };
}
const bytesOf = (dir, keep = () => true) => readdirSync(dir).filter(keep).reduce((s, f) => s + statSync(join(dir, f)).size, 0);

if (!reuse) {
  noteLoad("tartan-build");
  const b = timed("tartan-build", process.execPath, [CLI, "index", "build", "--kind", "impact", "--vectors", collection, "--ids", join(DIR, "ids.tsv"), "--scale", o.scale, "--out", index]);
  delete b.stdout;
  report.tartanBuild = b;
  if (withLucene) {
    noteLoad("lucene-build");
    const l = timed("lucene-build", "java", [...java, "ImpactBench", "index", collection, lIndex, o.scale]);
    l.detail = JSON.parse(l.stdout.trim().split("\n").pop());
    delete l.stdout;
    report.luceneBuild = l;
  }
  save();
} else {
  const prev = JSON.parse(readFileSync(join(DIR, "results.json"), "utf8"));
  report.tartanBuild = prev.tartanBuild;
  report.luceneBuild = prev.luceneBuild;
}
report.tartanBuild.bytes = bytesOf(index);
report.tartanBuild.postingBytes = bytesOf(index, (f) => f.startsWith("bm25."));
if (withLucene) report.luceneBuild.bytes = bytesOf(lIndex);
const gib = (b) => `${(b / 2 ** 30).toFixed(2)} GiB`;
const mib = (b) => `${(b / MiB).toFixed(1)} MiB`;
{
  const b = report.tartanBuild;
  console.log(`tartan build: ${b.wall.toFixed(1)} s wall, ${b.cpu.toFixed(1)} CPU-s, peak RSS ${mib(b.peakRssBytes)}; index ${mib(b.bytes)} (BM25-layout files ${mib(b.postingBytes)}, ${(b.postingBytes / stats.postings).toFixed(2)} bytes a posting; the rest the unit store)`);
  if (withLucene) {
    const l = report.luceneBuild;
    console.log(`lucene ${luceneVersion()} build: ${l.wall.toFixed(1)} s wall (index ${l.detail.indexSeconds.toFixed(1)} s + forceMerge ${l.detail.mergeSeconds.toFixed(1)} s), ${l.cpu.toFixed(1)} CPU-s, peak RSS ${mib(l.peakRssBytes)}; index ${mib(l.bytes)} (${(l.bytes / stats.postings).toFixed(2)} bytes a posting)`);
    if (l.detail.postings !== stats.postings && Number(o.scale) >= 100) console.log(`  (Lucene indexed ${l.detail.postings} postings, the collection has ${stats.postings}: impacts of 0 left out)`);
  }
}

/** A search process answering "run", "dump", "rss" lines with one JSON line each. */
function server(name, cmd, args) {
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const r = await lines.next();
    if (r.done) throw new Error(`${name}: the search process ended`);
    return JSON.parse(r.value);
  };
  return {
    next,
    ask: (line) => {
      child.stdin.write(`${line}\n`);
      return next();
    },
    close: () => {
      child.stdin.end();
      return new Promise((r) => child.once("exit", r));
    },
  };
}

noteLoad("search-start");
const T = server("tartan", process.execPath, [SELF, "--child-serve", index, queriesFile]);
const L = withLucene ? server("lucene", "java", [...java, "ImpactBench", "serve", lIndex, queriesFile]) : null;
const [tReady, lReady] = await Promise.all([T.next(), L?.next()]);
report.open = { tartan: tReady.openSeconds, lucene: lReady?.openSeconds };
if (lReady) report.luceneBuild.segments = lReady.segments;

// Rankings.
function parseResults(file) {
  return readFileSync(file, "utf8")
    .split("\n")
    .slice(0, -1)
    .map((line) =>
      line === ""
        ? []
        : line.split(" ").map((x) => {
            const [u, sc] = x.split(":");
            return { unit: Number(u), score: Math.fround(Number(sc)) };
          }),
    );
}
/** Query by query: identical lists (units and scores), or lists whose scores agree position by position and whose units differ only among equal scores. */
function compare(a, b) {
  let identical = 0;
  let tieOnly = 0;
  let maxDiff = 0;
  const differing = [];
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.length === y.length && x.every((h, j) => h.unit === y[j].unit && h.score === y[j].score)) identical++;
    else if (x.length === y.length && x.every((h, j) => h.score === y[j].score)) tieOnly++;
    else if (differing.length < 5) differing.push(i);
    for (let j = 0; j < Math.min(x.length, y.length); j++) maxDiff = Math.max(maxDiff, Math.abs(x[j].score - y[j].score));
  }
  return { queries: a.length, identical, tieOnly, maxScoreDiff: maxDiff, firstDiffering: differing };
}
noteLoad("rankings");
const tb = Date.now();
const bruteFile = join(DIR, "brute-top1000.tsv");
const bt = await T.ask(`brute 1000 ${bruteFile}`);
console.log(`brute force top 1000 of ${nq} queries: ${bt.seconds.toFixed(1)} s (equal to ImpactSearcher.searchExhaustive on ${bt.sameAsSearchExhaustive} queries checked)`);
report.bruteForce = bt;
const brute = parseResults(bruteFile);
report.rankings = {};
for (const k of KS) {
  const tf = join(DIR, `tartan-top${k}.tsv`);
  const t2 = join(DIR, `tartan2-top${k}.tsv`);
  await T.ask(`dump ${k} ${tf}`);
  await T.ask(`dump2 ${k} ${t2}`);
  const tr = parseResults(tf);
  const bk = brute.map((h) => h.slice(0, k)); // the top k of a sorted top 1000 (ties to the lower unit) is its prefix
  const r = { tartanVsBrute: compare(tr, bk), twoThreadsVsOne: compare(parseResults(t2), tr) };
  if (L) {
    const lf = join(DIR, `lucene-top${k}.tsv`);
    await L.ask(`dump ${k} ${lf}`);
    const lr = parseResults(lf);
    r.tartanVsLucene = compare(tr, lr);
    r.luceneVsBrute = compare(lr, bk);
  }
  report.rankings[k] = r;
  const pct = (c) => `${c.identical}/${c.queries} identical${c.tieOnly ? ` (+${c.tieOnly} only among equal scores)` : ""}${c.identical + c.tieOnly < c.queries ? `, max score diff ${c.maxScoreDiff}, first differing ${c.firstDiffering.join(",")}` : ""}`;
  console.log(`top ${k}: tartan vs brute force ${pct(r.tartanVsBrute)}; ${L ? `tartan vs Lucene ${pct(r.tartanVsLucene)}; Lucene vs brute force ${pct(r.luceneVsBrute)}; ` : ""}two threads vs one ${pct(r.twoThreadsVsOne)}`);
}
report.rankingSeconds = (Date.now() - tb) / 1000;
save();

// Speed, in alternation.
report.speed = {};
for (const threads of [1, 2]) {
  for (const k of KS) {
    noteLoad(`speed-${threads}-${k}`);
    const passes = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? [["tartan", T], ["lucene", L]] : [["lucene", L], ["tartan", T]];
      for (const [name, e] of order) if (e) passes.push({ engine: name, ...(await e.ask(`run ${k} ${threads}`)) });
    }
    const sum = (name) => {
      const ps = passes.filter((p) => p.engine === name);
      if (ps.length === 0) return null;
      const seconds = ps.reduce((a, p) => a + p.seconds, 0);
      const cpu = ps.reduce((a, p) => a + p.cpuSeconds, 0);
      return { qps: (nq * ps.length) / seconds, cpuQps: (nq * ps.length) / cpu, best: nq / Math.min(...ps.map((p) => p.seconds)) };
    };
    const s = { tartan: sum("tartan"), lucene: sum("lucene"), passes };
    if (s.lucene) s.ratio = s.tartan.qps / s.lucene.qps;
    if (s.lucene) s.cpuRatio = s.tartan.cpuQps / s.lucene.cpuQps;
    report.speed[`${threads}:${k}`] = s;
    console.log(
      `${threads} thread${threads > 1 ? "s" : ""}, top ${k}: tartan ${s.tartan.qps.toFixed(1)} q/s (${s.tartan.cpuQps.toFixed(1)} per CPU-s)` +
        (s.lucene ? `, Lucene ${s.lucene.qps.toFixed(1)} q/s (${s.lucene.cpuQps.toFixed(1)} per CPU-s): ${s.ratio.toFixed(2)}× (per CPU-s ${s.cpuRatio.toFixed(2)}×)` : "") +
        ` [load ${load(1, "/")}]`,
    );
  }
}
const [tRss, lRss] = await Promise.all([T.ask("rss"), L?.ask("rss")]);
report.searchPeakRss = { tartan: tRss.peakRssKiB * 1024, lucene: lRss ? lRss.peakRssKiB * 1024 : null };
console.log(`search peak RSS: tartan ${mib(report.searchPeakRss.tartan)}${L ? `, Lucene ${mib(report.searchPeakRss.lucene)} (JVM -Xms1g -Xmx3g)` : ""}`);
await Promise.all([T.close(), L?.close()]);

// Targets.
const targets = [];
const target = (name, pass, detail) => targets.push({ name, pass, detail });
for (const k of KS) {
  const r = report.rankings[k];
  target(`top ${k} identical to brute force for every query`, r.tartanVsBrute.identical === nq, `${r.tartanVsBrute.identical}/${nq}`);
  if (L) target(`top ${k} identical to Lucene's for every query`, r.tartanVsLucene.identical === nq, `${r.tartanVsLucene.identical}/${nq} (+${r.tartanVsLucene.tieOnly} only among equal scores)`);
}
if (L) {
  for (const k of KS) {
    const s = report.speed[`1:${k}`];
    target(`single-thread q/s ≥ 1.5× Lucene's at top ${k} (alternating)`, s.ratio >= 1.5, `${s.tartan.qps.toFixed(1)} vs ${s.lucene.qps.toFixed(1)} (${s.ratio.toFixed(2)}×)`);
  }
  const b = report.tartanBuild;
  const l = report.luceneBuild;
  target("build wall ≤ Lucene's", b.wall <= l.wall, `${b.wall.toFixed(1)} s vs ${l.wall.toFixed(1)} s (${(b.wall / l.wall).toFixed(2)})`);
  target("index bytes ≤ Lucene's", b.postingBytes <= l.bytes, `${mib(b.postingBytes)} (+ unit store ${mib(b.bytes - b.postingBytes)}) vs ${mib(l.bytes)}`);
}
target("build peak RSS ≤ 3 GiB", report.tartanBuild.peakRssBytes <= 3 * 2 ** 30, gib(report.tartanBuild.peakRssBytes));
report.targets = targets;
console.log("\ntargets:");
for (const x of targets) console.log(`  ${x.pass ? "PASS" : "MISS"}  ${x.name}: ${x.detail}`);
console.log(`loads: ${report.loads.map((l) => `${l.stage} ${l.load}`).join("; ")}`);
save();
console.log(`written ${join(DIR, "results.json")}`);
