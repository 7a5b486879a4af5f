// Reading a pipe ahead of its consumer: a worker thread reads standard input (or a FIFO) with blocking
// reads into a bounded queue of chunks, so the process writing into the pipe keeps going while the main
// thread is busy. Without it the kernel's pipe buffer (64 KiB) fills as soon as the main thread spends
// a few milliseconds elsewhere (an ingest's synchronous SQLite inserts), and the writer and the reader
// take turns instead of running at once. Used by the JSONL reader for `-` when asked (./jsonl.ts).

import { Worker } from "node:worker_threads";
import { workerScript } from "../util/worker-script.js";

/** Options of {@link readAhead}. */
export interface ReadAheadOptions {
  /** Bytes per chunk handed to the consumer (the last one may be shorter); default 1 MiB. */
  chunkBytes?: number;
  /** Bytes read and not yet taken by the consumer, at most (rounded up to whole chunks, at least 2); default 32 MiB. */
  maxBytes?: number;
}

/** What the worker sends: a chunk, the end of the input, or why it stopped. */
export type ReadAheadMessage = { chunk: Uint8Array } | { end: true } | { error: string; code?: string };

/** What the worker is started with. `control[0]`: chunks sent and not yet taken; `control[1]`: 1 = stop. */
export interface ReadAheadInit {
  tartanReadAhead: true;
  source: number | string;
  chunkBytes: number;
  maxChunks: number;
  control: Int32Array;
}

/**
 * The bytes of `source` (a file descriptor, e.g. 0 for standard input, or the path of a FIFO or file),
 * read on a worker thread up to `maxBytes` ahead of the consumer. Leaving the loop early stops the worker.
 */
export async function* readAhead(source: number | string, options: ReadAheadOptions = {}): AsyncGenerator<Buffer> {
  const chunkBytes = Math.max(1, Math.floor(options.chunkBytes ?? 1 << 20));
  const maxChunks = Math.max(2, Math.ceil((options.maxBytes ?? 32 << 20) / chunkBytes));
  const control = new Int32Array(new SharedArrayBuffer(8));
  const init: ReadAheadInit = { tartanReadAhead: true, source, chunkBytes, maxChunks, control };
  const worker = new Worker(workerScript(import.meta.url, "read-ahead-worker"), { workerData: init });
  const queue: ReadAheadMessage[] = [];
  let wake: (() => void) | null = null;
  const push = (m: ReadAheadMessage) => {
    queue.push(m);
    wake?.();
    wake = null;
  };
  worker.on("message", push);
  worker.on("error", (e: Error) => push({ error: e.message }));
  worker.on("exit", (code) => push({ error: `the reading thread stopped (exit code ${code})` }));
  try {
    for (;;) {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const m = queue.shift()!;
      if ("end" in m) return;
      if ("error" in m) throw Object.assign(new Error(m.error), m.code ? { code: m.code } : {});
      Atomics.sub(control, 0, 1);
      Atomics.notify(control, 0);
      yield Buffer.from(m.chunk.buffer, m.chunk.byteOffset, m.chunk.byteLength);
    }
  } finally {
    Atomics.store(control, 1, 1);
    Atomics.notify(control, 0);
    // A worker blocked in read() ends when the writer writes or closes; it must not keep the process alive meanwhile.
    worker.unref();
    void worker.terminate();
  }
}
