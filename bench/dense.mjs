// Dense retrieval benchmark (npm run bench:dense [-- vectors|squad] [--quick]).
//
// vectors: 200,000 × 384 clustered unit vectors, 1,000 queries, top 10. Anchor: a plain JavaScript loop
//   over the Float32Array on one thread (measured 13 queries/s on this machine when idle); then tartan's
//   exact search (WebAssembly SIMD kernel; 1 and 2 worker threads; batched and one query at a time) and
//   the HNSW index (hnswlib-node, M 16, efConstruction 128) at ef 64/128/256 with its recall@10 against
//   exact search. Ratios are against the anchor measured in the same run.
// squad: USE lite over the 2,067 SQuAD v1.1 dev paragraphs (title + text) and the 10,570 questions:
//   page- and paragraph-level R-precision and recall@1/5/20 (pages de-duplicated in rank order).
//
// Options: --quick (50,000 vectors, 3 SQuAD articles), --rows=N (N vectors), --no-hnsw.
// Results are printed as Markdown and written to bench/out/dense-*.json.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuS, internal, load as loadAvg, opt, OUT as outDir, SHARED, tartan } from "./lib.mjs";

const { buildDenseIndex, dense, openDense, unitsOfPage } = await tartan("retrieval");
const { normalizeRows } = dense;
const { readSquadFile, squadToPages } = await tartan("knowledge");
// The exact and HNSW searchers measured directly (the package exports their types only).
const { ExactIndex, HnswIndex } = await internal("retrieval/dense/index.js");

const { values: o, positionals: parts } = opt(
  { quick: { type: "boolean" }, rows: { type: "string" }, "no-hnsw": { type: "boolean" } },
  "usage: npm run bench:dense [-- vectors|squad] [-- --quick] [-- --rows=N] [-- --no-hnsw]",
  { positionals: true },
);
mkdirSync(outDir, { recursive: true });
const quick = Boolean(o.quick);
const noHnsw = Boolean(o["no-hnsw"]);
const run = (name) => parts.length === 0 || parts.includes(name);
const load = () => loadAvg(1);

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296 - 0.5;
  };
}

/** n unit vectors around `clusters` centres (uniform noise as wide as the centres' own spread). */
function clustered(n, dim, clusters, seed, centreSeed = 12345) {
  const rc = rng(centreSeed);
  const centres = Float32Array.from({ length: clusters * dim }, rc);
  const r = rng(seed);
  const m = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const c = Math.floor((r() + 0.5) * clusters) % clusters;
    for (let d = 0; d < dim; d++) m[i * dim + d] = centres[c * dim + d] + r();
  }
  return normalizeRows(m, dim);
}

/** The anchor: one thread, a plain loop over every row, top k kept in a sorted array. */
function plainLoop(m, dim, qs, k) {
  const n = m.length / dim;
  const out = [];
  for (let q = 0; q < qs.length / dim; q++) {
    const ids = [];
    const scores = [];
    for (let r = 0; r < n; r++) {
      let s = 0;
      for (let d = 0; d < dim; d++) s += m[r * dim + d] * qs[q * dim + d];
      if (scores.length < k || s > scores[k - 1]) {
        let i = Math.min(scores.length, k - 1);
        while (i > 0 && scores[i - 1] < s) {
          scores[i] = scores[i - 1];
          ids[i] = ids[i - 1];
          i--;
        }
        scores[i] = s;
        ids[i] = r;
      }
    }
    out.push(ids.map((unit, i) => ({ unit, score: scores[i] })));
  }
  return out;
}

function recall(approx, exact, k) {
  let found = 0;
  approx.forEach((a, q) => {
    const truth = new Set(exact[q].slice(0, k).map((h) => h.unit));
    found += a.slice(0, k).filter((h) => truth.has(h.unit)).length;
  });
  return found / (k * exact.length);
}

async function timed(fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  return { value, wall: (performance.now() - t0) / 1000, cpu: cpuS(c0) };
}

async function vectorsBench() {
  const N = o.rows ? Number(o.rows) : quick ? 50_000 : 200_000;
  const D = 384;
  const NQ = 1000;
  const K = 10;
  console.log(`## vectors: ${N} × ${D}, ${NQ} queries, top ${K} (load average ${load()})`);
  const m = clustered(N, D, 1000, 1);
  const qs = clustered(NQ, D, 1000, 2);
  const res = { N, D, NQ, K, loadStart: load() };

  const anchorQ = quick ? 10 : 40;
  const anchor = await timed(() => plainLoop(m, D, qs.subarray(0, anchorQ * D), K));
  res.plainQps = anchorQ / anchor.wall;
  console.log(`plain JS loop, 1 thread: ${res.plainQps.toFixed(1)} q/s (${anchorQ} queries)`);

  const rows = [];
  let exactHits = null;
  for (const threads of [1, 2]) {
    const ix = new ExactIndex(m, D, { threads });
    await ix.warm();
    await ix.search(qs.subarray(0, 4 * D), K);
    const batched = await timed(() => ix.search(qs, K));
    const oneQ = quick ? 20 : 50;
    const single = await timed(async () => {
      for (let q = 0; q < oneQ; q++) await ix.search(qs.subarray(q * D, (q + 1) * D), K);
    });
    exactHits ??= batched.value;
    if (threads === 2) {
      // same answers as the anchor (ids; scores differ by float32 summation only)
      const same = anchor.value.every((a, q) => a.map((h) => h.unit).join() === batched.value[q].map((h) => h.unit).join());
      res.exactMatchesPlain = same;
    }
    rows.push({ engine: `exact, WebAssembly SIMD, ${threads} worker${threads > 1 ? "s" : ""}, batch of ${NQ}`, qps: NQ / batched.wall, recall: 1 });
    rows.push({ engine: `exact, WebAssembly SIMD, ${threads} worker${threads > 1 ? "s" : ""}, one query at a time`, qps: oneQ / single.wall, recall: 1 });
    for (const r of rows.slice(-2)) console.log(`${r.engine}: ${r.qps.toFixed(1)} q/s (${(r.qps / res.plainQps).toFixed(1)}× the plain loop)`);
    await ix.close();
  }
  console.log(`exact top ${K} ids equal the plain loop's for the anchor queries: ${res.exactMatchesPlain}`);

  const efC = 128;
  if (noHnsw) {
    res.rows = rows.map((r) => ({ ...r, ratio: r.qps / res.plainQps }));
    writeFileSync(join(outDir, "dense-vectors.json"), JSON.stringify(res, null, 2));
    return;
  }
  const build = await timed(() => HnswIndex.build(m, D, { M: 16, efConstruction: efC }, (n) => n % 50000 === 0 && console.log(`  hnsw ${n}`)));
  res.hnswBuildS = build.wall;
  const hnsw = build.value;
  for (const ef of [64, 128, 256]) {
    hnsw.setEf(ef);
    hnsw.search(qs.subarray(0, 10 * D), K);
    const t = await timed(() => hnsw.search(qs, K));
    rows.push({ engine: `HNSW (hnswlib-node) M 16, efC ${efC}, ef ${ef}, 1 thread`, qps: NQ / t.wall, recall: recall(t.value, exactHits, K) });
    console.log(`${rows.at(-1).engine}: ${rows.at(-1).qps.toFixed(1)} q/s, recall@10 ${rows.at(-1).recall.toFixed(4)}`);
  }
  res.rows = rows.map((r) => ({ ...r, ratio: r.qps / res.plainQps }));
  res.loadEnd = load();
  console.log(`\n| engine | queries/s | × plain loop | recall@10 |\n|---|---|---|---|`);
  console.log(`| plain JS loop over Float32Array, 1 thread (anchor) | ${res.plainQps.toFixed(1)} | 1.0 | 1 |`);
  for (const r of res.rows) console.log(`| ${r.engine} | ${r.qps.toFixed(1)} | ${r.ratio.toFixed(1)} | ${r.recall === 1 ? "1" : r.recall.toFixed(4)} |`);
  console.log(`\nHNSW build: ${res.hnswBuildS.toFixed(1)} s (1 thread); load average at end ${res.loadEnd}`);
  writeFileSync(join(outDir, "dense-vectors.json"), JSON.stringify(res, null, 2));
}

function squadUnits(squad) {
  return squadToPages(squad).flatMap((page) => unitsOfPage(page, { unit: "paragraph" }));
}

async function squadBench() {
  const file = join(SHARED, "data", "squad", "dev-v1.1.reconstructed.json");
  const full = readSquadFile(file);
  const squad = quick ? { data: full.data.slice(0, 3) } : full;
  const units = squadUnits(squad);
  const questions = [];
  squad.data.forEach((a, ai) =>
    a.paragraphs.forEach((p, pi) => p.qas.forEach((q) => questions.push({ q: q.question, page: `squad:${a.title}`, para: pi + 1 }))),
  );
  console.log(`## squad: ${units.length} paragraphs, ${questions.length} questions, USE lite (load average ${load()})`);
  const dir = mkdtempSync(join(tmpdir(), "tartan-bench-dense-"));
  const build = await timed(() => buildDenseIndex(units, dir, { encoder: { type: "use-lite" }, unit: "paragraph", source: file }));
  console.log(`encoded and indexed ${units.length} paragraphs in ${build.wall.toFixed(1)} s (2 worker threads)`);
  const r = await openDense(dir);
  const K = 20;
  const search = await timed(() => r.searchBatch(questions.map((x) => x.q), K));
  console.log(`${questions.length} questions encoded and searched in ${search.wall.toFixed(1)} s`);
  const unitInfo = Array.from({ length: r.units.count }, (_, i) => r.units.get(i));
  const at = { page: { 1: 0, 5: 0, 20: 0 }, para: { 1: 0, 5: 0, 20: 0 } };
  search.value.forEach((hits, i) => {
    const g = questions[i];
    const paraRank = hits.findIndex((h) => unitInfo[h.unit].wikipedia_id === g.page && unitInfo[h.unit].start_paragraph_id === g.para);
    const pages = [];
    for (const h of hits) if (!pages.includes(unitInfo[h.unit].wikipedia_id)) pages.push(unitInfo[h.unit].wikipedia_id);
    const pageRank = pages.indexOf(g.page);
    for (const k of [1, 5, 20]) {
      if (paraRank >= 0 && paraRank < k) at.para[k]++;
      if (pageRank >= 0 && pageRank < k) at.page[k]++;
    }
  });
  const n = questions.length;
  const res = {
    units: units.length,
    questions: n,
    buildS: build.wall,
    searchS: search.wall,
    // one gold paragraph and one gold page per question: R-precision = precision at 1
    page: { rprec: at.page[1] / n, r1: at.page[1] / n, r5: at.page[5] / n, r20: at.page[20] / n },
    paragraph: { rprec: at.para[1] / n, r1: at.para[1] / n, r5: at.para[5] / n, r20: at.para[20] / n },
    load: load(),
  };
  await r.close();
  rmSync(dir, { recursive: true, force: true });
  const f = (x) => x.toFixed(4);
  console.log(`\n| level | R-precision | recall@1 | recall@5 | recall@20 |\n|---|---|---|---|---|`);
  for (const lvl of ["page", "paragraph"]) console.log(`| ${lvl} | ${f(res[lvl].rprec)} | ${f(res[lvl].r1)} | ${f(res[lvl].r5)} | ${f(res[lvl].r20)} |`);
  writeFileSync(join(outDir, quick ? "dense-squad-quick.json" : "dense-squad.json"), JSON.stringify(res, null, 2));
}

if (run("vectors")) await vectorsBench();
if (run("squad")) await squadBench();
