// Cuts the passages of a knowledge-source store on worker threads: the main thread splits the store's
// rowids into chunks, workers decode their chunk's pages and cut them (./passages.ts), and the cuts come
// back in store order, without their text (a unit table refers to the store instead). This is what makes
// `tartan ks passages --ks DIR --table OUT` use every core. This module is also its own worker script.

import { cpus } from "node:os";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { workerScript } from "../util/worker-script.js";
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
type Request = { id: number; first: number; last: number };
type Reply = { id: number; cuts: PageCut[] } | { id: number; error: string };

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
    const waiting = new Map<number, { resolve: (c: PageCut[]) => void; reject: (e: Error) => void }>();
    const results = new Map<number, Promise<PageCut[]>>();
    let failure: Error | null = null;
    const workers = Array.from({ length: threads }, () => {
      const w = new Worker(workerScript(import.meta.url), { workerData: { tartanPassageWorker: true, dir, options: cut } satisfies Init });
      w.on("message", (m: Reply) => {
        const p = waiting.get(m.id);
        waiting.delete(m.id);
        if ("error" in m) p?.reject(new Error(`${dir}: ${m.error}`));
        else p?.resolve(m.cuts);
      });
      const fail = (e: Error) => {
        failure ??= e;
        for (const p of waiting.values()) p.reject(e);
        waiting.clear();
      };
      w.on("error", fail);
      w.on("exit", (code) => {
        if (code !== 0) fail(new Error(`${dir}: passage worker stopped (exit code ${code})`));
      });
      return w;
    });
    try {
      let next = 0;
      let done = 0;
      let after = 0;
      let more = true;
      const submit = () => {
        const ids = ks.rowIdsAfter(after, chunkRows);
        if (ids.length === 0) {
          more = false;
          return;
        }
        after = ids[ids.length - 1];
        const id = next++;
        results.set(
          id,
          new Promise<PageCut[]>((resolve, reject) => {
            if (failure) return reject(failure);
            waiting.set(id, { resolve, reject });
            workers[id % threads].postMessage({ id, first: ids[0], last: after } satisfies Request);
          }),
        );
        results.get(id)!.catch(() => undefined); // awaited in order below
      };
      // Keep two chunks per worker in flight; take results in order.
      while (more && next < 2 * threads) submit();
      while (done < next) {
        const cuts = await results.get(done)!;
        results.delete(done++);
        if (more) submit();
        yield* cuts;
      }
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
  } finally {
    ks.close();
  }
}

const init = workerData as Init | undefined;
if (!isMainThread && parentPort && init?.tartanPassageWorker === true) {
  const port = parentPort;
  const ks = KnowledgeSource.open(init.dir);
  port.on("message", (req: Request) => {
    try {
      port.postMessage({ id: req.id, cuts: cutRows(ks, req.first, req.last, init.options) } satisfies Reply);
    } catch (e) {
      port.postMessage({ id: req.id, error: e instanceof Error ? e.message : String(e) } satisfies Reply);
    }
  });
}
