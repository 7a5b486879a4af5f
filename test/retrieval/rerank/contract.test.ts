// Runs the reranker contract (./contract.ts) on every reranker registered in RERANKERS, each set up by its
// line in ./cases.ts, over the SQuAD BM25 paragraph index built once here; a reranker registered without a
// case, or a case naming no reranker, fails the guard. The pools' workers run dist/: `npm run build` first.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RERANKERS } from "../../../src/retrieval/rerank/index.js";
import { squadBm25Paragraphs } from "../../fixtures/squad-bm25.js";
import { RERANKER_CASES } from "./cases.js";
import { rerankerContract, type ContractData } from "./contract.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-rerank-contract-"));
let data: ContractData;

beforeAll(async () => {
  // 6 questions, taken every 97th of SQuAD dev's first 600
  const { dir, queries } = await squadBm25Paragraphs(tmp, 600);
  data = { dir, queries: queries.filter((_, i) => i % 97 === 0) };
}, 300_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("every registered reranker has a contract case", () => {
  it("and every case names a registered reranker", () => {
    expect(RERANKERS.names().filter((n) => !(n in RERANKER_CASES))).toEqual([]);
    expect(Object.keys(RERANKER_CASES).filter((n) => !RERANKERS.has(n))).toEqual([]);
  });
});

for (const name of RERANKERS.names()) {
  const setup = RERANKER_CASES[name];
  if (setup) describe(`reranker ${name}`, () => rerankerContract(name, setup, () => data));
}
