// SearchPool shares a batch between the calling thread and its workers: results equal one-at-a-time
// searches, and the worker answers many chunks (a search that resolves in microtasks once kept the
// calling thread from reading the worker's replies until it had taken every chunk itself). A worker
// that cannot open the index, or dies mid-batch, fails the batch naming the search workers.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { squadBm25Paragraphs } from "../fixtures/squad-bm25.js";
import { openIndex } from "../../src/retrieval/open.js";
import { SearchPool } from "../../src/retrieval/pool.js";
import type { Retriever } from "../../src/retrieval/types.js";
import { watchingPools } from "../fixtures/pools.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-pool-"));
let dir = "";
let r: Retriever;
let queries: string[] = [];

beforeAll(async () => {
  ({ dir, queries } = await squadBm25Paragraphs(tmp, 2000));
  r = await openIndex(dir);
}, 300_000);

afterAll(async () => {
  await r?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe("SearchPool", () => {
  it("2 threads: the SQuAD questions' hits equal single searches, and the worker answers many chunks", async () => {
    const pool = new SearchPool(r, [dir], { threads: 2, chunk: 8 });
    const pooled = await pool.search(queries, 10);
    const shares = pool.lastShares();
    await pool.close();
    for (let i = 0; i < queries.length; i++) expect(pooled[i]).toEqual(await r.search(queries[i], 10));
    expect(shares.length).toBe(2);
    expect(shares[0] + shares[1]).toBe(2000);
    // Before the fix the worker answered exactly one chunk of 8.
    expect(shares[1]).toBeGreaterThanOrEqual(80);
  });

  it("a worker that cannot open the index fails the batch with the reason", async () => {
    const missing = join(tmp, "no-index");
    const pool = new SearchPool(r, [missing], { threads: 2, chunk: 8 });
    await expect(pool.search(queries.slice(0, 100), 10)).rejects.toThrow(`search worker failed to start: ${missing}: no manifest.json (not an index directory?)`);
    await pool.close();
  });

  it("a worker that dies mid-batch fails the batch; the next batch starts new workers", async () => {
    await watchingPools(async (started) => {
      const pool = new SearchPool(r, [dir], { threads: 2, chunk: 8 });
      await pool.search(queries.slice(0, 100), 10); // starts the worker; a batch waits until it has opened the index
      // The worker takes the second chunk at once: stopped when the calling thread has answered the first.
      let stopped = false;
      const stopOnFirstChunk = () => {
        if (!stopped) void started[0].stopWorker(0);
        stopped = true;
      };
      await expect(pool.search(queries, 10, stopOnFirstChunk)).rejects.toThrow("search worker exited with code 1");
      expect(stopped).toBe(true);
      const again = await pool.search(queries.slice(0, 200), 10);
      expect(started.length).toBe(2);
      for (let i = 0; i < 200; i++) expect(again[i]).toEqual(await r.search(queries[i], 10));
      await pool.close();
    });
  });
});
