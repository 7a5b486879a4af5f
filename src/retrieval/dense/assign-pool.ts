// Both cores for the costly step of a compressed dense build: the rows of a batch are split between
// worker threads (./assign-worker.ts) that give each row its coarse list and code with the same
// quantizer, so the result is the same as on one thread. A worker that fails or exits fails the build
// with its message; `threads: 0` does the work in the calling thread.

import { cpus } from "node:os";
import { WorkerPool } from "../../util/worker-pool.js";
import { workerScript } from "../../util/worker-script.js";
import type { Quantizer, QuantizerParts } from "./quantizer.js";

/** What a worker is started with: the trained quantizer's arrays. */
export type AssignInit = QuantizerParts;

/** A worker's answer: the rows' coarse lists and codes. */
export interface Assigned {
  lists: Int32Array;
  codes: Uint8Array;
}

export class AssignPool {
  private readonly pool: WorkerPool<Float32Array, Assigned>;

  constructor(
    private readonly q: Quantizer,
    threads = cpus().length,
  ) {
    const init: AssignInit = q.parts();
    this.pool = new WorkerPool(workerScript(import.meta.url, "assign-worker"), threads, init, "dense build worker");
  }

  /** Lists and codes of `rows` (`n × dim`), split over the workers (or computed here without any). */
  async assign(rows: Float32Array): Promise<Assigned> {
    const dim = this.q.dim;
    const n = rows.length / dim;
    const parts = this.pool.size;
    if (parts === 0 || n < 2 * parts) {
      const lists = this.q.assign(rows);
      return { lists, codes: this.q.encode(rows, lists) };
    }
    const per = Math.ceil(n / parts);
    const jobs: Promise<Assigned>[] = [];
    for (let p = 0; p < parts; p++) {
      const slice = rows.slice(p * per * dim, Math.min(n, (p + 1) * per) * dim);
      jobs.push(this.pool.run(slice, [slice.buffer]));
    }
    const done = await Promise.all(jobs);
    const lists = new Int32Array(n);
    const codes = new Uint8Array(n * this.q.codeBytes);
    let at = 0;
    for (const d of done) {
      lists.set(d.lists, at);
      codes.set(d.codes, at * this.q.codeBytes);
      at += d.lists.length;
    }
    return { lists, codes };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
