// `node bench/pools.mjs --base DIR`: the worker pools of this build against another build of tartan (DIR: a
// checkout with its dist/ built, e.g. main's), in alternation (A B, B A, …: --rounds) so that neither gets
// the quieter slice of a shared machine; each run is its own process and the best run of each build counts:
//   search    BM25 batches of 1,000 queries (top --k) over --index: through a SearchPool on --threads
//             threads (`tartan retrieve`'s path), and through what POST /api/search calls (a build that
//             has no searchPoolFor: Bm25Retriever.searchBatch with its own worker pool);
//   ingest    `tartan ks ingest` of a synthetic knowledge source of --pages pages (KILT's shape; written
//             once under --dir), on the CLI's default workers;
//   passages  `tartan ks passages --table` of that store (the passage cutter's workers).
// Prints wall and CPU seconds (all threads) of every run, each build's medians, the ratios of this build
// to the base (speed by median and by best wall time, and per CPU second), and the load average.
//
// usage: node bench/pools.mjs --base DIR [--index DIR] [--queries FILE.json] [--limit 2000] [--k 100] [--threads 2]
//          [--pages 50000] [--dir /tmp/tartan-pools-bench] [--stages search,ingest,passages] [--rounds 3]
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ROOT, load, opt as parseOptions } from "./lib.mjs";

const SELF = fileURLToPath(import.meta.url);
const root = ROOT;

if (process.argv[2] === "--child-search") {
  const [, , , build, indexDir, queriesFile, limit, k, threads, mode] = process.argv;
  const lib = (p) => import(pathToFileURL(join(build, "dist", "src", p)).href);
  const { openIndex, SearchPool } = await lib("retrieval/index.js");
  const { searchPoolFor } = await lib("backends/open.js");
  const queries = JSON.parse(readFileSync(queriesFile, "utf8")).slice(0, Number(limit));
  const kk = Number(k);
  const r = await openIndex(indexDir);
  let pool = null;
  let batch;
  if (mode === "pool") {
    pool = new SearchPool(r, [indexDir], { threads: Number(threads) });
    batch = (qs) => pool.search(qs, kk);
  } else if (searchPoolFor) {
    pool = searchPoolFor(r, [indexDir]);
    batch = (qs) => pool.search(qs, kk);
  } else batch = (qs) => r.searchBatch(qs, kk);
  await batch(queries.slice(0, 1000)); // starts and warms the workers
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let hits = 0;
  for (let i = 0; i < queries.length; i += 1000) for (const h of await batch(queries.slice(i, i + 1000))) hits += h.length;
  const seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  await pool?.close();
  await r.close();
  console.log(JSON.stringify({ seconds, cpuSeconds: (c.user + c.system) / 1e6, items: queries.length, hits }));
  process.exit(0);
}

const opt = parseOptions(
  {
    base: { type: "string" },
    index: { type: "string" },
    queries: { type: "string" },
    limit: { type: "string", default: "2000" },
    k: { type: "string", default: "100" },
    threads: { type: "string", default: "2" },
    pages: { type: "string", default: "50000" },
    dir: { type: "string", default: "/tmp/tartan-pools-bench" },
    stages: { type: "string", default: "search,ingest,passages" },
    rounds: { type: "string", default: "3" },
  },
  "usage: npm run bench:pools -- --base DIR [--index DIR --queries FILE] [--limit N] [--k 100] [--threads 2] [--pages 50000] [--dir DIR] [--stages search,ingest,passages] [--rounds 3]",
);
if (!opt.base) throw new Error("--base DIR (a tartan checkout with dist/ built) is required");
if (opt.stages.split(",").includes("search") && (!opt.index || !opt.queries)) throw new Error("the search stage needs --index DIR (a BM25 index, e.g. a scale run's DIR/bm25) and --queries FILE (its queries.json)");
const builds = { base: resolve(opt.base), this: root };
const stages = opt.stages.split(",");
const rounds = Number(opt.rounds);

/** Runs `args` under GNU time: wall and CPU seconds of the process (its threads and children). */
function timed(cmd, args) {
  const r = spawnSync("/usr/bin/time", ["-f", "TIME %e %U %S", cmd, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`${cmd} ${args.join(" ")} failed:\n${r.stderr.slice(-2000)}`);
  return { stdout: r.stdout, seconds: Number(m[1]), cpuSeconds: Number(m[2]) + Number(m[3]) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Alternates the builds `rounds` times (A B, B A, …); prints each build's median wall and CPU seconds and the ratios. */
function alternate(name, run, unit) {
  const runs = { base: [], this: [] };
  console.log(`${name}: load ${load()}`);
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? ["base", "this"] : ["this", "base"];
    for (const b of order) {
      const r = run(builds[b]);
      console.log(`  ${b.padEnd(4)} ${r.seconds.toFixed(2)} s wall, ${r.cpuSeconds.toFixed(2)} s CPU, ${(r.items / r.seconds).toFixed(0)} ${unit}/s`);
      runs[b].push(r);
    }
  }
  const m = (b) => ({ wall: median(runs[b].map((r) => r.seconds)), cpu: median(runs[b].map((r) => r.cpuSeconds)), best: Math.min(...runs[b].map((r) => r.seconds)), items: runs[b][0].items });
  const [a, t] = [m("base"), m("this")];
  const fmt = (x) => `${(x.items / x.wall).toFixed(0)} ${unit}/s median (best ${(x.items / x.best).toFixed(0)}), ${x.cpu.toFixed(2)} s CPU median`;
  console.log(`  base: ${fmt(a)}\n  this: ${fmt(t)}`);
  console.log(`  this/base: speed ${(a.wall / t.wall).toFixed(3)} (medians), ${(a.best / t.best).toFixed(3)} (best), ${(a.cpu / t.cpu).toFixed(3)} per CPU second; load after ${load()}`);
}

if (stages.includes("search")) {
  for (const mode of ["pool", "server"]) {
    alternate(`search (${mode === "pool" ? `SearchPool, ${opt.threads} threads` : "POST /api/search's path"}, ${opt.limit} queries in batches of 1,000, top ${opt.k})`, (b) => {
      const r = spawnSync(process.execPath, [SELF, "--child-search", b, opt.index, opt.queries, opt.limit, opt.k, opt.threads, mode], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(r.stderr);
      return JSON.parse(r.stdout.trim().split("\n").pop());
    }, "q");
  }
}

const pagesFile = join(opt.dir, `pages-${opt.pages}.jsonl`);
if (stages.includes("ingest") || stages.includes("passages")) {
  mkdirSync(opt.dir, { recursive: true });
  if (!existsSync(pagesFile)) {
    const { writeSyntheticKnowledgeSource, KILT_SHAPE } = await import(pathToFileURL(join(root, "dist", "src", "knowledge", "synthetic.js")).href);
    await writeSyntheticKnowledgeSource(pagesFile, { pages: Number(opt.pages), seed: 1, ...KILT_SHAPE });
  }
}
const store = (b) => join(opt.dir, `ks-${b === builds.base ? "base" : "this"}`);
if (stages.includes("ingest")) {
  alternate(`ingest (${opt.pages} synthetic pages, KILT shape)`, (b) => {
    rmSync(store(b), { recursive: true, force: true });
    return { ...timed(process.execPath, [join(b, "dist", "src", "cli", "main.js"), "ks", "ingest", pagesFile, "--out", store(b)]), items: Number(opt.pages) };
  }, "pages");
}
if (stages.includes("passages")) {
  for (const b of Object.values(builds)) if (!existsSync(store(b))) timed(process.execPath, [join(b, "dist", "src", "cli", "main.js"), "ks", "ingest", pagesFile, "--out", store(b)]);
  alternate(`passages (ks passages --table over the ${opt.pages}-page store)`, (b) => {
    const table = join(opt.dir, "table");
    rmSync(table, { recursive: true, force: true });
    return { ...timed(process.execPath, [join(b, "dist", "src", "cli", "main.js"), "ks", "passages", "--ks", store(b), "--table", table]), items: Number(opt.pages) };
  }, "pages");
}
