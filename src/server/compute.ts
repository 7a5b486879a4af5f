// The server's CPU-heavy work (the leaderboard's bootstrap resampling, a run comparison) on worker
// threads of its own, so a request that resamples for seconds never stalls the event loop (health
// checks, searches and page lookups go on being answered). Up to two idle workers are kept for the next
// jobs (they hold no process open); a job past its deadline gets a 408 and its worker is terminated:
// the work stops, it is not left running with its answer dropped.

import { Worker } from "node:worker_threads";
import type { CompareOptions, CompareResult, ScoredRun } from "../compare/compare.js";
import { workerScript } from "../util/worker-script.js";
import { ApiError } from "./errors.js";

/** A job for the compute worker. */
export type ComputeJob =
  | { kind: "bootstrap"; columns: Float64Array[]; samples: number; seed: number }
  | { kind: "compare"; runs: ScoredRun[]; options: CompareOptions };

/** What the worker answers: the job's result, or the message of the error it threw. */
export type ComputeReply = { ok: true; result: unknown } | { ok: false; message: string };

type ResultOf<J extends ComputeJob> = J extends { kind: "bootstrap" } ? Float64Array[] : CompareResult;

/** Idle workers kept for the next job. */
const KEEP = 2;
const idle: Worker[] = [];

function takeWorker(): Worker {
  const w = idle.pop() ?? new Worker(workerScript(import.meta.url, "compute-worker"), { workerData: { tartanCompute: true } });
  w.off("error", dropIdle);
  w.off("exit", dropIdle);
  w.ref();
  return w;
}

/** An idle worker that fails or exits leaves the idle list. */
function dropIdle(this: Worker): void {
  const i = idle.indexOf(this);
  if (i >= 0) idle.splice(i, 1);
}

function giveBack(w: Worker): void {
  if (idle.length >= KEEP) return void w.terminate();
  w.unref();
  w.once("error", dropIdle);
  w.once("exit", dropIdle);
  idle.push(w);
}

/** Runs `job` on a worker thread; a 408 `ApiError` past `timeoutMs` (the worker is terminated). */
export function offThread<J extends ComputeJob>(job: J, timeoutMs: number): Promise<ResultOf<J>> {
  return new Promise((resolve, reject) => {
    const worker = takeWorker();
    let settled = false;
    const onMessage = (m: ComputeReply) => finish(true, () => (m.ok ? resolve(m.result as ResultOf<J>) : reject(new Error(m.message))));
    const onError = (e: Error) => finish(false, () => reject(e));
    const onExit = (code: number) => finish(false, () => reject(new Error(`the compute worker stopped (exit code ${code})`)));
    const finish = (keep: boolean, f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
      if (keep) giveBack(worker);
      else void worker.terminate();
      f();
    };
    const timer = setTimeout(() => finish(false, () => reject(new ApiError(408, `the computation took longer than ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`}`))), timeoutMs);
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
    worker.postMessage(job);
  });
}
