// Worker-thread entry of a compressed dense build's assign phase: rebuilds the trained quantizer from
// the arrays it is sent once, then answers each batch of rows (moved, not copied) with their coarse lists
// and codes (moved back). See ./assign-pool.ts.

import { parentPort, workerData } from "node:worker_threads";
import { Quantizer } from "./quantizer.js";
import type { AssignInit, AssignRequest } from "./assign-pool.js";

if (!parentPort) throw new Error("assign-worker.js must run in a worker thread");
const port = parentPort;
const i = workerData as AssignInit;
const q = new Quantizer(i.kind, i.dim, i.k1, i.k2, i.top, i.sub, i.mean, i.sqLo, i.sqScale, i.pqM, i.codebooks);
port.on("message", (req: AssignRequest) => {
  try {
    const lists = q.assign(req.rows);
    const codes = q.encode(req.rows, lists);
    port.postMessage({ seq: req.seq, lists, codes }, [lists.buffer as ArrayBuffer, codes.buffer as ArrayBuffer]);
  } catch (e) {
    port.postMessage({ seq: req.seq, error: (e as Error).message });
  }
});
