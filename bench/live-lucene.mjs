// bench:live-lucene: live BM25 indexes (issue 40) against Lucene 8's IndexWriter, same sequence, same run. A
// deterministic sequence of page adds, replaces and deletes over synthetic KILT-shaped pages
// (./live-gen.mjs) is applied, committed every --commit-every operations, to
//   - Lucene 8.7 (Debian's liblucene8-java, ./lucene/LiveBench.java): each page cut into tartan's 100-word
//     passages (unitsOfPage, the unit text title + "\n" + text as tartan's BM25 indexes it), a page's units
//     grouped by a "page" term (replace = updateDocuments, delete = deleteDocuments), EnglishAnalyzer,
//     BM25Similarity(0.9, 0.4), Lucene's default merge policy; and
//   - tartan (`tartan index update DIR --add PAGES --replace PAGES --delete IDS`, one call a commit window,
//     then `tartan index merge DIR`): the function tartanSide below.
// Measured: the base build and the update throughput (operations and documents a second, wall and CPU) of
// each; the rankings of --queries-limit KILT dev queries (HotpotQA and Wizard of Wikipedia inputs, as
// bench:scale) at top --k, compared as sequences of equal-score groups (two engines number units
// differently, so ties cannot be ordered alike): tartan before any merge against a fresh tartan build of
// the live pages (issue 40's exactness), tartan merged against Lucene after forceMerge(1) (the anchor),
// Lucene merged against a fresh Lucene build (the reference checked), and Lucene before its merge against
// the fresh build (the drift of statistics that count deleted documents).
//   npm run bench:live-lucene -- [--base 20000] [--ops 20000] [--commit-every 1000] [--mix 0.4,0.4,0.2] [--seed 1]
//        [--k 100] [--queries-limit 1000] [--dir DIR] [--tartan auto|yes|no] [--cli dist/src/cli/main.js]
// --tartan auto (default) runs tartan's side when the CLI (--cli, default this checkout's build) has
// `tartan index update`.

import { spawnSync } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, OUT, SHARED, load, opt, tartan } from "./lib.mjs";
import { generateLive } from "./live-gen.mjs";
import { compileLucene, luceneClasspath, luceneVersion } from "./lucene/lucene.mjs";

const USAGE =
  "npm run bench:live-lucene -- [--base 20000] [--ops 20000] [--commit-every 1000] [--mix 0.4,0.4,0.2] [--seed 1] [--k 100] [--queries-limit 1000] [--dir DIR] [--tartan auto|yes|no] [--cli PATH]";
const o = opt(
  {
    base: { type: "string", default: "20000" },
    ops: { type: "string", default: "20000" },
    "commit-every": { type: "string", default: "1000" },
    mix: { type: "string", default: "0.4,0.4,0.2" },
    seed: { type: "string", default: "1" },
    k: { type: "string", default: "100" },
    "queries-limit": { type: "string", default: "1000" },
    dir: { type: "string" },
    tartan: { type: "string", default: "auto" },
    cli: { type: "string", default: CLI },
  },
  USAGE,
);
const K = Number(o.k);
/** The tartan CLI the tartan side runs. */
const TCLI = o.cli;
const EVERY = Number(o["commit-every"]);
const K1 = 0.9;
const B = 0.4;
const DIR = o.dir ?? join(OUT, `live-${o.base}-${o.ops}`);
const esc = (s) => s.replace(/\\/g, "\\\\").replace(/\r\n|\r|\n/g, "\\n");
const write = (s, line) => (s.write(line) ? null : new Promise((r) => s.once("drain", r)));
const close = (s) => new Promise((r) => s.end(r));

/** The key both engines name a unit by: its page and its span (tartan's unit numbers are its own). */
export const unitKey = (u) => `${u.wikipedia_id}|${u.start_paragraph_id}|${u.start_character}|${u.end_paragraph_id}|${u.end_character}`;

/** Runs a command under GNU time: wall, CPU (user + system), peak RSS, stdout. */
function timed(cmd, args, what) {
  const timeFile = join(DIR, "time.txt");
  const r = spawnSync("/usr/bin/time", ["-o", timeFile, "-f", "%e %U %S %M", cmd, ...args], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${what} failed (${r.status}): ${r.stdout.slice(-2000)}`);
  const [wall, user, sys, maxKiB] = readFileSync(timeFile, "utf8").trim().split("\n").pop().split(" ").map(Number);
  return { wall, cpu: user + sys, peakRssBytes: maxKiB * 1024, stdout: r.stdout };
}
const lastJson = (stdout) => JSON.parse(stdout.trim().split("\n").pop());

/** "KEY:score …" lines: one per query, best first. */
function parseResults(file) {
  return readFileSync(file, "utf8")
    .split("\n")
    .slice(0, -1)
    .map((line) =>
      line === ""
        ? []
        : line.split(" ").map((x) => {
            const c = x.lastIndexOf(":");
            return { key: x.slice(0, c), score: Math.fround(Number(x.slice(c + 1))) };
          }),
    );
}

/**
 * Query by query, as sequences of equal-score groups: "identical" (same keys in the same order), "same
 * groups" (the same scores, and each group of equal scores the same set of keys), "cut tie" (the same,
 * except which members of the last group, tied with the k-th, made the cut), else differing.
 */
export function compareGroups(a, b) {
  const out = { queries: a.length, identical: 0, sameGroups: 0, cutTie: 0, differing: 0, firstDiffering: [] };
  const groups = (xs) => {
    const g = [];
    for (const h of xs) {
      if (g.length === 0 || g[g.length - 1].score !== h.score) g.push({ score: h.score, keys: new Set() });
      g[g.length - 1].keys.add(h.key);
    }
    return g;
  };
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i] ?? [];
    if (x.length === y.length && x.every((h, j) => h.key === y[j].key && h.score === y[j].score)) {
      out.identical++;
      continue;
    }
    const gx = groups(x);
    const gy = groups(y);
    const sameScores = x.length === y.length && x.every((h, j) => h.score === y[j].score);
    const setEq = (p, q) => p.size === q.size && [...p].every((k) => q.has(k));
    if (sameScores && gx.every((g, j) => setEq(g.keys, gy[j].keys))) out.sameGroups++;
    else if (sameScores && gx.slice(0, -1).every((g, j) => setEq(g.keys, gy[j].keys))) out.cutTie++;
    else {
      out.differing++;
      if (out.firstDiffering.length < 5) out.firstDiffering.push(i);
    }
  }
  out.agree = out.identical + out.sameGroups + out.cutTie;
  return out;
}
const fmtCmp = (c) => `${c.agree}/${c.queries} agree (${c.identical} identical, ${c.sameGroups} equal as score groups, ${c.cutTie} tied at the cut)${c.differing ? `; ${c.differing} differ, first ${c.firstDiffering.join(",")}` : ""}`;

// ---------------------------------------------------------------------------------------------------
// tartan's side: written against the CLI of issue 40 (`tartan index update DIR --add FILE --replace FILE
// --delete FILE`, inputs as `tartan index build` takes them: KILT pages JSONL, and a file of page ids one
// a line; `tartan index merge DIR`). Rankings come from `tartan retrieve` (KILT guesses; each provenance
// names its page and span, and its score).

/** Writes one commit window's add, replace and delete files; returns their paths (null for an empty one). */
function windowFiles(dir, ops) {
  const out = {};
  for (const kind of ["add", "replace", "delete"]) {
    const mine = ops.filter((x) => x.op === kind);
    if (mine.length === 0) {
      out[kind] = null;
      continue;
    }
    const file = join(dir, kind === "delete" ? "delete.txt" : `${kind}.jsonl`);
    writeFileSync(file, mine.map((x) => (kind === "delete" ? x.id : JSON.stringify(x.page))).join("\n") + "\n");
    out[kind] = file;
  }
  return out;
}

/** `tartan retrieve` over the index into "KEY:score" lines. */
function tartanRankings(index, queriesJsonl, file) {
  const run = `${file}.jsonl`;
  timed(process.execPath, [TCLI, "retrieve", "--index", index, "--input", queriesJsonl, "--out", run, "--top-k", String(K), "--threads", "1"], `tartan retrieve over ${index}`);
  const lines = readFileSync(run, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  writeFileSync(file, lines.map((g) => (g.output?.[0]?.provenance ?? []).map((p) => `${unitKey(p)}:${p.score}`).join(" ")).join("\n") + "\n");
  return file;
}

/**
 * The whole tartan side: a base build of `base` (pages JSONL), the operations of `opsFile` one
 * `tartan index update` a window of `every`, rankings before the merge, `tartan index merge`, rankings
 * after; and a fresh build of `livePages` with its rankings (what the updated index must equal).
 */
export async function tartanSide({ dir, base, opsFile, every, livePages, queriesJsonl }) {
  const index = join(dir, "tartan");
  const fresh = join(dir, "tartan-fresh");
  const work = join(dir, "tartan-window");
  rmSync(index, { recursive: true, force: true });
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const build = timed(process.execPath, [TCLI, "index", "build", "--kind", "bm25", "--pages", base, "--unit", "passage", "--out", index], "tartan index build (base)");
  delete build.stdout;
  const ops = readFileSync(opsFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const updates = { calls: 0, wall: 0, cpu: 0, seconds: 0, peakRssBytes: 0, unitsAdded: 0, unitsDeleted: 0, ops: ops.length };
  for (let i = 0; i < ops.length; i += every) {
    const f = windowFiles(work, ops.slice(i, i + every));
    const args = [TCLI, "index", "update", index];
    if (f.add) args.push("--add", f.add);
    if (f.replace) args.push("--replace", f.replace);
    if (f.delete) args.push("--delete", f.delete);
    const t = timed(process.execPath, args, `tartan index update (window ${i / every + 1})`);
    const r = lastJson(t.stdout);
    updates.calls++;
    updates.wall += t.wall;
    updates.seconds += r.seconds ?? 0; // the update's own time, as tartan reports it (no process start)
    updates.cpu += t.cpu;
    updates.peakRssBytes = Math.max(updates.peakRssBytes, t.peakRssBytes);
    updates.unitsAdded += r.unitsAdded ?? 0;
    updates.unitsDeleted += r.unitsDeleted ?? 0;
    updates.last = r;
  }
  updates.opsPerSecond = updates.ops / updates.wall;
  updates.docsPerSecond = updates.unitsAdded / updates.wall;
  updates.docsPerCpuSecond = updates.unitsAdded / updates.cpu;
  updates.docsPerSecondInside = updates.unitsAdded / updates.seconds;
  const unmerged = tartanRankings(index, queriesJsonl, join(dir, "tartan-unmerged.tsv"));
  const m = timed(process.execPath, [TCLI, "index", "merge", index], "tartan index merge");
  const merge = { wall: m.wall, cpu: m.cpu, peakRssBytes: m.peakRssBytes, ...lastJson(m.stdout) };
  const merged = tartanRankings(index, queriesJsonl, join(dir, "tartan-merged.tsv"));
  const fb = timed(process.execPath, [TCLI, "index", "build", "--kind", "bm25", "--pages", livePages, "--unit", "passage", "--out", fresh], "tartan index build (fresh)");
  const freshFile = tartanRankings(fresh, queriesJsonl, join(dir, "tartan-fresh.tsv"));
  return { build, updates, merge, freshBuild: { wall: fb.wall, cpu: fb.cpu }, rankings: { unmerged, merged, fresh: freshFile } };
}

/** Whether the built CLI has `tartan index update` (issue 40's command). */
function tartanHasUpdate() {
  const r = spawnSync(process.execPath, [TCLI, "index", "update", "--help"], { encoding: "utf8" });
  return r.status === 0 && /--replace/u.test(r.stdout);
}

// ---------------------------------------------------------------------------------------------------
// The run.

rmSync(DIR, { recursive: true, force: true });
mkdirSync(DIR, { recursive: true });
const report = { date: new Date().toISOString(), commit: spawnSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim(), k: K, k1: K1, b: B, loads: [] };
const save = () => writeFileSync(join(DIR, "results.json"), `${JSON.stringify(report, null, 2)}\n`);
const noteLoad = (stage) => report.loads.push({ stage, load: load() });
console.log(`load ${load()}`);

// 1. The sequence, and the queries.
noteLoad("generate");
let t0 = performance.now();
report.sequence = await generateLive({ base: Number(o.base), ops: Number(o.ops), commitEvery: EVERY, mix: o.mix.split(",").map(Number), seed: Number(o.seed), out: DIR });
console.log(`sequence generated in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(report.sequence)}`);
{
  const { stripEntityMarkers } = await tartan("retrieval");
  const { readJsonlAll } = await tartan("records");
  let qs = [];
  for (const f of ["hotpotqa-dev-kilt.jsonl", "wow-dev-kilt.jsonl"]) qs.push(...(await readJsonlAll(join(SHARED, "data", "kilt-dev", f))).map((r) => stripEntityMarkers(String(r.input ?? ""))));
  const n = Math.min(Number(o["queries-limit"]), qs.length);
  const all = qs;
  qs = Array.from({ length: n }, (_, i) => all[Math.floor((i * all.length) / n)]);
  writeFileSync(join(DIR, "queries.txt"), qs.map(esc).join("\n") + "\n");
  writeFileSync(join(DIR, "queries.jsonl"), qs.map((q, i) => JSON.stringify({ id: `q${i}`, input: q })).join("\n") + "\n");
  report.queries = n;
}

// 2. Lucene's input: the pages cut into tartan's units.
noteLoad("lucene-input");
t0 = performance.now();
const { unitsOfPage } = await tartan("retrieval");
const luceneUnits = (page) => unitsOfPage(page, { unit: "passage", words: 100 }).map((u) => ({ id: unitKey(u), text: `${u.wikipedia_title}\n${u.text}` }));
async function luceneOps(pagesOrOps, out, asOps) {
  const s = createWriteStream(out);
  for (const line of readFileSync(pagesOrOps, "utf8").split("\n")) {
    if (line === "") continue;
    const x = JSON.parse(line);
    const op = asOps ? x : { op: "add", id: String(x.wikipedia_id), page: x };
    await write(s, `${JSON.stringify(op.op === "delete" ? { op: "delete", id: op.id } : { op: op.op, id: op.id, units: luceneUnits(op.page) })}\n`);
  }
  await close(s);
}
await luceneOps(join(DIR, "base.jsonl"), join(DIR, "lucene-base.jsonl"), false);
await luceneOps(join(DIR, "ops.jsonl"), join(DIR, "lucene-ops.jsonl"), true);
await luceneOps(join(DIR, "live.jsonl"), join(DIR, "lucene-live.jsonl"), false);
console.log(`Lucene's operations written in ${((performance.now() - t0) / 1000).toFixed(1)} s (pages cut into tartan's passages)`);

// 3. Lucene.
const classpath = `${luceneClasspath()}:${compileLucene()}`;
const java = (args, what) => timed("java", ["-Xms1g", "-Xmx3g", "-cp", classpath, "LiveBench", ...args], what);
const lIndex = join(DIR, "lucene");
const lFresh = join(DIR, "lucene-fresh");
const kb = [String(K1), String(B)];
noteLoad("lucene-base");
const lb = java(["apply", "english", lIndex, join(DIR, "lucene-base.jsonl"), "1000000000", "create", ...kb], "Lucene base build");
noteLoad("lucene-updates");
const lu = java(["apply", "english", lIndex, join(DIR, "lucene-ops.jsonl"), String(EVERY), "append", ...kb], "Lucene updates");
const lSearch = (index, file) => lastJson(java(["search", "english", index, join(DIR, "queries.txt"), String(K), file, ...kb], `Lucene search over ${index}`).stdout);
const lUnmergedInfo = lSearch(lIndex, join(DIR, "lucene-unmerged.tsv"));
noteLoad("lucene-merge");
const lm = java(["merge", lIndex], "Lucene forceMerge");
const lMergedInfo = lSearch(lIndex, join(DIR, "lucene-merged.tsv"));
const lf = java(["apply", "english", lFresh, join(DIR, "lucene-live.jsonl"), "1000000000", "create", ...kb, "forceMerge"], "Lucene fresh build");
lSearch(lFresh, join(DIR, "lucene-fresh.tsv"));
report.lucene = {
  version: luceneVersion(),
  base: { wall: lb.wall, cpu: lb.cpu, peakRssBytes: lb.peakRssBytes, ...lastJson(lb.stdout) },
  updates: { wall: lu.wall, cpu: lu.cpu, peakRssBytes: lu.peakRssBytes, ...lastJson(lu.stdout) },
  unmerged: lUnmergedInfo,
  merge: { wall: lm.wall, ...lastJson(lm.stdout) },
  merged: lMergedInfo,
  fresh: { wall: lf.wall, cpu: lf.cpu, ...lastJson(lf.stdout) },
};
const read = (f) => parseResults(join(DIR, f));
report.rankings = {
  luceneMergedVsFresh: compareGroups(read("lucene-merged.tsv"), read("lucene-fresh.tsv")),
  luceneUnmergedVsFresh: compareGroups(read("lucene-unmerged.tsv"), read("lucene-fresh.tsv")),
};
save();
{
  const L = report.lucene;
  const u = L.updates;
  console.log(`lucene ${L.version} base: ${L.base.docsIn} documents in ${L.base.seconds.toFixed(1)} s (${L.base.docsPerSecond.toFixed(0)} docs/s, ${L.base.cpuSeconds.toFixed(1)} CPU-s of the JVM)`);
  console.log(
    `lucene updates: ${u.ops} operations (${u.adds} adds, ${u.replaces} replaces, ${u.deletes} deletes), ${u.docsIn} documents in, ${u.commits} commits in ${u.seconds.toFixed(1)} s wall, ${u.cpuSeconds.toFixed(1)} CPU-s: ` +
      `${u.opsPerSecond.toFixed(0)} ops/s, ${u.docsPerSecond.toFixed(0)} docs/s (${u.docsPerCpuSecond.toFixed(0)} per CPU-s); process ${u.wall.toFixed(1)} s with the JVM's start; peak RSS ${(u.peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
  );
  console.log(`lucene before the merge: ${L.unmerged.segments} segments, ${L.unmerged.maxDoc} documents of which ${L.unmerged.liveDocs} live; forceMerge(1) ${L.merge.seconds.toFixed(1)} s (${L.merge.cpuSeconds.toFixed(1)} CPU-s)`);
  console.log(`lucene merged vs a fresh Lucene build of the live pages: ${fmtCmp(report.rankings.luceneMergedVsFresh)}`);
  console.log(`lucene before its merge vs the fresh build (statistics counting deleted documents): ${fmtCmp(report.rankings.luceneUnmergedVsFresh)}`);
}

// 4. tartan.
const runTartan = o.tartan === "yes" || (o.tartan === "auto" && tartanHasUpdate());
if (!runTartan) {
  console.log(`tartan's side not run: ${o.tartan === "no" ? "--tartan no" : `${TCLI} has no \`index update\` (issue 40's command)`}`);
} else {
  noteLoad("tartan");
  const t = await tartanSide({ dir: DIR, base: join(DIR, "base.jsonl"), opsFile: join(DIR, "ops.jsonl"), every: EVERY, livePages: join(DIR, "live.jsonl"), queriesJsonl: join(DIR, "queries.jsonl") });
  report.tartan = t;
  report.rankings.tartanUnmergedVsFresh = compareGroups(parseResults(t.rankings.unmerged), parseResults(t.rankings.fresh));
  report.rankings.tartanMergedVsLuceneMerged = compareGroups(parseResults(t.rankings.merged), read("lucene-merged.tsv"));
  report.rankings.tartanFreshVsLuceneFresh = compareGroups(parseResults(t.rankings.fresh), read("lucene-fresh.tsv"));
  const u = t.updates;
  const L = report.lucene.updates;
  // Lucene's figures are timed inside its JVM (one process for the whole sequence); tartan's by process
  // (one a window, starts included) and by its own report of each update's seconds.
  report.ratios = { docsPerSecond: u.docsPerSecond / L.docsPerSecond, docsPerSecondInside: u.docsPerSecondInside / L.docsPerSecond, docsPerCpuSecond: u.docsPerCpuSecond / L.docsPerCpuSecond };
  console.log(`tartan base build: ${t.build.wall.toFixed(1)} s wall, ${t.build.cpu.toFixed(1)} CPU-s`);
  console.log(
    `tartan updates: ${u.calls} calls of \`tartan index update\`, ${u.unitsAdded} units in, ${u.unitsDeleted} out, ${u.wall.toFixed(1)} s wall (process starts included), ${u.cpu.toFixed(1)} CPU-s: ` +
      `${u.docsPerSecond.toFixed(0)} docs/s (${u.docsPerSecondInside.toFixed(0)} by the updates' own seconds, ${u.docsPerCpuSecond.toFixed(0)} per CPU-s); ` +
      `tartan/Lucene ${report.ratios.docsPerSecond.toFixed(2)} (own seconds ${report.ratios.docsPerSecondInside.toFixed(2)}, per CPU-s ${report.ratios.docsPerCpuSecond.toFixed(2)})`,
  );
  console.log(`tartan merge: ${t.merge.wall.toFixed(1)} s wall, ${t.merge.cpu.toFixed(1)} CPU-s`);
  console.log(`tartan before any merge vs a fresh tartan build of the live pages: ${fmtCmp(report.rankings.tartanUnmergedVsFresh)}`);
  console.log(`tartan merged vs Lucene after forceMerge(1): ${fmtCmp(report.rankings.tartanMergedVsLuceneMerged)}`);
  console.log(`tartan fresh vs Lucene fresh: ${fmtCmp(report.rankings.tartanFreshVsLuceneFresh)}`);
}

// 5. Targets.
const targets = [];
const R = report.rankings;
targets.push({ name: "Lucene after forceMerge(1) equals a fresh Lucene build (the reference itself)", pass: R.luceneMergedVsFresh.agree === report.queries, detail: `${R.luceneMergedVsFresh.agree}/${report.queries}` });
if (report.tartan) {
  targets.push({ name: "tartan before any merge equals a fresh build of the live pages", pass: R.tartanUnmergedVsFresh.agree === report.queries, detail: `${R.tartanUnmergedVsFresh.agree}/${report.queries}` });
  targets.push({ name: "tartan merged equals Lucene after forceMerge(1)", pass: R.tartanMergedVsLuceneMerged.agree === report.queries, detail: `${R.tartanMergedVsLuceneMerged.agree}/${report.queries}` });
  targets.push({ name: "update throughput ≥ Lucene's (documents a second, wall)", pass: report.ratios.docsPerSecond >= 1, detail: `${report.tartan.updates.docsPerSecond.toFixed(0)} vs ${report.lucene.updates.docsPerSecond.toFixed(0)} (${report.ratios.docsPerSecond.toFixed(2)})` });
}
report.targets = targets;
console.log("\ntargets:");
for (const x of targets) console.log(`  ${x.pass ? "PASS" : "MISS"}  ${x.name}: ${x.detail}`);
save();
console.log(`written ${join(DIR, "results.json")}; loads ${report.loads.map((l) => `${l.stage} ${l.load}`).join("; ")}`);
