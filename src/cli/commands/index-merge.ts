// `tartan index merge DIR [--max-segments N]`: merges a live BM25 index's segments (neighbours only, so
// the units keep their order) down to N, dropping deleted units, as one new commit
// (src/retrieval/bm25/live/). Readers that opened an earlier commit keep it.

import type { Command } from "commander";
import { mergeLiveIndex } from "../../retrieval/bm25/live/writer.js";
import { localPath, log, positiveInt } from "../options.js";
import { indexCommand } from "./index-build.js";
import { formatBytes, formatCount as fmt } from "../../util/progress.js";

export function registerIndexMerge(program: Command): void {
  indexCommand(program)
    .command("merge")
    .description("merge a live BM25 index's segments (default: into one), dropping deleted units")
    .argument("<dir>", "BM25 index directory")
    .option("--max-segments <n>", "segments to leave at most", positiveInt, 1)
    .action(async (dir: string, o: { maxSegments: number }) => {
      const r = await mergeLiveIndex(localPath("DIR", dir), { maxSegments: o.maxSegments, log });
      if (r.merged === 0) log(`${dir}: nothing to merge (${r.segments} segment${r.segments === 1 ? "" : "s"}, no deletions to drop)`);
      else log(`${dir}: generation ${r.generation}: merged ${r.merged} segments into ${r.mergedInto} (${formatBytes(r.bytesWritten)} written); ${fmt(r.units)} live units in ${r.segments} segment${r.segments === 1 ? "" : "s"}, in ${r.seconds.toFixed(1)} s`);
      process.stdout.write(`${JSON.stringify(r)}\n`);
    });
}
