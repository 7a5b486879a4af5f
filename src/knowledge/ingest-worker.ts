// Worker-thread entry of the ingest (./pool.ts): receives packed batches of lines (moved, not copied),
// answers with preparePacked() results, moving the compressed pages' buffer back.

import { serveRequests } from "../util/worker-pool.js";
import { preparePacked, type PackedLines, type PreparedBatch } from "./prepare.js";

serveRequests<PackedLines, PreparedBatch>((packed) => {
  const batch = preparePacked(packed);
  return { reply: batch, transfer: [batch.blob.buffer as ArrayBuffer] };
});
