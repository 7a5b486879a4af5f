// The extractive reader trained on SQuAD articles 0-23 and read on held-out articles 24-47: fixed
// answers with their provenance, training determinism, and held-out EM/F1 through the KILT evaluator.
import { describe, expect, test } from "vitest";
import { evaluate } from "../../../src/eval/index.js";
import { ExtractiveReader } from "../../../src/readers/extractive/reader.js";
import { ArticlePassages, articleIndex, rankPassages, pageParagraphPassages } from "../../../src/readers/extractive/squad-data.js";
import { trainReader } from "../../../src/readers/extractive/train.js";
import { answerRecord } from "../../../src/readers/types.js";
import { every, smallModel, split, squad } from "../helpers.js";

describe("SQuAD article split", () => {
  test("train and test halves share no article", () => {
    const { train, test, half } = split();
    expect(half).toBe(24);
    expect([train.length, test.length]).toEqual([5696, 4874]);
    expect(Math.max(...train.map(articleIndex))).toBe(23);
    expect(Math.min(...test.map(articleIndex))).toBe(24);
    const trainPages = new Set(train.map((r) => ArticlePassages.pageOf(r)));
    expect(test.some((r) => trainPages.has(ArticlePassages.pageOf(r)))).toBe(false);
  });

  test("passages: the article's paragraphs ranked by question overlap, with exact provenance", () => {
    const r = split().test[0];
    const ps = new ArticlePassages(squad().pages, 3).for(r);
    expect(ps.map((p) => [p.provenance.start_paragraph_id, p.score?.toFixed(4)])).toEqual([
      [1, ps[0].score?.toFixed(4)],
      [ps[1].provenance.start_paragraph_id, ps[1].score?.toFixed(4)],
      [ps[2].provenance.start_paragraph_id, ps[2].score?.toFixed(4)],
    ]);
    expect(ps[0].provenance).toEqual({
      wikipedia_id: "squad:American_Broadcasting_Company",
      title: "American Broadcasting Company",
      section: "Section::::Abstract.",
      start_paragraph_id: 1,
      start_character: 0,
      end_paragraph_id: 1,
      end_character: 512,
    });
    const all = pageParagraphPassages(squad().pages[24]);
    expect(all.length).toBe(98);
    expect(rankPassages(r.input as string, all, 98).map((p) => p.score)).toEqual(
      [...rankPassages(r.input as string, all, 98).map((p) => p.score)].sort((a, b) => (b ?? 0) - (a ?? 0)),
    );
  });
});

describe("ExtractiveReader", () => {
  test("training is deterministic: same records and seed → the same model JSON", () => {
    const passages = new ArticlePassages(squad().pages, 3);
    const items = every(split().train, 100, 40).map((record) => ({ record, passages: passages.for(record) }));
    const a = trainReader(items, { seed: 3, epochs: 2 });
    const b = trainReader(items, { seed: 3, epochs: 2 });
    expect(JSON.stringify(a.model.toJSON())).toBe(JSON.stringify(b.model.toJSON()));
    expect(a.stats).toEqual(b.stats);
    expect([a.stats.records, a.stats.used, a.stats.noPositive]).toEqual([40, 35, 5]);
  });

  test("fixed answers, provenance and span offsets on held-out questions", async () => {
    const reader = new ExtractiveReader(smallModel().model);
    const ap = new ArticlePassages(squad().pages, 5);
    const [r0, , r2] = every(split().test, 25, 3);
    const a0 = await reader.read(r0, ap.for(r0));
    expect(a0.answer).toBe("ABC"); // gold: "The Walt Disney Company" or "Disney–ABC Television Group"
    expect(a0.provenance).toEqual([
      {
        wikipedia_id: "squad:American_Broadcasting_Company",
        title: "American Broadcasting Company",
        section: "Section::::Abstract.",
        start_paragraph_id: 1,
        start_character: 0,
        end_paragraph_id: 1,
        end_character: 512,
      },
    ]);
    expect({ ...a0.meta, probability: undefined }).toEqual({
      passage: 0,
      start: 35,
      end: 38,
      probability: undefined,
      paragraph_span: { paragraph_id: 1, start_character: 35, end_character: 38 },
    });
    // The span is where meta says it is in the page paragraph.
    const page = squad().pages[24];
    expect([...page.text[1]].slice(35, 38).join("")).toBe("ABC");
    const a2 = await reader.read(r2, ap.for(r2));
    expect([r2.input, a2.answer]).toEqual(["What country did ABC expand in to in the mid-1960s?", "Beirut"]);
  });

  test("no passages → empty answer and provenance", async () => {
    const reader = new ExtractiveReader(smallModel().model);
    const a = await reader.read(split().test[0], []);
    expect(a).toEqual({ answer: "", provenance: [], score: 0, meta: { candidates: 0 } });
  });

  test("held-out EM/F1 of the small model (440 training questions, seed 7) on 195 test-half questions", async () => {
    const { stats } = smallModel();
    expect([stats.records, stats.used, stats.noPositive]).toEqual([440, 393, 47]);
    const reader = new ExtractiveReader(smallModel().model);
    const ap = new ArticlePassages(squad().pages, 5);
    const test = every(split().test, 25, 200);
    expect(test.length).toBe(195);
    const guesses = [];
    for (const r of test) guesses.push(answerRecord(r, await reader.read(r, ap.for(r))));
    const res = await evaluate(test, guesses, {});
    const d = res.eval_downstream!;
    expect(Math.round(d.downstream.em * 195)).toBe(57);
    expect(d.downstream.em).toBeCloseTo(57 / 195, 12);
    expect(d.downstream.f1).toBeCloseTo(0.36157524225397525, 12);
    // Same-article passages: every answer's page is the gold page, so KILT scores equal the downstream ones.
    expect(d.kilt["KILT-em"]).toBe(d.downstream.em);
    // Floor: well above picking a random candidate (about 1 in 1,000).
    expect(d.downstream.f1).toBeGreaterThan(0.3);
  });
});
