// bench:scale-out's Xapian anchor, driven from Node: the same passages and queries, analysed by tartan's
// analyzer (so both engines index the same terms and only the weighting differs), indexed by Xapian 1.4
// (bench/scale-out-xapian.py, Debian's python3-xapian) as one database and as two shards, searched one
// query at a time from the local database and from the shards behind xapian-tcpsrv on 127.0.0.1
// (started here, stopped by pid). Reports queries/s, server CPU and bytes read per query, and the
// top-k overlap with tartan's BM25 rankings (Xapian's BM25 idf and length normalisation are not
// Lucene's, so the rankings are close, not equal).
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createConnection } from "node:net";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const PY = "/usr/bin/python3";
const HELPER = join(here, "scale-out-xapian.py");

/** Throws, saying what to install, when Debian's Xapian packages are missing. */
export function checkXapian() {
  const missing = [];
  try {
    execFileSync(PY, ["-c", "import xapian"], { stdio: "ignore" });
  } catch {
    missing.push("python3-xapian");
  }
  try {
    execFileSync("xapian-tcpsrv", ["--version"], { stdio: "ignore" });
  } catch {
    missing.push("xapian-tools");
  }
  if (missing.length > 0) throw new Error(`the Xapian anchor needs Debian's ${missing.join(" and ")} (apt-get install xapian-tools python3-xapian), or run with --no-xapian`);
}

/** Resolves when 127.0.0.1:port accepts a connection (tries for `ms`). */
async function waitPort(port, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const ok = await new Promise((res) => {
      const c = createConnection({ host: "127.0.0.1", port }, () => {
        c.destroy();
        res(true);
      });
      c.on("error", () => res(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`xapian-tcpsrv on 127.0.0.1:${port} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Mean share of the anchor's top k that the other list holds (per query, then averaged). */
function overlap(anchor, got, k) {
  let sum = 0;
  for (let i = 0; i < anchor.length; i++) {
    const a = new Set(anchor[i].slice(0, k).map((h) => h.unit));
    const n = Math.min(k, a.size);
    if (n === 0) continue;
    sum += got[i].slice(0, k).filter(([u]) => a.has(u)).length / n;
  }
  return sum / anchor.length;
}

/**
 * Builds and searches the Xapian anchor. `terms(text)`: tartan's analyzed terms; `anchorHits[k]`: the
 * embedded index's results per query at k. Returns { build, configs: [{ name, shards, remote, k: {…} }] }.
 */
export async function runXapian({ units, queries, terms, anchorHits, ks, dir, basePort }) {
  mkdirSync(dir, { recursive: true });
  const passages = join(dir, "passages.txt");
  const qfile = join(dir, "queries.txt");
  writeFileSync(passages, units.map((u) => terms(u.text).join(" ")).join("\n") + "\n");
  writeFileSync(qfile, queries.map((q) => terms(q).join(" ")).join("\n") + "\n");
  const build = {};
  for (const n of [1, 2]) {
    const t0 = performance.now();
    execFileSync(PY, [HELPER, "build", "--passages", passages, "--out", join(dir, `db${n}`), "--shards", String(n)], { stdio: "inherit" });
    build[n] = { seconds: (performance.now() - t0) / 1000 };
  }
  const search = (extra, k) => {
    const out = join(dir, `result.json`);
    rmSync(out, { force: true });
    execFileSync(PY, [HELPER, "search", "--queries", qfile, "--k", String(k), "--out", out, ...extra], { stdio: "inherit" });
    return JSON.parse(readFileSync(out, "utf8"));
  };
  const configs = [];
  const measure = (name, shards, remote, extra) => {
    const c = { name, shards, remote, k: {} };
    for (const k of ks) {
      const r = search(extra, k);
      const serverCpu = remote ? r.serverCpuSeconds : r.cpuSeconds;
      const serverRead = remote ? r.serverRcharBytes : r.rcharBytes;
      c.k[k] = {
        queries: r.queries,
        seconds: r.seconds,
        qps: r.queries / r.seconds,
        clientCpuSeconds: r.cpuSeconds,
        serverCpuMsPerQuery: (1000 * serverCpu) / r.queries,
        bytesReadPerQuery: serverRead / r.queries,
        overlap: overlap(anchorHits[k], r.hits, k),
        overlapAt10: overlap(anchorHits[k], r.hits, 10),
      };
    }
    configs.push(c);
    return c;
  };
  measure("xapian, one database (in-process)", 1, false, ["--db", join(dir, "db1", "shard0")]);
  // The servers: one per shard database, on 127.0.0.1, stopped by pid.
  for (const n of [1, 2]) {
    const procs = [];
    try {
      for (let i = 0; i < n; i++) {
        const port = basePort + i;
        // (its own process group: on SIGTERM xapian-tcpsrv signals its whole group, its connections'
        // processes, which would otherwise include this process and the shell that started it)
        const p = spawn("xapian-tcpsrv", ["--port", String(port), "--interface", "127.0.0.1", "--quiet", join(dir, `db${n}`, `shard${i}`)], { stdio: "ignore", detached: true });
        procs.push({ p, port });
      }
      for (const { port } of procs) await waitPort(port);
      measure(`xapian, ${n} shard${n > 1 ? "s" : ""} behind xapian-tcpsrv`, n, true, [
        "--remote",
        procs.map(({ port }) => `127.0.0.1:${port}`).join(","),
        "--server-pids",
        procs.map(({ p }) => p.pid).join(","),
      ]);
    } finally {
      for (const { p } of procs) {
        if (p.exitCode === null) {
          const exited = new Promise((r) => p.once("exit", r));
          process.kill(p.pid, "SIGTERM");
          await exited;
        }
      }
    }
  }
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  return { build, configs };
}
