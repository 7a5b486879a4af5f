// Fact checking on the KILT FEVER samples (5 train, 5 dev records). Their evidence sentences are
// stand-ins written from memory (fixtures/fever-evidence.json says so): no knowledge source here.
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { evaluate } from "../../../src/eval/index.js";
import { readJsonlAll } from "../../../src/records/jsonl.js";
import type { KiltRecord } from "../../../src/records/types.js";
import { FactCheckReader, FactModel, factEvidence, ruleVerdict, trainFactModel, type Verdict } from "../../../src/readers/tasks/fact-check.js";
import { answerRecord, type ReaderPassage } from "../../../src/readers/types.js";
import { SAMPLES } from "../helpers.js";

const evidence = JSON.parse(readFileSync(new URL("./fixtures/fever-evidence.json", import.meta.url), "utf8")).evidence as Record<
  string,
  { title: string; wikipedia_id: string; text: string }
>;
function passages(r: KiltRecord): ReaderPassage[] {
  const e = evidence[String(r.id)];
  return [{ text: e.text, provenance: { wikipedia_id: e.wikipedia_id, title: e.title } }];
}
const load = (split: string) => readJsonlAll<KiltRecord>(`${SAMPLES}/fever-${split}-kilt.jsonl`);

describe("claim/evidence features and the rule baseline", () => {
  test("features, cues and verdicts of all 10 labelled samples", async () => {
    const rows = [];
    for (const r of [...(await load("train")), ...(await load("dev"))]) {
      const e = factEvidence(r.input as string, passages(r));
      rows.push([String(r.id), r.output[0].answer, ruleVerdict(e), e.features.map((x) => +x.toFixed(3)), e.cues.join()]);
    }
    expect(rows).toEqual([
      ["75397", "SUPPORTS", "REFUTES", [0.143, 0.143, 0, 0, 0, 0, 0, 0, 0, 0, 0.8], ""],
      ["150448", "SUPPORTS", "SUPPORTS", [0.5, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0], ""],
      ["214861", "SUPPORTS", "REFUTES", [0.467, 0.467, 0.235, 0, 0, 0, 0, 0, 0, 0, 0], ""],
      ["156709", "REFUTES", "REFUTES", [0.667, 0.667, 0.25, 0, 0, 0, 0, 1, 0, 0, 0], "class_clash"],
      ["129629", "SUPPORTS", "SUPPORTS", [1, 1, 0.733, 0, 0, 0, 0, 0, 0, 0, 0], ""],
      ["137334", "SUPPORTS", "SUPPORTS", [1, 1, 0.429, 0, 0, 0, 0, 0, 0, 0, 0], ""],
      ["111897", "REFUTES", "REFUTES", [0.8, 0.8, 0.333, 0, 0, 0, 0, 1, 0, 0, 1], "class_clash"],
      ["219028", "REFUTES", "REFUTES", [0.5, 0.5, 0, 0, 0, 0, 1, 1, 0, 0, 1], "exclusive,class_clash"],
      ["204361", "SUPPORTS", "SUPPORTS", [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0], ""],
      ["105095", "SUPPORTS", "SUPPORTS", [1, 1, 0.333, 0, 0, 0, 0, 0, 0, 0, 0], ""],
    ]);
  });

  test("negation and antonym cues", () => {
    const p: ReaderPassage[] = [{ text: "Savages is a 2012 American crime thriller film directed by Oliver Stone.", provenance: { wikipedia_id: "31676805" } }];
    const neg = factEvidence("Savages is not a film directed by Oliver Stone.", p);
    expect(neg.cues).toEqual(["negation_mismatch"]);
    expect(ruleVerdict(neg)).toBe("REFUTES");
    const ant = factEvidence("Oliver Stone died.", [{ text: "Oliver Stone was born in 1946 and is alive.", provenance: { wikipedia_id: "1" } }]);
    expect(ant.cues).toContain("antonym");
    expect(factEvidence("Savages is a film.", []).features[0]).toBe(0);
  });

  test("the rule reader on the dev samples scores accuracy 1.0 with KILT evaluation", async () => {
    const dev = await load("dev");
    const reader = new FactCheckReader();
    const guesses = [];
    for (const r of dev) guesses.push(answerRecord(r, await reader.read(r, passages(r))));
    expect(guesses.map((g) => g.output[0].answer)).toEqual(["SUPPORTS", "REFUTES", "REFUTES", "SUPPORTS", "SUPPORTS"]);
    expect(guesses[1].output[0].meta).toEqual({
      evidence: evidence["111897"].text,
      start: 0,
      end: evidence["111897"].text.length,
      cues: ["class_clash"],
    });
    const res = await evaluate(dev, guesses, {});
    expect(res.eval_downstream!.downstream.accuracy).toBe(1);
    // Each evidence page is a whole gold evidence set of its record (105095: the first of two sets).
    expect(res.eval_downstream!.kilt["KILT-accuracy"]).toBe(1);
  });
});

describe("the trainable classifier", () => {
  test("trained on the 5 train samples (seeded), it labels the 5 dev samples", async () => {
    const train = await load("train");
    const examples = train.map((r) => ({ features: factEvidence(r.input as string, passages(r)).features, label: r.output[0].answer as Verdict }));
    const model = trainFactModel(examples, { seed: 1 });
    expect(JSON.stringify(trainFactModel(examples, { seed: 1 }).toJSON())).toBe(JSON.stringify(model.toJSON()));
    expect(model.weights.map((w) => +w.toFixed(4))).toEqual([0.4022, 0.4022, 0.3107, 0, 0, 0, 0, -5.154, 0, 0, 1.28]);
    expect(+model.bias.toFixed(4)).toBe(2.4971);
    const reader = new FactCheckReader(FactModel.fromJSON(JSON.parse(JSON.stringify(model.toJSON()))));
    const out = [];
    for (const r of await load("dev")) {
      const a = await reader.read(r, passages(r));
      out.push([a.answer, +(a.meta!.probability as number).toFixed(4)]);
    }
    expect(out).toEqual([
      ["SUPPORTS", 0.9688],
      ["REFUTES", 0.3475],
      ["REFUTES", 0.2739],
      ["SUPPORTS", 0.9737],
      ["SUPPORTS", 0.9679],
    ]);
  });
});
