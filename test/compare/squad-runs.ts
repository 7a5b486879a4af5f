// Real runs for the comparison and trec_eval tests: SQuAD v1.1 dev as KILT pages and questions, every
// 10th question (1,057), retrieved with BM25 and TF-IDF over paragraphs and with their RRF fusion
// (top 20), as KILT guesses and as TREC runs. Built once per test file in a temporary directory.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildIndex } from "../../src/retrieval/build.js";
import { convertSquad, fromSquad } from "../../src/knowledge/build.js";
import { retrieve } from "../../src/pipeline/retrieve.js";

export const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
export const RUNS = ["bm25-paragraph", "tfidf-paragraph", "rrf"] as const;
export const PARAGRAPH = ["wikipedia_id", "start_paragraph_id"];

export interface SquadRuns {
  dir: string;
  gold: string;
  kilt: Record<(typeof RUNS)[number], string>;
  trec: Record<(typeof RUNS)[number], string>;
}

export async function squadRuns(options: { trec?: boolean } = {}): Promise<SquadRuns> {
  const dir = mkdtempSync(join(tmpdir(), "tartan-squad-runs-"));
  const quiet = () => {};
  const pages = join(dir, "pages.jsonl");
  const all = join(dir, "questions.jsonl");
  await fromSquad(V11, pages, quiet);
  await convertSquad(V11, { out: all }, quiet);
  const gold = join(dir, "qs.jsonl");
  const lines = readFileSync(all, "utf8").split("\n").filter(Boolean);
  writeFileSync(gold, `${lines.filter((_, i) => i % 10 === 0).join("\n")}\n`);
  await buildIndex({ pages, kind: "bm25", unit: "paragraph", out: join(dir, "idx-bm25-paragraph") }, quiet);
  await buildIndex({ pages, kind: "tfidf", unit: "paragraph", out: join(dir, "idx-tfidf-paragraph") }, quiet);
  const indexes: Record<string, string[]> = {
    "bm25-paragraph": [join(dir, "idx-bm25-paragraph")],
    "tfidf-paragraph": [join(dir, "idx-tfidf-paragraph")],
    rrf: [join(dir, "idx-bm25-paragraph"), join(dir, "idx-tfidf-paragraph")],
  };
  const kilt = {} as SquadRuns["kilt"];
  const trec = {} as SquadRuns["trec"];
  for (const r of RUNS) {
    kilt[r] = join(dir, `rs-${r}.jsonl`);
    await retrieve({ indexes: indexes[r], input: gold, out: kilt[r], topK: 20, threads: 1 }, quiet);
    if (options.trec) {
      trec[r] = join(dir, `rs-${r}.trec`);
      await retrieve({ indexes: indexes[r], input: gold, out: trec[r], topK: 20, threads: 1, format: "trec", tag: r }, quiet);
    }
  }
  return { dir, gold, kilt, trec };
}
