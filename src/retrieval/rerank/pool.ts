// Reranking on every core: a RerankPool opens one reranker per worker thread (a WorkerPool,
// ../../util/worker-pool.ts; each worker's model on one thread) and sends it chunks of items, results in
// input order; with one thread it reranks on the calling thread (the model may then use `threads`). This
// is what `tartan rerank` batches with; a `rerank` stage in `tartan retrieve` runs in the search pool's
// workers instead. This module is also its own worker script.

import { cpus } from "node:os";
import { isMainThread, workerData } from "node:worker_threads";
import { WorkerPool, serveRequests } from "../../util/worker-pool.js";
import { workerScript } from "../../util/worker-script.js";
import { openReranker } from "./index.js";
import { checkOutput, parseRerankerSpec, type Reranker, type RerankerSpec, type RerankItem, type RerankOutput } from "./reranker.js";

interface Init {
  tartanRerankWorker: true;
  spec: RerankerSpec;
}

/** How a {@link RerankPool} runs. */
export interface RerankPoolOptions {
  /** Worker threads (default: the number of cores); 1 reranks on the calling thread. */
  threads?: number;
  /** Items per request to a worker (default 4). */
  chunk?: number;
}

/** A reranker spread over worker threads; see the module comment. */
export class RerankPool {
  private constructor(
    /** The reranker's spec. */
    readonly spec: RerankerSpec,
    /** The reranker's settings (from the calling thread's copy, opened once to check the spec). */
    readonly settings: Record<string, unknown>,
    private readonly local: Reranker | null,
    private readonly pool: WorkerPool<RerankItem[], RerankOutput[]> | null,
    private readonly chunk: number,
  ) {}

  /** Opens the reranker `spec` names (on this thread first, so a wrong spec fails here, naming the option) and its workers. */
  static async open(spec: string | RerankerSpec, options: RerankPoolOptions = {}): Promise<RerankPool> {
    const s = parseRerankerSpec(spec);
    const threads = Math.max(1, Math.min(options.threads ?? cpus().length, 16));
    const chunk = Math.max(1, options.chunk ?? 4);
    const local = await openReranker(s, { threads: threads === 1 ? cpus().length : 1 });
    if (threads === 1) return new RerankPool(s, local.settings, local, null, chunk);
    const settings = local.settings;
    await local.close();
    const pool = new WorkerPool<RerankItem[], RerankOutput[]>(workerScript(import.meta.url), threads, { tartanRerankWorker: true, spec: s } satisfies Init, `reranker ${s.name} worker`);
    try {
      await pool.whenReady();
    } catch (e) {
      await pool.close();
      throw e;
    }
    return new RerankPool(s, settings, null, pool, chunk);
  }

  /** Worker threads (0: the calling thread). */
  get threads(): number {
    return this.pool?.size ?? 0;
  }

  /** Scores of every item, in order. */
  async rerank(items: readonly RerankItem[]): Promise<RerankOutput[]> {
    if (this.local) return this.local.rerank(items);
    const parts: Promise<RerankOutput[]>[] = [];
    for (let s = 0; s < items.length; s += this.chunk) parts.push(this.pool!.run(items.slice(s, s + this.chunk)));
    const done = await Promise.allSettled(parts);
    const failed = done.find((d) => d.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const out = done.flatMap((d) => (d as PromiseFulfilledResult<RerankOutput[]>).value);
    return out.map((o, i) => checkOutput(this.spec.name, items[i], o));
  }

  /** Closes the reranker or stops the workers. */
  async close(): Promise<void> {
    await this.local?.close();
    await this.pool?.close();
  }
}

const init = workerData as Init | undefined;
if (!isMainThread && init?.tartanRerankWorker === true) {
  const opening = openReranker(init.spec, { threads: 1 });
  serveRequests<RerankItem[], RerankOutput[]>(async (items) => ({ reply: await (await opening).rerank(items) }), opening);
}
