// Both cores for the costly step of a compressed dense build: the rows of a batch are split between
// worker threads (./assign-worker.ts) that give each row its coarse list and code with the same
// quantizer, so the result is the same as on one thread. A worker that fails or exits fails the build
// with its message; `threads: 0` does the work in the calling thread.

import { Worker } from "node:worker_threads";
import { cpus } from "node:os";
import { workerScript } from "../../util/worker-script.js";
import type { Quantizer, QuantizeKind } from "./quantizer.js";

/** What a worker is started with: the trained quantizer's arrays. */
export interface AssignInit {
  kind: QuantizeKind;
  dim: number;
  k1: number;
  k2: number;
  top: Float32Array;
  sub: Float32Array;
  mean: Float32Array;
  sqLo: Float32Array;
  sqScale: Float32Array;
  pqM: number;
  codebooks: Float32Array;
}

export interface AssignRequest {
  seq: number;
  rows: Float32Array;
}

type Reply = { seq: number; lists: Int32Array; codes: Uint8Array } | { seq: number; error: string };

export class AssignPool {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, { resolve: (r: { lists: Int32Array; codes: Uint8Array }) => void; reject: (e: Error) => void }>();
  private seq = 0;
  private failure: Error | null = null;

  constructor(
    private readonly q: Quantizer,
    threads = cpus().length,
  ) {
    const init: AssignInit = { kind: q.kind, dim: q.dim, k1: q.k1, k2: q.k2, top: q.top, sub: q.sub, mean: q.mean, sqLo: q.sqLo, sqScale: q.sqScale, pqM: q.pqM, codebooks: q.codebooks };
    for (let t = 0; t < threads; t++) {
      const w = new Worker(workerScript(import.meta.url, "assign-worker"), { workerData: init, execArgv: [] });
      w.on("message", (r: Reply) => {
        const p = this.pending.get(r.seq);
        if (!p) return;
        this.pending.delete(r.seq);
        if ("error" in r) p.reject(new Error(`dense build worker: ${r.error}`));
        else p.resolve(r);
      });
      const fail = (e: Error) => {
        this.failure ??= e;
        for (const p of this.pending.values()) p.reject(e);
        this.pending.clear();
      };
      w.on("error", (e) => fail(new Error(`dense build worker failed: ${e.message}`)));
      w.on("exit", (code) => {
        if (code !== 0) fail(new Error(`dense build worker exited with code ${code}`));
      });
      this.workers.push(w);
    }
  }

  /** Lists and codes of `rows` (`n × dim`), split over the workers (or computed here without any). */
  async assign(rows: Float32Array): Promise<{ lists: Int32Array; codes: Uint8Array }> {
    if (this.failure) throw this.failure;
    const dim = this.q.dim;
    const n = rows.length / dim;
    if (this.workers.length === 0 || n < 2 * this.workers.length) {
      const lists = this.q.assign(rows);
      return { lists, codes: this.q.encode(rows, lists) };
    }
    const parts = this.workers.length;
    const per = Math.ceil(n / parts);
    const jobs: Promise<{ lists: Int32Array; codes: Uint8Array }>[] = [];
    for (let p = 0; p < parts; p++) {
      const slice = rows.slice(p * per * dim, Math.min(n, (p + 1) * per) * dim);
      const seq = this.seq++;
      jobs.push(
        new Promise((resolve, reject) => {
          this.pending.set(seq, { resolve, reject });
          this.workers[p].postMessage({ seq, rows: slice } satisfies AssignRequest, [slice.buffer]);
        }),
      );
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
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers.length = 0;
  }
}
