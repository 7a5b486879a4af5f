// The cache of encoded page answers behind GET /api/pages/:id: least recently used dropped first within
// its character budget, answers larger than an eighth of it never kept; through the API a cached answer
// is the same bytes and type as the first.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PageBodyCache } from "../../src/server/routes/pages.js";
import { startServer, type RunningServer } from "../../src/server/listen.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromSquad } from "../../src/knowledge/build.js";
import { ingest } from "../../src/knowledge/ingest.js";
import { SQUAD } from "./fixture.js";

describe("PageBodyCache", () => {
  it("keeps the most recently used answers within its budget", () => {
    const cache = new PageBodyCache(80);
    cache.set("a", "x".repeat(10));
    cache.set("b", "y".repeat(10));
    cache.set("huge", "z".repeat(11)); // more than 80 / 8 characters: not kept
    expect(cache.get("huge")).toBeUndefined();
    expect(cache.get("a")).toBe("x".repeat(10)); // a is now the most recent
    for (const k of ["c", "d", "e", "f", "g", "h"]) cache.set(k, k.repeat(10));
    // 80 characters hold 8 answers of 10: a and b and c..h are 8; one more drops the least recent (b).
    expect(cache.size).toBe(8);
    cache.set("i", "i".repeat(10));
    expect(cache.size).toBe(8);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe("x".repeat(10));
    expect(cache.get("i")).toBe("i".repeat(10));
  });
});

describe("GET /api/pages/:id twice", () => {
  const dir = mkdtempSync(join(tmpdir(), "tartan-page-cache-"));
  let server: RunningServer;
  beforeAll(async () => {
    await fromSquad(SQUAD, join(dir, "pages.jsonl"), () => {});
    await ingest(join(dir, "pages.jsonl"), { out: join(dir, "ks"), force: true, workers: 0 });
    server = await startServer({ ks: join(dir, "ks"), port: 0 });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers a repeated page with the same bytes and type, and a missing one with 404 each time", async () => {
    const first = await fetch(`${server.url}/api/pages/squad:Super_Bowl_50`);
    const second = await fetch(`${server.url}/api/pages/squad:Super_Bowl_50`);
    expect(first.headers.get("content-type")).toBe("application/json");
    expect(second.headers.get("content-type")).toBe("application/json");
    const a = await first.text();
    expect(await second.text()).toBe(a);
    expect(JSON.parse(a).wikipedia_title).toBe("Super Bowl 50");
    for (let i = 0; i < 2; i++) expect((await fetch(`${server.url}/api/pages/nope`)).status).toBe(404);
  });
});
