// The worker thread of `Bm25Retriever.searchBatch`: opens the same BM25 index and answers chunks of
// queries, so a batch uses every core.

import { parentPort, workerData } from "node:worker_threads";
import type { Hit } from "../types.js";
import { Bm25Searcher } from "./search.js";

export interface SearchWorkerInit {
  tartanBm25Search: true;
  dir: string;
}
export type SearchWorkerRequest = { id: number; queries: string[]; k: number };
export type SearchWorkerReply = { id: number; hits: Hit[][] } | { id: number; error: string } | { ready: true } | { failed: string };

const init = workerData as SearchWorkerInit | undefined;
if (parentPort && init?.tartanBm25Search === true) {
  const port = parentPort;
  try {
    const searcher = Bm25Searcher.open(init.dir);
    port.on("message", (req: SearchWorkerRequest) => {
      try {
        port.postMessage({ id: req.id, hits: req.queries.map((q) => searcher.search(q, req.k)) } satisfies SearchWorkerReply);
      } catch (e) {
        port.postMessage({ id: req.id, error: (e as Error).message } satisfies SearchWorkerReply);
      }
    });
    port.postMessage({ ready: true } satisfies SearchWorkerReply);
  } catch (e) {
    port.postMessage({ failed: (e as Error).message } satisfies SearchWorkerReply);
  }
}
