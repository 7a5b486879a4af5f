// Knowledge-source benchmark (`npm run bench:ks`): generates a deterministic synthetic knowledge source
// in KILT's page format (default 1,000,000 pages, ~6.5 GB; cached under bench/out/ks/), then measures
//   - the anchor: a bare loop that reads the file and JSON.parses each line (best of two runs);
//   - `tartan ks ingest` as a child process: throughput, peak RSS (VmHWM, polled), store size;
//   - warm lookup latency by id, title (exact and case-insensitive) and URL (p50 / p99 / max).
// Prints the figures, their ratios to the anchor and the targets, and writes bench/out/ks-results.json.
//
// Options: --pages N (default 1000000), --seed S (1), --workers N (the CLI's default), --lookups N (20000),
// --repeat N (1): anchor and ingest alternate N times and the best of each counts (for a shared machine);
// --lookups-only: measure lookups on the store a previous run left in bench/out/ks/store.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { CLI, cpuS, distPath, opt, OUT, tartan } from "./lib.mjs";

const { KnowledgeSource, writeSyntheticKnowledgeSource } = await tartan("knowledge");

const o = opt(
  {
    pages: { type: "string", default: "1000000" },
    seed: { type: "string", default: "1" },
    workers: { type: "string" },
    lookups: { type: "string", default: "20000" },
    repeat: { type: "string", default: "1" },
    "lookups-only": { type: "boolean" },
  },
  "usage: npm run bench:ks [-- --pages N] [-- --seed S] [-- --workers N] [-- --lookups N] [-- --repeat N] [-- --lookups-only]",
);
const PAGES = Number(o.pages);
const SEED = Number(o.seed);
const WORKERS = o.workers;
const LOOKUPS = Number(o.lookups);
const REPEAT = Number(o.repeat);
const LOOKUPS_ONLY = Boolean(o["lookups-only"]);
const MB = 1e6;

const out = join(OUT, "ks");
mkdirSync(out, { recursive: true });

// 1. Data, cached per generator version.
const genHash = createHash("sha256").update(readFileSync(distPath("knowledge/synthetic.js"))).digest("hex").slice(0, 8);
const file = join(out, `synthetic-${PAGES}-s${SEED}-${genHash}.jsonl`);
if (!existsSync(file)) {
  for (const f of readdirSync(out)) if (f.startsWith(`synthetic-${PAGES}-s${SEED}-`)) rmSync(join(out, f), { force: true });
  process.stderr.write(`generating ${PAGES.toLocaleString("en-US")} pages → ${file}\n`);
  const t = performance.now();
  await writeSyntheticKnowledgeSource(file, { pages: PAGES, seed: SEED });
  process.stderr.write(`  ${((performance.now() - t) / 1000).toFixed(0)} s\n`);
}
const inputBytes = statSync(file).size;

// 2. The anchor: read + JSON.parse each line, nothing else.
function bareParse() {
  const fd = openSync(file, "r");
  const buf = Buffer.allocUnsafe(1 << 22);
  let carry = Buffer.alloc(0);
  let n;
  let lines = 0;
  const t = performance.now();
  const cpu = process.cpuUsage();
  while ((n = readSync(fd, buf, 0, buf.length, null)) > 0) {
    const data = carry.length > 0 ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
    let s = 0;
    let i;
    while ((i = data.indexOf(10, s)) !== -1) {
      JSON.parse(data.toString("utf8", s, i));
      lines++;
      s = i + 1;
    }
    carry = Buffer.from(data.subarray(s));
  }
  if (carry.length > 0) (JSON.parse(carry.toString("utf8")), lines++);
  closeSync(fd);
  const seconds = (performance.now() - t) / 1000;
  return { lines, seconds, cpuSeconds: cpuS(cpu), mbps: inputBytes / MB / seconds };
}

// 3. The ingest, as users run it, under GNU time when present (CPU seconds and exact peak RSS);
// otherwise peak RSS is polled from /proc/PID/status (Linux).
const GNU_TIME = "/usr/bin/time";
function peakRss(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
async function runIngest(store) {
  rmSync(store, { recursive: true, force: true });
  const cli = [process.execPath, CLI, "ks", "ingest", file, "--out", store, ...(WORKERS !== undefined ? ["--workers", WORKERS] : [])];
  const timed = existsSync(GNU_TIME);
  const [cmd, ...args] = timed ? [GNU_TIME, "-f", "TIME %e %U %S %M", ...cli] : cli;
  const t = performance.now();
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  let peak = 0;
  const poll = timed ? null : setInterval(() => (peak = Math.max(peak, peakRss(child.pid))), 100);
  const code = await new Promise((res) => child.on("exit", res));
  if (poll) clearInterval(poll);
  if (code !== 0) throw new Error(`ingest failed with code ${code}: ${stderr}`);
  const seconds = (performance.now() - t) / 1000;
  let cpuSeconds = null;
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(stderr);
  if (m) {
    cpuSeconds = Number(m[2]) + Number(m[3]);
    peak = Number(m[4]) * 1024;
  }
  const storeBytes = readdirSync(store).reduce((s, f) => s + statSync(join(store, f)).size, 0);
  return { seconds, cpuSeconds, mbps: inputBytes / MB / seconds, peakRssBytes: peak, storeBytes, summary: stdout.trim() };
}

// 4. Warm lookups on a deterministic sample of pages.
function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}
function lookups(store) {
  const db = new Database(join(store, "ks.sqlite"), { readonly: true });
  const max = db.prepare("SELECT max(rowid) FROM pages").pluck().get();
  const pick = db.prepare("SELECT wikipedia_id, title FROM pages WHERE rowid = ?");
  let s = SEED;
  const rand = () => (s = (s * 48271) % 2147483647) / 2147483647;
  const sample = [];
  while (sample.length < LOOKUPS) {
    const row = pick.get(1 + Math.floor(rand() * max));
    if (row) sample.push(row);
  }
  db.close();
  const ks = KnowledgeSource.open(store);
  const kinds = {
    id: (r) => ks.getPageById(r.wikipedia_id),
    title: (r) => ks.getPageByTitle(r.title),
    "title, other case": (r) => ks.getPageByTitle(r.title.toUpperCase()),
    url: (r) => ks.getPageFromUrl(`https://en.wikipedia.org/wiki/${encodeURIComponent(r.title.replace(/ /g, "_"))}`),
  };
  const results = {};
  for (const [kind, f] of Object.entries(kinds)) {
    for (const r of sample) if (f(r) === null) throw new Error(`lookup by ${kind} missed ${JSON.stringify(r)}`); // warm-up and check
    const times = new Float64Array(sample.length);
    const cpu = process.cpuUsage();
    for (let i = 0; i < sample.length; i++) {
      const t = process.hrtime.bigint();
      f(sample[i]);
      times[i] = Number(process.hrtime.bigint() - t) / 1000;
    }
    times.sort();
    results[kind] = {
      p50us: percentile(times, 0.5),
      p99us: percentile(times, 0.99),
      maxUs: times[times.length - 1],
      // CPU time per lookup: what the latency would be without other processes taking the cores.
      cpuUsPerLookup: (cpuS(cpu) * 1e6) / sample.length,
    };
  }
  ks.close();
  return results;
}

const store = join(out, "store");
if (LOOKUPS_ONLY) {
  const lookup = lookups(store);
  for (const [k, v] of Object.entries(lookup)) {
    process.stdout.write(`${k.padEnd(20)} p50 ${v.p50us.toFixed(1)} µs  p99 ${v.p99us.toFixed(1)} µs  max ${v.maxUs.toFixed(1)} µs  CPU ${v.cpuUsPerLookup.toFixed(1)} µs/lookup\n`);
  }
  process.exit(0);
}
const anchors = [];
const ingests = [];
for (let r = 0; r < REPEAT; r++) {
  anchors.push(bareParse());
  process.stderr.write(`anchor (bare parse) run ${anchors.length}: ${anchors.at(-1).mbps.toFixed(1)} MB/s\n`);
  ingests.push(await runIngest(store));
  process.stderr.write(`ingest run ${ingests.length}: ${ingests.at(-1).mbps.toFixed(1)} MB/s\n`);
}
anchors.push(bareParse());
process.stderr.write(`anchor (bare parse) run ${anchors.length}: ${anchors.at(-1).mbps.toFixed(1)} MB/s\n`);
const anchor = Math.max(...anchors.map((a) => a.mbps));
const ingest = ingests.reduce((a, b) => (b.mbps > a.mbps ? b : a));
const lookup = lookups(store);

const results = {
  date: new Date().toISOString(),
  machine: { cores: cpus().length, memGiB: +(totalmem() / 2 ** 30).toFixed(1), node: process.version, loadavg: loadavg() },
  pages: PAGES,
  seed: SEED,
  inputBytes,
  anchorMBps: anchors.map((a) => a.mbps),
  anchorCpuSeconds: anchors.map((a) => a.cpuSeconds),
  ingestMBps: ingests.map((i) => i.mbps),
  ingest,
  lookup,
};
writeFileSync(join(OUT, "ks-results.json"), `${JSON.stringify(results, null, 2)}\n`);

const f1 = (x) => x.toFixed(1);
const checks = [
  ["ingest ≥ 50% of bare parse", ingest.mbps / anchor >= 0.5, `${f1(ingest.mbps)} / ${f1(anchor)} MB/s = ${(ingest.mbps / anchor).toFixed(2)}`],
  ["ingest ≥ 50 MB/s", ingest.mbps >= 50, `${f1(ingest.mbps)} MB/s`],
  ["peak RSS ≤ 2 GiB", ingest.peakRssBytes > 0 && ingest.peakRssBytes <= 2 ** 31, `${f1(ingest.peakRssBytes / 2 ** 20)} MiB`],
  ["store ≤ input", ingest.storeBytes <= inputBytes, `${f1(ingest.storeBytes / MB)} / ${f1(inputBytes / MB)} MB = ${(ingest.storeBytes / inputBytes).toFixed(3)}`],
  ["p99 by id ≤ 1 ms", lookup.id.p99us <= 1000, `${f1(lookup.id.p99us)} µs`],
  ["p99 by title ≤ 1 ms", lookup.title.p99us <= 1000, `${f1(lookup.title.p99us)} µs`],
];
const lines = [
  `input: ${PAGES.toLocaleString("en-US")} pages, ${f1(inputBytes / MB)} MB (${file})`,
  `machine: ${results.machine.cores} cores, load average ${results.machine.loadavg.map((x) => x.toFixed(1)).join(" ")} at the end`,
  `anchor, bare read + JSON.parse: ${anchors.map((a) => f1(a.mbps)).join(", ")} MB/s (best ${f1(anchor)}); CPU ${anchors.map((a) => f1(a.cpuSeconds)).join(", ")} s`,
  `ingest${REPEAT > 1 ? ` (best of ${ingests.map((i) => f1(i.mbps)).join(", ")} MB/s)` : ""}: ${f1(ingest.seconds)} s, ${f1(ingest.mbps)} MB/s (${(ingest.mbps / anchor).toFixed(2)} of the anchor), CPU ${ingest.cpuSeconds === null ? "n/a" : `${f1(ingest.cpuSeconds)} s`}, peak RSS ${f1(ingest.peakRssBytes / 2 ** 20)} MiB, store ${f1(ingest.storeBytes / MB)} MB`,
  `  ${ingest.summary}`,
  "lookups (warm, µs):      p50     p99     max  CPU/lookup",
  ...Object.entries(lookup).map(
    ([k, v]) => `  ${k.padEnd(20)} ${f1(v.p50us).padStart(7)} ${f1(v.p99us).padStart(7)} ${f1(v.maxUs).padStart(7)} ${f1(v.cpuUsPerLookup).padStart(7)}`,
  ),
  "targets:",
  ...checks.map(([name, ok, detail]) => `  ${ok ? "PASS" : "FAIL"}  ${name}: ${detail}`),
];
process.stdout.write(`${lines.join("\n")}\n`);
