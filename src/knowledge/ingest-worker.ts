// Worker-thread entry of the ingest: receives packed batches of lines (moved, not copied), answers
// with preparePacked() results, moving the compressed pages' buffer back.

import { parentPort } from "node:worker_threads";
import { preparePacked, type PackedLines } from "./prepare.js";

export interface WorkerRequest {
  seq: number;
  packed: PackedLines;
}

if (!parentPort) throw new Error("ingest-worker.js must run in a worker thread");
const port = parentPort;
port.on("message", (req: WorkerRequest) => {
  const batch = preparePacked(req.packed);
  port.postMessage({ seq: req.seq, batch }, [batch.blob.buffer as ArrayBuffer]);
});
