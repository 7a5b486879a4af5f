// The server under slow and hostile clients, on 127.0.0.1 with bounded loops: uploads read before an
// evaluation slot is taken (deadline and least rate), a cut multipart body and a client gone mid-upload
// (4xx, one log line, no stack), the leaderboard and comparison on the compute worker under the gate
// (health answers meanwhile; samples bounded), Host and Origin checks without a token (DNS rebinding,
// cross-site POSTs), and no local file path in any answer.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareRuns } from "../../src/compare/compare.js";
import { buildLeaderboard } from "../../src/runs/leaderboard.js";
import { openRunsStore } from "../../src/runs/open.js";
import { makeRun } from "../../src/runs/record.js";
import { startServer, type RunningServer } from "../../src/server/listen.js";
import { withoutLocalPaths } from "../../src/server/origin.js";

const GOLD_LINE = '{"id": "q1", "input": "who?", "output": [{"answer": "Ann"}]}\n';
const PRED_LINE = '{"id": "q1", "output": [{"answer": "Ann"}]}\n';

/** A multipart body with a gold and a predictions part (optionally without its closing boundary). */
function multipart(boundary: string, closed = true): string {
  const part = (name: string, body: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n${body}\r\n`;
  return `${part("gold", GOLD_LINE)}${part("predictions", PRED_LINE)}${closed ? `--${boundary}--\r\n` : ""}`;
}

/**
 * Sends `head` and then `body` one byte every `everyMs` on a raw socket, stopping when the server
 * answers (or after `maxBytes`); resolves with what the server sent.
 */
function trickle(port: number, head: string, body: string, everyMs: number, maxBytes = 10_000): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect(port, "127.0.0.1");
    let answer = "";
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearInterval(timer);
      sock.destroy();
      resolve(answer);
    };
    sock.on("data", (d) => (answer += d.toString("utf8")));
    sock.on("end", done);
    sock.on("close", done);
    sock.on("error", done);
    sock.write(head);
    timer = setInterval(() => {
      if (answer.includes("\r\n\r\n{") || i >= Math.min(body.length, maxBytes)) {
        if (answer.includes("}")) done();
        return;
      }
      sock.write(body[i++]);
    }, everyMs);
  });
}

function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let answer = "";
    sock.on("data", (d) => (answer += d.toString("utf8")));
    sock.on("end", () => resolve(answer));
    sock.on("error", reject);
    sock.write(text); // not end(): the server closes a half-closed connection before it answers
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
const later = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe("slow uploads", () => {
  let s: RunningServer;
  const logged: string[] = [];
  beforeAll(async () => {
    s = await startServer({ port: 0, uploadTimeoutMs: 20_000, minUploadRate: 200, uploadRateWindowMs: 600, log: (l) => logged.push(l) });
  });
  afterAll(async () => s?.close());

  it("two uploads at a few bytes a second hold no evaluation slot, and are cut with a 408 for their rate", async () => {
    const body = multipart("slowb");
    const head = `POST /api/eval HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nContent-Type: multipart/form-data; boundary=slowb\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const slow = [trickle(s.port, head, body, 100), trickle(s.port, head, body, 100)];
    await later(150);
    // Both evaluation slots would be held by the slow clients if they took them before reading.
    const fd = new FormData();
    fd.set("gold", new Blob([GOLD_LINE]), "g.jsonl");
    fd.set("predictions", new Blob([PRED_LINE]), "p.jsonl");
    const started = Date.now();
    const ok = await fetch(`${s.url}/api/eval`, { method: "POST", body: fd });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).result.eval_downstream.downstream.em).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    const answers = await Promise.all(slow);
    for (const a of answers) {
      expect(statusOf(a)).toBe(408);
      expect(bodyOf(a).error).toMatch(/^the upload arrived slower than 200 bytes\/s \(\d bytes in 600 ms\)$/);
    }
    const lines = logged.filter((l) => l.includes("slower than"));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^tartan serve: POST \/api\/eval: 408 the upload arrived slower than 200 bytes\/s/);
  });

  it("an upload past its deadline is a 408 naming the deadline", async () => {
    const t = await startServer({ port: 0, uploadTimeoutMs: 400, minUploadRate: 0 });
    try {
      const body = multipart("b2");
      const head = `POST /api/eval HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\nContent-Type: multipart/form-data; boundary=b2\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
      const a = await trickle(t.port, head, body, 40);
      expect(statusOf(a)).toBe(408);
      expect(bodyOf(a).error).toMatch(/^the upload took longer than 400 ms \(\d+ bytes received\)$/);
    } finally {
      await t.close();
    }
  });
});

describe("cut bodies and clients that go away", () => {
  let s: RunningServer;
  const logged: string[] = [];
  beforeAll(async () => {
    s = await startServer({ port: 0, log: (l) => logged.push(l) });
  });
  afterAll(async () => s?.close());

  it("a multipart body cut before its closing boundary is a 400 and one log line without a stack", async () => {
    const body = multipart("cutb", false).slice(0, -10);
    const a = await rawRequest(s.port, `POST /api/eval HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nContent-Type: multipart/form-data; boundary=cutb\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    expect(statusOf(a)).toBe(400);
    expect(bodyOf(a)).toEqual({ status: 400, error: "malformed multipart body: Unexpected end of form" });
    expect(logged).toEqual(["tartan serve: POST /api/eval: 400 malformed multipart body: Unexpected end of form"]);
  });

  it("a client gone mid-upload is one log line, not an unexpected error with a stack", async () => {
    logged.length = 0;
    const sock = connect(s.port, "127.0.0.1");
    await new Promise<void>((r) => sock.once("connect", () => r()));
    sock.write(`POST /api/eval HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nContent-Type: multipart/form-data; boundary=gone\r\nContent-Length: 100000\r\n\r\n--gone\r\nContent-Disposition: form-data; name="gold"; filename="g.jsonl"\r\n\r\n{"id":`);
    await later(100);
    sock.destroy();
    for (let i = 0; i < 50 && logged.length === 0; i++) await later(50);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^tartan serve: POST \/api\/eval: 400 the client went away mid-upload after \d+ bytes \(.+\)$/);
    expect(logged.join("\n")).not.toMatch(/\n\s+at /);
    expect((await fetch(`${s.url}/api/health`)).status).toBe(200);
  });
});

describe("Host and Origin without a token", () => {
  let s: RunningServer;
  let locked: RunningServer;
  beforeAll(async () => {
    s = await startServer({ port: 0, allowHosts: ["tartan.internal"] });
    locked = await startServer({ port: 0, token: "a-long-enough-test-token" });
  });
  afterAll(async () => {
    await s?.close();
    await locked?.close();
  });
  const get = (server: RunningServer, path: string, headers: string) => rawRequest(server.port, `GET ${path} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`);

  it("answers only requests whose Host names the server (DNS rebinding)", async () => {
    for (const host of [`127.0.0.1:${s.port}`, `localhost:${s.port}`, `[::1]:${s.port}`, "tartan.internal", `LOCALHOST:${s.port}`]) expect(statusOf(await get(s, "/api/health", `Host: ${host}\r\n`)), host).toBe(200);
    for (const host of [`evil.example:${s.port}`, "attacker.test", "127.0.0.1.evil.example", "", "local host"]) {
      const a = await get(s, "/api/health", `Host: ${host}\r\n`);
      expect(statusOf(a), host).toBe(host === "" || host === "local host" ? statusOf(a) : 403);
      if (statusOf(a) === 403) expect(bodyOf(a).error).toBe(`the Host header ${JSON.stringify(host)} does not name this server (answers to 127.0.0.1, localhost, ::1, tartan.internal; start it with --allow-host NAME for another name, or give --token)`);
    }
    expect(statusOf(await get(s, "/", `Host: evil.example:${s.port}\r\n`))).toBe(403);
    expect(statusOf(await get(s, "/api/pages/x", `Host: evil.example\r\n`))).toBe(403);
    // With a token the token is the check: a browser never sends it on its own.
    expect(statusOf(await get(locked, "/api/health", "Host: evil.example\r\nAuthorization: Bearer a-long-enough-test-token\r\n"))).toBe(200);
  });

  it("refuses state-changing requests from another origin", async () => {
    const body = multipart("ob");
    const post = (extra: string) =>
      rawRequest(s.port, `POST /api/eval HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\n${extra}Content-Type: multipart/form-data; boundary=ob\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    const foreign = await post("Origin: http://evil.example\r\n");
    expect(statusOf(foreign)).toBe(403);
    expect(bodyOf(foreign)).toEqual({ status: 403, error: 'a POST from another origin ("http://evil.example") is refused without a token' });
    expect(statusOf(await post("Origin: null\r\n"))).toBe(403);
    expect(statusOf(await post("Sec-Fetch-Site: cross-site\r\n"))).toBe(403);
    expect(statusOf(await post(`Origin: http://127.0.0.1:${s.port}\r\nSec-Fetch-Site: same-origin\r\n`))).toBe(200);
    expect(statusOf(await post(""))).toBe(200); // curl, scripts: no Origin
  });
});

describe("CPU-heavy endpoints and run records", () => {
  let dir: string;
  let s: RunningServer;
  const N = 2000;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tartan-hostile-runs-"));
    const gold = join(dir, "gold.jsonl");
    const lines: string[] = [];
    const guessA: string[] = [];
    const guessB: string[] = [];
    for (let i = 0; i < N; i++) {
      lines.push(JSON.stringify({ id: `q${i}`, input: `question ${i}`, output: [{ answer: `a${i}` }] }));
      guessA.push(JSON.stringify({ id: `q${i}`, output: [{ answer: i % 3 === 0 ? `a${i}` : "x" }] }));
      guessB.push(JSON.stringify({ id: `q${i}`, output: [{ answer: i % 2 === 0 ? `a${i}` : "x" }] }));
    }
    writeFileSync(gold, `${lines.join("\n")}\n`);
    writeFileSync(join(dir, "A.jsonl"), `${guessA.join("\n")}\n`);
    writeFileSync(join(dir, "B.jsonl"), `${guessB.join("\n")}\n`);
    const store = await openRunsStore(join(dir, "runs"));
    await store.add(await makeRun({ gold, guess: join(dir, "A.jsonl"), name: "A", dataset: "nq" }));
    await store.add(await makeRun({ gold, guess: join(dir, "B.jsonl"), name: "B", dataset: "nq" }));
    await store.close();
    rmSync(gold); // the run browser must say the file is gone without naming where it was
    s = await startServer({ port: 0, runs: join(dir, "runs"), requestTimeoutMs: 120_000 });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("six leaderboards at the largest sample count run off the event loop: health answers meanwhile", async () => {
    // The server runs in this process: its event loop is this test's. One run's resampling (5,000
    // queries × 20,000 samples) takes over a second on the event loop; on the compute worker the loop
    // is never held that long.
    // The library's board is computed first, in this process: computed after the requests, it would hold
    // the event loop past the server's keep-alive timeout, and the next request could go out on a socket
    // the server is closing (ECONNRESET).
    const store = await openRunsStore(join(dir, "runs"));
    const board = await buildLeaderboard(store, { samples: 20_000, seed: 42 });
    await store.close();
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const boards = Array.from({ length: 6 }, () => fetch(`${s.url}/api/leaderboard?samples=20000`).then(async (r) => [r.status, await r.json()] as const));
    let finished = 0;
    for (const b of boards) void b.then(() => finished++);
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      await later(250);
      const t0 = Date.now();
      expect((await fetch(`${s.url}/api/health`)).status).toBe(200);
      waits.push(Date.now() - t0);
    }
    const all = await Promise.all(boards);
    delay.disable();
    expect(Math.max(...waits)).toBeLessThan(750);
    expect(delay.max / 1e6).toBeLessThan(750);
    for (const [status, body] of all) {
      expect(status).toBe(200);
      expect(body.datasets[0].runs.map((r: any) => [r.name, r.values.em, r.intervals.em])).toEqual(
        ["A", "B"].map((n) => [n, board.cells.downstream[n].nq!.mean, board.cells.downstream[n].nq!.interval]),
      );
    }
    const r = await fetch(`${s.url}/api/leaderboard?samples=100000`);
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({ status: 400, error: "samples must be between 1 and 20000, not 100000" });
  }, 120_000);

  it("compare answers from the compute worker the library's numbers", async () => {
    const r = await fetch(`${s.url}/api/compare?runs=A,B&metric=em`);
    expect(r.status).toBe(200);
    const body: any = await r.json();
    const store = await openRunsStore(join(dir, "runs"));
    const [a, b] = [await store.scores("A"), await store.scores("B")];
    await store.close();
    const lib = compareRuns([{ name: "A", ids: a.ids, metrics: a.metrics }, { name: "B", ids: b.ids, metrics: b.metrics }], { metrics: body.comparison.metrics });
    expect(body.comparison).toEqual(JSON.parse(JSON.stringify(lib)));
  }, 60_000);

  it("a run whose gold file is gone: a warning without the path", async () => {
    const r = await fetch(`${s.url}/api/runs/A/records?limit=1`);
    const text = await r.text();
    expect(r.status).toBe(200);
    expect(JSON.parse(text).warnings).toEqual(["the gold file recorded with this run is gone; records show scores only"]);
    expect(text).not.toContain(dir);
    expect(text).not.toContain(tmpdir());
  });
});

describe("withoutLocalPaths", () => {
  it("keeps the last component of absolute paths and API paths whole", () => {
    expect(withoutLocalPaths("/tmp/x/gold.jsonl: line 3: bad (see /api/openapi.json), in /home/u/runs/db")).toBe("gold.jsonl: line 3: bad (see /api/openapi.json), in db");
    expect(withoutLocalPaths("runs=A,B and a/b relative")).toBe("runs=A,B and a/b relative");
  });
});
