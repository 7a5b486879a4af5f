// Runs preparePacked() on batches of lines: in worker threads (a WorkerPool, ../util/worker-pool.ts)
// when the compiled worker script is present, in-process otherwise (when running from TypeScript
// sources, or with workers = 0). Batches are moved to the workers, not copied. Results come back as
// promises; the caller bounds how many are in flight. A worker that dies fails the ingest naming it.

import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { WorkerPool } from "../util/worker-pool.js";
import { preparePacked, type PackedLines, type PreparedBatch } from "./prepare.js";

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

/** A preparer with `workers` threads, or in-process when 0 or when the compiled worker script is absent (`script`: tests). */
export function createPreparer(workers: number, script: URL = WORKER_URL): Preparer {
  if (workers > 0 && existsSync(fileURLToPath(script))) {
    // A larger young generation halves the time the workers spend collecting parsed pages (measured).
    const pool = new WorkerPool<PackedLines, PreparedBatch>(script, workers, null, "ingest worker", { resourceLimits: { maxYoungGenerationSizeMb: 48 } });
    return {
      workers,
      prepare: (packed) => pool.run(packed, [packed.bytes.buffer as ArrayBuffer, packed.starts.buffer as ArrayBuffer]),
      close: () => pool.close(),
    };
  }
  return {
    workers: 0,
    prepare: async (packed) => preparePacked(packed),
    close: async () => {},
  };
}
