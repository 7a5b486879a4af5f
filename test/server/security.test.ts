// The server's safety rules, each on its own: loopback by default and a token elsewhere, the bearer
// check, the upload limit (declared and streamed), traversal in every path parameter, malformed JSON
// and wrong types, deadlines, JSON errors without stacks, and a server that survives failing requests.

import { tmpdir } from "node:os";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLoopback, startServer, type RunningServer } from "../../src/server/listen.js";
import { squadFixture, type SquadFixture } from "./fixture.js";

let f: SquadFixture;
let open: RunningServer;
let locked: RunningServer;
const TOKEN = "a-long-enough-test-token";
const logged: string[] = [];

beforeAll(async () => {
  f = await squadFixture();
  open = await startServer({ ks: f.ks, indexes: [f.bm25], port: 0, maxUpload: 64 * 1024, log: (l) => logged.push(l) });
  locked = await startServer({ ks: f.ks, indexes: [f.bm25], port: 0, token: TOKEN });
}, 300_000);
afterAll(async () => {
  await open?.close();
  await locked?.close();
});

/** A request with the path sent exactly as written (fetch would resolve `..`). */
function raw(server: RunningServer, path: string, o: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: server.port, path, method: o.method ?? "GET", headers: o.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), headers: res.headers }));
    });
    req.on("error", reject);
    req.end(o.body);
  });
}

describe("where the server listens", () => {
  it("binds to 127.0.0.1 by default", () => {
    expect(open.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("refuses an address other machines reach without a token", async () => {
    await expect(startServer({ ks: f.ks, host: "0.0.0.0", port: 0 })).rejects.toThrow("--host 0.0.0.0 is reachable from other machines: give --token (every API request must then carry it as a bearer token)");
    await expect(startServer({ host: "::", port: 0 })).rejects.toThrow("--host :: is reachable from other machines");
    await expect(startServer({ host: "127.0.0.1", port: 0, token: "short" })).rejects.toThrow("--token must be at least 16 characters");
  });

  it("knows the loopback addresses", () => {
    expect(["127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"].map(isLoopback)).toEqual([true, true, true, true, true, true]);
    expect(["0.0.0.0", "::", "10.0.0.1", "192.168.1.2", "example.org", "::ffff:10.0.0.1", "128.0.0.1"].map(isLoopback)).toEqual([false, false, false, false, false, false, false]);
  });
});

describe("the bearer token", () => {
  it("is required on every API request when set", async () => {
    for (const path of ["/api/health", "/api/search?q=Denver", "/api/pages/squad:Normans", "/api/openapi.json", "/api/nothing"]) {
      const r = await raw(locked, path);
      expect(r.status).toBe(401);
      expect(JSON.parse(r.body)).toEqual({ status: 401, error: "a bearer token is required (Authorization: Bearer TOKEN)" });
      expect(r.headers["www-authenticate"]).toBe('Bearer realm="tartan"');
      expect((await raw(locked, path, { headers: { authorization: "Bearer wrong-token-of-some-length" } })).status).toBe(401);
      expect((await raw(locked, path, { headers: { authorization: TOKEN } })).status).toBe(401);
    }
    const ok = await raw(locked, "/api/health", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body).ks).toEqual({ pages: 48 });
    const post = await raw(locked, "/api/search", { method: "POST", headers: { "content-type": "application/json" }, body: '{"queries":["x"]}' });
    expect(post.status).toBe(401);
  });
});

describe("upload limit", () => {
  const form = (bytes: number) => {
    const fd = new FormData();
    fd.set("gold", new Blob(["x".repeat(bytes)]), "gold.jsonl");
    fd.set("predictions", new Blob(["{}\n"]), "p.jsonl");
    return fd;
  };

  it("answers 413 to a declared body over --max-upload", async () => {
    const res = await fetch(`${open.url}/api/eval`, { method: "POST", body: form(100 * 1024) });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ status: 413, error: expect.stringMatching(/^the upload is \d+ bytes; the limit is 65536$/) });
  });

  it("answers 413 to a streamed body (no length given) once it passes the limit", async () => {
    const boundary = "tartanboundary";
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="gold"; filename="g.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const chunk = new TextEncoder().encode(`${"{}\n".repeat(3000)}`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(head));
      },
      pull(c) {
        if (sent > 32 * 1024 * 1024) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    const res = await fetch(`${open.url}/api/eval`, { method: "POST", body, headers: { "content-type": `multipart/form-data; boundary=${boundary}` }, duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ status: 413, error: "the upload is larger than the limit of 65536 bytes" });
    expect(sent).toBeLessThan(32 * 1024 * 1024);
  });

  it("answers 413 to a JSON batch over the limit", async () => {
    const queries = Array.from({ length: 900 }, () => "q".repeat(100));
    const r = await raw(open, "/api/search", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queries }) });
    expect(r.status).toBe(413);
  });
});

describe("path parameters never reach the file system", () => {
  const attacks = ["..", "..%2F..%2Fpackage.json", "%2e%2e%2f%2e%2e%2fpackage.json", "%2E%2E", "..%5C..%5Cpackage.json", "%252e%252e%252fpackage.json", "....%2F%2F....%2F%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "..%00", "..;", "%c0%ae%c0%ae%2fetc%2fpasswd"];

  it("in /api/pages/:id: a 404 naming no file", async () => {
    for (const a of attacks) {
      const r = await raw(open, `/api/pages/${a}`);
      expect(r.status, a).toBe(404);
      const body = JSON.parse(r.body);
      expect(body.status).toBe(404);
      expect(body.error).toMatch(/^(no page with wikipedia_id |not found|no such endpoint)/);
      expect(r.body).not.toContain('"name": "tartan"');
    }
  });

  it("in the explorer's static files", async () => {
    for (const a of ["/../package.json", "/..%2Fpackage.json", "/%2e%2e/package.json", "/%2e%2e%2fpackage.json", "/views/..%2F..%2Fpackage.json", "/....//package.json", "/%2e%2e%5cpackage.json", "/main.js%00.html", "/etc/passwd", "/dist/web/main.js"]) {
      const r = await raw(open, a);
      expect(r.status, a).toBe(404);
      expect(JSON.parse(r.body)).toEqual({ status: 404, error: "not found" });
    }
  });

  it("in the index name of a search", async () => {
    const r = await raw(open, `/api/search?q=x&index=..%2F..%2Fbm25`);
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body).error).toBe('no index called "../../bm25"; loaded: bm25');
  });
});

describe("malformed requests", () => {
  const post = (body: string, type = "application/json") => raw(open, "/api/search", { method: "POST", headers: { "content-type": type }, body });

  it("malformed JSON is a 400", async () => {
    const r = await post('{"queries": ["a"');
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error).toMatch(/^malformed JSON body: /);
  });

  it("wrong types are 400s naming the field", async () => {
    expect(JSON.parse((await post("[]")).body)).toEqual({ status: 400, error: "the body must be a JSON object" });
    expect(JSON.parse((await post('"text"')).body)).toEqual({ status: 400, error: "the body must be a JSON object" });
    expect(JSON.parse((await post('{"queries":"a"}')).body)).toEqual({ status: 400, error: "queries must be an array of 1 to 1000 strings" });
    expect(JSON.parse((await post('{"queries":["a",3]}')).body)).toEqual({ status: 400, error: "queries[1] must be a string of 1 to 2000 characters" });
    expect(JSON.parse((await post('{"queries":["a"],"k":"5"}')).body)).toEqual({ status: 400, error: "k must be a whole number between 1 and 1000" });
    expect(JSON.parse((await post('{"queries":["a"],"k":2.5}')).body)).toEqual({ status: 400, error: "k must be a whole number between 1 and 1000" });
    expect(JSON.parse((await post('{"queries":["a"],"index":7}')).body)).toEqual({ status: 400, error: "index must be a string, or an array of index names to fuse" });
    expect(JSON.parse((await post('{"queries":["a"]}', "text/plain")).body)).toEqual({ status: 415, error: "the body must be application/json" });
    const get = async (p: string) => JSON.parse((await raw(open, p)).body);
    expect(await get("/api/search")).toEqual({ status: 400, error: "q is required" });
    expect(await get("/api/search?q=a&k=ten")).toEqual({ status: 400, error: 'k must be a whole number, not "ten"' });
    expect(await get("/api/search?q=a&k=0")).toEqual({ status: 400, error: "k must be between 1 and 1000, not 0" });
    expect(await get("/api/search?q=a&k=1e3")).toEqual({ status: 400, error: 'k must be a whole number, not "1e3"' });
    expect(await get("/api/provenance?wikipedia_id=squad:Normans&start_paragraph_id=-1")).toEqual({ status: 400, error: "start_paragraph_id must be between 0 and 10000000, not -1" });
    expect(await get("/api/provenance?wikipedia_id=squad:Normans&start_paragraph_id=1&end_character=x")).toEqual({ status: 400, error: 'end_character must be a whole number, not "x"' });
    expect(await get("/api/provenance?start_paragraph_id=1")).toEqual({ status: 400, error: "wikipedia_id is required" });
  });

  it("a bad upload is a 400 or 415", async () => {
    const fd = new FormData();
    fd.set("predictions", new Blob(["{}\n"]), "p.jsonl");
    fd.set("gold", new Blob(["{}\n"]), "g.jsonl");
    fd.set("mode", "sideways");
    const r1 = await fetch(`${open.url}/api/eval`, { method: "POST", body: fd });
    expect(await r1.json()).toEqual({ status: 400, error: "mode must be one of all, downstream, retrieval, not \"sideways\"" });
    const fd2 = new FormData();
    fd2.set("secret", new Blob(["x"]), "../../x");
    expect(await (await fetch(`${open.url}/api/eval`, { method: "POST", body: fd2 })).json()).toEqual({ status: 400, error: 'unexpected file part "secret"; expected gold, predictions' });
    const r3 = await raw(open, "/api/eval", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(JSON.parse(r3.body)).toEqual({ status: 415, error: "the body must be multipart/form-data" });
    const r4 = await raw(open, "/api/eval", { method: "POST", headers: { "content-type": "multipart/form-data; boundary=zz" }, body: "--zz\r\nnonsense" });
    expect(r4.status).toBe(400);
  });

  it("bad lines are problems naming the part and line; an unreadable file is a 422", async () => {
    const fd = new FormData();
    fd.set("gold", new Blob(['{"id": "1", "input": "q", "output": [{"answer": "a"}]}\n']), "g.jsonl");
    fd.set("predictions", new Blob(["not json\n"]), "p.jsonl");
    const r = await fetch(`${open.url}/api/eval`, { method: "POST", body: fd });
    // nothing scored is the client's to fix: 422 with every problem (it was 200 with null results)
    expect(r.status).toBe(422);
    const body: any = await r.json();
    expect(body.error).toMatch(/^nothing scored: /);
    expect(body.result).toBeUndefined();
    expect(body.problems.map((p: any) => [p.code, p.examples[0].file, p.examples[0].line])).toEqual([
      ["invalid-json", "predictions", 1],
      ["missing-prediction", "gold", 1],
    ]);
    // an empty gold file, and files swapped: 422, the parts named "gold" and "predictions", no server path
    const gold = '{"id": "1", "input": "q", "output": [{"answer": "a"}]}\n';
    for (const [g, p, says] of [
      ["", gold, "the gold file gold holds no records: nothing to score"],
      [Array.from({ length: 30 }, (_, i) => `{"id": "${i}", "output": [{"answer": "a", "provenance": [{"wikipedia_id": "1"}]}]}\n`).join(""), Array.from({ length: 30 }, (_, i) => `{"id": "${i}", "input": "q${i}", "output": [{"answer": "a", "provenance": [{"wikipedia_id": "1", "bleu_score": 1}]}, {"answer": "b"}]}\n`).join(""), "did you swap GOLD and GUESS? gold looks like predictions and predictions like gold records"],
    ]) {
      const f = new FormData();
      f.set("gold", new Blob([g]), "g.jsonl");
      f.set("predictions", new Blob([p]), "p.jsonl");
      const e = await fetch(`${open.url}/api/eval`, { method: "POST", body: f });
      expect(e.status).toBe(422);
      const b: any = await e.json();
      expect(b.error).toContain(says);
      expect(JSON.stringify(b)).not.toContain(tmpdir());
    }
    const fd2 = new FormData();
    fd2.set("gold", new Blob(['{"id": "1", "input": "q", "output": [{"answer": "a"}]}\n']), "g.jsonl");
    fd2.set("predictions", new Blob([Buffer.from("not gzip at all, but named .gz")]), "p.jsonl.gz");
    const r2 = await fetch(`${open.url}/api/eval`, { method: "POST", body: fd2 });
    expect(r2.status).toBe(422);
    expect(await r2.json()).toEqual({ status: 422, error: "predictions: corrupt gzip data (incorrect header check)" });
  });

  it("unknown endpoints and methods are JSON 404s", async () => {
    expect(JSON.parse((await raw(open, "/api/nothing")).body)).toEqual({ status: 404, error: "no such endpoint (see /api/openapi.json)" });
    expect(JSON.parse((await raw(open, "/api/health", { method: "DELETE" })).body)).toEqual({ status: 404, error: "no such endpoint (see /api/openapi.json)" });
  });
});

describe("failures stay inside their request", () => {
  it("an evaluation past its deadline is a 408", async () => {
    const slow = await startServer({ ks: f.ks, port: 0, evalTimeoutMs: 1 });
    try {
      const fd = new FormData();
      fd.set("gold", new Blob([readFileSync(f.questions)]), "g.jsonl");
      fd.set("predictions", new Blob([readFileSync(f.questions)]), "p.jsonl");
      const r = await fetch(`${slow.url}/api/eval`, { method: "POST", body: fd });
      expect(r.status).toBe(408);
      expect(await r.json()).toEqual({ status: 408, error: "the evaluation took longer than 1 ms" });
      expect((await fetch(`${slow.url}/api/health`)).status).toBe(200);
    } finally {
      await slow.close();
    }
  });

  it("an internal error is a 500 without a stack, logged, and the server goes on", async () => {
    const s = await startServer({ ks: f.ks, port: 0, log: (l) => logged.push(l) });
    try {
      s.resources.ks!.close(); // every page lookup now fails inside the library
      const r = await raw(s, "/api/pages/squad:Normans");
      expect(r.status).toBe(500);
      expect(JSON.parse(r.body)).toEqual({ status: 500, error: "internal error (logged on the server)" });
      expect(r.body).not.toMatch(/at |\.ts|\.js/);
      expect(logged.some((l) => l.startsWith("tartan serve: GET /api/pages/squad:Normans: "))).toBe(true);
      expect((await raw(s, "/api/health")).status).toBe(200);
    } finally {
      await s.close().catch(() => {});
    }
  });

  it("a client that goes away mid-upload does not stop the server", async () => {
    await new Promise<void>((resolve) => {
      const req = request({ host: "127.0.0.1", port: open.port, path: "/api/eval", method: "POST", headers: { "content-type": "multipart/form-data; boundary=b", "content-length": "50000" } });
      req.on("error", () => resolve());
      req.write('--b\r\nContent-Disposition: form-data; name="gold"; filename="g.jsonl"\r\n\r\n{"id":');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    const r = await raw(open, "/api/search?q=Normandy&k=1");
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).hits[0].provenance.wikipedia_id).toBe("squad:Normans");
  });
});

