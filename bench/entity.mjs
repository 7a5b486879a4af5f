// `npm run bench:entity -- --index DIR`: the entity retriever at size. Opens an entity index (built with
// `tartan index build --kind entity`) and measures the open (wall and CPU seconds, RSS before and after),
// then answers the 8,654 inputs of ../shared/data/kilt-dev/ (HotpotQA 5,600, Wizard of Wikipedia 3,054;
// given as they are: the entity retriever reads `[START_ENT]` markers itself) on one thread, top 10:
// queries per second and per CPU second, p50/p99 latency, peak RSS. The rankings' SHA-256 (query number,
// unit, score per hit) is printed so two builds of tartan can be compared for identical rankings, and
// `--out FILE` writes them. The anchor is another tartan version in the same run: `--anchor-dist DIR`
// (its compiled `dist/`, e.g. a `git worktree` of an older commit after `npm run build`) opens
// `--anchor-index DIR` (an index that version built) first, in a process of its own, and the ratios
// are printed (docs/benchmarks.md "At KILT's size").
//
// usage: node bench/entity.mjs --index DIR [--k 10] [--limit N] [--out rankings.tsv]
//                              [--anchor-dist DIR --anchor-index DIR] [--dist DIR]
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cpuS, load as loadAvg, opt as parseOptions, peakMiB as peak, ROOT, rssMiB as rss, SHARED, tartan } from "./lib.mjs";

const USAGE = "usage: npm run bench:entity -- --index DIR [--k 10] [--limit N] [--out rankings.tsv] [--anchor-dist DIR --anchor-index DIR] [--dist DIR]";
const opt = parseOptions(
  {
    index: { type: "string" },
    k: { type: "string", default: "10" },
    limit: { type: "string" },
    out: { type: "string" },
    dist: { type: "string" },
    "anchor-dist": { type: "string" },
    "anchor-index": { type: "string" },
  },
  USAGE,
);
if (!opt.index || Boolean(opt["anchor-dist"]) !== Boolean(opt["anchor-index"])) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

// The anchor first, in its own process (nothing of this one's code or heap shared).
let anchor = null;
if (opt["anchor-dist"]) {
  const args = [fileURLToPath(import.meta.url), "--index", opt["anchor-index"], "--dist", resolve(opt["anchor-dist"]), "--k", opt.k];
  if (opt.limit) args.push("--limit", opt.limit);
  anchor = JSON.parse(execFileSync(process.execPath, args, { encoding: "utf8", maxBuffer: 1 << 26 }));
}

// This checkout's package, or another build's compiled dist/ (--dist, for the anchor's own process).
const { openEntity } = opt.dist ? await import(pathToFileURL(join(resolve(opt.dist), "src", "retrieval", "entity", "search.js")).href) : await tartan("retrieval");

const cpu = () => cpuS();

const queries = [];
for (const f of ["hotpotqa-dev-kilt.jsonl", "wow-dev-kilt.jsonl"]) {
  for (const line of readFileSync(join(SHARED, "data", "kilt-dev", f), "utf8").split("\n")) if (line.trim()) queries.push(String(JSON.parse(line).input ?? ""));
}
const limit = opt.limit ? Number(opt.limit) : queries.length;
const qs = queries.slice(0, limit);
const k = Number(opt.k);

const load = loadAvg(2, " / ");
const rssBefore = rss();
let c0 = cpu();
let t0 = performance.now();
const r = await openEntity(opt.index);
const open = { wallS: (performance.now() - t0) / 1000, cpuS: cpu() - c0, rssBeforeMiB: rssBefore, rssAfterMiB: rss(), peakMiB: peak() };

const hash = createHash("sha256");
const lines = [];
const lat = new Float64Array(qs.length);
let hits = 0;
c0 = cpu();
t0 = performance.now();
for (let i = 0; i < qs.length; i++) {
  const t = performance.now();
  const found = r.searchSync(qs[i], k);
  lat[i] = performance.now() - t;
  hits += found.length;
  for (const h of found) {
    const l = `${i}\t${h.unit}\t${h.score}\n`;
    hash.update(l);
    if (opt.out) lines.push(l);
  }
}
const wall = (performance.now() - t0) / 1000;
const qcpu = cpu() - c0;
lat.sort();
const query = {
  queries: qs.length,
  k,
  hits,
  wallS: wall,
  cpuS: qcpu,
  qps: qs.length / wall,
  qpsPerCpuS: qs.length / qcpu,
  p50Ms: lat[Math.floor(lat.length * 0.5)],
  p99Ms: lat[Math.floor(lat.length * 0.99)],
  rssAfterMiB: rss(),
  peakMiB: peak(),
  rankingsSha256: hash.digest("hex"),
};
await r.close();
if (opt.out) writeFileSync(opt.out, lines.join(""));
const result = { index: opt.index, dist: opt.dist ?? join(ROOT, "dist"), load, aliases: r.params.aliases, units: r.manifest.units, open, query };
if (anchor) {
  result.anchor = anchor;
  result.ratios = {
    openCpu: anchor.open.cpuS / open.cpuS,
    openWall: anchor.open.wallS / open.wallS,
    rssAfterOpen: open.rssAfterMiB / anchor.open.rssAfterMiB,
    qpsPerCpuS: query.qpsPerCpuS / anchor.query.qpsPerCpuS,
    qps: query.qps / anchor.query.qps,
    peak: query.peakMiB / anchor.query.peakMiB,
    sameRankings: query.rankingsSha256 === anchor.query.rankingsSha256,
  };
}
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
