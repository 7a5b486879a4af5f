// `tartan mcp` under bad and hostile input: garbage, over-long and non-JSON-RPC lines over stdio are
// answered with JSON-RPC errors and the server goes on serving; over HTTP an oversized body (chunked
// too) is a 413 and the endpoint answers the next request; every path argument is refused when it
// aliases the transport (-, /dev, /proc, links to them) or leaves the directories given; heavy tools
// (compare_runs) run on worker threads under `tartan serve`'s gate and sample limit while light calls
// (list_runs, get_page) answer within 750 ms, measured on loopback.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { compareRuns } from "../../src/compare/compare.js";
import { ingest } from "../../src/knowledge/ingest.js";
import { syntheticPages } from "../../src/knowledge/synthetic.js";
import { writeJsonl } from "../../src/records/jsonl.js";
import { startMcpHttp, type RunningMcpHttp } from "../../src/mcp/http.js";
import { openRunsStore } from "../../src/runs/open.js";
import { makeRun } from "../../src/runs/record.js";
import { Resources } from "../../src/server/resources.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
const later = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tartan-mcp-hardening-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Answer = { id: number | string | null; result?: any; error?: { code: number; message: string } };

async function connect(url: string): Promise<Client> {
  const c = new Client({ name: "tartan-test", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  return c;
}

async function toolText(c: Client, name: string, args: Record<string, unknown>): Promise<[boolean, string]> {
  const r = (await c.callTool({ name, arguments: args })) as { content: { text: string }[]; isError?: boolean };
  return [r.isError === true, r.content[0].text];
}

describe("tartan mcp over stdio, fed garbage", () => {
  it("answers each bad line with a JSON-RPC error and goes on serving", () => {
    // 11 MiB: past the SDK transport's 10 MiB buffer, which closed the connection
    const huge = `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"pad":"${"x".repeat(11 * 1024 * 1024)}"}}`;
    const input = ["garbage", huge, JSON.stringify({ id: 3, foo: 1 }), "", JSON.stringify(INIT), JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })].join("\n") + "\n";
    const r = spawnSync(process.execPath, [CLI, "mcp"], { input, encoding: "utf8", timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
    expect([r.status, r.stderr]).toEqual([0, ""]);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Answer);
    expect(lines.map((l) => [l.id, l.error?.code ?? null])).toEqual([
      [null, -32700],
      [null, -32600],
      [3, -32600],
      [1, null],
      [2, null],
    ]);
    expect(lines[0].error!.message).toMatch(/^Parse error: /);
    expect(lines[1].error!.message).toBe("Invalid Request: the request is longer than 4194304 bytes (the rest of its line is skipped)");
    expect(lines[3].result.serverInfo.name).toBe("tartan");
    expect(lines[4].result.tools.length).toBe(6);
  });
});

describe("tartan mcp's tools and paths", () => {
  let http: RunningMcpHttp;
  let bare: RunningMcpHttp;
  let resources: Resources;
  let open: string;
  let data: string;
  const gold = () => join(open, "gold.jsonl");
  const guess = () => join(open, "guess.jsonl");
  beforeAll(async () => {
    open = join(dir, "open");
    data = join(dir, "data");
    mkdirSync(open);
    mkdirSync(data);
    writeFileSync(gold(), `${JSON.stringify({ id: "q1", input: "q", output: [{ answer: "yes" }] })}\n`);
    writeFileSync(guess(), `${JSON.stringify({ id: "q1", output: [{ answer: "yes" }] })}\n`);
    writeFileSync(join(dir, "outside.jsonl"), `${JSON.stringify({ id: "q1", output: [{ answer: "yes" }] })}\n`);
    symlinkSync("/dev/stdin", join(open, "stdin.jsonl"));
    symlinkSync(join(dir, "outside.jsonl"), join(open, "escape.jsonl"));
    symlinkSync(join(dir, "outside.jsonl"), join(data, "nq-dev-kilt.jsonl"));
    spawnSync("mkfifo", [join(open, "fifo.jsonl")]);
    resources = await Resources.open({ data });
    http = await startMcpHttp(resources, { port: 0, files: [open], maxBody: 1000 });
    bare = await startMcpHttp(await Resources.open({}), { port: 0 });
  });
  afterAll(async () => {
    await http?.close();
    await bare?.close();
    await resources?.close();
  });

  it("refuses every path that aliases the transport or leaves the open directories, naming the argument", async () => {
    const c = await connect(http.url);
    const refused = (arg: string, p: string, why: string) => `${arg}: ${JSON.stringify(p)} refused: ${why}`;
    const dev = "a /dev, /proc or /sys path (it may be the server's own standard input or output)";
    const cases: [Record<string, unknown>, string][] = [
      [{ predictions: "-", gold: gold() }, refused("predictions", "-", '"-" is standard input, which is the MCP connection; give a file\'s path')],
      [{ predictions: "/dev/stdin", gold: gold() }, refused("predictions", "/dev/stdin", dev)],
      [{ predictions: "/dev/stdout", gold: gold() }, refused("predictions", "/dev/stdout", dev)],
      [{ predictions: "/proc/self/fd/0", gold: gold() }, refused("predictions", "/proc/self/fd/0", dev)],
      [{ predictions: guess(), gold: "/dev/fd/0" }, refused("gold", "/dev/fd/0", dev)],
      [{ predictions: guess(), gold: "-" }, refused("gold", "-", '"-" is standard input, which is the MCP connection; give a file\'s path')],
      [{ predictions: join(open, "stdin.jsonl"), gold: gold() }, refused("predictions", join(open, "stdin.jsonl"), "it resolves to /dev/stdin, a /dev, /proc or /sys path")],
      [{ predictions: join(dir, "outside.jsonl"), gold: gold() }, refused("predictions", join(dir, "outside.jsonl"), `outside the directories open to the tools (${open}, ${data})`)],
      [{ predictions: join(open, "..", "outside.jsonl"), gold: gold() }, refused("predictions", join(open, "..", "outside.jsonl"), `outside the directories open to the tools (${open}, ${data})`)],
      [{ predictions: join(open, "escape.jsonl"), gold: gold() }, refused("predictions", join(open, "escape.jsonl"), `it resolves to ${join(dir, "outside.jsonl")}, outside the directories open to the tools (${open}, ${data})`)],
      [{ predictions: join(open, "fifo.jsonl"), gold: gold() }, refused("predictions", join(open, "fifo.jsonl"), "not a regular file")],
      [{ predictions: guess(), dataset: "nq" }, refused("dataset", join(data, "nq-dev-kilt.jsonl"), `it resolves to ${join(dir, "outside.jsonl")}, outside the directories open to the tools (${open}, ${data})`)],
      [{ predictions: join(open, "missing.jsonl"), gold: gold() }, `${join(open, "missing.jsonl")}: no such file or directory`],
    ];
    for (const [args, message] of cases) expect([args, await toolText(c, "evaluate", args)]).toEqual([args, [true, message]]);
    // a path inside is scored
    const [isError, text] = await toolText(c, "evaluate", { predictions: guess(), gold: gold(), mode: "downstream" });
    expect([isError, JSON.parse(text).result.downstream.em, JSON.parse(text).counts.evaluated]).toEqual([false, 1, 1]);
    await c.close();
    // a server given no directory reads no file at all
    const b = await connect(bare.url);
    expect(await toolText(b, "evaluate", { predictions: guess(), gold: gold() })).toEqual([true, refused("predictions", guess(), "no directory is open to the tools (start tartan mcp with --files DIR, or --data DIR)")]);
    await b.close();
  });

  it("answers an oversized body with 413, chunked or not, a non-JSON body with 400, and goes on serving", async () => {
    const post = (body: string, chunked: boolean) =>
      new Promise<[number, Answer]>((resolve, reject) => {
        const headers: Record<string, string> = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
        if (!chunked) headers["Content-Length"] = String(Buffer.byteLength(body));
        const req = request(http.url, { method: "POST", headers }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => (text += d));
          res.on("end", () => resolve([res.statusCode!, JSON.parse(text) as Answer]));
        });
        req.on("error", reject);
        // in pieces, so no length is known in advance
        for (let i = 0; i < body.length; i += 500) req.write(body.slice(i, i + 500));
        req.end();
      });
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(5000) } });
    const [chunked, chunkedBody] = await post(big, true);
    expect([chunked, chunkedBody.error]).toEqual([413, { code: -32000, message: "Payload Too Large: Request body must not exceed 1000 bytes" }]);
    const [declared, declaredBody] = await post(big, false);
    expect([declared, declaredBody.error]).toEqual([413, { code: -32000, message: "the request body is larger than 1000 bytes" }]);
    const [garbage, garbageBody] = await post("garbage", false);
    expect([garbage, garbageBody.error]).toEqual([400, { code: -32700, message: "Parse error: Invalid JSON" }]);
    const c = await connect(http.url);
    expect((await c.listTools()).tools.length).toBe(6);
    await c.close();
  });
});

describe("tartan mcp's heavy tools", () => {
  const N = 2000;
  let runsDir: string;
  let resources: Resources;
  let http: RunningMcpHttp;
  let title: string;
  beforeAll(async () => {
    runsDir = join(dir, "heavy");
    mkdirSync(runsDir);
    const lines: string[] = [];
    const [ga, gb]: string[][] = [[], []];
    for (let i = 0; i < N; i++) {
      lines.push(JSON.stringify({ id: `q${i}`, input: `question ${i}`, output: [{ answer: `a${i}` }] }));
      ga.push(JSON.stringify({ id: `q${i}`, output: [{ answer: i % 3 === 0 ? `a${i}` : "x" }] }));
      gb.push(JSON.stringify({ id: `q${i}`, output: [{ answer: i % 2 === 0 ? `a${i}` : "x" }] }));
    }
    writeFileSync(join(runsDir, "gold.jsonl"), `${lines.join("\n")}\n`);
    writeFileSync(join(runsDir, "A.jsonl"), `${ga.join("\n")}\n`);
    writeFileSync(join(runsDir, "B.jsonl"), `${gb.join("\n")}\n`);
    const store = await openRunsStore(join(runsDir, "runs"));
    for (const n of ["A", "B"]) await store.add(await makeRun({ gold: join(runsDir, "gold.jsonl"), guess: join(runsDir, `${n}.jsonl`), name: n, dataset: "nq" }));
    await store.close();
    const pages = [...syntheticPages({ pages: 5, seed: 3 })];
    title = pages[2].wikipedia_title;
    await writeJsonl(join(runsDir, "pages.jsonl"), pages);
    await ingest(join(runsDir, "pages.jsonl"), { out: join(runsDir, "ks"), force: true, workers: 0 });
    resources = await Resources.open({ runs: join(runsDir, "runs"), ks: join(runsDir, "ks") });
    http = await startMcpHttp(resources, { port: 0, requestTimeoutMs: 300_000 });
  }, 120_000);
  afterAll(async () => {
    await http?.close();
    await resources?.close();
  });

  it("refuses more samples than tartan serve allows", async () => {
    const c = await connect(http.url);
    const [isError, text] = await toolText(c, "compare_runs", { a: "A", b: "B", samples: 20_001 });
    expect(isError).toBe(true);
    expect(text).toContain("samples");
    expect(text).toContain("20000");
    await c.close();
  });

  it("twelve comparisons at the largest sample count: ten run two at a time, two are refused, list_runs and get_page answer meanwhile", async () => {
    const store = await openRunsStore(join(runsDir, "runs"));
    const [sa, sb] = [await store.scores("A"), await store.scores("B")];
    await store.close();
    const metrics = ["em", "KILT-em", "Rprec", "recall@5"].filter((m) => m in sa.metrics);
    const expected = JSON.parse(JSON.stringify(compareRuns([{ name: "A", ids: sa.ids, metrics: sa.metrics }, { name: "B", ids: sb.ids, metrics: sb.metrics }], { metrics, samples: 20_000, permutations: 20_000, seed: 42, test: "randomization" })));
    const heavy = await connect(http.url);
    const light = await connect(http.url);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const calls = Array.from({ length: 12 }, () => toolText(heavy, "compare_runs", { a: "A", b: "B", samples: 20_000 }));
    let finished = 0;
    for (const call of calls) void call.then(() => finished++);
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      await later(250);
      const t0 = Date.now();
      const [isError, text] = await toolText(light, "list_runs", {});
      waits.push(Date.now() - t0);
      expect([isError, JSON.parse(text).runs.map((r: any) => r.name)]).toEqual([false, ["A", "B"]]);
      const t1 = Date.now();
      const [pageError, page] = await toolText(light, "get_page", { title });
      waits.push(Date.now() - t1);
      expect([pageError, JSON.parse(page).wikipedia_title]).toEqual([false, title]);
    }
    const unfinished = 12 - finished;
    const all = await Promise.all(calls);
    delay.disable();
    expect(Math.max(...waits)).toBeLessThan(750);
    expect(delay.max / 1e6).toBeLessThan(750);
    // the light calls were answered while comparisons were still running
    expect(unfinished).toBeGreaterThan(2);
    const refused = all.filter(([isError]) => isError);
    expect(refused).toEqual([
      [true, "too many computation requests at once; try again shortly"],
      [true, "too many computation requests at once; try again shortly"],
    ]);
    for (const [, text] of all.filter(([isError]) => !isError)) expect(JSON.parse(text).comparison).toEqual(expected);
    await heavy.close();
    await light.close();
  }, 300_000);
});
