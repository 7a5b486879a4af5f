// Every command that takes `--runs`, `--ks` or `--index`, run through the compiled CLI with a
// clickhouse:// URL on a local 2-shard cluster (tartan's cluster scripts, stopped by pid): the SQuAD v1.1
// dev pages ingested (`ks ingest --out URL`), read back (`ks get|stats`), indexed (`index build --ks URL
// --out URL`), searched (`retrieve`, `search`, `run`, `reader`), mapped (`map --ks URL`), recorded and
// compared (`runs add|list|show|export|rm`, `leaderboard`, `compare --stored`) and served (`serve`);
// a URL where only a local path works is refused naming the flag, and nothing named `clickhouse:` is written.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { convertSquad, fromSquad } from "../../src/knowledge/build.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { startTestCluster, type TestCluster } from "./cluster-fixture.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-cli-urls-"));
const pages = join(tmp, "pages.jsonl");
const questions = join(tmp, "questions.jsonl");
/** The first 40 questions (retrieval over a cluster is per statement: a small file keeps the test short). */
const gold = join(tmp, "nq-dev-kilt.jsonl");
let cluster: TestCluster;
let ks: string;
let bm25: string;
let runs: string;
let records: KiltRecord[];

function tartan(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", cwd: tmp, timeout: 240_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs a command that must succeed; its output otherwise. */
function ok(...args: string[]): { stdout: string; stderr: string } {
  const r = tartan(...args);
  if (r.code !== 0) throw new Error(`tartan ${args.join(" ")} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r;
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
  await fromSquad(V11, pages, () => {});
  await convertSquad(V11, { out: questions, pages }, () => {});
  records = (await readJsonlAll<KiltRecord>(questions)).slice(0, 40);
  writeFileSync(gold, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  cluster = await startTestCluster(2);
  ks = cluster.url("cli", "ks");
  bm25 = cluster.url("cli", "bm25");
  runs = cluster.url("cli", "runs");
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe.sequential("the CLI with clickhouse:// URLs", () => {
  it("ks ingest --out URL, ks stats --ks URL, ks get --ks URL", () => {
    expect(ok("ks", "ingest", pages, "--out", ks).stdout.startsWith(`48 pages from ${pages} in ${ks} (2 shards); `)).toBe(true);
    expect(ok("ks", "ingest", pages, "--ks", ks).stdout).toBe(`${ks} already holds all 48 pages of ${pages}: nothing to do (--force rebuilds it)\n`);
    const stats = ok("ks", "stats", "--ks", ks).stdout;
    expect(stats).toMatch(/^pages: {11}48$/m);
    expect(stats).toMatch(/^status: {10}complete$/m);
    const page = JSON.parse(ok("ks", "get", "--ks", ks, "--title", "Super Bowl 50", "--json").stdout) as { wikipedia_title: string; text: string[] };
    expect(page.wikipedia_title).toBe("Super Bowl 50");
    expect(page.text[0]).toBe("Super Bowl 50\n");
  }, 300_000);

  it("index build --ks URL --out URL builds BM25 in ClickHouse; another kind or a non-ClickHouse URL is refused", () => {
    const b = ok("index", "build", "--kind", "bm25", "--unit", "paragraph", "--ks", ks, "--out", bm25);
    expect(b.stderr).toMatch(new RegExp(`^bm25 index of 2,067 paragraph units \\(.* on 2 shards, .*\\) from ${ks.replace(/[?.*+^$()[\]{}|\\]/g, "\\$&")} → `, "m"));
    const tfidf = tartan("index", "build", "--kind", "tfidf", "--pages", pages, "--out", cluster.url("cli", "tfidf"));
    expect(tfidf.code).toBe(2);
    expect(tfidf.stderr).toBe(`tartan: ${cluster.url("cli", "tfidf")}: only bm25 and dense indexes are built in ClickHouse (--kind bm25, or --kind dense --from-index DIR); a tfidf index needs a directory\n`);
    const s3 = tartan("index", "build", "--kind", "bm25", "--pages", pages, "--out", "s3://bucket/index");
    expect(s3.stderr).toBe("tartan: s3://bucket/index: an index goes into a directory or a clickhouse:// URL\n");
    const both = tartan("index", "build", "--kind", "bm25", "--pages", pages, "--out", join(tmp, "ix"), "--backend", bm25);
    expect(both.stderr).toBe("tartan: give the index's place once: --out DIR or URL (--backend URL is the same as --out URL)\n");
    const pagesUrl = tartan("index", "build", "--kind", "bm25", "--pages", ks, "--out", join(tmp, "ix"));
    expect(pagesUrl.stderr).toBe(`tartan: --pages takes a pages file, not a URL (${ks}); a clickhouse:// knowledge source goes to --ks\n`);
    expect(readdirSync(tmp).filter((f) => f.startsWith("clickhouse:") || f.startsWith("s3:") || f.startsWith("ix"))).toEqual([]);
  }, 300_000);

  it("ks passages --ks URL is refused naming the flag", () => {
    const r = tartan("ks", "passages", "--ks", ks, "--out", join(tmp, "passages.jsonl"));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`tartan: --ks takes a store directory, not a URL (${ks}); tartan index build --ks URL cuts a ClickHouse knowledge source into units itself\n`);
  });

  it("retrieve --index URL gives what the embedded index gives; search --index URL", () => {
    const dir = join(tmp, "bm25-embedded");
    ok("index", "build", "--kind", "bm25", "--unit", "paragraph", "--pages", pages, "--out", dir);
    ok("retrieve", "--index", bm25, "--input", gold, "--out", join(tmp, "ch.jsonl"), "--top-k", "5");
    ok("retrieve", "--index", dir, "--input", gold, "--out", join(tmp, "embedded.jsonl"), "--top-k", "5");
    const ch = readFileSync(join(tmp, "ch.jsonl"), "utf8");
    expect(ch.split("\n").filter(Boolean)).toHaveLength(40);
    expect(ch).toBe(readFileSync(join(tmp, "embedded.jsonl"), "utf8"));
    const lines = ok("search", "--index", bm25, "-k", "2", "Which NFL team represented the AFC at Super Bowl 50?").stdout.split("\n");
    expect(lines[0]).toBe("  1. 15.4161  Super Bowl 50  [squad:Super_Bowl_50 Section::::Abstract. ¶23]");
    expect(lines[0]).toBe(ok("search", "--index", dir, "-k", "2", "Which NFL team represented the AFC at Super Bowl 50?").stdout.split("\n")[0]);
  }, 300_000);

  it("runs add|list|show|export|rm, leaderboard and compare --stored with --runs URL", () => {
    expect(ok("runs", "add", join(tmp, "ch.jsonl"), "--gold", gold, "--name", "ch-bm25", "--dataset", "nq", "--index", bm25, "--runs", runs).stderr).toBe(`recorded ch-bm25 (nq, 40 queries) in ${runs}\n`);
    ok("runs", "add", join(tmp, "embedded.jsonl"), "--gold", gold, "--name", "embedded-bm25", "--dataset", "nq", "--runs", runs);
    const list = JSON.parse(ok("runs", "list", "--json", "--runs", runs).stdout) as { name: string }[];
    expect(list.map((r) => r.name)).toEqual(["ch-bm25", "embedded-bm25"]);
    const info = JSON.parse(ok("runs", "show", "ch-bm25", "--json", "--runs", runs).stdout) as { config: { indexes: { dir: string; manifest: { kind: string; unit: string; units: number } }[] } };
    expect(info.config.indexes.map((i) => [i.dir, i.manifest.kind, i.manifest.unit, i.manifest.units])).toEqual([[bm25, "bm25", "paragraph", 2067]]);
    const board = ok("leaderboard", "--runs", runs, "--format", "json").stdout;
    expect(board).toContain('"ch-bm25"');
    const compared = ok("compare", "--stored", "ch-bm25", "embedded-bm25", "--runs", runs).stdout;
    expect(compared).toContain("ch-bm25");
    expect(compared).toContain("embedded-bm25");
    const exported = ok("runs", "export", "--evalai", join(tmp, "evalai"), "--system", "ch-bm25", "--runs", runs);
    expect(exported.stderr).toMatch(/^nq: ch-bm25 → .*nq-dev-predictions-kilt\.jsonl \(scored on dev: not a submission/);
    expect(ok("runs", "rm", "embedded-bm25", "--runs", runs).stderr).toBe("removed embedded-bm25\n");
    expect((JSON.parse(ok("runs", "list", "--json", "--runs", runs).stdout) as { name: string }[]).map((r) => r.name)).toEqual(["ch-bm25"]);
  }, 300_000);

  it("map --ks URL maps as the store directory does", () => {
    ok("ks", "ingest", pages, "--out", join(tmp, "ks-dir"));
    ok("map", "--input", gold, "--out", join(tmp, "mapped-ch.jsonl"), "--ks", ks);
    ok("map", "--input", gold, "--out", join(tmp, "mapped-dir.jsonl"), "--ks", join(tmp, "ks-dir"));
    expect(readFileSync(join(tmp, "mapped-ch.jsonl"), "utf8")).toBe(readFileSync(join(tmp, "mapped-dir.jsonl"), "utf8"));
  }, 300_000);

  it("reader train|eval --index URL and run --index URL", () => {
    const model = join(tmp, "model.json");
    expect(ok("reader", "train", "--squad", V11, "--limit", "30", "--epochs", "2", "--passages", "3", "--index", bm25, "--out", model).stdout).toMatch(/^trained on \d+ of 30 questions/);
    expect((JSON.parse(readFileSync(model, "utf8")) as { training: { index: string } }).training.index).toBe(bm25);
    const e = JSON.parse(ok("reader", "eval", "--squad", V11, "--model", model, "--limit", "20", "--passages", "3", "--index", bm25, "--json").stdout) as { downstream: { em: number } };
    expect(e.downstream.em).toBeGreaterThanOrEqual(0);
    ok("run", "--input", gold, "--out", join(tmp, "run.jsonl"), "--index", bm25, "--reader", "extractive", "--model", model, "--no-evaluate");
    const out = readFileSync(join(tmp, "run.jsonl"), "utf8").split("\n").filter(Boolean);
    expect(out).toHaveLength(40);
  }, 300_000);

  it("serve --ks URL --index URL --runs URL", async () => {
    const child = spawn(process.execPath, [CLI, "serve", "--ks", ks, "--index", bm25, "--runs", runs, "--port", "0"], { cwd: tmp, stdio: ["ignore", "ignore", "pipe"] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = "";
        child.stderr.on("data", (b: Buffer) => {
          err += b.toString();
          const m = /tartan serve: (http:\/\/[^/\s]+)\//.exec(err);
          if (m) resolve(m[1]);
        });
        child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
      });
      const health = (await (await fetch(`${url}/api/health`)).json()) as { ks: { pages: number }; indexes: unknown[]; runs: number };
      expect(health.ks).toEqual({ pages: 48 });
      expect(health.indexes).toEqual([{ name: "bm25", kind: "bm25", unit: "paragraph", units: 2067, text: true }]);
      expect(health.runs).toBe(1);
      const page = (await (await fetch(`${url}/api/pages?title=${encodeURIComponent("Super Bowl 50")}`)).json()) as { wikipedia_title: string };
      expect(page.wikipedia_title).toBe("Super Bowl 50");
      const search = (await (await fetch(`${url}/api/search?q=${encodeURIComponent("Super Bowl 50 AFC champion")}&k=1`)).json()) as { index: string; hits: { rank: number; provenance: { title: string } }[] };
      expect(search.index).toBe("bm25");
      expect(search.hits.map((h) => [h.rank, h.provenance.title])).toEqual([[1, "Super Bowl 50"]]);
    } finally {
      child.kill("SIGTERM");
    }
  }, 300_000);
});
