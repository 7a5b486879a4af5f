// SPLADE encoding on every core: a SpladePool opens one SPLADE encoder (./splade.ts) per worker thread
// (a WorkerPool, ../../util/worker-pool.ts; each worker's graph on one onnxruntime thread) and sends it
// chunks of texts, results in input order; with one thread it encodes on the calling thread. This is what
// an impact build from an encoder (./encode.ts) runs its units through. This module is also its own
// worker script.

import { cpus } from "node:os";
import { isMainThread, workerData } from "node:worker_threads";
import { WorkerPool, serveRequests } from "../../util/worker-pool.js";
import { workerScript } from "../../util/worker-script.js";
import { SpladeEncoder, type SparseWeights, type SpladeSpec } from "./splade.js";

interface Init {
  tartanSpladeWorker: true;
  spec: SpladeSpec;
}

interface Request {
  texts: string[];
  queries: boolean;
}

/** How a {@link SpladePool} runs. */
export interface SpladePoolOptions {
  /** Worker threads (default: the number of cores); 1 encodes on the calling thread. */
  threads?: number;
  /** Texts per request to a worker (default: the spec's batch size, else 16). */
  chunk?: number;
}

/** A SPLADE encoder spread over worker threads; see the module comment. */
export class SpladePool {
  private constructor(
    /** The encoder's spec (absolute paths), as a manifest records it. */
    readonly spec: SpladeSpec,
    private readonly local: SpladeEncoder | null,
    private readonly pool: WorkerPool<Request, SparseWeights[]> | null,
    private readonly chunk: number,
  ) {}

  /** Opens the encoder (on this thread first, so a bad model or vocabulary fails here, naming the file) and its workers. */
  static async open(spec: SpladeSpec, options: SpladePoolOptions = {}): Promise<SpladePool> {
    const threads = Math.max(1, Math.min(options.threads ?? cpus().length, 16));
    const chunk = Math.max(1, options.chunk ?? spec.batchSize ?? 16);
    const local = await SpladeEncoder.load({ ...spec, threads: 1 });
    const s = { ...local.spec, threads: spec.threads };
    if (s.threads === undefined) delete s.threads;
    if (threads === 1) return new SpladePool(s, local, null, chunk);
    await local.close();
    const pool = new WorkerPool<Request, SparseWeights[]>(workerScript(import.meta.url), threads, { tartanSpladeWorker: true, spec: { ...s, threads: 1 } } satisfies Init, "SPLADE encoder worker");
    try {
      await pool.whenReady();
    } catch (e) {
      await pool.close();
      throw e;
    }
    return new SpladePool(s, null, pool, chunk);
  }

  /** Worker threads (0: the calling thread). */
  get threads(): number {
    return this.pool?.size ?? 0;
  }

  /** Term weights of documents, in order (the spec's docTopK applied). */
  encodePassages(texts: readonly string[]): Promise<SparseWeights[]> {
    return this.encode(texts, false);
  }

  /** Term weights of queries, in order (the spec's queryTopK applied). */
  encodeQueries(texts: readonly string[]): Promise<SparseWeights[]> {
    return this.encode(texts, true);
  }

  private async encode(texts: readonly string[], queries: boolean): Promise<SparseWeights[]> {
    if (this.local) return queries ? this.local.encodeQueries(texts) : this.local.encodePassages(texts);
    const parts: Promise<SparseWeights[]>[] = [];
    for (let s = 0; s < texts.length; s += this.chunk) parts.push(this.pool!.run({ texts: texts.slice(s, s + this.chunk), queries }));
    const done = await Promise.allSettled(parts);
    const failed = done.find((d) => d.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return done.flatMap((d) => (d as PromiseFulfilledResult<SparseWeights[]>).value);
  }

  /** Closes the encoder or stops the workers. */
  async close(): Promise<void> {
    await this.local?.close();
    await this.pool?.close();
  }
}

const init = workerData as Init | undefined;
if (!isMainThread && init?.tartanSpladeWorker === true) {
  const opening = SpladeEncoder.load(init.spec);
  serveRequests<Request, SparseWeights[]>(async (r) => {
    const e = await opening;
    return { reply: r.queries ? await e.encodeQueries(r.texts) : await e.encodePassages(r.texts) };
  }, opening);
}
