// `npm run bench:retrieval`: tartan's BM25 against Lucene 8.7 (Debian's liblucene8-java, which
// bench/lucene/lucene.mjs names when missing and never installs) on the same units, analyzers and
// queries, one thread each:
//   synthetic: 200,000 passages of ~100 words from a Zipfian vocabulary of 100,000 words, 1,000 queries
//              of 5-10 words (deterministic, seed 1);
//   squad:     the 2,067 SQuAD v1.1 dev paragraphs (title + text) and the 10,570 questions, with
//              page- and paragraph-level R-precision and recall@1/5/20 for both engines.
// Prints build and query times (CPU seconds of the whole process, all threads, and wall seconds), their
// ratios, top-10 overlap and index sizes; runs are alternated and the best of the repeats (by CPU time)
// is kept. Writes bench/out/retrieval/results.json.
//
// usage: node bench/retrieval.mjs [--corpus synthetic,squad] [--analyzers english,lowercase]
//          [--docs 200000] [--queries 1000] [--repeats 3] [--build-repeats 2]
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync, readFileSync, rmSync, existsSync, statSync, readdirSync, createWriteStream } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileLucene, luceneClasspath, luceneVersion } from "./lucene/lucene.mjs";
import { cpuS, load, opt as parseOptions, OUT as BENCH_OUT, SHARED, tartan } from "./lib.mjs";
import { synthetic } from "./synthetic.mjs";

const OUT = join(BENCH_OUT, "retrieval");

// ---------------------------------------------------------------------------------------------------
// Child modes: a build or a search in a fresh process, so its time and memory are its own.

if (process.argv[2] === "--child-build") {
  const [, , , unitsFile, outDir, analyzer, title] = process.argv;
  const { buildBm25Index } = await tartan("retrieval");
  const { readJsonl } = await tartan("records");
  async function* units() {
    for await (const item of readJsonl(unitsFile)) yield item.value;
  }
  rmSync(outDir, { recursive: true, force: true });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const stats = await buildBm25Index(units(), outDir, { analyzer, title: title === "true", unit: "passage", source: unitsFile });
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ seconds, cpuSeconds: cpuS(c0), stats, maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
  process.exit(0);
}

if (process.argv[2] === "--child-search") {
  const [, , , indexDir, queriesFile, k, repeats, resultsFile] = process.argv;
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const { openBm25 } = await tartan("retrieval");
  const r = await openBm25(indexDir);
  const openSeconds = (performance.now() - t0) / 1000;
  const rssOpen = process.memoryUsage().rss;
  const queries = readFileSync(queriesFile, "utf8").split("\n").slice(0, -1).map(unescape);
  const kk = Number(k);
  let results = queries.map((q) => r.searcher.search(q, kk)); // warm-up
  let best = Infinity;
  let bestCpu = Infinity;
  for (let rep = 0; rep < Number(repeats); rep++) {
    const c = process.cpuUsage();
    const s = performance.now();
    results = queries.map((q) => r.searcher.search(q, kk));
    best = Math.min(best, (performance.now() - s) / 1000);
    bestCpu = Math.min(bestCpu, cpuS(c));
  }
  writeFileSync(resultsFile, results.map((hits) => hits.map((h) => `${h.unit}:${h.score}`).join(" ")).join("\n") + "\n");
  const indexBytes = readdirSync(indexDir).reduce((s, f) => s + statSync(join(indexDir, f)).size, 0);
  const bm25Bytes = readdirSync(indexDir).filter((f) => f.startsWith("bm25.")).reduce((s, f) => s + statSync(join(indexDir, f)).size, 0);
  console.log(JSON.stringify({ queries: queries.length, seconds: best, qps: queries.length / best, cpuSeconds: bestCpu, cpuQps: queries.length / bestCpu, openSeconds, indexBytes, bm25Bytes, rssAfterOpenBytes: rssOpen, rssGrowthOnOpenBytes: rssOpen - rss0, maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
  await r.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------

function escape(s) {
  return s.replace(/\\/g, "\\\\").replace(/\r\n|\r|\n/g, "\\n");
}
function unescape(s) {
  return s.replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
}

/** SQuAD v1.1 dev: paragraph units (KILT provenance) and the questions with their gold page and paragraph. */
async function squad() {
  const { readSquadFile, squadToPages, squadQuestionsToKilt } = await tartan("knowledge");
  const { unitsOfPage } = await tartan("retrieval");
  const file = join(SHARED, "data", "squad", "dev-v1.1.reconstructed.json");
  const data = readSquadFile(file);
  const pages = squadToPages(data);
  const units = pages.flatMap((page) => unitsOfPage(page, { unit: "paragraph" }));
  const { records } = squadQuestionsToKilt(data, { pages });
  const queries = records.map((r) => r.input);
  const gold = records.map((r) => {
    const prov = r.output.flatMap((o) => o.provenance ?? []);
    return { pages: new Set(prov.map((p) => p.wikipedia_id)), paragraphs: new Set(prov.map((p) => `${p.wikipedia_id}#${p.start_paragraph_id}`)) };
  });
  return { units, queries, gold };
}

async function writeLines(file, lines) {
  const out = createWriteStream(file);
  for (const l of lines) if (!out.write(l + "\n")) await once(out, "drain");
  out.end();
  await once(out, "close");
}

function runJson(cmd, args, options = {}) {
  // /usr/bin/time reports the child's peak RSS (KB) on stderr.
  const timed = existsSync("/usr/bin/time");
  const r = timed
    ? spawnSync("/usr/bin/time", ["-f", "TIME_MAXRSS_KB %M", cmd, ...args], { maxBuffer: 1 << 28, ...options })
    : spawnSync(cmd, args, { maxBuffer: 1 << 28, ...options });
  const stderr = r.stderr.toString();
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}):\n${stderr}`);
  const lines = r.stdout.toString().trim().split("\n");
  const json = JSON.parse(lines[lines.length - 1]);
  const m = /TIME_MAXRSS_KB (\d+)/.exec(stderr);
  if (m) json.processMaxRssBytes = Number(m[1]) * 1024;
  return json;
}

function parseResults(file) {
  return readFileSync(file, "utf8")
    .split("\n")
    .slice(0, -1)
    .map((line) =>
      line === ""
        ? []
        : line.split(" ").map((x) => {
            const [u, s] = x.split(":");
            return { unit: Number(u), score: Math.fround(Number(s)) };
          }),
    );
}

/** Top-k agreement: mean overlap of the unit sets, lists identical in order, largest score difference. */
function compare(a, b, k = 10) {
  let overlap = 0;
  let identical = 0;
  let identicalScores = 0;
  let maxScoreDiff = 0;
  let tieOnlyDifferences = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i].slice(0, k);
    const y = b[i].slice(0, k);
    const ys = new Set(y.map((h) => h.unit));
    const common = x.filter((h) => ys.has(h.unit)).length;
    overlap += Math.max(x.length, y.length) === 0 ? 1 : common / Math.max(x.length, y.length);
    if (x.length === y.length && x.every((h, j) => h.unit === y[j].unit)) identical++;
    if (x.length === y.length && x.every((h, j) => h.score === y[j].score)) identicalScores++;
    else if (common < Math.max(x.length, y.length)) {
      // Differences only among units tied with the k-th score?
      const last = Math.min(x.length, y.length) - 1;
      if (last >= 0 && x[last].score === y[last].score) tieOnlyDifferences++;
    }
    for (let j = 0; j < Math.min(x.length, y.length); j++) maxScoreDiff = Math.max(maxScoreDiff, Math.abs(x[j].score - y[j].score));
  }
  return { overlap: overlap / a.length, identicalOrder: identical / a.length, identicalScores: identicalScores / a.length, tieOnlyDifferences, maxScoreDiff };
}

/** KILT-style retrieval quality with one gold page/paragraph set per question. */
function quality(results, gold, units) {
  const ks = [1, 5, 20];
  const acc = { page: { rprec: 0, r: Object.fromEntries(ks.map((k) => [k, 0])) }, paragraph: { rprec: 0, r: Object.fromEntries(ks.map((k) => [k, 0])) } };
  for (let i = 0; i < results.length; i++) {
    const g = gold[i];
    const pageIds = [];
    const paraIds = [];
    const seenPages = new Set();
    for (const h of results[i]) {
      const u = units[h.unit];
      paraIds.push(`${u.wikipedia_id}#${u.start_paragraph_id}`);
      if (!seenPages.has(u.wikipedia_id)) {
        seenPages.add(u.wikipedia_id);
        pageIds.push(u.wikipedia_id);
      }
    }
    for (const [level, ids, set] of [["page", pageIds, g.pages], ["paragraph", paraIds, g.paragraphs]]) {
      const R = set.size;
      acc[level].rprec += ids.slice(0, R).filter((x) => set.has(x)).length / R;
      for (const k of ks) acc[level].r[k] += ids.slice(0, k).some((x) => set.has(x)) ? 1 : 0;
    }
  }
  const n = results.length;
  const fmt = (x) => Number((x / n).toFixed(4));
  return Object.fromEntries(
    Object.entries(acc).map(([level, v]) => [level, { rprec: fmt(v.rprec), ...Object.fromEntries(ks.map((k) => [`recall@${k}`, fmt(v.r[k])])) }]),
  );
}

// ---------------------------------------------------------------------------------------------------

const opt = parseOptions(
  {
    corpus: { type: "string", default: "synthetic,squad" },
    analyzers: { type: "string", default: "english,lowercase" },
    docs: { type: "string", default: "200000" },
    queries: { type: "string", default: "1000" },
    repeats: { type: "string", default: "3" },
    "build-repeats": { type: "string", default: "2" },
  },
  "usage: npm run bench:retrieval [-- --corpus synthetic,squad] [-- --analyzers english,lowercase] [-- --docs 200000] [-- --queries 1000] [-- --repeats 3] [-- --build-repeats 2]",
);
const K1 = 0.9;
const B = 0.4;
const repeats = Number(opt.repeats);
const buildRepeats = Number(opt["build-repeats"]);
const classpath = `${luceneClasspath()}:${compileLucene()}`;
const java = ["-Xms2g", "-Xmx8g", "-cp", classpath];
mkdirSync(OUT, { recursive: true });
const report = { lucene: luceneVersion(), java: spawnSync("java", ["-version"]).stderr.toString().split("\n")[0], node: process.version, date: new Date().toISOString(), loadavg: load(), runs: [] };
const ratio = (x) => Number(x.toFixed(2));
const mb = (x) => `${(x / 1e6).toFixed(1)} MB`;

for (const corpusName of opt.corpus.split(",")) {
  const corpus = corpusName === "synthetic" ? synthetic(Number(opt.docs), Number(opt.queries)) : await squad();
  const title = corpusName === "squad";
  const dir = join(OUT, corpusName);
  mkdirSync(dir, { recursive: true });
  const unitsFile = join(dir, "units.jsonl");
  const docsFile = join(dir, "docs.txt");
  const queriesFile = join(dir, "queries.txt");
  await writeLines(unitsFile, corpus.units.map((u) => JSON.stringify(u)));
  await writeLines(docsFile, corpus.units.map((u) => escape(title ? `${u.wikipedia_title}\n${u.text}` : u.text)));
  await writeLines(queriesFile, corpus.queries.map(escape));
  console.log(`\n== ${corpusName}: ${corpus.units.length} units, ${corpus.queries.length} queries`);

  for (const analyzer of opt.analyzers.split(",")) {
    const tIndex = join(dir, `tartan-${analyzer}`);
    const lIndex = join(dir, `lucene-${analyzer}`);
    let tBuild = null;
    let lBuild = null;
    for (let rep = 0; rep < buildRepeats; rep++) {
      rmSync(lIndex, { recursive: true, force: true });
      const l = runJson("java", [...java, "Bm25Bench", "index", analyzer, docsFile, lIndex, String(K1), String(B)]);
      if (!lBuild || l.cpuSeconds < lBuild.cpuSeconds) lBuild = l;
      const t = runJson(process.execPath, [fileURLToPath(import.meta.url), "--child-build", unitsFile, tIndex, analyzer, String(title)]);
      if (!tBuild || t.cpuSeconds < tBuild.cpuSeconds) tBuild = t;
    }
    const k = 10;
    const tRes = join(dir, `tartan-${analyzer}.tsv`);
    const lRes = join(dir, `lucene-${analyzer}.tsv`);
    let tSearch = null;
    let lSearch = null;
    for (let rep = 0; rep < 2; rep++) {
      const l = runJson("java", [...java, "Bm25Bench", "search", analyzer, lIndex, queriesFile, String(k), String(repeats), lRes, String(K1), String(B)]);
      if (!lSearch || l.cpuQps > lSearch.cpuQps) lSearch = l;
      const t = runJson(process.execPath, [fileURLToPath(import.meta.url), "--child-search", tIndex, queriesFile, String(k), String(repeats), tRes]);
      if (!tSearch || t.cpuQps > tSearch.cpuQps) tSearch = t;
    }
    const agreement = compare(parseResults(tRes), parseResults(lRes), k);
    const run = {
      corpus: corpusName,
      analyzer,
      units: corpus.units.length,
      queries: corpus.queries.length,
      tartan: { build: tBuild, search: tSearch },
      lucene: { build: lBuild, search: lSearch },
      ratios: {
        cpuQps: ratio(tSearch.cpuQps / lSearch.cpuQps),
        qps: ratio(tSearch.qps / lSearch.qps),
        buildCpu: ratio(tBuild.cpuSeconds / lBuild.cpuSeconds),
        buildTime: ratio(tBuild.seconds / lBuild.seconds),
        // The BM25 files (bm25.*: dictionary, postings, norms) against Lucene's index directory; the unit
        // store (texts and provenance, read one unit at a time) is reported apart.
        indexBytes: ratio(tSearch.bm25Bytes / lSearch.indexBytes),
      },
      agreement,
    };
    if (corpus.gold) {
      // Quality from deeper rankings (100 paragraphs), for both engines.
      const tq = join(dir, `tartan-${analyzer}-100.tsv`);
      const lq = join(dir, `lucene-${analyzer}-100.tsv`);
      runJson(process.execPath, [fileURLToPath(import.meta.url), "--child-search", tIndex, queriesFile, "100", "0", tq]);
      runJson("java", [...java, "Bm25Bench", "search", analyzer, lIndex, queriesFile, "100", "0", lq, String(K1), String(B)]);
      const tr = parseResults(tq);
      const lr = parseResults(lq);
      run.quality = { tartan: quality(tr, corpus.gold, corpus.units), lucene: quality(lr, corpus.gold, corpus.units) };
      run.agreement100 = compare(tr, lr, 100);
    }
    report.runs.push(run);
    console.log(
      `${analyzer}: build CPU tartan ${tBuild.cpuSeconds.toFixed(2)} s vs Lucene ${lBuild.cpuSeconds.toFixed(2)} s (ratio ${run.ratios.buildCpu}; wall ${tBuild.seconds.toFixed(2)} vs ${lBuild.seconds.toFixed(2)} s, ratio ${run.ratios.buildTime}); ` +
        `queries per CPU second tartan ${tSearch.cpuQps.toFixed(0)} vs Lucene ${lSearch.cpuQps.toFixed(0)} (ratio ${run.ratios.cpuQps}; per wall second ${tSearch.qps.toFixed(0)} vs ${lSearch.qps.toFixed(0)}, ratio ${run.ratios.qps}); ` +
        `top-${k} overlap ${agreement.overlap.toFixed(4)}, identical order ${agreement.identicalOrder.toFixed(4)}, identical scores ${agreement.identicalScores.toFixed(4)}, max score diff ${agreement.maxScoreDiff}; ` +
        `index ${mb(tSearch.bm25Bytes)} (+ units ${mb(tSearch.indexBytes - tSearch.bm25Bytes)}) vs Lucene ${mb(lSearch.indexBytes)}; open ${tSearch.openSeconds.toFixed(3)} s vs ${lSearch.openSeconds.toFixed(3)} s; ` +
        `peak RSS build ${mb(tBuild.processMaxRssBytes ?? tBuild.maxRssBytes)} vs ${mb(lBuild.processMaxRssBytes ?? 0)}, search ${mb(tSearch.processMaxRssBytes ?? tSearch.maxRssBytes)} vs ${mb(lSearch.processMaxRssBytes ?? 0)}`,
    );
    if (run.quality) console.log(`  quality tartan ${JSON.stringify(run.quality.tartan)}\n  quality Lucene ${JSON.stringify(run.quality.lucene)}`);
  }
}
writeFileSync(join(OUT, "results.json"), JSON.stringify(report, null, 2) + "\n");
console.log(`\nwritten ${join(OUT, "results.json")}`);
