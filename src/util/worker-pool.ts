// A pool of worker threads that answer requests: each worker is started once with `workerData` (its
// state: a trained quantizer, shared memory, the directories to open), then each `run(request)` goes to
// the least busy worker and resolves with its reply. A worker reports itself ready once its start-up
// work is done (`whenReady`); one that cannot start, throws outside a request, or exits fails every
// request in flight and every later one with an error naming the pool, so a batch never waits forever
// on a dead thread. A request that throws fails alone with the worker's message. The worker side is
// `serveRequests` below. Every pool of the library is one of these (docs/architecture.md).

import { Worker, parentPort, type ResourceLimits, type Transferable } from "node:worker_threads";

type Reply<Res> = { seq: number; ok: Res } | { seq: number; error: string } | { ready: true } | { failed: string };

interface Pending<Res> {
  resolve: (r: Res) => void;
  reject: (e: Error) => void;
  worker: number;
}

/** What else a {@link WorkerPool}'s workers start with. */
export interface WorkerPoolOptions {
  /** The workers' heap limits (e.g. a larger young generation for a worker that parses much JSON). */
  resourceLimits?: ResourceLimits;
}

/** Requests of type `Req` answered by `threads` workers running `script` with replies of type `Res`. */
export class WorkerPool<Req, Res> {
  /** @internal Tests: called with every pool as it starts, so that a test can stop one of its workers ({@link stopWorker}). */
  static started: ((pool: WorkerPool<unknown, unknown>) => void) | null = null;

  private readonly workers: Worker[] = [];
  private readonly busy: number[] = [];
  private readonly pending = new Map<number, Pending<Res>>();
  private seq = 0;
  private failure: Error | null = null;
  private readyCount = 0;
  private readonly ready: Promise<void>;
  private settleReady: [() => void, (e: Error) => void] = [() => {}, () => {}];

  /** `name` says whose workers these are in errors ("dense search worker"); `workerData` may be a function of the worker's number. */
  constructor(
    script: URL,
    threads: number,
    workerData: unknown,
    private readonly name: string,
    options: WorkerPoolOptions = {},
  ) {
    this.ready = new Promise<void>((resolve, reject) => (this.settleReady = [resolve, reject]));
    this.ready.catch(() => undefined); // also reported by run(); awaited only through whenReady()
    for (let t = 0; t < threads; t++) {
      const data = typeof workerData === "function" ? (workerData as (t: number) => unknown)(t) : workerData;
      const w = new Worker(script, { workerData: data, execArgv: [], ...(options.resourceLimits ? { resourceLimits: options.resourceLimits } : {}) });
      w.on("message", (r: Reply<Res>) => {
        if ("ready" in r) {
          if (++this.readyCount === this.workers.length) this.settleReady[0]();
          return;
        }
        if ("failed" in r) return this.fail(new Error(`${this.name} failed to start: ${r.failed}`));
        const p = this.pending.get(r.seq);
        if (!p) return;
        this.pending.delete(r.seq);
        this.busy[p.worker]--;
        if ("error" in r) p.reject(new Error(`${this.name}: ${r.error}`));
        else p.resolve(r.ok);
      });
      w.on("error", (e) => this.fail(new Error(`${this.name} failed: ${e.message}`)));
      // Any exit before close() is a death: the pool's workers serve until they are stopped.
      w.on("exit", (code) => this.fail(new Error(`${this.name} exited with code ${code}`)));
      this.workers.push(w);
      this.busy.push(0);
    }
    if (threads === 0) this.settleReady[0]();
    WorkerPool.started?.(this as unknown as WorkerPool<unknown, unknown>);
  }

  /** Workers in the pool. */
  get size(): number {
    return this.workers.length;
  }

  /** Whether a worker has failed or exited, or the pool was closed (every later request is refused). */
  get failed(): boolean {
    return this.failure !== null;
  }

  /** Resolves once every worker has done its start-up work; rejects as {@link run} would when one cannot. */
  whenReady(): Promise<void> {
    return this.ready;
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.settleReady[1](this.failure);
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

  /** @internal Tests: stops worker `i` as a crash would (the pool sees it exit). */
  stopWorker(i: number): Promise<number> {
    return this.workers[i].terminate();
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
 * buffers it lists), or with the message of what it threw. `starting` is the worker's start-up work
 * (opening an index): the worker reports ready when it settles, or that it could not start with its
 * message; requests wait for it.
 */
export function serveRequests<Req, Res>(
  handle: (request: Req) => { reply: Res; transfer?: Transferable[] } | Promise<{ reply: Res; transfer?: Transferable[] }>,
  starting: Promise<unknown> = Promise.resolve(),
): void {
  const port = parentPort;
  if (!port) throw new Error("serveRequests must run in a worker thread");
  starting.then(
    () => port.postMessage({ ready: true }),
    (e: unknown) => port.postMessage({ failed: e instanceof Error ? e.message : String(e) }),
  );
  port.on("message", async (m: { seq: number; request: Req }) => {
    try {
      await starting;
      const { reply, transfer } = await handle(m.request);
      port.postMessage({ seq: m.seq, ok: reply }, transfer ?? []);
    } catch (e) {
      port.postMessage({ seq: m.seq, error: e instanceof Error ? e.message : String(e) });
    }
  });
}
