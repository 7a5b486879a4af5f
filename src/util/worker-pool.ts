// A pool of worker threads that answer requests: each worker is started once with `workerData` (its
// state: a trained quantizer, shared memory), then each `run(request)` goes to the least busy worker
// and resolves with its reply. A worker that throws while answering fails that request with its
// message; a worker that fails or exits fails every request in flight and every later one, naming the
// pool, so a batch never waits forever on a dead thread. The worker side is `serveRequests` below.

import { Worker, parentPort, type Transferable } from "node:worker_threads";

type Reply<Res> = { seq: number; ok: Res } | { seq: number; error: string };

interface Pending<Res> {
  resolve: (r: Res) => void;
  reject: (e: Error) => void;
  worker: number;
}

/** Requests of type `Req` answered by `threads` workers running `script` with replies of type `Res`. */
export class WorkerPool<Req, Res> {
  private readonly workers: Worker[] = [];
  private readonly busy: number[] = [];
  private readonly pending = new Map<number, Pending<Res>>();
  private seq = 0;
  private failure: Error | null = null;

  /** `name` says whose workers these are in errors ("dense search worker"); `workerData` may be a function of the worker's number. */
  constructor(
    script: URL,
    threads: number,
    workerData: unknown,
    private readonly name: string,
  ) {
    for (let t = 0; t < threads; t++) {
      const data = typeof workerData === "function" ? (workerData as (t: number) => unknown)(t) : workerData;
      const w = new Worker(script, { workerData: data, execArgv: [] });
      w.on("message", (r: Reply<Res>) => {
        const p = this.pending.get(r.seq);
        if (!p) return;
        this.pending.delete(r.seq);
        this.busy[p.worker]--;
        if ("error" in r) p.reject(new Error(`${this.name}: ${r.error}`));
        else p.resolve(r.ok);
      });
      w.on("error", (e) => this.fail(new Error(`${this.name} failed: ${e.message}`)));
      w.on("exit", (code) => {
        if (code !== 0) this.fail(new Error(`${this.name} exited with code ${code}`));
      });
      this.workers.push(w);
      this.busy.push(0);
    }
  }

  /** Workers in the pool. */
  get size(): number {
    return this.workers.length;
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
  }

  /** Sends `request` (moving `transfer`) to the least busy worker; resolves with its reply. */
  run(request: Req, transfer: readonly Transferable[] = []): Promise<Res> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.workers.length === 0) return Promise.reject(new Error(`${this.name}: the pool is closed`));
    let w = 0;
    for (let i = 1; i < this.busy.length; i++) if (this.busy[i] < this.busy[w]) w = i;
    const seq = this.seq++;
    this.busy[w]++;
    return new Promise<Res>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, worker: w });
      this.workers[w].postMessage({ seq, request }, transfer as Transferable[]);
    });
  }

  /** Stops the workers; requests still in flight are rejected. */
  async close(): Promise<void> {
    const ws = this.workers.splice(0);
    this.fail(new Error(`${this.name}: the pool was closed`));
    await Promise.all(ws.map((w) => w.terminate()));
  }
}

/**
 * The worker side of a {@link WorkerPool}: answers each request with `handle`'s reply (moving the
 * buffers it lists), or with the message of what it threw.
 */
export function serveRequests<Req, Res>(handle: (request: Req) => { reply: Res; transfer?: Transferable[] } | Promise<{ reply: Res; transfer?: Transferable[] }>): void {
  const port = parentPort;
  if (!port) throw new Error("serveRequests must run in a worker thread");
  port.on("message", async (m: { seq: number; request: Req }) => {
    try {
      const { reply, transfer } = await handle(m.request);
      port.postMessage({ seq: m.seq, ok: reply }, transfer ?? []);
    } catch (e) {
      port.postMessage({ seq: m.seq, error: (e as Error).message });
    }
  });
}
