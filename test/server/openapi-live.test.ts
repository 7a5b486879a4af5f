// The OpenAPI document against a running server: `tartan serve` started as a child process (the
// built CLI, on 127.0.0.1, any free port, stopped by its pid), and every answer of every route, success
// and error, validated with Ajv (JSON Schema 2020-12, strict) against the schema the served
// /api/openapi.json gives for that route, method and status. An undescribed status fails, and every
// described one must be met except those no test can cause on purpose (408 deadlines, 500, 503 full
// queues). The schemas are generated from the route types (scripts/api-schemas.mjs): a stale
// src/server/api-schemas.ts fails too. Needs `npm run build` (dist/).

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { localPath } from "../../src/datasets/catalogue.js";
import { openRunsStore } from "../../src/runs/open.js";
import { makeRun } from "../../src/runs/record.js";
import { runsFixture, type RunsFixture } from "./runs-fixture.js";
import { DENSE_DIM as DIM, denseWithoutEncoder } from "./dense-fixture.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const CLI = join(ROOT, "dist", "src", "cli", "main.js");
const TOKEN = "openapi-live-test-token";
const BASE = "https://tartan.invalid/openapi.json";

interface Live {
  child: ChildProcess;
  url: string;
  port: number;
}

let f: RunsFixture;
let tmp: string;
let full: Live;
let bare: Live;
let doc: { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>; components: { schemas: Record<string, object> } };
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
const validators = new Map<string, ValidateFunction>();
/** `METHOD path status` of every answer validated. */
const met = new Set<string>();

/** Starts `tartan serve` with `args` on a free loopback port; resolves once it prints its URL. */
function serve(args: string[]): Promise<Live> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "serve", "--host", "127.0.0.1", "--port", "0", "--search-threads", "1", ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (d: string) => {
      err += d;
      const m = /tartan serve: (http:\/\/127\.0\.0\.1:(\d+))\//.exec(err);
      if (m) resolve({ child, url: m[1], port: Number(m[2]) });
    });
    child.on("exit", (code) => reject(new Error(`tartan serve exited ${code}: ${err}`)));
  });
}

/** Stops a server by its pid and waits for it to go. */
function stop(s: Live | undefined): Promise<void> {
  if (!s || s.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    s.child.once("exit", () => resolve());
    process.kill(s.child.pid!, "SIGTERM");
  });
}

/** A request and its status and JSON body: by fetch, or sent as written (node:http) when it names a Host. */
async function call(s: Live, path: string, o: { method?: string; headers?: Record<string, string>; body?: string | Buffer; token?: boolean } = {}): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { ...(o.token === false ? {} : { authorization: `Bearer ${TOKEN}` }), ...o.headers };
  const size = o.body === undefined ? 0 : Buffer.byteLength(o.body);
  if (size > 1024 * 1024 && !("host" in headers)) {
    // an upload over the limit: the server answers 413 before reading it all and closes, so the client may
    // see the answer and then a reset, or (a loaded machine) the reset first: take the answer, retry a reset
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(s, path, o.method ?? "GET", headers, o.body);
      } catch (e) {
        if (attempt >= 5 || !/EPIPE|ECONNRESET/.test(String((e as NodeJS.ErrnoException).code ?? e))) throw e;
      }
    }
  }
  if (!("host" in headers)) {
    const body = o.body === undefined || typeof o.body === "string" ? o.body : new Uint8Array(o.body);
    const res = await fetch(`${s.url}${path}`, { method: o.method ?? "GET", headers, body });
    expect(res.headers.get("content-type")).toMatch(/^application\/json\b/);
    return { status: res.status, body: await res.json() };
  }
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: s.port, path, method: o.method ?? "GET", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        expect(res.headers["content-type"]).toMatch(/^application\/json\b/);
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      });
    });
    req.on("error", reject);
    req.end(o.body);
  });
}

/** A request by node:http whose answer counts once it arrives, whatever happens to the rest of the upload. */
function send(s: Live, path: string, method: string, headers: Record<string, string>, body: string | Buffer | undefined): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request({ host: "127.0.0.1", port: s.port, path, method, headers: { ...headers, "content-length": String(body === undefined ? 0 : Buffer.byteLength(body)) }, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      res.on("error", (e) => reject(e));
    });
    req.on("error", (e) => {
      if (!answered) reject(e);
    });
    req.end(body);
  });
}

/** A multipart body of `parts` (files as [name, text]). */
function multipart(parts: Record<string, string | [string, string | Buffer]>): { body: Buffer; type: string } {
  const boundary = "----tartan-openapi-live";
  const chunks: Buffer[] = [];
  for (const [name, v] of Object.entries(parts)) {
    const head = Array.isArray(v) ? `Content-Disposition: form-data; name="${name}"; filename="${v[0]}"\r\nContent-Type: application/octet-stream` : `Content-Disposition: form-data; name="${name}"`;
    chunks.push(Buffer.from(`--${boundary}\r\n${head}\r\n\r\n`), Buffer.from(Array.isArray(v) ? v[1] : v), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}

/** The validator of the answer the document describes for (method, path template, status). */
function validator(method: string, path: string, status: number): ValidateFunction {
  const key = `${method} ${path} ${status}`;
  let v = validators.get(key);
  if (!v) {
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect(op, `${method} ${path} is described`).toBeDefined();
    const response = op.responses[String(status)];
    expect(response, `${method} ${path} describes status ${status}`).toBeDefined();
    const schema = response.content?.["application/json"]?.schema;
    expect(schema, `${method} ${path} ${status} has a JSON schema`).toBeDefined();
    v = ajv.compile(absolute(schema!));
    validators.set(key, v);
  }
  return v;
}

/** A schema with its `#/components/schemas/…` references made absolute (into the document added to Ajv). */
function absolute(schema: object): object {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${BASE}#/$defs/`)) as object;
}

/** Asks `s` and checks the answer: the status expected, and the body valid against the document's schema. */
async function check(s: Live, method: string, template: string, status: number, path: string, o: Parameters<typeof call>[2] = {}): Promise<any> {
  const r = await call(s, path, { ...o, method });
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body).slice(0, 300)}`).toBe(status);
  const v = validator(method, template, status);
  expect(v(r.body) ? [] : v.errors, `${method} ${path} ${status} answers as described`).toEqual([]);
  met.add(`${method} ${template} ${status}`);
  return r.body;
}

const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { "content-type": "application/json" } });
const form = (parts: Parameters<typeof multipart>[0]) => {
  const m = multipart(parts);
  return { body: m.body, headers: { "content-type": m.type } };
};

beforeAll(async () => {
  f = await runsFixture();
  tmp = mkdtempSync(join(tmpdir(), "tartan-openapi-live-"));
  // A dense index from precomputed vectors over the BM25 index's paragraphs: no encoder, so no text search.
  denseWithoutEncoder(f.index, tmp, join(tmp, "dense"));
  // An impact index of the BM25 index's scores: searched with sparse query vectors (terms).
  const impact = spawnSync(process.execPath, [CLI, "index", "build", "--kind", "impact", "--from-bm25", f.index, "--out", join(tmp, "impact")], { encoding: "utf8" });
  if (impact.status !== 0) throw new Error(`index build --from-bm25: ${impact.stderr}`);
  // A third run on half the questions: compared with a full one, it cannot be aligned (422).
  const half = (file: string, out: string) => writeFileSync(join(tmp, out), `${readFileSync(file, "utf8").trim().split("\n").slice(0, 50).join("\n")}\n`);
  half(f.gold, "half-gold.jsonl");
  half(join(f.work, "test-predictions.jsonl"), "half-guess.jsonl");
  const store = await openRunsStore(f.runs);
  await store.add(await makeRun({ gold: join(tmp, "half-gold.jsonl"), guess: join(tmp, "half-guess.jsonl"), name: "half", dataset: "squad" }));
  await store.close();
  // A data directory holding one dataset's dev file (the quick start's gold under NQ's released name).
  const data = join(tmp, "data");
  const nqDev = localPath("nq", "dev", data);
  mkdirSync(dirname(nqDev), { recursive: true });
  copyFileSync(f.gold, nqDev);
  full = await serve(["--ks", f.ks, "--index", f.index, join(tmp, "dense"), join(tmp, "impact"), "--runs", f.runs, "--data", data, "--token", TOKEN, "--max-upload", "2"]);
  // Nothing loaded and no token: the 404s of what is missing, and the Host and origin checks (403).
  bare = await serve([]);
  const served = await call(full, "/api/openapi.json");
  doc = served.body as typeof doc;
  ajv.addSchema(absolute({ $id: BASE, $defs: doc.components.schemas }));
}, 600_000);

afterAll(async () => {
  await stop(full);
  await stop(bare);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("the generated schemas", () => {
  it("are current with src/server/api-types.ts", () => {
    const r = spawnSync(process.execPath, [join(ROOT, "scripts", "api-schemas.mjs"), "--check"], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("are what the server describes, each compiling under Ajv's strict mode", () => {
    expect(Object.keys(doc.components.schemas)).toContain("SearchAnswer");
    for (const name of Object.keys(doc.components.schemas)) expect(() => ajv.getSchema(`${BASE}#/$defs/${name}`)).not.toThrow();
    // Every 200 answer of a data operation has a named schema, none only {"type":"object"}.
    const loose = Object.entries(doc.paths).flatMap(([p, ops]) => Object.entries(ops).filter(([, op]) => !("$ref" in (op.responses["200"].content!["application/json"].schema as object))).map(([m]) => `${m} ${p}`));
    expect(loose).toEqual(["get /api/openapi.json"]);
  });
});

describe("live answers match the document", () => {
  const question = "Which NFL team represented the AFC at Super Bowl 50?";

  it("GET /api/health", async () => {
    const h = await check(full, "GET", "/api/health", 200, "/api/health");
    expect(h.indexes.map((i: { name: string; text: boolean }) => [i.name, i.text])).toEqual([["index-bm25", true], ["dense", false], ["impact", true]]);
    await check(full, "GET", "/api/health", 401, "/api/health", { token: false });
    await check(bare, "GET", "/api/health", 200, "/api/health");
  });

  it("GET /api/search", async () => {
    const r = await check(full, "GET", "/api/search", 200, `/api/search?q=${encodeURIComponent(question)}&k=3`);
    expect(r.hits).toHaveLength(3);
    await check(full, "GET", "/api/search", 400, "/api/search?k=3");
    await check(full, "GET", "/api/search", 400, "/api/search?q=x&nprobe=4");
    await check(full, "GET", "/api/search", 404, "/api/search?q=x&index=nope");
    await check(full, "GET", "/api/search", 422, "/api/search?q=x&index=dense");
  });

  it("POST /api/search", async () => {
    const r = await check(full, "POST", "/api/search", 200, "/api/search", json({ queries: [question, "Normans"], k: 2 }));
    expect(r.results).toHaveLength(2);
    const v = await check(full, "POST", "/api/search", 200, "/api/search", json({ queries: ["a", "b"], k: 2, index: "dense", vectors: [Array(DIM).fill(0.5), Array(DIM).fill(-0.5)] }));
    expect(v.results.map((x: { hits: unknown[] }) => x.hits.length)).toEqual([2, 2]);
    const t = await check(full, "POST", "/api/search", 200, "/api/search", json({ queries: ["a", "b"], k: 2, index: "impact", terms: [{ super: 1, bowl: 2 }, { norman: 1.5 }] }));
    expect(t.results.map((x: { hits: unknown[] }) => x.hits.length)).toEqual([2, 2]);
    await check(full, "POST", "/api/search", 400, "/api/search", json({ queries: ["a"], index: "impact", terms: [{ bowl: -1 }] }));
    await check(full, "POST", "/api/search", 400, "/api/search", json({ queries: [] }));
    await check(full, "POST", "/api/search", 404, "/api/search", json({ queries: ["x"], index: "nope" }));
    await check(full, "POST", "/api/search", 413, "/api/search", json({ queries: ["x".repeat(3 * 1024 * 1024)] }));
    await check(full, "POST", "/api/search", 415, "/api/search", { body: "queries=x", headers: { "content-type": "text/plain" } });
    await check(full, "POST", "/api/search", 422, "/api/search", json({ queries: ["x"], index: "dense" }));
  });

  it("GET /api/pages/{id} and /api/pages", async () => {
    const p = await check(full, "GET", "/api/pages/{id}", 200, "/api/pages/squad%3ASuper_Bowl_50");
    expect(p.wikipedia_title).toBe("Super Bowl 50");
    await check(full, "GET", "/api/pages/{id}", 400, `/api/pages/${"x".repeat(1001)}`);
    await check(full, "GET", "/api/pages/{id}", 404, "/api/pages/nope");
    await check(full, "GET", "/api/pages", 200, "/api/pages?title=normans");
    await check(full, "GET", "/api/pages", 400, "/api/pages");
    await check(full, "GET", "/api/pages", 404, "/api/pages?title=nope");
  });

  it("GET /api/provenance", async () => {
    const s = await check(full, "GET", "/api/provenance", 200, "/api/provenance?wikipedia_id=squad:Super_Bowl_50&start_paragraph_id=1&start_character=177&end_character=191");
    expect(s.text).toBe("Denver Broncos");
    await check(full, "GET", "/api/provenance", 400, "/api/provenance?wikipedia_id=squad:Super_Bowl_50");
    await check(full, "GET", "/api/provenance", 404, "/api/provenance?wikipedia_id=nope&start_paragraph_id=1");
    await check(full, "GET", "/api/provenance", 422, "/api/provenance?wikipedia_id=squad:Super_Bowl_50&start_paragraph_id=9999");
  });

  it("POST /api/eval", async () => {
    const gold = readFileSync(f.gold, "utf8");
    const guess = readFileSync(join(f.work, "test-predictions.jsonl"), "utf8");
    const e = await check(full, "POST", "/api/eval", 200, "/api/eval", form({ gold: ["gold.jsonl", gold], predictions: ["p.jsonl", guess] }));
    expect(e.counts.evaluated).toBe(100);
    expect(e.per_query).toHaveLength(100);
    await check(full, "POST", "/api/eval", 200, "/api/eval", form({ dataset: "nq", predictions: ["p.jsonl", guess], per_query: "false" }));
    await check(full, "POST", "/api/eval", 400, "/api/eval", form({ gold: ["gold.jsonl", gold] }));
    await check(full, "POST", "/api/eval", 404, "/api/eval", form({ dataset: "nope", predictions: ["p.jsonl", guess] }));
    await check(full, "POST", "/api/eval", 404, "/api/eval", form({ dataset: "hotpotqa", predictions: ["p.jsonl", guess] }));
    await check(full, "POST", "/api/eval", 413, "/api/eval", form({ gold: ["gold.jsonl", "x".repeat(3 * 1024 * 1024)], predictions: ["p.jsonl", guess] }));
    await check(full, "POST", "/api/eval", 415, "/api/eval", json({ predictions: "x" }));
    // Nothing scored: the reason and the problems (EvalRefusal).
    const refusal = await check(full, "POST", "/api/eval", 422, "/api/eval", form({ gold: ["gold.jsonl", ""], predictions: ["p.jsonl", guess] }));
    expect(refusal.problems.length).toBeGreaterThan(0);
    // A file the evaluator cannot read (not gzip, by its name): a plain error.
    const unreadable = await check(full, "POST", "/api/eval", 422, "/api/eval", form({ gold: ["gold.jsonl", gold], predictions: ["p.jsonl.gz", "not gzip"] }));
    expect(unreadable.problems).toBeUndefined();
  });

  it("GET /api/runs, /api/runs/{name} and its records", async () => {
    const runs = await check(full, "GET", "/api/runs", 200, "/api/runs");
    expect(runs.runs.map((r: { name: string }) => r.name).sort()).toEqual(["bm25+reader", "bm25+reader-top1", "half"]);
    await check(full, "GET", "/api/runs", 400, `/api/runs?dataset=${"x".repeat(101)}`);
    await check(bare, "GET", "/api/runs", 404, "/api/runs");
    await check(full, "GET", "/api/runs/{name}", 200, "/api/runs/bm25%2Breader");
    await check(full, "GET", "/api/runs/{name}", 400, `/api/runs/${"x".repeat(201)}`);
    await check(full, "GET", "/api/runs/{name}", 404, "/api/runs/nope");
    for (const filter of ["all", "right", "wrong", "no-evidence"]) await check(full, "GET", "/api/runs/{name}/records", 200, `/api/runs/bm25%2Breader/records?filter=${filter}&limit=200`);
    await check(full, "GET", "/api/runs/{name}/records", 200, "/api/runs/bm25%2Breader/records?q=disney&filter=wrong");
    await check(full, "GET", "/api/runs/{name}/records", 400, "/api/runs/bm25%2Breader/records?filter=bogus");
    await check(full, "GET", "/api/runs/{name}/records", 404, "/api/runs/nope/records");
  });

  it("GET /api/compare", async () => {
    const c = await check(full, "GET", "/api/compare", 200, "/api/compare?runs=bm25%2Breader,bm25%2Breader-top1");
    expect(c.comparison.queries).toBe(100);
    await check(full, "GET", "/api/compare", 400, "/api/compare?runs=bm25%2Breader");
    await check(full, "GET", "/api/compare", 404, "/api/compare?runs=bm25%2Breader,nope");
    await check(full, "GET", "/api/compare", 422, "/api/compare?runs=bm25%2Breader,half");
  });

  it("GET /api/leaderboard", async () => {
    const l = await check(full, "GET", "/api/leaderboard", 200, "/api/leaderboard?samples=200");
    expect(l.datasets.map((d: { dataset: string }) => d.dataset)).toEqual(["squad"]);
    await check(full, "GET", "/api/leaderboard", 400, "/api/leaderboard?samples=0");
    await check(bare, "GET", "/api/leaderboard", 404, "/api/leaderboard");
  });

  it("GET /api/openapi.json", async () => {
    await check(full, "GET", "/api/openapi.json", 200, "/api/openapi.json");
    await check(full, "GET", "/api/openapi.json", 401, "/api/openapi.json", { token: false });
  });

  it("every route refuses a foreign Host (403) and a missing token (401)", async () => {
    const paths: [string, string, string][] = [];
    for (const [template, ops] of Object.entries(doc.paths)) for (const m of Object.keys(ops)) paths.push([m.toUpperCase(), template, template.replace("{id}", "squad:Normans").replace("{name}", "bm25%2Breader")]);
    for (const [method, template, path] of paths) {
      await check(bare, method, template, 403, path, { headers: { host: "attacker.example" }, token: false });
      await check(full, method, template, 401, path, { token: false });
    }
    // A cross-origin POST, same Host.
    await check(bare, "POST", "/api/search", 403, "/api/search", { ...json({ queries: ["x"] }), headers: { "content-type": "application/json", origin: "http://attacker.example" }, token: false });
  });

  it("met every described answer but deadlines, internal errors and full queues", () => {
    const described = Object.entries(doc.paths).flatMap(([p, ops]) => Object.entries(ops).flatMap(([m, op]) => Object.keys(op.responses).map((s) => `${m.toUpperCase()} ${p} ${s}`)));
    const unmet = described.filter((d) => !met.has(d));
    expect(unmet.filter((d) => !/ (408|500|503)$/.test(d))).toEqual([]);
    expect([...met].filter((m) => !described.includes(m))).toEqual([]);
    expect(met.size).toBe(described.length - unmet.length);
  });
});
