// Cuts the passages of a knowledge-source store on worker threads: the main thread splits the store's
// rowids into chunks, workers decode their chunk's pages and cut them (./passages.ts), and the cuts come
// back in store order, without their text (a unit table refers to the store instead). This is what makes
// `tartan ks passages --ks DIR --table OUT` use every core. The workers are a WorkerPool
// (../util/worker-pool.ts): one that dies fails the cut naming the store. This module is also its own
// worker script.

import { cpus } from "node:os";
import { isMainThread, workerData } from "node:worker_threads";
import { workerScript } from "../util/worker-script.js";
import { WorkerPool, serveRequests } from "../util/worker-pool.js";
import { cutPassages, PageError, passageLocation, type Passage, type PassageLocation, type PassageOptions } from "./passages.js";
import { KnowledgeSource } from "./store.js";

/** A passage as a unit table keeps it: provenance and its pieces, no text. */
export type PassageSpan = PassageLocation & Pick<Passage, "sources">;

/** One page's cut: its rowid in the store and its passages. */
export interface PageCut {
  row: number;
  passages: PassageSpan[];
}

interface Init {
  tartanPassageWorker: true;
  dir: string;
  options: PassageOptions;
}
type Request = { first: number; last: number };

function cutRows(ks: KnowledgeSource, first: number, last: number, options: PassageOptions): PageCut[] {
  const out: PageCut[] = [];
  for (const { rowid, page } of ks.rowsBetween(first, last)) {
    let cut;
    try {
      cut = cutPassages(page, options);
    } catch (e) {
      if (e instanceof PageError) throw new Error(`page at row ${rowid} (${String(page.wikipedia_id)}): ${e.message}`);
      throw e;
    }
    out.push({
      row: rowid,
      passages: cut.map((p) => ({ ...passageLocation(p), sources: p.sources })),
    });
  }
  return out;
}

/**
 * The passages of every page of the store in `dir`, page by page in store order, cut on `threads`
 * worker threads (default: the number of cores; 1 cuts on the calling thread).
 */
export async function* storePassageSpans(dir: string, options: PassageOptions & { threads?: number; chunkRows?: number } = {}): AsyncGenerator<PageCut> {
  const { threads: t, chunkRows = 256, ...cut } = options;
  const threads = Math.max(1, Math.min(t ?? cpus().length, 16));
  const ks = KnowledgeSource.open(dir);
  try {
    if (threads === 1) {
      for (let ids = ks.rowIdsAfter(0, chunkRows); ids.length > 0; ids = ks.rowIdsAfter(ids[ids.length - 1], chunkRows))
        yield* cutRows(ks, ids[0], ids[ids.length - 1], cut);
      return;
    }
    const pool = new WorkerPool<Request, PageCut[]>(workerScript(import.meta.url), threads, { tartanPassageWorker: true, dir, options: cut } satisfies Init, `${dir}: passage worker`);
    try {
      // Keep two chunks per worker in flight; take results in order.
      const inFlight: Promise<PageCut[]>[] = [];
      let after = 0;
      const submit = (): boolean => {
        const ids = ks.rowIdsAfter(after, chunkRows);
        if (ids.length === 0) return false;
        after = ids[ids.length - 1];
        const cuts = pool.run({ first: ids[0], last: after });
        cuts.catch(() => undefined); // awaited in order below
        inFlight.push(cuts);
        return true;
      };
      let more = true;
      while (more && inFlight.length < 2 * threads) more = submit();
      while (inFlight.length > 0) {
        const cuts = await inFlight.shift()!;
        if (more) more = submit();
        yield* cuts;
      }
    } finally {
      await pool.close();
    }
  } finally {
    ks.close();
  }
}

const init = workerData as Init | undefined;
if (!isMainThread && init?.tartanPassageWorker === true) {
  const opening = (async () => KnowledgeSource.open(init.dir))();
  serveRequests<Request, PageCut[]>(async (req) => ({ reply: cutRows(await opening, req.first, req.last, init.options) }), opening);
}
