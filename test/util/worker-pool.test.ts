// The one worker pool (src/util/worker-pool.ts): replies come back to their requests, a request that
// throws fails alone with the worker's message, and a worker that exits fails what is in flight and
// every later request with a clear error instead of leaving a batch waiting forever.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { WorkerPool } from "../../src/util/worker-pool.js";
import { watchingPools } from "../fixtures/pools.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-pool-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("WorkerPool", () => {
  const script = join(tmp, "worker.mjs");
  const lib = pathToFileURL(join(process.cwd(), "dist", "src", "util", "worker-pool.js")).href;
  writeFileSync(
    script,
    `import { workerData } from "node:worker_threads";
import { serveRequests } from ${JSON.stringify(lib)};
const starting = workerData === "bad" ? new Promise((_, reject) => setTimeout(() => reject(new Error("no such index")), 10)) : Promise.resolve();
serveRequests(async (r) => {
  if (r === "throw") throw new Error("cannot answer that");
  if (r === "exit") { setTimeout(() => process.exit(3), 20); return new Promise(() => {}); }
  return { reply: { twice: r * 2, worker: workerData } };
}, starting);
`,
  );

  it("answers on every worker, each started with its own data", async () => {
    const pool = new WorkerPool<number, { twice: number; worker: string }>(pathToFileURL(script), 2, (t: number) => `w${t}`, "test worker");
    const got = await Promise.all([1, 2, 3, 4].map((x) => pool.run(x)));
    expect(got.map((g) => g.twice)).toEqual([2, 4, 6, 8]);
    expect(new Set(got.map((g) => g.worker))).toEqual(new Set(["w0", "w1"]));
    await expect(pool.run("throw" as unknown as number)).rejects.toThrow("test worker: cannot answer that");
    expect((await pool.run(5)).twice).toBe(10);
    await pool.close();
    await expect(pool.run(1)).rejects.toThrow("test worker: the pool was closed");
  });

  it("fails the batch of a worker that exits, and every later request", async () => {
    const pool = new WorkerPool<number | string, { twice: number }>(pathToFileURL(script), 1, null, "test worker");
    await expect(Promise.all([pool.run(1), pool.run("exit")])).rejects.toThrow("test worker exited with code 3");
    await expect(pool.run(2)).rejects.toThrow("test worker exited with code 3");
    await pool.close();
  });

  it("is ready once every worker has started; a worker that cannot start fails the pool, naming it", async () => {
    const good = new WorkerPool<number, { twice: number }>(pathToFileURL(script), 2, "good", "test worker");
    await good.whenReady();
    expect((await good.run(4)).twice).toBe(8);
    await good.close();
    const bad = new WorkerPool<number, { twice: number }>(pathToFileURL(script), 2, (t: number) => (t === 1 ? "bad" : "good"), "test worker");
    const sent = bad.run(1);
    await expect(bad.whenReady()).rejects.toThrow("test worker failed to start: no such index");
    await expect(Promise.all([sent, bad.run(2)])).rejects.toThrow("test worker failed to start: no such index");
    expect(bad.failed).toBe(true);
    await bad.close();
  });

  it("a worker stopped through the test hook fails the requests in flight, as a crash would", async () => {
    await watchingPools(async (started) => {
      const pool = new WorkerPool<number, { twice: number }>(pathToFileURL(script), 1, null, "test worker");
      expect(started).toEqual([pool]);
      const sent = pool.run(1); // posted before the worker has started, so it cannot be answered first
      await started[0].stopWorker(0);
      // Terminated before or after it started running: code 0 or 1 (either is a death to the pool).
      await expect(sent).rejects.toThrow(/^test worker exited with code [01]$/);
      await pool.close();
    });
  });
});
