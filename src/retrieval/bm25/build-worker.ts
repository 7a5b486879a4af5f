// The worker thread of a BM25 build (./build.ts): analyses the batches of units it is sent into a
// segment (./segment.ts), flushes the segment to a file whenever it reaches its share of the memory
// budget, and reports each finished segment so the build can record it and resume from it.

import { join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import type { AnalyzerName } from "./analyzer.js";
import { SegmentCollector, type SegmentStats } from "./segment.js";

export interface BuildWorkerInit {
  tartanBm25Worker: true;
  worker: number;
  dir: string;
  analyzer: AnalyzerName;
  /** Flush when the segment's memory estimate reaches this many bytes. */
  capBytes: number;
  /** Number of the next segment file of this worker. */
  nextSegment: number;
}

/** A batch: unit numbers first..first+texts.length-1, batch number `batch`. */
export type BuildWorkerRequest = { batch: number; first: number; texts: string[] } | { finish: true };

export interface FinishedSegment {
  worker: number;
  seq: number;
  file: string;
  /** Batches before this one are in this worker's finished segments. */
  nextBatch: number;
  stats: SegmentStats;
}

export type BuildWorkerReply = { done: number; segment?: FinishedSegment } | { finished: true; segment?: FinishedSegment } | { error: string };

/** The file name of segment `seq` of worker `worker`. */
export function segmentFile(worker: number, seq: number): string {
  return `bm25.seg-${worker}-${String(seq).padStart(5, "0")}`;
}

const init = workerData as BuildWorkerInit | undefined;
if (parentPort && init?.tartanBm25Worker === true) {
  const port = parentPort;
  const collector = new SegmentCollector(init.analyzer);
  let seq = init.nextSegment;
  let lastBatch = -1;
  const flush = (): FinishedSegment | undefined => {
    if (collector.units === 0) return undefined;
    const file = segmentFile(init.worker, seq);
    const stats = collector.flush(join(init.dir, file));
    return { worker: init.worker, seq: seq++, file, nextBatch: lastBatch + 1, stats };
  };
  port.on("message", (req: BuildWorkerRequest) => {
    try {
      if ("finish" in req) {
        port.postMessage({ finished: true, segment: flush() } satisfies BuildWorkerReply);
        return;
      }
      const { texts, first } = req;
      for (let i = 0; i < texts.length; i++) collector.add(first + i, texts[i]);
      lastBatch = req.batch;
      const segment = collector.full(init.capBytes) ? flush() : undefined;
      port.postMessage({ done: texts.length, segment } satisfies BuildWorkerReply);
    } catch (e) {
      port.postMessage({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies BuildWorkerReply);
    }
  });
}
