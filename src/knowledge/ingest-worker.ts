// Worker-thread entry of the ingest: receives batches of JSONL lines, answers with preparePages()
// results, moving the compressed pages' buffer instead of copying it.

import { parentPort } from "node:worker_threads";
import { preparePages } from "./prepare.js";

export interface WorkerRequest {
  seq: number;
  texts: string[];
}

if (!parentPort) throw new Error("ingest-worker.js must run in a worker thread");
const port = parentPort;
port.on("message", (req: WorkerRequest) => {
  const batch = preparePages(req.texts);
  port.postMessage({ seq: req.seq, batch }, [batch.blob.buffer as ArrayBuffer]);
});
