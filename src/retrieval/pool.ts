// Runs batches of queries over opened indexes on several cores (`SearchPool`), and renders one query's
// hits as a KILT guess line or TREC run lines (`renderHits`). This module is also the worker script of
// `SearchPool`: each worker of its pool (../util/worker-pool.ts) opens the same index directories through
// the registry (./open.ts).

import { cpus } from "node:os";
import { isMainThread, workerData } from "node:worker_threads";
import type { KiltId } from "../records/types.js";
import type { Hit, Retriever } from "./types.js";
import { queryText, type QueryInput, type SearchOptions } from "./query.js";
import { unitProvenance, type Unit, type UnitSource } from "./units/unit.js";
import type { HybridOptions } from "./hybrid.js";
import type { StageOptions } from "./stages/stage.js";
import { openIndexes } from "./open.js";
import { workerScript } from "../util/worker-script.js";
import { WorkerPool, serveRequests } from "../util/worker-pool.js";

/** Options of searching many queries on several threads. */
export interface ParallelOptions extends HybridOptions, StageOptions {
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
  options: HybridOptions & StageOptions;
}
interface WorkerRequest {
  /** Texts, or texts with their vectors (a vector goes down the pool with its query). */
  queries: QueryInput[];
  k: number;
  /** This call's search options (every thread searches with them). */
  options?: SearchOptions;
  /** With `render`: the records' ids; the reply then holds rendered text instead of hits. */
  ids?: KiltId[];
  render?: RenderSpec;
}
/** Hits per query, or (with `render`) rendered text per query. */
type WorkerReply = Hit[][] | string[];

async function answer(retriever: Retriever, req: WorkerRequest): Promise<WorkerReply> {
  const hits = await searchAll(retriever, req.queries, req.k, req.options);
  if (!req.render || !req.ids) return hits;
  const spec = req.render;
  const ids = req.ids;
  return hits.map((h, i) => renderHits(retriever, ids[i], queryText(req.queries[i]), h, spec));
}

async function searchAll(r: Retriever, queries: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]> {
  if (r.searchBatch) return r.searchBatch(queries, k, options);
  const out: Hit[][] = [];
  for (const q of queries) out.push(await r.search(q, k, options));
  return out;
}

/**
 * Answers batches of queries on several threads: the calling thread searches with `retriever` and
 * `threads − 1` workers (one worker pool, `src/util/worker-pool.ts`) open the same directories. Results come back in query
 * order and equal `retriever.search` one query at a time. This is the one layer that spreads a batch
 * over the cores for every kind (a retriever's own `searchBatch` stays on its thread, except a dense
 * index's, whose kind then asks for one thread here). Workers start on the first batch big enough to
 * share and take chunks once they have opened the indexes; several batches may run at once. A worker
 * that cannot open the indexes or dies fails the batch with an error naming the search workers.
 */
export class SearchPool {
  private pool: WorkerPool<WorkerRequest, WorkerReply> | null = null;
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

  /** Threads a batch is spread over, the calling thread included. */
  get size(): number {
    return this.threads;
  }

  private workers(): WorkerPool<WorkerRequest, WorkerReply> {
    if (this.pool?.failed) {
      // A dead pool's batch has failed; the next batch starts afresh.
      void this.pool.close();
      this.pool = null;
    }
    const init: WorkerInit = { tartanSearchWorker: true, dirs: [...this.dirs], options: { k0: this.options.k0, depth: this.options.depth, fusion: this.options.fusion, stages: this.options.stages } };
    this.pool ??= new WorkerPool(workerScript(import.meta.url), this.threads - 1, init, "search worker");
    return this.pool;
  }

  /** Hits for every query, in order; `onProgress(n)` after each chunk with the number answered; `options` reach every thread. */
  async search(queries: readonly QueryInput[], k: number, onProgress?: (done: number) => void, options?: SearchOptions): Promise<Hit[][]> {
    return this.run<Hit[]>(queries, k, undefined, undefined, onProgress, options);
  }

  /** Every query's output rendered by {@link renderHits} (the rendering is shared by the threads too); `options` reach every thread. */
  async render(queries: readonly QueryInput[], ids: readonly KiltId[], k: number, spec: RenderSpec, onProgress?: (done: number) => void, options?: SearchOptions): Promise<string[]> {
    if (ids.length !== queries.length) throw new Error("render: one id per query");
    return this.run<string>(queries, k, ids, spec, onProgress, options);
  }

  private async run<T>(queries: readonly QueryInput[], k: number, ids: readonly KiltId[] | undefined, spec: RenderSpec | undefined, onProgress?: (done: number) => void, options?: SearchOptions): Promise<T[]> {
    const results: T[] = new Array(queries.length);
    const chunk = this.chunk;
    let next = 0;
    let done = 0;
    let stopped = false;
    const take = (): [number, number] | null => {
      if (stopped || next >= queries.length) return null;
      const start = next;
      next = Math.min(queries.length, next + chunk);
      return [start, next];
    };
    const request = (range: [number, number]): WorkerRequest => ({
      queries: queries.slice(range[0], range[1]),
      k,
      ...(options ? { options } : {}),
      ...(spec && ids ? { ids: ids.slice(range[0], range[1]), render: spec } : {}),
    });
    const finish = (at: number, items: T[]) => {
      for (let i = 0; i < items.length; i++) results[at + i] = items[i];
      done += items.length;
      onProgress?.(done);
    };
    const pool = this.threads > 1 && queries.length > chunk ? this.workers() : null;
    const shares = new Array<number>(this.threads).fill(0);
    // One loop per worker, each with one chunk in flight: the pool's least-busy dispatch gives every
    // worker one. They start taking chunks when the workers have opened the indexes.
    const helpers = Array.from({ length: pool ? pool.size : 0 }, async (_, w) => {
      await pool!.whenReady();
      for (let range = take(); range; range = take()) {
        const items = (await pool!.run(request(range))) as T[];
        finish(range[0], items);
        shares[w + 1] += items.length;
      }
    });
    // This thread takes one chunk at a time: a retriever's units may be loaded per search (a ClickHouse
    // index reads the units of a chunk's hits before they are rendered), so a second chunk in flight here
    // would load its units over the first's before the first is rendered.
    const loops = Array.from({ length: 1 }, async () => {
      for (let range = take(); range; range = take()) {
        finish(range[0], (await answer(this.retriever, request(range))) as T[]);
        shares[0] += range[1] - range[0];
        // A search that never waits resolves in microtasks: without a turn of the event loop here the
        // workers' replies (and so their next chunks) would wait until this thread had taken every chunk.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    });
    try {
      await Promise.all([...loops, ...helpers]);
    } catch (e) {
      stopped = true; // the other threads take no more chunks of a failed batch
      await Promise.allSettled([...loops, ...helpers]);
      throw e;
    }
    this.shares = shares;
    return results;
  }

  /** Queries answered by each thread in the last completed run, the calling thread first. */
  lastShares(): readonly number[] {
    return this.shares;
  }

  /** Stops the workers (the retriever stays open). */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.close();
  }
}

// Worker side of SearchPool: opens the indexes, then answers chunks.
if (!isMainThread && (workerData as WorkerInit | undefined)?.tartanSearchWorker === true) {
  const init = workerData as WorkerInit;
  // Single-threaded: this worker is one of the pool's threads (a kind with a pool of its own starts none here).
  const opening = openIndexes(init.dirs, { ...init.options, threads: 1 });
  serveRequests<WorkerRequest, WorkerReply>(async (req) => ({ reply: await answer(await opening, req) }), opening);
}
