// WikiReading Mean F1 on the hand-written shard: set F1, the entropy classes Ĥ(p) = H(A_p)/log|A_p|,
// date properties, and the overall/categorical/relational/date scores of fixed predictions, all
// computed by hand (see the comments), with shards or converted KILT records as gold.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readWikiReading, wikiReadingToKilt } from "../../../src/datasets/wikireading.js";
import { evaluateWikiReading, predictedAnswers, setF1 } from "../../../src/eval/tasks/wikireading.js";
import { hash53, isDateAnswer, propertyStatsFromFile, writePropertyTable } from "../../../src/eval/tasks/wikireading-properties.js";

const SHARD = fileURLToPath(new URL("../../fixtures/wikireading/shard.json", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-wikireading-eval-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const jsonl = (name: string, rows: unknown[]) => {
  const f = join(tmp, name);
  writeFileSync(f, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return f;
};

describe("set F1", () => {
  it("is the harmonic mean of set precision and recall", () => {
    expect(setF1(["physicist"], ["physicist", "chemist"])).toBe(2 / 3);
    expect(setF1(["mathematician", "cryptanalyst"], ["mathematician", "computer scientist"])).toBe(0.5);
    expect(setF1(["a", "a"], ["a"])).toBe(1);
    expect(setF1([], ["a"])).toBe(0);
    expect(setF1(["France"], ["france"])).toBe(0); // exact strings, as the paper
  });

  it("reads several outputs, or one answer split at a separator", () => {
    expect(predictedAnswers({ id: 1, output: [{ answer: " a " }, { answer: "b" }, { answer: "a" }, { provenance: [] }] })).toEqual(["a", "b"]);
    expect(predictedAnswers({ id: 1, output: [{ answer: "a | b|c" }] }, "|")).toEqual(["a", "b", "c"]);
    expect(predictedAnswers({ id: 1, output: [{ answer: "a | b" }] })).toEqual(["a | b"]);
  });
});

describe("property classes from a training file", () => {
  it("Ĥ: 0 for one answer, 1 for all distinct, H(1/3, 2/3)/ln 2 for sex or gender", async () => {
    const t = await propertyStatsFromFile(SHARD);
    expect(t.instances).toBe(16);
    const summary = Object.fromEntries(Object.entries(t.properties).map(([p, s]) => [p, [s.instances, s.distinctAnswers, s.class, s.date]]));
    expect(summary).toEqual({
      country: [2, 1, "categorical", false],
      "date of birth": [3, 3, "relational", true],
      "instance of": [4, 1, "categorical", false],
      occupation: [4, 4, "relational", false],
      "sex or gender": [3, 2, "relational", false],
    });
    const sex = t.properties["sex or gender"];
    expect(sex.entropy).toBeCloseTo(Math.log(3) - (2 / 3) * Math.log(2), 14);
    expect(sex.normalizedEntropy).toBeCloseTo(Math.log2(3) - 2 / 3, 14); // 0.918296
    expect(t.properties.occupation.normalizedEntropy).toBeCloseTo(1, 14); // {physicist, chemist}, {physicist}, {mathematician}, {mathematician, computer scientist}
    expect(t.properties.occupation.values).toBe(6);
    expect(t.properties["instance of"].normalizedEntropy).toBe(0);
  });

  it("dates: D Month YYYY, Month YYYY; bare years only for time-like properties", () => {
    expect(isDateAnswer("4 July 1776", "date of birth")).toBe(true);
    expect(isDateAnswer("July 1776", "publication date")).toBe(true);
    expect(isDateAnswer("44 BC", "date of death")).toBe(true);
    expect(isDateAnswer("1999", "inception")).toBe(true);
    expect(isDateAnswer("1999", "number of episodes")).toBe(false);
    expect(isDateAnswer("July", "date of birth")).toBe(false);
  });

  it("hashes answers to 53 bits", () => {
    expect(hash53("human")).toBe(hash53("human"));
    expect(hash53("human")).not.toBe(hash53("humans"));
    expect(Number.isSafeInteger(hash53("x".repeat(1000)))).toBe(true);
  });
});

describe("Mean F1 of fixed predictions on the hand-written shard", () => {
  // Per instance (gold → prediction: F1):
  //   instance of ×4: human → human: 1 each                          (categorical, Ĥ 0)
  //   country: Paris France → France: 1; Lyon France → Italy: 0        (categorical, Ĥ 0)
  //   sex or gender: Curie 1, Einstein 1, Turing no prediction 0       (relational, Ĥ 0.918)
  //   occupation: Curie {physicist} vs {physicist, chemist}: 2/3; Einstein 1;
  //               Lovelace poet: 0; Turing {mathematician, cryptanalyst} vs {mathematician, computer scientist}: 1/2
  //   date of birth: Curie 1, Einstein 1, Lovelace "1815": 0           (relational and date)
  // categorical 5/6; relational (2 + 13/6 + 2)/10 = 37/60; date 2/3; overall (5 + 37/6)/16 = 67/96.
  const preds: Record<string, string[]> = {
    "7186:instance of": ["human"], "937:instance of": ["human"], "7259:instance of": ["human"], "7251:instance of": ["human"],
    "90:country": ["France"], "456:country": ["Italy"],
    "7186:sex or gender": ["female"], "937:sex or gender": ["male"],
    "7186:occupation": ["physicist"], "937:occupation": ["physicist"], "7259:occupation": ["poet"], "7251:occupation": ["mathematician", "cryptanalyst"],
    "7186:date of birth": ["7 November 1867"], "937:date of birth": ["14 March 1879"], "7259:date of birth": ["1815"],
  };
  const several = jsonl("several.jsonl", Object.entries(preds).map(([id, a]) => ({ id, output: a.map((answer) => ({ answer })) })));
  const joined = jsonl("joined.jsonl", Object.entries(preds).map(([id, a]) => ({ id, output: [{ answer: a.join(" | ") }] })));

  it("scores 67/96 overall, 5/6 categorical, 37/60 relational, 2/3 date", async () => {
    const { report, problems } = await evaluateWikiReading(SHARD, several, { train: SHARD });
    expect(report.overall).toEqual({ count: 16, "mean-f1": 67 / 96 });
    expect(report.categorical.count).toBe(6);
    expect(report.categorical["mean-f1"]).toBeCloseTo(5 / 6, 15);
    expect(report.relational.count).toBe(10);
    expect(report.relational["mean-f1"]).toBeCloseTo(37 / 60, 15);
    expect(report.date).toEqual({ count: 3, "mean-f1": 2 / 3 });
    expect(report.unseen_property).toEqual({ count: 0, "mean-f1": 0 });
    expect(report.single_answer_bound).toBeCloseTo((14 + 4 / 3) / 16, 15); // two gold sets of 2: at most 2/3 each
    expect(report.by_property.occupation).toEqual({ count: 4, "mean-f1": (2 / 3 + 1 + 0 + 0.5) / 4 });
    expect(report.predictions).toEqual({ scored: 15, missing: 1, ignored: 0 });
    expect(report.property_classes).toEqual({ source: SHARD, threshold: 0.7, from_gold: false });
    expect(problems.map((p) => [p.code, p.count])).toEqual([["missing", 1]]);
  });

  it("splits one answer string only when told the separator", async () => {
    const split = await evaluateWikiReading(SHARD, joined, { train: SHARD, separator: "|" });
    expect(split.report.overall["mean-f1"]).toBe(67 / 96);
    const whole = await evaluateWikiReading(SHARD, joined, { train: SHARD });
    // "mathematician | cryptanalyst" is then one wrong answer: Turing's occupation scores 0 instead of 1/2.
    expect(whole.report.overall["mean-f1"]).toBeCloseTo(2 / 3, 15);
    expect(whole.report.relational["mean-f1"]).toBeCloseTo(17 / 30, 15);
  });

  it("gives the same scores against converted KILT records, and classes from a saved property table", async () => {
    const records = [];
    for await (const ex of readWikiReading(SHARD)) records.push(wikiReadingToKilt(ex));
    const kiltGold = jsonl("gold-kilt.jsonl", records);
    const table = await propertyStatsFromFile(SHARD);
    // Make "sex or gender" categorical and forget "country".
    table.properties["sex or gender"].class = "categorical";
    delete table.properties.country;
    const tableFile = join(tmp, "props.json");
    writePropertyTable(tableFile, table);
    const { report } = await evaluateWikiReading(kiltGold, several, { propertyStats: tableFile });
    expect(report.overall["mean-f1"]).toBe(67 / 96);
    expect(report.categorical.count).toBe(7); // instance of ×4, sex or gender ×3: (4 + 2)/7
    expect(report.categorical["mean-f1"]).toBeCloseTo(6 / 7, 15);
    expect(report.relational["mean-f1"]).toBeCloseTo((13 / 6 + 2) / 7, 15);
    expect(report.unseen_property).toEqual({ count: 2, "mean-f1": 0.5 });
  });

  it("without --train computes the classes on the gold file and says so", async () => {
    const { report, problems } = await evaluateWikiReading(SHARD, several);
    expect(report.property_classes.from_gold).toBe(true);
    expect(report.categorical.count).toBe(6);
    expect(problems.map((p) => p.code)).toEqual(["missing", "classes-from-gold"]);
  });

  it("reports unknown and duplicate ids", async () => {
    const f = jsonl("odd.jsonl", [
      { id: "90:country", output: [{ answer: "France" }] },
      { id: "90:country", output: [{ answer: "Spain" }] },
      { id: "nope", output: [{ answer: "x" }] },
    ]);
    const { report, problems } = await evaluateWikiReading(SHARD, f, { train: SHARD });
    expect(report.overall["mean-f1"]).toBe(1 / 16);
    expect(report.predictions).toEqual({ scored: 1, missing: 15, ignored: 2 });
    expect(problems.map((p) => [p.code, p.count])).toEqual([["duplicate-id", 1], ["unknown-id", 1], ["missing", 1]]);
  });
});
