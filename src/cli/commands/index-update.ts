// `tartan index update DIR --add FILE --replace FILE --delete IDS`: adds, replaces and deletes pages of a
// BM25 index without a rebuild (src/retrieval/bm25/live/: a new segment, deletion marks, one atomic
// commit). Pages come as a build takes them (a KILT pages JSONL file, or a unit table directory); ids are
// wikipedia_ids, one a line. Prints the new generation and what changed.

import type { Command } from "commander";
import { updateLiveIndex } from "../../retrieval/bm25/live/writer.js";
import { localPath, log, positiveInt } from "../options.js";
import { indexCommand } from "./index-build.js";
import { formatCount as fmt } from "../../util/progress.js";

export function registerIndexUpdate(program: Command): void {
  indexCommand(program)
    .command("update")
    .description("add, replace and delete pages of a BM25 index without a rebuild (one new commit; readers keep the one they opened)")
    .argument("<dir>", "BM25 index directory (built or live)")
    .option("--add <pages>", "pages not in the index: KILT pages JSONL (.gz too) or a unit table directory")
    .option("--replace <pages>", "pages in the index whose units these replace (same forms as --add)")
    .option("--delete <ids>", "a text file of page ids (wikipedia_id) to delete, one a line")
    .option("--words <n>", "passage size in words when pages are cut into passages (the first update records it; default 100)", positiveInt)
    .option("--threads <n>", "analysis threads of the new segment (default 1, every core from 20,000 units)", positiveInt)
    .option("--no-merge", "no automatic merges in this update")
    .action(async (dir: string, o: { add?: string; replace?: string; delete?: string; words?: number; threads?: number; merge: boolean }) => {
      const r = await updateLiveIndex(localPath("DIR", dir), { add: o.add, replace: o.replace, delete: o.delete }, { words: o.words, threads: o.threads, mergePolicy: o.merge ? undefined : false, log });
      const merged = r.merged > 0 ? `; merged ${r.merged} segments into ${r.mergedInto}` : "";
      log(`${dir}: generation ${r.generation}: ${fmt(r.pagesAdded)} pages added, ${fmt(r.pagesReplaced)} replaced, ${fmt(r.pagesDeleted)} deleted (${fmt(r.unitsAdded)} units in, ${fmt(r.unitsDeleted)} out)${merged}; ${fmt(r.units)} live units in ${r.segments} segment${r.segments === 1 ? "" : "s"}, in ${r.seconds.toFixed(1)} s`);
      process.stdout.write(`${JSON.stringify(r)}\n`);
    });
}
