// The span ranker: seeded determinism, JSON round trip, and learning on a synthetic ranking problem.
import { describe, expect, test } from "vitest";
import { FEATURE_COUNT, FEATURE_NAMES } from "../../../src/readers/extractive/features.js";
import { packRows, SpanModel, seededRandom, shuffle, trainSpanModel, unpackRows, type TrainingGroup } from "../../../src/readers/extractive/model.js";
import { smallModel } from "../helpers.js";

describe("seeded randomness", () => {
  test("mulberry32 sequence and shuffle are fixed", () => {
    const r = seededRandom(42);
    expect([r(), r(), r()].map((x) => x.toFixed(10))).toEqual(["0.6011037519", "0.4482905590", "0.8524657935"]);
    expect(shuffle([1, 2, 3, 4, 5, 6], seededRandom(1))).toEqual(shuffle([1, 2, 3, 4, 5, 6], seededRandom(1)));
  });
});

/** Groups of 10 rows with 20 random features; the positive is the row with the largest feature 3. */
function syntheticGroups(n: number, seed: number): TrainingGroup[] {
  const rand = seededRandom(seed);
  const groups: TrainingGroup[] = [];
  for (let g = 0; g < n; g++) {
    const rows = 10;
    const features = new Float64Array(rows * FEATURE_COUNT);
    let best = 0;
    for (let r = 0; r < rows; r++) {
      for (let j = 0; j < 20; j++) features[r * FEATURE_COUNT + j] = rand(); // the rest stay 0
      if (features[r * FEATURE_COUNT + 3] > features[best * FEATURE_COUNT + 3]) best = r;
    }
    groups.push({ features, rows, positives: [best] });
  }
  return groups;
}

describe("trainSpanModel", () => {
  test("learns which feature marks the answer, and the loss falls", () => {
    const { model, losses } = trainSpanModel(syntheticGroups(300, 3), { epochs: 10, seed: 5, learningRate: 0.05 });
    const w = [...model.weights];
    const top = w.indexOf(Math.max(...w));
    expect(FEATURE_NAMES[top]).toBe(FEATURE_NAMES[3]);
    expect(losses[losses.length - 1]).toBeLessThan(losses[0]);
    // Held-out groups: the top-scored row is the positive in most of them.
    const test = syntheticGroups(100, 99);
    let hits = 0;
    for (const g of test) {
      const s = model.score(g.features as Float64Array, g.rows);
      if (s.indexOf(Math.max(...s)) === g.positives[0]) hits++;
    }
    expect(hits).toBeGreaterThanOrEqual(80); // chance: 10 of 100
  });

  test("same data and seed → identical weights; another seed → different", () => {
    const a = trainSpanModel(syntheticGroups(50, 3), { epochs: 3, seed: 5 }).model.toJSON();
    const b = trainSpanModel(syntheticGroups(50, 3), { epochs: 3, seed: 5 }).model.toJSON();
    const c = trainSpanModel(syntheticGroups(50, 3), { epochs: 3, seed: 6 }).model.toJSON();
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(c));
  });

  test("groups without a positive are ignored", () => {
    const groups = syntheticGroups(20, 3).map((g) => ({ ...g, positives: [] }));
    const { model } = trainSpanModel(groups, { epochs: 2 });
    expect([...model.weights].every((w) => w === 0)).toBe(true);
  });
});

describe("sparse feature rows", () => {
  test("pack and unpack give back the very same float64 rows (-0, NaN and tiny values kept)", () => {
    const d = 6;
    const rows = Float64Array.from([0, 1.5, -0, 0, 5e-324, 0, NaN, 0, 0, 0, -2.25, 0]);
    const packed = packRows(rows, 2, d);
    expect([...packed.start]).toEqual([0, 3, 5]);
    expect([...packed.index]).toEqual([1, 2, 4, 0, 4]);
    const back = unpackRows(packed, 2, d);
    expect(back.length).toBe(12);
    for (let i = 0; i < 12; i++) expect(Object.is(back[i], rows[i])).toBe(true);
    // into a scratch buffer with stale contents: zeros are written back
    const scratch = new Float64Array(20).fill(7);
    const again = unpackRows(packed, 2, d, scratch);
    expect(again.buffer).toBe(scratch.buffer);
    for (let i = 0; i < 12; i++) expect(Object.is(again[i], rows[i])).toBe(true);
  });

  test("training on packed groups gives the same model, bit for bit, in a fraction of the memory", () => {
    const dense = syntheticGroups(80, 4);
    const packed = dense.map((g) => ({ ...g, features: packRows(g.features as Float64Array, g.rows, FEATURE_COUNT) }));
    const a = trainSpanModel(dense, { epochs: 3, seed: 2 });
    const b = trainSpanModel(packed, { epochs: 3, seed: 2 });
    expect(JSON.stringify(b.model.toJSON())).toBe(JSON.stringify(a.model.toJSON()));
    expect(b.losses).toEqual(a.losses);
    const bytes = (f: TrainingGroup["features"]) => (f instanceof Float64Array ? f.byteLength : f.start.byteLength + f.index.byteLength + f.value.byteLength);
    const denseBytes = dense.reduce((n, g) => n + bytes(g.features), 0);
    const packedBytes = packed.reduce((n, g) => n + bytes(g.features), 0);
    expect(packedBytes * 10).toBeLessThan(denseBytes); // 20 of 498 columns set
  });

  test("reports each mini-batch with the groups done over all epochs", () => {
    const seen: string[] = [];
    trainSpanModel(syntheticGroups(70, 3), { epochs: 2, batchSize: 32, onBatch: (done, total) => seen.push(`${done}/${total}`) });
    expect(seen).toEqual(["32/140", "64/140", "70/140", "102/140", "134/140", "140/140"]);
  });
});

describe("model JSON", () => {
  test("round trip keeps scores; other feature lists are refused", () => {
    const { model } = smallModel();
    const json = JSON.parse(JSON.stringify(model.toJSON()));
    const back = SpanModel.fromJSON(json);
    const x = new Float64Array(FEATURE_COUNT).map((_, j) => (j % 3) / 2);
    expect(back.score(x, 1)[0]).toBe(model.score(x, 1)[0]);
    expect(() => SpanModel.fromJSON({ ...json, features: json.features.slice(1) })).toThrow(/retrain/);
    expect(() => SpanModel.fromJSON({ ...json, kind: "other" })).toThrow(/not a tartan span-ranker/);
  });
});
