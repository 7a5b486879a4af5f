// Reader passages from a real tartan BM25 index over SQuAD pages: text, KILT provenance and score of
// each hit, and the extractive reader answering from them.
import { afterAll, describe, expect, test } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBm25Index } from "../../../src/retrieval/bm25/build.js";
import { openIndex } from "../../../src/retrieval/open.js";
import { unitsOfPage } from "../../../src/retrieval/sources.js";
import { ExtractiveReader } from "../../../src/readers/extractive/reader.js";
import { retrievedPassages } from "../../../src/readers/extractive/retrieved.js";
import { smallModel, split, squad } from "../helpers.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-reader-bm25-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("retrievedPassages", () => {
  test("top BM25 paragraphs of the 24 test-half SQuAD pages as reader passages", async () => {
    const pages = squad().pages.slice(24);
    await buildBm25Index(pages.flatMap((p) => unitsOfPage(p, { unit: "paragraph" })), join(tmp, "bm25"), { unit: "paragraph" });
    const retriever = await openIndex(join(tmp, "bm25"));
    const r = split().test[0];
    expect(r.input).toBe("What company owns the American Broadcasting Company?");
    const ps = await retrievedPassages(retriever, r.input as string, 3);
    expect(ps.length).toBe(3);
    const unit = retriever.units.get((await retriever.search(r.input as string, 1))[0].unit);
    expect(ps[0].text).toBe(unit.text);
    expect(ps[0].provenance.wikipedia_id).toBe("squad:American_Broadcasting_Company");
    expect(ps[0].provenance.text).toBeUndefined();
    expect(ps[0].score).toBe(ps[0].provenance.score);
    expect(ps.map((p) => p.score)).toEqual([...ps.map((p) => p.score)].sort((a, b) => (b ?? 0) - (a ?? 0)));
    const a = await new ExtractiveReader(smallModel().model).read(r, ps);
    expect(a.provenance[0].wikipedia_id).toBe(ps[(a.meta as { passage: number }).passage].provenance.wikipedia_id);
    expect(ps.map((p) => [p.provenance.start_paragraph_id, +(p.score ?? 0).toFixed(4)])).toEqual([
      [1, 7.9298],
      [4, 7.8593],
      [21, 7.5811],
    ]);
    expect(a.answer).toBe("ABC");
    await retriever.close();
  });
});
