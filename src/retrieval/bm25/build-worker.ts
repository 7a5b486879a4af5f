// The worker thread of a BM25 build (./build.ts): analyses the batches of units it is sent into a
// segment (./segment.ts), flushes the segment to a file whenever it reaches its share of the memory
// budget, and reports each finished segment so the build can record it and resume from it. A batch
// carries its units' indexed texts, or (units from a store-backed unit table) only their numbers: the
// worker then reads the texts from the table's knowledge-source store itself, so decoding the store's
// pages runs on every core.

import { join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { TableUnitStore } from "../units/table.js";
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
  /** Batches without texts: read units `first`.. from this unit table (indexing the title as the build says). */
  table?: { dir: string; title: boolean };
}

/** A batch: unit numbers first..first+count-1, batch number `batch`, with their texts or (init.table) without. */
export type BuildWorkerRequest = { batch: number; first: number; count: number; texts?: string[] } | { finish: true };

export interface FinishedSegment {
  worker: number;
  seq: number;
  file: string;
  /** Batches before this one are in this worker's finished segments. */
  nextBatch: number;
  stats: SegmentStats;
}

export type BuildWorkerReply = { done: number; bytes: number; segment?: FinishedSegment } | { finished: true; segment?: FinishedSegment } | { error: string };

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
  let table: TableUnitStore | null = null;
  /** The batch's indexed texts: as sent, or read from the unit table (`title + "\n" + text` as build.ts's bm25IndexedText). */
  const textsOf = (req: { first: number; count: number; texts?: string[] }): string[] => {
    if (req.texts) return req.texts;
    if (!init.table) throw new Error("a batch without texts, and no unit table to read them from");
    table ??= TableUnitStore.open(init.table.dir);
    const out: string[] = [];
    for (const u of table.scan(req.first, req.first + req.count)) out.push(init.table.title ? `${u.wikipedia_title}\n${u.text}` : u.text);
    return out;
  };
  const flush = (): FinishedSegment | undefined => {
    if (collector.units === 0) return undefined;
    const file = segmentFile(init.worker, seq);
    const stats = collector.flush(join(init.dir, file));
    return { worker: init.worker, seq: seq++, file, nextBatch: lastBatch + 1, stats };
  };
  port.on("message", (req: BuildWorkerRequest) => {
    try {
      if ("finish" in req) {
        const segment = flush();
        table?.close();
        port.postMessage({ finished: true, segment } satisfies BuildWorkerReply);
        return;
      }
      const texts = textsOf(req);
      let bytes = 0;
      for (let i = 0; i < texts.length; i++) {
        collector.add(req.first + i, texts[i]);
        bytes += texts[i].length;
      }
      lastBatch = req.batch;
      const segment = collector.full(init.capBytes) ? flush() : undefined;
      port.postMessage({ done: texts.length, bytes, segment } satisfies BuildWorkerReply);
    } catch (e) {
      port.postMessage({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies BuildWorkerReply);
    }
  });
}
