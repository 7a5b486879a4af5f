// `npm run bench:serve`: load on `tartan serve` over the SQuAD knowledge source (48 pages) and a BM25
// paragraph index (2,067 units), with autocannon against 127.0.0.1 only:
//   search: GET /api/search?q=QUESTION&k=10, cycling through the 10,570 SQuAD v1.1 dev questions;
//   pages:  GET /api/pages/ID, cycling through the 48 page ids;
// at 1, 10 and 100 concurrent connections, --duration seconds each (default 30). Prints requests/s,
// p50/p99/max latency, errors and non-2xx answers. The anchor, run in the same session: a bare
// node:http server (in its own process too) answering the same URLs with the same bodies, precomputed,
// so the ratio is the cost of tartan's routing, checks and work over HTTP itself. The server is a
// child process started here and stopped by its pid. Writes bench/out/serve/results.json.
//
// usage: node bench/serve.mjs [--duration 30] [--connections 1,10,100] [--endpoints search,pages] [--anchor-duration N]
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { CLI, load as loadAvg, opt, OUT as BENCH_OUT, SHARED, tartan as pkg } from "./lib.mjs";

const OUT = join(BENCH_OUT, "serve");
const SQUAD = join(SHARED, "data", "squad", "dev-v1.1.reconstructed.json");

// ---------------------------------------------------------------------------------------------------
// Child mode: the anchor, a bare node:http server answering precomputed bodies by URL.
if (process.argv[2] === "--child-anchor") {
  const bodies = new Map(Object.entries(JSON.parse(readFileSync(process.argv[3], "utf8"))));
  const server = createServer((req, res) => {
    const body = bodies.get(req.url);
    res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" });
    res.end(body ?? '{"status":404}');
  });
  server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
} else {
  await main();
}

async function main() {
  const values = opt(
    {
      duration: { type: "string", default: "30" },
      "anchor-duration": { type: "string" },
      connections: { type: "string", default: "1,10,100" },
      endpoints: { type: "string", default: "search,pages" },
    },
    "usage: npm run bench:serve [-- --duration 30] [-- --connections 1,10,100] [-- --endpoints search,pages] [-- --anchor-duration N]",
  );
  const duration = Number(values.duration);
  const anchorDuration = Number(values["anchor-duration"] ?? Math.max(5, Math.round(duration / 3)));
  const connections = values.connections.split(",").map(Number);
  const endpoints = values.endpoints.split(",");
  if (!existsSync(SQUAD)) throw new Error(`${SQUAD}: missing (../shared beside the repository)`);

  // The store, the index and the questions, as the quick start builds them.
  const work = join(OUT, "work");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const { ingest, readSquadFile, squadToPages, squadQuestionsToKilt } = await pkg("knowledge");
  const { writeJsonl } = await pkg("records");
  const { buildBm25Index, unitsFrom } = await pkg("retrieval");
  const squad = readSquadFile(SQUAD);
  const pages = squadToPages(squad);
  await writeJsonl(join(work, "pages.jsonl"), pages);
  await ingest(join(work, "pages.jsonl"), { out: join(work, "ks"), force: true, workers: 0 });
  await buildBm25Index(unitsFrom({ ks: join(work, "ks") }, { unit: "paragraph" }), join(work, "bm25"), { unit: "paragraph", source: join(work, "ks") });
  const questions = squadQuestionsToKilt(squad, { pages }).records.map((r) => r.input);
  const urls = {
    search: questions.map((q) => `/api/search?q=${encodeURIComponent(q)}&k=10`),
    pages: pages.map((p) => `/api/pages/${encodeURIComponent(p.wikipedia_id)}`),
  };
  console.log(`SQuAD store: ${pages.length} pages; BM25 over 2,067 paragraphs; ${questions.length} questions; load average ${loadAvg()}`);

  const tartan = await startChild([CLI, "serve", "--ks", join(work, "ks"), "--index", join(work, "bm25"), "--port", "0"], /tartan serve: (http:\/\/127\.0\.0\.1:\d+)\//);
  // The anchor's bodies: what tartan answers for every URL, fetched once.
  const bodies = {};
  for (const ep of endpoints) for (const u of urls[ep]) bodies[u] = await (await fetch(`${tartan.url}${u}`)).text();
  writeFileSync(join(work, "anchor-bodies.json"), JSON.stringify(bodies));
  const anchor = await startChild([fileURLToPath(import.meta.url), "--child-anchor", join(work, "anchor-bodies.json")], /(http:\/\/127\.0\.0\.1:\d+)/);

  const results = [];
  try {
    for (const ep of endpoints) {
      for (const c of connections) {
        for (const [name, server, secs] of [["tartan", tartan, duration], ["bare http", anchor, anchorDuration]]) {
          const r = await load(server.url, urls[ep], c, secs);
          const row = { endpoint: ep, server: name, connections: c, seconds: secs, requests: r.requests.total, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max, errors: r.errors + r.timeouts, non2xx: r.non2xx };
          results.push(row);
          console.log(`${ep.padEnd(6)} ${name.padEnd(9)} ${String(c).padStart(3)} conn  ${row.rps.toFixed(0).padStart(6)} req/s  p50 ${String(row.p50).padStart(3)} ms  p99 ${String(row.p99).padStart(3)} ms  max ${String(row.max).padStart(4)} ms  errors ${row.errors}  non-2xx ${row.non2xx}  (${row.requests} requests in ${secs} s)`);
        }
      }
    }
  } finally {
    tartan.stop();
    anchor.stop();
  }
  console.log("\nendpoint  conn  tartan req/s  bare req/s  ratio  tartan p99  target");
  for (const ep of endpoints)
    for (const c of connections) {
      const t = results.find((r) => r.endpoint === ep && r.connections === c && r.server === "tartan");
      const a = results.find((r) => r.endpoint === ep && r.connections === c && r.server === "bare http");
      const target = c === 10 ? (ep === "pages" ? 50 : 100) : null;
      console.log(`${ep.padEnd(8)}  ${String(c).padStart(4)}  ${t.rps.toFixed(0).padStart(12)}  ${a.rps.toFixed(0).padStart(10)}  ${(t.rps / a.rps).toFixed(2).padStart(5)}  ${String(t.p99).padStart(7)} ms  ${target === null ? "" : `p99 ≤ ${target} ms: ${t.p99 <= target && t.errors === 0 && t.non2xx === 0 ? "met" : "NOT met"}`}`);
    }
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, "results.json"), `${JSON.stringify({ date: new Date().toISOString(), duration, anchorDuration, results }, null, 2)}\n`);
  rmSync(work, { recursive: true, force: true });
}

/** Starts a server process and waits for the line that gives its URL; `stop()` ends it by pid. */
function startChild(args, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let seen = "";
    const onData = (d) => {
      seen += d;
      const m = pattern.exec(seen);
      if (m) resolve({ url: m[1], stop: () => child.kill("SIGTERM") });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`${args[1]} exited with ${code}: ${seen}`)));
  });
}

/** autocannon on one server, cycling through `paths`. */
function load(base, paths, connections, duration) {
  let i = 0;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: base,
        connections,
        duration,
        timeout: 10,
        requests: [
          {
            method: "GET",
            setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }),
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
}
