import { afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_BASE_URL,
  OpenAIRequestError,
  backoffDelay,
  postJson,
  resolveEndpoint,
  retryAfterMs,
} from "../../../src/readers/generative/client.js";
import { type TestServer, chatReply, json, startServer } from "../../fixtures/readers/openai-server.js";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const noWait = { sleep: async () => {} };

describe("resolveEndpoint", () => {
  it("takes options first, then TARTAN_ variables, then OPENAI_ ones", () => {
    const env = {
      TARTAN_OPENAI_BASE_URL: "http://127.0.0.1:9/v1/",
      OPENAI_BASE_URL: "http://127.0.0.1:8/v1",
      OPENAI_API_KEY: "sk-env",
      OPENAI_MODEL: "env-model",
    };
    expect(resolveEndpoint({}, env)).toEqual({ baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-env", model: "env-model" });
    expect(resolveEndpoint({ baseUrl: "http://localhost:11434/v1", apiKey: "sk-opt", model: "llama3" }, env)).toEqual({
      baseUrl: "http://localhost:11434/v1",
      apiKey: "sk-opt",
      model: "llama3",
    });
    expect(resolveEndpoint({ model: "m" }, { TARTAN_OPENAI_API_KEY: "sk-t", OPENAI_API_KEY: "sk-o" })).toEqual({
      baseUrl: DEFAULT_BASE_URL,
      apiKey: "sk-t",
      model: "m",
    });
    expect(resolveEndpoint({ model: "m" }, { OPENAI_API_KEY: " " })).toEqual({ baseUrl: DEFAULT_BASE_URL, model: "m" });
  });

  it("requires a model and a valid URL", () => {
    expect(() => resolveEndpoint({}, {})).toThrow("no model given: pass `model` or set TARTAN_OPENAI_MODEL (or OPENAI_MODEL)");
    // "localhost:8000" parses as a URL with the scheme "localhost:": refused, not sent nowhere
    expect(() => resolveEndpoint({ model: "m", baseUrl: "localhost:8000/v1" }, {})).toThrow(
      'invalid base URL "localhost:8000/v1": expected an http(s) URL such as http://127.0.0.1:8000/v1',
    );
    expect(() => resolveEndpoint({ model: "m", baseUrl: "not a url" }, {})).toThrow('invalid base URL "not a url"');
  });
});

describe("retry timing", () => {
  it("reads retry-after-ms, Retry-After seconds and dates", () => {
    expect(retryAfterMs(new Headers({ "retry-after-ms": "250" }))).toBe(250);
    expect(retryAfterMs(new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(new Headers({ "retry-after": "Wed, 21 Oct 2015 07:28:05 GMT" }), Date.parse("Wed, 21 Oct 2015 07:28:00 GMT"))).toBe(5000);
    expect(retryAfterMs(new Headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });

  it("doubles the backoff up to its cap, jittered within [cap/2, cap)", () => {
    expect([0, 1, 2, 3, 10].map((r) => backoffDelay(r, 500, 3000, () => 0))).toEqual([250, 500, 1000, 1500, 1500]);
    expect([0, 1, 2, 3, 10].map((r) => backoffDelay(r, 500, 3000, () => 0.5))).toEqual([375, 750, 1500, 2250, 2250]);
  });
});

describe("postJson against a local server", () => {
  it("posts JSON with the key as a bearer token and returns the parsed reply", async () => {
    server = await startServer((_req, res) => json(res, chatReply("ok")));
    const out = await postJson({ baseUrl: server.baseUrl, apiKey: "sk-secret", model: "m" }, "/chat/completions", { model: "m" });
    expect(out).toEqual(chatReply("ok"));
    expect(server.requests.length).toBe(1);
    const req = server.requests[0];
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.headers.authorization).toBe("Bearer sk-secret");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.body).toEqual({ model: "m" });
  });

  it("sends no authorization header without a key", async () => {
    server = await startServer((_req, res) => json(res, {}));
    await postJson({ baseUrl: server.baseUrl, model: "m" }, "/completions", {});
    expect(server.requests[0].headers.authorization).toBeUndefined();
  });

  it("retries a 429 after the time Retry-After asks for, then succeeds", async () => {
    server = await startServer((_req, res, n) => (n === 1 ? json(res, { error: "slow down" }, 429, { "retry-after": "1" }) : json(res, chatReply("ok"))));
    const waits: number[] = [];
    const out = await postJson({ baseUrl: server.baseUrl, model: "m" }, "/chat/completions", {}, { sleep: async (ms) => void waits.push(ms) });
    expect(out).toEqual(chatReply("ok"));
    expect(server.requests.length).toBe(2);
    expect(waits).toEqual([1000]);
  });

  it("backs off its own way when Retry-After asks for longer than maxRetryAfterMs", async () => {
    server = await startServer((_req, res, n) => (n === 1 ? json(res, { error: "later" }, 429, { "retry-after": "120" }) : json(res, chatReply("ok"))));
    const waits: number[] = [];
    await postJson({ baseUrl: server.baseUrl, model: "m" }, "/chat/completions", {}, { backoffMs: 400, random: () => 0.5, sleep: async (ms) => void waits.push(ms) });
    expect(waits).toEqual([300]);
  });

  it("really waits between attempts (real timers, short backoff)", async () => {
    server = await startServer((_req, res, n) => (n < 3 ? json(res, { error: "busy" }, 503) : json(res, chatReply("ok"))));
    const t0 = Date.now();
    await postJson({ baseUrl: server.baseUrl, model: "m" }, "/chat/completions", {}, { backoffMs: 100, random: () => 0 });
    // backoffs 50 ms then 100 ms
    expect(Date.now() - t0).toBeGreaterThanOrEqual(145);
    expect(server.requests.length).toBe(3);
  });

  it("backs off exponentially on 5xx and gives up after the retries, naming the status and attempts", async () => {
    server = await startServer((_req, res) => json(res, { error: { message: "model overloaded" } }, 503));
    const waits: number[] = [];
    const err = (await postJson(
      { baseUrl: server.baseUrl, model: "m" },
      "/chat/completions",
      {},
      { retries: 3, backoffMs: 100, random: () => 0, sleep: async (ms) => void waits.push(ms) },
    ).catch((e) => e)) as OpenAIRequestError;
    expect(err).toBeInstanceOf(OpenAIRequestError);
    expect(err.message).toBe(`HTTP 503 from ${server.baseUrl}/chat/completions: {"error":{"message":"model overloaded"}} (after 4 attempts)`);
    expect(err.status).toBe(503);
    expect(err.attempts).toBe(4);
    expect(waits).toEqual([50, 100, 200]);
    expect(server.requests.length).toBe(4);
  });

  it("does not retry a 400 and never shows the key, even when the server echoes it", async () => {
    server = await startServer((req, res) => json(res, { error: `bad key ${req.headers.authorization}` }, 401));
    const err = (await postJson({ baseUrl: server.baseUrl, apiKey: "sk-secret-123", model: "m" }, "/chat/completions", {}, noWait).catch((e) => e)) as OpenAIRequestError;
    expect(err.message).toBe(`HTTP 401 from ${server.baseUrl}/chat/completions: {"error":"bad key Bearer [redacted]"}`);
    expect(err.body).toBe('{"error":"bad key Bearer [redacted]"}');
    expect(server.requests.length).toBe(1);
  });

  it("aborts an attempt that hangs past the timeout, and retries it", async () => {
    server = await startServer(() => {}); // never answers
    const t0 = Date.now();
    const err = (await postJson({ baseUrl: server.baseUrl, model: "m" }, "/chat/completions", {}, { timeoutMs: 200, retries: 1, ...noWait }).catch((e) => e)) as OpenAIRequestError;
    const took = Date.now() - t0;
    expect(err).toBeInstanceOf(OpenAIRequestError);
    expect(err.message).toBe(`no response from ${server.baseUrl}/chat/completions within 200 ms (after 2 attempts)`);
    expect(err.status).toBeUndefined();
    expect(server.requests.length).toBe(2);
    expect(took).toBeGreaterThanOrEqual(390);
    expect(took).toBeLessThan(5000);
  });

  it("fails clearly on a 200 whose body is not JSON, without retrying", async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"choices": [ {"message": ');
    });
    const err = (await postJson({ baseUrl: server.baseUrl, model: "m" }, "/chat/completions", {}, noWait).catch((e) => e)) as OpenAIRequestError;
    expect(err.message).toMatch(new RegExp(`^invalid JSON in the response from ${server.baseUrl}/chat/completions \\(status 200\\): .+; body: "\\{\\\\"choices\\\\": \\[ \\{\\\\"message\\\\":"$`));
    expect(server.requests.length).toBe(1);
  });

  it("retries network errors and says the server cannot be reached", async () => {
    server = await startServer(() => {});
    const url = server.baseUrl;
    await server.close();
    server = undefined;
    const waits: number[] = [];
    const err = (await postJson({ baseUrl: url, model: "m" }, "/chat/completions", {}, { retries: 2, backoffMs: 10, random: () => 0, sleep: async (ms) => void waits.push(ms) }).catch((e) => e)) as OpenAIRequestError;
    expect(err.message).toMatch(new RegExp(`^cannot reach ${url}/chat/completions: .*ECONNREFUSED.* \\(after 3 attempts\\)$`));
    expect(waits).toEqual([5, 10]);
  });
});
