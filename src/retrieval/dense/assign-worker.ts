// Worker-thread entry of a compressed dense build's assign phase: rebuilds the trained quantizer from
// the arrays it is sent once, then answers each batch of rows (moved, not copied) with their coarse lists
// and codes (moved back). See ./assign-pool.ts.

import { workerData } from "node:worker_threads";
import { serveRequests } from "../../util/worker-pool.js";
import { Quantizer } from "./quantizer.js";
import type { AssignInit, Assigned } from "./assign-pool.js";

const i = workerData as AssignInit;
const q = Quantizer.fromParts(i);
serveRequests<Float32Array, Assigned>((rows) => {
  const lists = q.assign(rows);
  const codes = q.encode(rows, lists);
  return { reply: { lists, codes }, transfer: [lists.buffer as ArrayBuffer, codes.buffer as ArrayBuffer] };
});
