// Runs preparePacked() on batches of lines: in worker threads when the compiled worker script is
// present, in-process otherwise (when running from TypeScript sources, or with workers = 0).
// Batches are moved to the workers, not copied. Results come back as promises; the caller bounds how
// many are in flight.

import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { preparePacked, type PackedLines, type PreparedBatch } from "./prepare.js";
import type { WorkerRequest } from "./ingest-worker.js";

export interface Preparer {
  /** Number of worker threads (0: in-process). */
  readonly workers: number;
  /** Prepares a batch (whose buffers are moved to a worker: do not use them afterwards). */
  prepare(packed: PackedLines): Promise<PreparedBatch>;
  close(): Promise<void>;
}

/** Worker threads by default: up to 4, one per core; none on a single core. */
export function defaultWorkers(): number {
  const cores = availableParallelism();
  return cores < 2 ? 0 : Math.min(4, cores);
}

const WORKER_URL = new URL("./ingest-worker.js", import.meta.url);

/** A preparer with `workers` threads, or in-process when 0 or when the compiled worker script is absent. */
export function createPreparer(workers: number): Preparer {
  if (workers > 0 && existsSync(fileURLToPath(WORKER_URL))) return new WorkerPool(workers);
  return {
    workers: 0,
    prepare: async (packed) => preparePacked(packed),
    close: async () => {},
  };
}

interface Pending {
  resolve: (b: PreparedBatch) => void;
  reject: (e: Error) => void;
}

class WorkerPool implements Preparer {
  private readonly pool: Worker[];
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private failure: Error | null = null;

  constructor(readonly workers: number) {
    this.pool = Array.from({ length: workers }, () => {
      // A larger young generation halves the time the workers spend collecting parsed pages (measured).
      const w = new Worker(WORKER_URL, { resourceLimits: { maxYoungGenerationSizeMb: 48 } });
      w.on("message", (m: { seq: number; batch: PreparedBatch }) => {
        const p = this.pending.get(m.seq);
        this.pending.delete(m.seq);
        p?.resolve(m.batch);
      });
      w.on("error", (e) => this.fail(e));
      w.on("exit", (code) => {
        if (code !== 0) this.fail(new Error(`ingest worker exited with code ${code}`));
      });
      return w;
    });
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
  }

  prepare(packed: PackedLines): Promise<PreparedBatch> {
    if (this.failure) return Promise.reject(this.failure);
    const seq = this.seq++;
    const request: WorkerRequest = { seq, packed };
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.pool[seq % this.pool.length].postMessage(request, [packed.bytes.buffer as ArrayBuffer, packed.starts.buffer as ArrayBuffer]);
    });
  }

  async close(): Promise<void> {
    this.failure ??= new Error("worker pool closed");
    await Promise.all(this.pool.map((w) => w.terminate()));
  }
}
