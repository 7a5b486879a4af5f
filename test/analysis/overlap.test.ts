// Test–train overlap: loaders, the pruned TF-IDF search against an all-pairs search, hand-made cases
// for each count, and the exact numbers on NQ-open dev vs EfficientQA dev and SQuAD dev split by article.

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  analyzeOverlap,
  answerSet,
  loadPredictions,
  loadQaItems,
  nearestNeighbourPredictions,
  QuestionIndex,
  splitItems,
  type QaItem,
} from "../../src/analysis/overlap.js";

const DATA = new URL("../../../shared/data/", import.meta.url).pathname;
const NQ = join(DATA, "nq-open", "NQ-open.dev.jsonl");
const EQA = join(DATA, "nq-open", "NQ-open.efficientqa.dev.1.1.jsonl");
const SQUAD = join(DATA, "squad", "dev-v1.1.reconstructed.json");
const tmp = mkdtempSync(join(tmpdir(), "tartan-overlap-"));

const item = (id: string, question: string, ...answers: string[]): QaItem => ({ id, question, answers, line: Number(id) || 0 });

describe("loading and splitting", () => {
  it("reads NQ-open (line numbers as ids), SQuAD (answerable questions with articles) and KILT files", async () => {
    const nq = await loadQaItems(NQ);
    expect(nq.kind).toBe("nq-open");
    expect(nq.items.length).toBe(3610);
    expect(nq.items[0]).toEqual({ id: "1", question: "when was the last time anyone was on the moon", answers: ["14 December 1972 UTC", "December 1972"], line: 1 });
    const sq = await loadQaItems(SQUAD);
    expect(sq.kind).toBe("squad");
    expect(sq.items.length).toBe(10570);
    expect(sq.items[0]).toMatchObject({ id: "56be4db0acb8001400a502ec", answers: ["Denver Broncos"], article: 0 });
    const kilt = await loadQaItems(join(DATA, "kilt-samples", "nq-dev-kilt.jsonl"));
    expect(kilt.kind).toBe("kilt");
    expect(kilt.items[0]).toMatchObject({ id: "6915606477668963399", question: "what do the 3 dots mean in math" });
    expect(kilt.items[0].answers.slice(0, 2)).toEqual(["the therefore sign", "therefore sign"]);
  });

  it("splits by article when items have articles, else by position", async () => {
    const sq = (await loadQaItems(SQUAD)).items;
    const s = splitItems(sq, 24);
    expect([s.by, s.train.length, s.test.length]).toEqual(["article", 5696, 4874]);
    expect(new Set(s.train.map((x) => x.article)).size).toBe(24);
    const n = splitItems((await loadQaItems(NQ)).items, 1805);
    expect([n.by, n.train.length, n.test.length]).toEqual(["item", 1805, 1805]);
  });
});

describe("TF-IDF question search", () => {
  it("finds exactly what an all-pairs search finds (NQ-open dev as train, 450 EfficientQA dev questions as queries)", async () => {
    const train = (await loadQaItems(NQ)).items;
    const test = (await loadQaItems(EQA)).items.slice(0, 450);
    const index = new QuestionIndex(train.map((x) => x.question));
    let found = 0;
    for (const t of test) {
      const q = index.vector(t.question);
      const scores = train.map((_, d) => index.cosine(q, d));
      for (const threshold of [0.3, 0.8]) {
        let best: { train: number; score: number } | null = null;
        scores.forEach((s, d) => {
          if (s >= threshold - 1e-12 && s > 0 && (best === null || s > best.score)) best = { train: d, score: s };
        });
        const m = index.nearest(t.question, threshold);
        expect(m?.train).toBe((best as { train: number } | null)?.train);
        if (m) {
          found++;
          expect(m.score).toBeCloseTo((best as unknown as { score: number }).score, 12);
        }
      }
    }
    expect(found).toBe(321); // matches at 0.3 and at 0.8 together
  });

  it("weighs terms by smoothed idf and scores identical questions 1", () => {
    const index = new QuestionIndex(["who wrote the song", "who sang the song", "where is paris"]);
    // "who" and "song" occur in 2 of 3 questions: ln(4/3) + 1; "paris" in 1: ln(4/2) + 1; unseen: ln(4) + 1
    expect(index.idf("who")).toBeCloseTo(Math.log(4 / 3) + 1, 15);
    expect(index.idf("paris")).toBeCloseTo(Math.log(2) + 1, 15);
    expect(index.idf("berlin")).toBeCloseTo(Math.log(4) + 1, 15);
    expect(index.nearest("Who wrote the song?", 0.99)).toEqual({ train: 0, score: expect.closeTo(1, 12) });
    // "who sang song" vs "who wrote song": shared who, song over norms of (who, wrote, song) and (who, sang, song)
    const w = Math.log(4 / 3) + 1;
    const r = Math.log(4 / 2) + 1;
    expect(index.nearest("who sang a song", 0.1)).toEqual({ train: 1, score: expect.closeTo(1, 12) });
    expect(index.bestAmong("who wrote the song", [1])!.score).toBeCloseTo((2 * w * w) / (2 * w * w + r * r), 12);
    expect(index.nearest("where is berlin", 0.99)).toBeNull();
  });
});

describe("overlap counts on hand-made sets", () => {
  const train = [item("1", "who wrote the song imagine", "John Lennon"), item("2", "when did the war end", "1945"), item("3", "capital of france", "Paris", "the city of Paris")];
  const test = [
    item("10", "who wrote the song imagine?", "john lennon."), // question + answer overlap
    item("11", "in what year did the war end", "1945"), // answer overlap, shared words
    item("12", "who painted the mona lisa", "Leonardo da Vinci"), // no overlap
    item("13", "largest city of france", "The Paris"), // answer overlap only via normalization
  ];

  it("normalizes answers as SQuAD does", () => {
    expect([...answerSet(train)]).toEqual(["john lennon", "1945", "paris", "city of paris"]);
  });

  it("counts answer overlap, question overlap (shared answer) and near-duplicates, and lists the pairs", () => {
    const r = analyzeOverlap(train, test, { threshold: 0.5, duplicateThreshold: 0.8 });
    expect(r.answerOverlap).toEqual({ overlapping: 3, total: 4 });
    expect(r.questionOverlap.overlapping).toBe(2);
    expect(r.nearDuplicates).toEqual({ threshold: 0.8, overlapping: 1, withSameAnswer: 1, total: 4 });
    expect(r.pairs.map((p) => [p.kind, p.test_id, p.train_id, p.same_answer])).toEqual([
      ["answer", "10", "1", true],
      ["answer", "11", "2", true],
      ["duplicate", "10", "1", true],
    ]);
    expect(r.pairs[0].similarity).toBe(1);
  });

  it("splits predictions by correctness and train-answer overlap, matching by id or question", () => {
    const r = analyzeOverlap(train, test, {
      predictions: [
        { id: "10", answer: "John Lennon" }, // correct, in train answers
        { question: "in what year did the war end", answer: "1944" }, // incorrect, not in train answers
        { id: "12", answer: "Paris" }, // incorrect, in train answers
      ],
    });
    expect(r.predictions).toEqual({
      predicted: 3,
      missing: 1,
      inTrainAnswers: 2,
      goldInTrainAnswers: 2,
      correct: 1,
      table: { correctOverlap: 1, correctNonOverlap: 0, incorrectOverlap: 1, incorrectNonOverlap: 1 },
      bySubset: { questionOverlap: { questions: 2, correct: 1 }, answerOverlapOnly: { questions: 0, correct: 0 }, noOverlap: { questions: 1, correct: 0 } },
    });
  });

  it("reads KILT, EfficientQA and {id, answer} prediction files", async () => {
    const f = join(tmp, "preds.jsonl");
    writeFileSync(f, ['{"id": 5, "output": [{"answer": "a"}]}', '{"question": "q?", "prediction": "b"}', '{"id": "7", "answer": "c"}'].join("\n"));
    expect(await loadPredictions(f)).toEqual([
      { id: "5", answer: "a" },
      { question: "q?", answer: "b" },
      { id: "7", answer: "c" },
    ]);
  });
});

describe("real data", () => {
  it("NQ-open dev (train) vs EfficientQA dev (test), with the nearest-neighbour baseline's predictions", async () => {
    const train = (await loadQaItems(NQ)).items;
    const test = (await loadQaItems(EQA)).items;
    const nn = nearestNeighbourPredictions(train, test);
    expect(nn.length).toBe(1800);
    expect(nn[0]).toEqual({ id: "1", input: "the last time la dodgers won the world series", output: [{ answer: "1981" }] });
    const r = analyzeOverlap(train, test, { predictions: nn.map((p) => ({ id: p.id, answer: p.output[0].answer })) });
    expect(r.train).toEqual({ questions: 3610, answers: 5432 });
    expect(r.answerOverlap).toEqual({ overlapping: 451, total: 1800 }); // 25.1%
    expect(r.questionOverlap).toEqual({ threshold: 0.5, overlapping: 44, total: 1800 });
    expect(r.nearDuplicates).toEqual({ threshold: 0.8, overlapping: 20, withSameAnswer: 6, total: 1800 });
    expect(r.pairs[0]).toEqual({
      kind: "answer",
      test_id: "1235",
      test_question: "where was war of planet of the apes filmed",
      test_answers: ["the Kananaskis", "Lower Mainland in Vancouver", "in the Kananaskis"],
      train_id: "1087",
      train_question: "where was the war of the planet of the apes filmed",
      train_answers: ["the Lower Mainland in Vancouver", "Lower Mainland in Vancouver", "the Kananaskis"],
      similarity: 1,
      same_answer: true,
    });
    // Every NN prediction is a train answer except one ("A+", which normalizes to the empty string).
    expect(r.predictions!.table).toEqual({ correctOverlap: 39, correctNonOverlap: 0, incorrectOverlap: 1760, incorrectNonOverlap: 1 });
    expect(r.predictions!.bySubset).toEqual({
      questionOverlap: { questions: 44, correct: 30 },
      answerOverlapOnly: { questions: 407, correct: 9 },
      noOverlap: { questions: 1349, correct: 0 },
    });
  });

  it("SQuAD v1.1 dev split by article (24 train, 24 test): low overlap, as the paper reports for SQuAD", async () => {
    const { train, test } = splitItems((await loadQaItems(SQUAD)).items, 24);
    const nn = nearestNeighbourPredictions(train, test);
    const r = analyzeOverlap(train, test, { predictions: nn.map((p) => ({ id: p.id, answer: p.output[0].answer })) });
    expect(r.answerOverlap).toEqual({ overlapping: 674, total: 4874 }); // 13.8%
    expect(r.questionOverlap.overlapping).toBe(3);
    expect(r.nearDuplicates.overlapping).toBe(0);
    expect(r.pairs.map((p) => [p.test_question, p.train_question, p.similarity])).toEqual([
      ["What is the confusion of the French and Indian war?", "The French and Indian War was the New World aspect of what European conflict?", 0.5182],
      ["What company owns the American Broadcasting Company?", "Which company owns ABC?", 0.5177],
      ["In 1992, what percentage of East German students attended private schools?", "What percentage of private school students go to Catholic schools?", 0.502],
    ]);
    expect(r.predictions!.table).toEqual({ correctOverlap: 12, correctNonOverlap: 0, incorrectOverlap: 4862, incorrectNonOverlap: 0 });
  });
});
