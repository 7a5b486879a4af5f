// The worker thread of ./read-ahead.ts: blocking reads of one file descriptor or path into chunks sent
// to the main thread (transferred, not copied), waiting while `maxChunks` of them are not yet taken.

import { closeSync, openSync, readSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import type { ReadAheadInit } from "./read-ahead.js";

const init = workerData as ReadAheadInit;
if (parentPort && init?.tartanReadAhead) run(init);

function run({ source, chunkBytes, maxChunks, control }: ReadAheadInit): void {
  const port = parentPort!;
  const stopped = () => Atomics.load(control, 1) === 1;
  /** Waits until the consumer has room for one more chunk; false when told to stop. */
  const room = (): boolean => {
    for (let c = Atomics.load(control, 0); c >= maxChunks; c = Atomics.load(control, 0)) {
      if (stopped()) return false;
      Atomics.wait(control, 0, c, 1000);
    }
    return !stopped();
  };
  const send = (chunk: Uint8Array) => {
    Atomics.add(control, 0, 1);
    port.postMessage({ chunk }, [chunk.buffer as ArrayBuffer]);
  };
  let fd = -1;
  try {
    fd = typeof source === "number" ? source : openSync(source, "r");
    let buf = new Uint8Array(chunkBytes);
    let n = 0;
    while (!stopped()) {
      let got: number;
      try {
        got = readSync(fd, buf, n, chunkBytes - n, null);
      } catch (e) {
        // A descriptor another part of the process made non-blocking: wait a little and read again.
        if ((e as NodeJS.ErrnoException).code === "EAGAIN") {
          Atomics.wait(control, 1, 0, 2);
          continue;
        }
        throw e;
      }
      if (got === 0) {
        if (n > 0 && room()) send(buf.slice(0, n));
        port.postMessage({ end: true });
        return;
      }
      n += got;
      if (n === chunkBytes) {
        if (!room()) return;
        send(buf);
        buf = new Uint8Array(chunkBytes);
        n = 0;
      }
    }
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    port.postMessage({ error: err.message, code: err.code });
  } finally {
    if (typeof source === "string" && fd >= 0) closeSync(fd);
  }
}
