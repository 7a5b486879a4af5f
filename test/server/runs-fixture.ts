// Two recorded runs on held-out SQuAD questions, for the run browser, comparison and leaderboard: the
// quick start on 100 questions (reader trained on 200, reads the top 5 of BM25's 20) and the same
// reader reading only the top passage; both scored by the KILT evaluator and added to a runs database.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quickstart } from "../../src/pipeline/quickstart.js";
import { runPipeline } from "../../src/pipeline/run.js";
import { ExtractiveReader } from "../../src/readers/extractive/reader.js";
import { openBm25 } from "../../src/retrieval/bm25/search.js";
import { openRunsStore } from "../../src/runs/open.js";
import { makeRun } from "../../src/runs/record.js";
import { SQUAD } from "./fixture.js";

export interface RunsFixture {
  work: string;
  ks: string;
  index: string;
  gold: string;
  runs: string;
  /** Run names: the quick start's (reads 5 passages) and the one-passage reader's. */
  names: [string, string];
}

export async function runsFixture(): Promise<RunsFixture> {
  const dir = mkdtempSync(join(tmpdir(), "tartan-serve-runs-"));
  const work = join(dir, "quickstart");
  const r = await quickstart({ squad: SQUAD, work, limit: 100, trainLimit: 200 });
  const gold = join(work, "test-gold.jsonl");
  const index = join(work, "index-bm25");
  const top1 = join(dir, "reader-top1.jsonl");
  const retriever = await openBm25(index);
  await runPipeline(gold, top1, retriever, ExtractiveReader.load(join(work, "reader-model.json")), { topK: 20, readerK: 1 });
  await retriever.close();
  const runs = join(dir, "runs");
  const store = await openRunsStore(runs);
  const names: [string, string] = ["bm25+reader", "bm25+reader-top1"];
  await store.add(await makeRun({ gold, guess: r.predictions, name: names[0], dataset: "squad", indexes: [index] }));
  await store.add(await makeRun({ gold, guess: top1, name: names[1], dataset: "squad", indexes: [index] }));
  await store.close();
  return { work, ks: join(work, "ks"), index, gold, runs, names };
}
