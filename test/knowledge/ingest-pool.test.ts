// The ingest's worker threads (src/knowledge/pool.ts, a WorkerPool): batches prepared on the workers
// equal those prepared in-process, and a worker that dies fails the batches in flight and every later
// one with an error naming the ingest workers, instead of leaving the ingest waiting.

import { describe, expect, it } from "vitest";
import { createPreparer } from "../../src/knowledge/pool.js";
import { packLines, preparePacked } from "../../src/knowledge/prepare.js";
import { watchingPools } from "../fixtures/pools.js";
import { workerScript } from "../../src/util/worker-script.js";
import type { ByteLine } from "../../src/records/jsonl.js";

const script = workerScript(new URL("../../src/knowledge/ingest-worker.ts", import.meta.url).href);
const line = (s: string, n: number): ByteLine => {
  const buf = Buffer.from(s);
  return { buf, start: 0, end: buf.length, line: n, startByte: 0, endByte: buf.length };
};
const pages = () => packLines([line('{"wikipedia_id":"12","wikipedia_title":"Anarchism","text":["Anarchism\\n","A political philosophy.\\n"]}', 1), line("not json", 2)]);

describe("ingest worker pool", () => {
  it("prepares on the workers what the calling thread prepares", async () => {
    const p = createPreparer(2, script);
    expect(p.workers).toBe(2);
    const got = await p.prepare(pages());
    await p.close();
    const want = preparePacked(pages());
    expect(got.ids).toEqual(["12", null]);
    expect({ ...got, blob: [...got.blob] }).toEqual({ ...want, blob: [...want.blob] });
  });

  it("a worker that dies fails its batch and the later ones, naming the ingest workers", async () => {
    await watchingPools(async (started) => {
      const p = createPreparer(1, script);
      const sent = p.prepare(pages()); // posted before the worker has started, so it cannot be answered first
      await started[0].stopWorker(0);
      await expect(sent).rejects.toThrow(/^ingest worker exited with code [01]$/);
      await expect(p.prepare(pages())).rejects.toThrow(/^ingest worker exited with code [01]$/);
      await p.close();
    });
  });
});
