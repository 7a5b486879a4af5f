// The compute worker (src/server/compute.ts): runs one job — bootstrap means or a run comparison —
// and posts the result (or the error's message) back, then waits for the next job.

import { parentPort, workerData } from "node:worker_threads";
import { compareRuns } from "../compare/compare.js";
import { bootstrapMeans } from "../compare/resampling.js";
import type { ComputeJob, ComputeReply } from "./compute.js";

if (parentPort && (workerData as { tartanCompute?: boolean } | null)?.tartanCompute) {
  const port = parentPort;
  port.on("message", (job: ComputeJob) => {
    let reply: ComputeReply;
    try {
      const result = job.kind === "bootstrap" ? bootstrapMeans(job.columns, { samples: job.samples, seed: job.seed }) : compareRuns(job.runs, job.options);
      reply = { ok: true, result };
    } catch (e) {
      reply = { ok: false, message: e instanceof Error ? e.message : String(e) };
    }
    port.postMessage(reply);
  });
}
