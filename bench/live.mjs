// `npm run bench:live`: live BM25 indexes (src/retrieval/bm25/live/) on a synthetic bench collection
// (src/knowledge/synthetic.ts's KILT-shaped pages, as bench/scale.mjs draws them, cut into 100-word
// passages). A base index of half the pages is built; then updates, each adding --batch pages and
// replacing a quarter as many, are applied with automatic merges off until the index has 30 segments:
//   update    documents (units) a second through `updateLiveIndex`, wall and CPU seconds;
//   queries   q/s (one thread, --queries KILT dev inputs, top --k) at 1 (the base), 10 and 30 segments,
//             and of the same live units merged into one segment (`mergeLiveIndex`): the ratio at 10
//             segments is the target (within 1.3×);
//   merge     time of the merge to one segment, and its write amplification (bytes written / bytes of
//             the live segments merged);
//   policy    the same updates on a copy with the automatic (logarithmic) merge policy: segments left,
//             bytes written by all updates / bytes of the final index (write amplification), update rate.
// Both engines of the issue (Lucene's IndexWriter) are the lucene helper's bench (bench/lucene/); this
// one measures tartan alone. Prints a JSON line per figure and appends them to bench/out/live-runs.jsonl.
//
// usage: node bench/live.mjs [--pages 20000] [--batch 200] [--queries 500] [--k 10] [--dir DIR] [--seed 1] [--keep]
import { appendFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { cpuS, load, opt, OUT, SHARED, tartan } from "./lib.mjs";

const USAGE = "usage: npm run bench:live [-- --pages 20000] [-- --batch 200] [-- --queries 500] [-- --k 10] [-- --dir DIR] [-- --seed 1] [-- --keep]";
const o = opt({ pages: { type: "string", default: "20000" }, batch: { type: "string", default: "200" }, queries: { type: "string", default: "500" }, k: { type: "string", default: "10" }, dir: { type: "string" }, seed: { type: "string", default: "1" }, keep: { type: "boolean", default: false } }, USAGE);
const PAGES = Number(o.pages);
const BATCH = Number(o.batch);
const K = Number(o.k);
const dir = o.dir ?? join(tmpdir(), `tartan-bench-live-${process.pid}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const { syntheticPages, KILT_SHAPE } = await tartan("knowledge");
const { buildIndex, openIndex, bm25 } = await tartan("retrieval");
const results = [];
const report = (r) => {
  const line = { bench: "live", ...r, load: load() };
  results.push(line);
  console.log(JSON.stringify(line));
};

// The collection: PAGES pages; the base is the first half, the updates add from the second half and
// replace (an edited copy: the paragraphs reversed) pages of the first half.
const pages = [...syntheticPages({ pages: PAGES, seed: Number(o.seed), ...KILT_SHAPE })];
const write = (name, list) => {
  const f = join(dir, name);
  writeFileSync(f, list.map((p) => `${JSON.stringify(p)}\n`).join(""));
  return f;
};
const half = Math.floor(PAGES / 2);
const base = join(dir, "index");
let t = performance.now();
let c = process.cpuUsage();
await buildIndex({ pages: write("base.jsonl", pages.slice(0, half)), kind: "bm25", unit: "passage", out: base }, () => {});
report({ figure: "base build", pages: half, seconds: (performance.now() - t) / 1000, cpu: cpuS(c) });

// Queries: KILT dev inputs (HotpotQA, then Wizard of Wikipedia), markers stripped.
const queries = [];
for (const f of ["hotpotqa-dev-kilt.jsonl", "wow-dev-kilt.jsonl"]) {
  const path = join(SHARED, "data", "kilt-dev", f);
  if (!existsSync(path)) continue;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (queries.length >= Number(o.queries) || line === "") break;
    queries.push(JSON.parse(line).input.replace(/\[(START|END)_ENT\]/g, " "));
  }
}
if (queries.length === 0) throw new Error(`no queries: ${join(SHARED, "data", "kilt-dev")} is missing`);

async function qps(at, label) {
  const r = await openIndex(at);
  try {
    for (const q of queries.slice(0, 50)) await r.search(q, K); // warm
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (const q of queries) await r.search(q, K);
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuS(c0);
    const m = r.manifest.params.live;
    report({ figure: "queries", index: label, segments: m?.segments ?? 1, units: m?.units ?? r.manifest.units, queries: queries.length, k: K, qps: queries.length / wall, qpsCpu: queries.length / cpu });
    return queries.length / cpu;
  } finally {
    await r.close();
  }
}

const updates = [];
let next = half;
let rep = 0;
for (let u = 0; u < 29; u++) {
  const add = pages.slice(next, next + BATCH);
  next += BATCH;
  const replace = pages.slice(rep, rep + Math.floor(BATCH / 4)).map((p) => ({ ...p, text: [p.text[0], ...p.text.slice(1).reverse()] }));
  rep += Math.floor(BATCH / 4);
  updates.push({ add: write(`add-${u}.jsonl`, add), replace: write(`replace-${u}.jsonl`, replace) });
}
const q1 = await qps(base, "1 segment (base)");
const policyDir = join(dir, "policy");
cpSync(base, policyDir, { recursive: true });

let units = 0;
let wall = 0;
let cpu = 0;
let q10 = 0;
let q30 = 0;
for (let u = 0; u < updates.length; u++) {
  t = performance.now();
  c = process.cpuUsage();
  const r = await bm25.updateLiveIndex(base, updates[u], { mergePolicy: false, log: () => {} });
  wall += (performance.now() - t) / 1000;
  cpu += cpuS(c);
  units += r.unitsAdded;
  if (r.segments === 10) q10 = await qps(base, "10 segments");
}
report({ figure: "update", policy: "none", updates: updates.length, unitsAdded: units, seconds: wall, cpu, docsPerS: units / wall, docsPerCpuS: units / cpu });
q30 = await qps(base, "30 segments");
t = performance.now();
c = process.cpuUsage();
const m = await bm25.mergeLiveIndex(base, { log: () => {} });
const mergeWall = (performance.now() - t) / 1000;
const merged = JSON.parse(readFileSync(join(base, "manifest.json"), "utf8"));
report({ figure: "merge", from: 30, seconds: mergeWall, cpu: cpuS(c), bytesWritten: m.bytesWritten, units: merged.params.live.units });
const qm = await qps(base, "merged (1 segment, same live units)");
report({ figure: "ratio", at10: qm / q10, at30: qm / q30, base: q1 / qm, target: "merged / 10 segments ≤ 1.3", pass: qm / q10 <= 1.3 });

// The automatic policy.
let written = 0;
wall = 0;
cpu = 0;
let segments = 0;
for (const up of updates) {
  t = performance.now();
  c = process.cpuUsage();
  const r = await bm25.updateLiveIndex(policyDir, up, { log: () => {} });
  wall += (performance.now() - t) / 1000;
  cpu += cpuS(c);
  written += r.bytesWritten;
  segments = r.segments;
}
const live = JSON.parse(readFileSync(join(policyDir, "live", `commit-${String(updates.length).padStart(6, "0")}.json`), "utf8"));
let finalBytes = 0;
for (const s of live.segments) {
  const sdir = s.name === "." ? policyDir : join(policyDir, "live", s.name);
  const sm = JSON.parse(readFileSync(s.name === "." ? join(policyDir, "live", "root.manifest.json") : join(sdir, "manifest.json"), "utf8"));
  finalBytes += sm.files.reduce((n, f) => n + f.bytes, 0);
}
report({ figure: "update", policy: "log (factor 10, floor 1000)", updates: updates.length, unitsAdded: units, seconds: wall, cpu, docsPerS: units / wall, segments, bytesWritten: written, finalBytes, writeAmplification: written / finalBytes });

mkdirSync(OUT, { recursive: true });
appendFileSync(join(OUT, "live-runs.jsonl"), results.map((r) => `${JSON.stringify({ ...r, pages: PAGES, batch: BATCH, date: new Date().toISOString() })}\n`).join(""));
if (!o.keep) rmSync(dir, { recursive: true, force: true });
