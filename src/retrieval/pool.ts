// Runs batches of queries over opened indexes on several cores (`SearchPool`), and renders one query's
// hits as a KILT guess line or TREC run lines (`renderHits`). This module is also the worker script of
// `SearchPool`: each worker opens the same index directories through the registry (./open.ts).

import { cpus } from "node:os";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import type { KiltId } from "../records/types.js";
import type { Hit, Retriever } from "./types.js";
import { unitProvenance, type Unit, type UnitSource } from "./units.js";
import type { HybridOptions } from "./hybrid.js";
import { openIndexes } from "./open.js";
import { workerScript } from "../util/worker-script.js";

/** Options of searching many queries on several threads. */
export interface ParallelOptions extends HybridOptions {
  /** Threads in all (the calling thread included); default: the number of cores. */
  threads?: number;
  /** Queries per work item; default 64. */
  chunk?: number;
}

/** How `SearchPool.render` turns one query's hits into output text. */
export interface RenderSpec {
  format: "kilt" | "trec";
  /** KILT: put the unit text into each provenance. */
  withText: boolean;
  /** TREC: docid = these unit fields joined with "+". */
  keys: string[];
  /** TREC run tag. */
  tag: string;
}

/** A TREC id from provenance or unit fields (whitespace replaced, as trec_eval splits on it), or null when a key is missing. */
export function trecId(p: Record<string, unknown>, keys: readonly string[]): string | null {
  const parts: string[] = [];
  for (const k of keys) {
    const v = p[k];
    if (v === undefined || v === null) return null;
    parts.push(String(v).trim());
  }
  return parts.join("+").replace(/\s+/gu, "_");
}

/** Decoded units, kept for reuse: whole pages are read once however often they are hit. */
class UnitCache {
  private readonly map = new Map<number, Unit>();
  constructor(
    private readonly store: UnitSource,
    private readonly max = 4096,
  ) {}
  get(i: number): Unit {
    let u = this.map.get(i);
    if (u === undefined) {
      u = this.store.get(i);
      if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as number);
      this.map.set(i, u);
    }
    return u;
  }
}

const caches = new WeakMap<UnitSource, UnitCache>();

/**
 * One query's output: a KILT guess line `{id, input, output: [{provenance}]}` (no newline), or its TREC
 * run lines (docids de-duplicated, best first; "" when there are none).
 */
export function renderHits(retriever: Retriever, id: KiltId, input: string, hits: readonly Hit[], spec: RenderSpec): string {
  let cache = caches.get(retriever.units);
  if (!cache) caches.set(retriever.units, (cache = new UnitCache(retriever.units)));
  if (spec.format === "kilt") {
    const provenance = hits.map((h) => unitProvenance(cache.get(h.unit), h.score, spec.withText));
    return JSON.stringify({ id, input, output: [{ provenance }] });
  }
  const qid = String(id).trim().replace(/\s+/gu, "_");
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const h of hits) {
    const doc = trecId(cache.get(h.unit) as unknown as Record<string, unknown>, spec.keys);
    if (doc === null || seen.has(doc)) continue;
    seen.add(doc);
    lines.push(`${qid} Q0 ${doc} ${lines.length + 1} ${h.score} ${spec.tag}`);
  }
  return lines.join("\n");
}

interface WorkerInit {
  tartanSearchWorker: true;
  dirs: string[];
  options: HybridOptions;
}
interface WorkerRequest {
  id: number;
  queries: string[];
  k: number;
  /** With `render`: the records' ids; the reply then holds rendered text instead of hits. */
  ids?: KiltId[];
  render?: RenderSpec;
}
type WorkerReply = { id: number; hits: Hit[][] } | { id: number; lines: string[] } | { id: number; error: string } | { ready: true } | { failed: string };

async function answer(retriever: Retriever, req: WorkerRequest): Promise<WorkerReply> {
  const hits = await searchAll(retriever, req.queries, req.k);
  if (!req.render || !req.ids) return { id: req.id, hits };
  const spec = req.render;
  const ids = req.ids;
  return { id: req.id, lines: hits.map((h, i) => renderHits(retriever, ids[i], req.queries[i], h, spec)) };
}

async function searchAll(r: Retriever, queries: readonly string[], k: number): Promise<Hit[][]> {
  if (r.searchBatch) return r.searchBatch(queries, k);
  const out: Hit[][] = [];
  for (const q of queries) out.push(await r.search(q, k));
  return out;
}

/**
 * Answers batches of queries on several threads: the calling thread searches with `retriever` and
 * `threads − 1` workers open the same directories. Results come back in query order and equal
 * `retriever.search` one query at a time. Workers start on the first batch big enough to share.
 */
export class SearchPool {
  private readonly workers: Worker[] = [];
  private readonly ready: Promise<void>[] = [];
  private readonly threads: number;
  private readonly chunk: number;
  /** Queries answered by each thread in the last completed run (see lastShares). */
  private shares: number[] = [];

  constructor(
    readonly retriever: Retriever,
    readonly dirs: readonly string[],
    private readonly options: ParallelOptions = {},
  ) {
    this.threads = Math.max(1, Math.min(options.threads ?? cpus().length, 16));
    this.chunk = Math.max(1, options.chunk ?? 64);
  }

  private startWorkers(): void {
    if (this.workers.length > 0 || this.threads === 1) return;
    const init: WorkerInit = { tartanSearchWorker: true, dirs: [...this.dirs], options: { k0: this.options.k0, depth: this.options.depth } };
    for (let w = 0; w < this.threads - 1; w++) {
      const worker = new Worker(workerScript(import.meta.url), { workerData: init });
      this.workers.push(worker);
      this.ready.push(
        new Promise<void>((resolve, reject) => {
          const onMessage = (msg: WorkerReply) => {
            worker.off("message", onMessage);
            worker.off("error", reject);
            if ("ready" in msg) resolve();
            else reject(new Error("failed" in msg ? msg.failed : "search worker did not start"));
          };
          worker.on("message", onMessage);
          worker.on("error", reject);
        }),
      );
    }
  }

  /** Hits for every query, in order; `onProgress(n)` after each chunk with the number answered. */
  async search(queries: readonly string[], k: number, onProgress?: (done: number) => void): Promise<Hit[][]> {
    return this.run<Hit[]>(queries, k, undefined, undefined, onProgress);
  }

  /** Every query's output rendered by {@link renderHits} (the rendering is shared by the threads too). */
  async render(queries: readonly string[], ids: readonly KiltId[], k: number, spec: RenderSpec, onProgress?: (done: number) => void): Promise<string[]> {
    if (ids.length !== queries.length) throw new Error("render: one id per query");
    return this.run<string>(queries, k, ids, spec, onProgress);
  }

  private async run<T>(queries: readonly string[], k: number, ids: readonly KiltId[] | undefined, spec: RenderSpec | undefined, onProgress?: (done: number) => void): Promise<T[]> {
    const results: T[] = new Array(queries.length);
    const chunk = this.chunk;
    let next = 0;
    let done = 0;
    const take = (): [number, number] | null => {
      if (next >= queries.length) return null;
      const start = next;
      next = Math.min(queries.length, next + chunk);
      return [start, next];
    };
    const request = (range: [number, number]): WorkerRequest => ({
      id: range[0],
      queries: queries.slice(range[0], range[1]),
      k,
      ...(spec && ids ? { ids: ids.slice(range[0], range[1]), render: spec } : {}),
    });
    const finish = (reply: WorkerReply) => {
      if (!("id" in reply)) return;
      const items = ("lines" in reply ? reply.lines : "hits" in reply ? reply.hits : []) as T[];
      for (let i = 0; i < items.length; i++) results[reply.id + i] = items[i];
      done += items.length;
      onProgress?.(done);
    };
    if (queries.length > chunk) this.startWorkers();
    const shares = new Array<number>(1 + this.workers.length).fill(0);
    const helpers = this.workers.map(
      (worker, w) =>
        new Promise<void>((resolve, reject) => {
          const send = () => {
            const range = take();
            if (!range) {
              cleanup();
              return resolve();
            }
            worker.postMessage(request(range));
          };
          const onMessage = (msg: WorkerReply) => {
            if ("id" in msg && !("error" in msg)) {
              finish(msg);
              shares[w + 1] += "lines" in msg ? msg.lines.length : "hits" in msg ? msg.hits.length : 0;
              return send();
            }
            cleanup();
            reject(new Error("error" in msg ? msg.error : "failed" in msg ? msg.failed : "unexpected message from a search worker"));
          };
          const onError = (e: Error) => {
            cleanup();
            reject(e);
          };
          const cleanup = () => {
            worker.off("message", onMessage);
            worker.off("error", onError);
          };
          this.ready[w].then(() => {
            worker.on("message", onMessage);
            worker.on("error", onError);
            send();
          }, onError);
        }),
    );
    const local = (async () => {
      for (let range = take(); range; range = take()) {
        const reply = await answer(this.retriever, request(range));
        finish(reply);
        shares[0] += range[1] - range[0];
        // A search that never waits resolves in microtasks: without a turn of the event loop here the
        // workers' replies (and so their next chunks) would wait until this thread had taken every chunk.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    })();
    await Promise.all([local, ...helpers]);
    this.shares = shares;
    return results;
  }


  /** Queries answered by each thread in the last completed run, the calling thread first. */
  lastShares(): readonly number[] {
    return this.shares;
  }

  /** Stops the workers (the retriever stays open). */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers.length = 0;
    this.ready.length = 0;
  }
}

// Worker side of SearchPool.
if (!isMainThread && parentPort && (workerData as WorkerInit | undefined)?.tartanSearchWorker === true) {
  const port = parentPort;
  const init = workerData as WorkerInit;
  openIndexes(init.dirs, init.options).then(
    (retriever) => {
      port.on("message", (req: WorkerRequest) => {
        answer(retriever, req).then(
          (reply) => port.postMessage(reply),
          (e: unknown) => port.postMessage({ id: req.id, error: e instanceof Error ? e.message : String(e) } satisfies WorkerReply),
        );
      });
      port.postMessage({ ready: true } satisfies WorkerReply);
    },
    (e: unknown) => port.postMessage({ failed: e instanceof Error ? e.message : String(e) } satisfies WorkerReply),
  );
}
