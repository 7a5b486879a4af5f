// BM25 query speed of this checkout against another build of tartan (a baseline commit), timed in
// alternation on a shared machine (issue 35: the scorer seam must leave the speed unchanged): both open the
// same index of a `bench/scale.mjs` run and answer the same queries (its queries.json: the KILT dev inputs),
// top k, one thread, as scale.mjs's queries stage does. Each runs in its own process, warmed by one pass;
// then passes go A B, B A, A B … so that neither gets the quieter slices. Per pass: wall and CPU seconds of
// the searching process; then q/s of each in all and the ratio, and whether the two gave the same rankings
// and scores (every hit of every query).
//
// The baseline is a checkout with its own build, e.g.
//   git worktree add --detach /tmp/bm25-old 986327f && ln -s "$PWD/node_modules" /tmp/bm25-old/ && (cd /tmp/bm25-old && npx tsc -p tsconfig.json)
//
// usage: node bench/bm25-search-ab.mjs --dir DIR --old CHECKOUT [--queries DIR/queries.json] [--rounds 4] [--k 100]   (after npm run build)
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cpuS, load, opt as parseOptions, ROOT } from "./lib.mjs";

const SELF = fileURLToPath(import.meta.url);

if (process.argv[2] === "--child") {
  // One build's searcher: warms with a pass, prints {"ready":true}, answers "run" with one timed pass and
  // "dump FILE" with the hits of the last pass ("unit:score …" a line per query); exits at EOF.
  const [, , , root, indexDir, queriesFile, k] = process.argv;
  const { openIndex } = await import(pathToFileURL(join(root, "dist", "src", "retrieval", "index.js")).href);
  const queries = JSON.parse(readFileSync(queriesFile, "utf8"));
  const kk = Number(k);
  const r = await openIndex(indexDir);
  let results = [];
  for (const q of queries) results.push(await r.search(q, kk));
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "run") {
      results = new Array(queries.length);
      const c0 = process.cpuUsage();
      const s0 = performance.now();
      for (let i = 0; i < queries.length; i++) results[i] = await r.search(queries[i], kk);
      const seconds = (performance.now() - s0) / 1000;
      process.stdout.write(`${JSON.stringify({ seconds, cpuSeconds: cpuS(c0) })}\n`);
    } else if (line.startsWith("dump ")) {
      writeFileSync(line.slice(5), results.map((hits) => hits.map((h) => `${h.unit}:${h.score}`).join(" ")).join("\n") + "\n");
      process.stdout.write(`${JSON.stringify({ dumped: true })}\n`);
    }
  }
  await r.close();
  process.exit(0);
}

const USAGE = "usage: node bench/bm25-search-ab.mjs --dir DIR --old CHECKOUT [--queries DIR/queries.json] [--rounds 4] [--k 100]";
const opt = parseOptions({ dir: { type: "string" }, old: { type: "string" }, queries: { type: "string" }, rounds: { type: "string", default: "4" }, k: { type: "string", default: "100" } }, USAGE);
if (!opt.dir || !opt.old) throw new Error(`--dir and --old are required\n${USAGE}`);
const DIR = resolve(opt.dir);
const index = join(DIR, "bm25");
const queriesFile = resolve(opt.queries ?? join(DIR, "queries.json"));
if (!existsSync(index)) throw new Error(`${index} is missing: run bench/scale.mjs --dir ${DIR} --stages ingest,passages,index first`);
if (!existsSync(queriesFile)) throw new Error(`${queriesFile} is missing: run bench/scale.mjs --stages queries (it writes DIR/queries.json) or pass --queries`);
const roots = { old: resolve(opt.old), new: ROOT };
for (const root of Object.values(roots)) if (!existsSync(join(root, "dist", "src", "retrieval", "index.js"))) throw new Error(`${root}/dist is missing: build it first (npx tsc -p tsconfig.json)`);
const n = JSON.parse(readFileSync(queriesFile, "utf8")).length;

/** A searcher child: next() is its next JSON line, send(line) writes a command and waits for the answer. */
function child(name, root) {
  const c = spawn(process.execPath, [SELF, "--child", root, index, queriesFile, opt.k], { stdio: ["pipe", "pipe", "pipe"] });
  const err = [];
  c.stderr.on("data", (d) => err.push(d));
  const lines = createInterface({ input: c.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    for (;;) {
      const { value, done } = await lines.next();
      if (done) throw new Error(`${name}: exited\n${Buffer.concat(err).toString().slice(-4000)}`);
      if (value.startsWith("{")) return JSON.parse(value);
    }
  };
  return {
    next,
    send: (line) => {
      c.stdin.write(`${line}\n`);
      return next();
    },
    close: async () => {
      c.stdin.end();
      await once(c, "close");
    },
  };
}

console.log(`BM25 queries A/B: ${n} queries, top ${opt.k}, one thread; index ${index}; old ${roots.old}, new ${roots.new}; load ${load()}`);
const engines = { old: child("old", roots.old), new: child("new", roots.new) };
for (const e of Object.values(engines)) await e.next(); // warmed
const sum = { old: { seconds: 0, cpuSeconds: 0 }, new: { seconds: 0, cpuSeconds: 0 } };
for (let r = 0; r < Number(opt.rounds); r++) {
  for (const name of r % 2 === 0 ? ["old", "new"] : ["new", "old"]) {
    const before = load();
    const p = await engines[name].send("run");
    sum[name].seconds += p.seconds;
    sum[name].cpuSeconds += p.cpuSeconds;
    console.log(`${new Date().toISOString().slice(11, 19)} round ${r + 1} ${name}: ${(n / p.seconds).toFixed(1)} q/s (${p.seconds.toFixed(2)} s, CPU ${p.cpuSeconds.toFixed(2)} s: ${(n / p.cpuSeconds).toFixed(1)} q per CPU-s), load ${before} → ${load()}`);
  }
}
const files = { old: join(DIR, "ab-old.txt"), new: join(DIR, "ab-new.txt") };
for (const name of ["old", "new"]) await engines[name].send(`dump ${files[name]}`);
for (const e of Object.values(engines)) await e.close();
const same = readFileSync(files.old, "utf8") === readFileSync(files.new, "utf8");
const rounds = Number(opt.rounds);
const qps = (s) => (n * rounds) / s;
const o = sum.old;
const w = sum.new;
console.log(
  `totals: old ${qps(o.seconds).toFixed(1)} q/s (${qps(o.cpuSeconds).toFixed(1)} per CPU-s), new ${qps(w.seconds).toFixed(1)} q/s (${qps(w.cpuSeconds).toFixed(1)} per CPU-s); ` +
    `new ÷ old: q/s ${(o.seconds / w.seconds).toFixed(3)}, per CPU-s ${(o.cpuSeconds / w.cpuSeconds).toFixed(3)}; rankings and scores ${same ? "identical" : "DIFFER"} (${files.old}, ${files.new})`,
);
if (!same) process.exitCode = 1;
