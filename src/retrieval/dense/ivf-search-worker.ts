// Worker-thread entry of a compressed dense index's batch search (./ivf-search.ts): attaches to the
// index's codes and ids in shared memory (its own scratch slot for the Hamming kernel, its own handle on
// the int8 rows file) and answers each chunk of queries with their hits.

import { workerData } from "node:worker_threads";
import { serveRequests } from "../../util/worker-pool.js";
import type { Hit } from "../types.js";
import { IvfIndex, type IvfSearchRequest, type IvfShare } from "./ivf-search.js";

const { share, slot } = workerData as { share: IvfShare; slot: number };
const index = IvfIndex.attach(share, slot);
serveRequests<IvfSearchRequest, Hit[][]>((r) => ({ reply: index.search(r.qs, r.k, r.options) }));
