// Indexes for the query-terms tests of serve and mcp, over SQuAD's paragraphs: a BM25 index, the impact
// index of its scores as 24-bit impacts (`--from-bm25`, the built CLI), a dense index from precomputed
// vectors (./dense-fixture.ts), and sparse query vectors for the first questions: each one's BM25
// terms (English-analyzed, as the impact index holds them) weighted 1, 2, 3, … in order.

import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildIndex } from "../../src/retrieval/build.js";
import { getAnalyzer } from "../../src/retrieval/bm25/analyzer.js";
import { convertSquad, fromSquad } from "../../src/knowledge/build.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { denseWithoutEncoder } from "./dense-fixture.js";
import { SQUAD } from "./fixture.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;

export interface ImpactFixture {
  dir: string;
  bm25: string;
  impact: string;
  dense: string;
  questions: string[];
  terms: Record<string, number>[];
}

/** Builds the fixture's indexes under a temporary directory; `n` questions with their terms. */
export async function impactFixture(n = 8): Promise<ImpactFixture> {
  const dir = mkdtempSync(join(tmpdir(), "tartan-impact-terms-"));
  const quiet = () => {};
  await fromSquad(SQUAD, join(dir, "pages.jsonl"), quiet);
  await convertSquad(SQUAD, { out: join(dir, "questions.jsonl") }, quiet);
  const bm25 = join(dir, "bm25");
  await buildIndex({ pages: join(dir, "pages.jsonl"), kind: "bm25", unit: "paragraph", out: bm25 }, quiet);
  const impact = join(dir, "impact");
  const r = spawnSync(process.execPath, [CLI, "index", "build", "--kind", "impact", "--from-bm25", bm25, "--bits", "24", "--out", impact], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`index build --from-bm25: ${r.stderr}`);
  const dense = join(dir, "dense");
  denseWithoutEncoder(bm25, dir, dense);
  const questions = (await readJsonlAll<KiltRecord>(join(dir, "questions.jsonl"))).slice(0, n).map((q) => q.input!);
  const english = getAnalyzer("english");
  const terms = questions.map((q) => Object.fromEntries([...new Set(english.analyze(q))].map((t, i) => [t, i + 1])));
  return { dir, bm25, impact, dense, questions, terms };
}
