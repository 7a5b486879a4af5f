// The OpenAI-compatible encoder against a local HTTP server on 127.0.0.1 that answers like the
// embeddings endpoint (rows deliberately out of order, identified by `index`).

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OpenAIEncoder } from "../../../src/retrieval/dense/openai.js";

interface Seen {
  url: string;
  auth: string | undefined;
  body: { model: string; input: string[]; encoding_format: string; dimensions?: number };
}

let server: Server;
let baseUrl = "";
const seen: Seen[] = [];
/** Statuses to answer before answering normally. */
let failures: { status: number; body: string }[] = [];
let dropOne = false;

/** The fake model: [length, vowel count, 1] of each text. */
function fakeEmbedding(t: string): number[] {
  return [t.length, (t.match(/[aeiou]/g) ?? []).length, 1];
}

async function readBody(req: IncomingMessage): Promise<string> {
  let s = "";
  for await (const c of req) s += c;
  return s;
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = JSON.parse(await readBody(req)) as Seen["body"];
    seen.push({ url: req.url ?? "", auth: req.headers.authorization, body });
    const f = failures.shift();
    if (f) {
      res.writeHead(f.status, { "content-type": "application/json" }).end(f.body);
      return;
    }
    let data = body.input.map((t, index) => ({ object: "embedding", index, embedding: fakeEmbedding(t) }));
    data.reverse();
    if (dropOne) data = data.slice(1);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data, model: body.model }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

beforeEach(() => {
  seen.length = 0;
  failures = [];
  dropOne = false;
});

function unitRow(v: number[]): number[] {
  const n = Math.hypot(...v);
  return v.map((x) => Math.fround(x / n));
}

describe("OpenAIEncoder", () => {
  it("posts batches to {baseUrl}/embeddings, orders rows by index and normalises them", async () => {
    process.env.TARTAN_TEST_KEY = "sk-test-123";
    const e = new OpenAIEncoder({ type: "openai", baseUrl, model: "text-embedding-3-small", apiKeyEnv: "TARTAN_TEST_KEY", batchSize: 2, dimensions: 3 });
    const texts = ["alpha", "be", "c", "delta echo", "f"];
    const v = await e.encodePassages(texts);
    expect(e.dim).toBe(3);
    expect(seen.map((s) => s.url)).toEqual(["/v1/embeddings", "/v1/embeddings", "/v1/embeddings"]);
    expect(seen.map((s) => s.body.input)).toEqual([["alpha", "be"], ["c", "delta echo"], ["f"]]);
    expect(seen.every((s) => s.auth === "Bearer sk-test-123" && s.body.model === "text-embedding-3-small" && s.body.encoding_format === "float" && s.body.dimensions === 3)).toBe(true);
    texts.forEach((t, i) => expect(Array.from(v.subarray(i * 3, i * 3 + 3))).toEqual(unitRow(fakeEmbedding(t))));
    // the key never reaches the spec a manifest records
    expect(JSON.stringify(e.spec)).not.toContain("sk-test");
  });

  it("applies query and passage prefixes, and an explicit key over the environment", async () => {
    const e = new OpenAIEncoder({ type: "openai", baseUrl, model: "m", queryPrefix: "query: ", passagePrefix: "passage: " }, { apiKey: "k2" });
    await e.encodeQueries(["what"]);
    await e.encodePassages(["text"]);
    expect(seen.map((s) => s.body.input)).toEqual([["query: what"], ["passage: text"]]);
    expect(seen.map((s) => s.auth)).toEqual(["Bearer k2", "Bearer k2"]);
    expect(seen[0].body.dimensions).toBeUndefined();
  });

  it("sends no Authorization header without a key", async () => {
    const e = new OpenAIEncoder({ type: "openai", baseUrl, model: "m", apiKeyEnv: "TARTAN_TEST_NO_SUCH_KEY" });
    await e.encodeQueries(["x"]);
    expect(seen[0].auth).toBeUndefined();
  });

  it("retries 429 and 5xx answers, then succeeds", async () => {
    failures = [
      { status: 429, body: "{}" },
      { status: 503, body: "busy" },
    ];
    const e = new OpenAIEncoder({ type: "openai", baseUrl, model: "m" }, { retryDelayMs: 1 });
    const v = await e.encodeQueries(["abc"]);
    expect(seen.length).toBe(3);
    expect(Array.from(v)).toEqual(unitRow(fakeEmbedding("abc")));
  });

  it("reports the server's error message and does not retry a 401", async () => {
    failures = [{ status: 401, body: JSON.stringify({ error: { message: "Incorrect API key provided" } }) }];
    const e = new OpenAIEncoder({ type: "openai", baseUrl, model: "m" }, { retryDelayMs: 1 });
    await expect(e.encodeQueries(["abc"])).rejects.toThrow(/HTTP 401: Incorrect API key provided/);
    expect(seen.length).toBe(1);
  });

  it("gives up after the last try", async () => {
    failures = [1, 2, 3].map(() => ({ status: 500, body: "oops" }));
    const e = new OpenAIEncoder({ type: "openai", baseUrl, model: "m" }, { retryDelayMs: 1, tries: 3 });
    await expect(e.encodeQueries(["abc"])).rejects.toThrow(/HTTP 500: oops/);
    expect(seen.length).toBe(3);
  });

  it("rejects an answer with the wrong number of rows", async () => {
    dropOne = true;
    const e = new OpenAIEncoder({ type: "openai", baseUrl, model: "m" });
    await expect(e.encodeQueries(["a", "b"])).rejects.toThrow(/expected 2 embeddings, got 1/);
  });

  it("needs a base URL and a model", () => {
    expect(() => new OpenAIEncoder({ type: "openai", baseUrl: "", model: "m" })).toThrow(/baseUrl/);
    expect(() => new OpenAIEncoder({ type: "openai", baseUrl, model: "" })).toThrow(/model/);
  });
});
