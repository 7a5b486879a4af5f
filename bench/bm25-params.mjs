// bench:bm25-params: BM25's k1 and b at search time (issue 37 §7, src/retrieval/bm25/search-params.ts)
// against Lucene 8 built with them, and their cost, in one run. One tartan index built with the defaults
// (k1 0.9, b 0.4) is searched at each setting of --params; for each setting Lucene 8.7 (Debian's
// liblucene8-java, bench/lucene/Bm25Bench.java) indexes the same texts (title + "\n" + text, EnglishAnalyzer)
// with BM25Similarity(k1, b) and searches with it. Measured per setting:
//   - rankings: every query's top k from tartan at that setting against Lucene's (units, order and float32
//     scores; both break ties to the lower unit), counted identical, differing only among equal scores, or
//     differing;
//   - speed: one-thread passes over the queries, timed in alternation (--rounds rounds, the order rotated
//     each round, every engine warmed by a pass first): tartan at the build's parameters, tartan at the
//     setting, Lucene at the setting. Target: tartan at a setting within 1.5× of tartan at the build's
//     parameters (q/s at least two thirds of it).
// Collections: --collection squad (SQuAD v1.1 dev's 2,067 paragraphs and all 10,570 questions, from
// ../shared/data/squad) or --collection synthetic --pages N (KILT-shaped pages through bench/scale.mjs's
// ingest, passages and index stages, with its KILT dev queries: HotpotQA and Wizard of Wikipedia inputs).
//   npm run bench:bm25-params -- [--collection squad|synthetic] [--pages 20000] [--queries-limit 2000]
//        [--params "k1=1.2,b=0.75;k1=2,b=1;k1=0.5,b=0.1"] [--k 100] [--rounds 3] [--dir DIR] [--reuse]

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { OUT, SHARED, cpuS, internal, load, opt, tartan } from "./lib.mjs";
import { compileLucene, luceneClasspath, luceneVersion } from "./lucene/lucene.mjs";

const SELF = fileURLToPath(import.meta.url);
const esc = (s) => s.replace(/\\/g, "\\\\").replace(/\r\n|\r|\n/g, "\\n");

// ---------------------------------------------------------------------------------------------------
// Child: tartan's searches at any k1 and b, on stdin commands ("run K1 B", "dump K1 B FILE"; "- -" = the
// index's own), one JSON line each.
if (process.argv[2] === "--child-serve") {
  const [, , , indexDir, queriesFile, k] = process.argv;
  const { Bm25Retriever } = await internal("retrieval/bm25/search.js");
  const queries = JSON.parse(readFileSync(queriesFile, "utf8"));
  const kk = Number(k);
  const r = new Bm25Retriever(indexDir);
  const params = (k1, b) => (k1 === "-" ? undefined : { k1: Number(k1), b: Number(b) });
  const reply = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
  reply({ ready: true });
  for await (const line of createInterface({ input: process.stdin })) {
    const [cmd, k1, b, file] = line.trim().split(" ");
    const p = params(k1, b);
    if (cmd === "warm") {
      for (const q of queries) r.searcher.search(q, kk, p);
      reply({ warm: true });
    } else if (cmd === "run") {
      let hits = 0;
      const scored = r.searcher.stats.scored;
      const c0 = process.cpuUsage();
      const s0 = performance.now();
      for (const q of queries) hits += r.searcher.search(q, kk, p).length;
      reply({ seconds: (performance.now() - s0) / 1000, cpuSeconds: cpuS(c0), hits, scored: r.searcher.stats.scored - scored });
    } else if (cmd === "dump") {
      writeFileSync(file, queries.map((q) => r.searcher.search(q, kk, p).map((h) => `${h.unit}:${h.score}`).join(" ")).join("\n") + "\n");
      reply({ dumped: true });
    }
  }
  await r.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------
const USAGE =
  'npm run bench:bm25-params -- [--collection squad|synthetic] [--pages 20000] [--queries-limit 2000] [--params "k1=1.2,b=0.75;k1=2,b=1;k1=0.5,b=0.1"] [--k 100] [--rounds 3] [--dir DIR] [--reuse]';
const o = opt(
  {
    collection: { type: "string", default: "squad" },
    pages: { type: "string", default: "20000" },
    "queries-limit": { type: "string", default: "2000" },
    params: { type: "string", default: "k1=1.2,b=0.75;k1=2,b=1;k1=0.5,b=0.1" },
    k: { type: "string", default: "100" },
    rounds: { type: "string", default: "3" },
    dir: { type: "string" },
    reuse: { type: "boolean", default: false },
  },
  USAGE,
);
const K = Number(o.k);
const ROUNDS = Number(o.rounds);
if (!["squad", "synthetic"].includes(o.collection)) throw new Error(`--collection must be squad or synthetic, not ${o.collection}`);
const DIR = o.dir ?? join(OUT, o.collection === "squad" ? "bm25-params-squad" : `bm25-params-${o.pages}`);
const index = join(DIR, "bm25");
const queriesJson = join(DIR, "queries.json");
const queriesTxt = join(DIR, "queries.txt");
const docsTxt = join(DIR, "lucene-docs.txt");
const { parseBm25Params } = await internal("retrieval/bm25/search-params.js");
const settings = o.params.split(";").map((s) => ({ label: s.trim(), ...parseBm25Params(s, "--params") }));
const report = { date: new Date().toISOString(), commit: spawnSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim(), collection: o.collection, k: K, rounds: ROUNDS, loads: [] };
const save = () => writeFileSync(join(DIR, "results.json"), `${JSON.stringify(report, null, 2)}\n`);
const reuse = o.reuse && existsSync(join(index, "manifest.json")) && existsSync(docsTxt) && existsSync(queriesJson);
if (!reuse) rmSync(DIR, { recursive: true, force: true });
mkdirSync(DIR, { recursive: true });
console.log(`load ${load()}`);
const classpath = `${luceneClasspath()}:${compileLucene()}`;
const java = ["-Xms1g", "-Xmx3g", "-cp", classpath];

// 1. The collection, tartan's default-built index, Lucene's input.
if (!reuse) {
  const t0 = performance.now();
  if (o.collection === "squad") {
    const { fromSquad, convertSquad } = await internal("knowledge/build.js");
    const { buildIndex } = await internal("retrieval/build.js");
    const { readJsonlAll } = await tartan("records");
    const v11 = join(SHARED, "data", "squad", "dev-v1.1.reconstructed.json");
    const quiet = () => {};
    await fromSquad(v11, join(DIR, "pages.jsonl"), quiet);
    await convertSquad(v11, { out: join(DIR, "questions.jsonl") }, quiet);
    await buildIndex({ pages: join(DIR, "pages.jsonl"), kind: "bm25", unit: "paragraph", out: index }, quiet);
    writeFileSync(queriesJson, JSON.stringify((await readJsonlAll(join(DIR, "questions.jsonl"))).map((r) => r.input)));
    const { Bm25Retriever } = await internal("retrieval/bm25/search.js");
    const { bm25IndexedText } = await internal("retrieval/bm25/build.js");
    const r = new Bm25Retriever(index);
    const lines = [];
    for (let i = 0; i < r.units.count; i++) lines.push(esc(bm25IndexedText(r.units.get(i), r.searcher.params)));
    await r.close();
    writeFileSync(docsTxt, lines.join("\n") + "\n");
  } else {
    // bench/scale.mjs's ingest, passages and index stages and its queries; its own query timing is not used here.
    const s = spawnSync(process.execPath, [join(SELF, "..", "scale.mjs"), "--pages", o.pages, "--dir", DIR, "--lucene", "no", "--stages", "ingest,passages,index,queries", "--queries-limit", o["queries-limit"], "--threads", "1"], { stdio: ["ignore", "inherit", "inherit"] });
    if (s.status !== 0) throw new Error(`bench/scale.mjs failed (${s.status})`);
    const d = spawnSync(process.execPath, [join(SELF, "..", "scale.mjs"), "--child-docs", join(DIR, "passages"), docsTxt], { stdio: ["ignore", "inherit", "inherit"] });
    if (d.status !== 0) throw new Error(`exporting Lucene's input failed (${d.status})`);
  }
  console.log(`collection and tartan's index in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
const queries = JSON.parse(readFileSync(queriesJson, "utf8"));
writeFileSync(queriesTxt, queries.map(esc).join("\n") + "\n");
const manifest = JSON.parse(readFileSync(join(index, "manifest.json"), "utf8"));
report.index = { units: manifest.units, k1: manifest.params.k1, b: manifest.params.b, analyzer: manifest.params.analyzer };
report.queries = queries.length;
console.log(`${manifest.units} units (index built with k1 ${manifest.params.k1}, b ${manifest.params.b}, ${manifest.params.analyzer}), ${queries.length} queries, top ${K}, Lucene ${luceneVersion()}`);

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

// 2. Per setting: Lucene built with it; rankings; speed in alternation.
const T = server("tartan", process.execPath, [SELF, "--child-serve", index, queriesJson, String(K)]);
await T.next();
await T.ask("warm - -");
report.settings = [];
const all = [{ label: `k1=${manifest.params.k1},b=${manifest.params.b} (the build's)`, k1: manifest.params.k1, b: manifest.params.b, own: true }, ...settings];
for (const s of all) {
  report.loads.push({ stage: s.label, load: load() });
  const k1 = s.k1 ?? manifest.params.k1;
  const b = s.b ?? manifest.params.b;
  const lIndex = join(DIR, `lucene-k1=${k1}-b=${b}`);
  rmSync(lIndex, { recursive: true, force: true });
  const build = spawnSync("java", [...java, "Bm25Bench", "index", manifest.params.analyzer, docsTxt, lIndex, String(k1), String(b)], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (build.status !== 0) throw new Error(`Lucene's build at ${s.label} failed (${build.status})`);
  const tFile = join(DIR, `tartan-k1=${k1}-b=${b}-top${K}.tsv`);
  const lFile = join(DIR, `lucene-k1=${k1}-b=${b}-top${K}.tsv`);
  const tp = s.own ? "- -" : `${k1} ${b}`;
  await T.ask(`dump ${tp} ${tFile}`);
  const L = server("lucene", "java", [...java, "Bm25Bench", "serve", manifest.params.analyzer, lIndex, queriesTxt, String(K), String(k1), String(b)]);
  await L.next();
  // Lucene's rankings through Bm25Bench search (its serve mode only times).
  const ls = spawnSync("java", [...java, "Bm25Bench", "search", manifest.params.analyzer, lIndex, queriesTxt, String(K), "0", lFile, String(k1), String(b)], { stdio: ["ignore", "ignore", "inherit"] });
  if (ls.status !== 0) throw new Error(`Lucene's search at ${s.label} failed (${ls.status})`);
  const agreement = compare(parseResults(tFile), parseResults(lFile));
  await T.ask(`warm ${tp}`);
  const engines = [
    ["tartan (build's k1, b)", () => T.ask("run - -")],
    [`tartan (${s.label})`, () => T.ask(`run ${tp}`)],
    [`Lucene (${s.label})`, () => L.ask("run")],
  ];
  const passes = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (let j = 0; j < engines.length; j++) {
      const [name, run] = engines[(j + r) % engines.length];
      passes.push({ engine: name, ...(await run()) });
    }
  }
  await L.close();
  const sum = (name) => {
    const ps = passes.filter((p) => p.engine === name);
    const seconds = ps.reduce((a, p) => a + p.seconds, 0);
    const cpu = ps.reduce((a, p) => a + p.cpuSeconds, 0);
    return { qps: (queries.length * ps.length) / seconds, cpuQps: (queries.length * ps.length) / cpu, scored: ps[0].scored };
  };
  const [own, at, lucene] = engines.map(([name]) => sum(name));
  const row = { label: s.label, k1, b, agreement, tartanOwn: own, tartanAt: at, lucene, slowdown: own.qps / at.qps, cpuSlowdown: own.cpuQps / at.cpuQps, vsLucene: at.qps / lucene.qps, passes };
  report.settings.push(row);
  save();
  const a = agreement;
  console.log(
    `${s.label}: top ${K} identical to Lucene's for ${a.identical}/${a.queries}${a.tieOnly ? ` (+${a.tieOnly} only among equal scores)` : ""}${a.identical + a.tieOnly < a.queries ? `, max score diff ${a.maxScoreDiff}, first differing ${a.firstDiffering.join(",")}` : ""}; ` +
      `tartan ${at.qps.toFixed(1)} q/s (${at.cpuQps.toFixed(1)} per CPU-s; postings scored ${at.scored}) against ${own.qps.toFixed(1)} (${own.cpuQps.toFixed(1)}; ${own.scored}) at the build's: ${row.slowdown.toFixed(2)}× the time (CPU ${row.cpuSlowdown.toFixed(2)}×); ` +
      `Lucene ${lucene.qps.toFixed(1)} q/s (${lucene.cpuQps.toFixed(1)} per CPU-s): tartan/Lucene ${row.vsLucene.toFixed(2)} [load ${load(1, "/")}]`,
  );
}
await T.close();

// 3. Targets.
const targets = [];
for (const r of report.settings) {
  targets.push({ name: `${r.label}: top ${K} identical to Lucene built with it, every query`, pass: r.agreement.identical === r.agreement.queries, detail: `${r.agreement.identical}/${r.agreement.queries}` });
  if (!all.find((s) => s.label === r.label).own) targets.push({ name: `${r.label}: query time within 1.5× of the build's parameters`, pass: r.slowdown <= 1.5, detail: `${r.slowdown.toFixed(2)}× (CPU ${r.cpuSlowdown.toFixed(2)}×)` });
}
report.targets = targets;
console.log("\ntargets:");
for (const x of targets) console.log(`  ${x.pass ? "PASS" : "MISS"}  ${x.name}: ${x.detail}`);
save();
console.log(`written ${join(DIR, "results.json")}`);
