// The SQuAD knowledge source the server tests run against, built in a temporary directory: KILT pages
// from SQuAD v1.1 dev, the store (`ks ingest`), a BM25 paragraph index, and the questions as KILT records.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertSquad, fromSquad } from "../../src/knowledge/build.js";
import { ingest } from "../../src/knowledge/ingest.js";
import { buildBm25Index } from "../../src/retrieval/bm25/build.js";
import { unitsFrom } from "../../src/retrieval/sources.js";

export const SQUAD = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;

export interface SquadFixture {
  dir: string;
  pages: string;
  questions: string;
  ks: string;
  bm25: string;
}

export async function squadFixture(): Promise<SquadFixture> {
  const dir = mkdtempSync(join(tmpdir(), "tartan-serve-test-"));
  const f: SquadFixture = { dir, pages: join(dir, "pages.jsonl"), questions: join(dir, "questions.jsonl"), ks: join(dir, "ks"), bm25: join(dir, "bm25") };
  const quiet = () => {};
  await fromSquad(SQUAD, f.pages, quiet);
  await convertSquad(SQUAD, { out: f.questions }, quiet);
  await ingest(f.pages, { out: f.ks, force: true, workers: 0 });
  await buildBm25Index(unitsFrom({ ks: f.ks }, { unit: "paragraph" }), f.bm25, { unit: "paragraph", source: f.ks });
  return f;
}
