// Mintaka loading and conversion: exact counts of the real v1.0 dev file, v1.1's extra fields,
// format errors, and KILT records per language (ids, inputs, answers, Wikidata ids in meta).

import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import {
  goldAnswers,
  mintakaCounts,
  mintakaToKilt,
  mintakaToKiltRecord,
  parseMintaka,
  parseMintakaLang,
  readMintakaFile,
  type MintakaQuestion,
} from "../../src/datasets/mintaka.js";
import { findDataset, localPath } from "../../src/datasets/catalogue.js";

const DEV = fileURLToPath(new URL("../../../shared/data/mintaka/mintaka_dev.json", import.meta.url));
const dev = readMintakaFile(DEV);
const byId = (id: string) => dev.find((q) => q.id === id) as MintakaQuestion;

describe("the real Mintaka v1.0 dev file", () => {
  it("has 2,000 questions: 200 per complex type and 400 generic, 250 per category", () => {
    const c = mintakaCounts(dev);
    expect(c.questions).toBe(2000);
    expect(c.complexityType).toEqual({
      comparative: 200, count: 200, difference: 200, generic: 400, intersection: 200, multihop: 200, ordinal: 200, superlative: 200, yesno: 200,
    });
    expect(c.category).toEqual({ books: 250, geography: 250, history: 250, movies: 250, music: 250, politics: 250, sports: 250, videogames: 250 });
  });

  it("has 1,443 entity, 284 boolean, 136 numerical, 136 date and 1 string answers; 24 entity answers unlinked, 223 with several values", () => {
    const c = mintakaCounts(dev);
    expect(c.answerType).toEqual({ boolean: 284, date: 136, entity: 1443, numerical: 136, string: 1 });
    expect(c.unlinkedEntityAnswers).toBe(24);
    expect(c.multiValueAnswers).toBe(223);
  });

  it("keeps answerNum (count and superlative questions only) and every translation", () => {
    const withNum = dev.filter((q) => q.answerNum !== undefined);
    expect(withNum.length).toBe(400);
    expect(new Set(withNum.map((q) => q.complexityType))).toEqual(new Set(["count", "superlative"]));
    expect(dev.every((q) => Object.keys(q.translations).sort().join(",") === "ar,de,es,fr,hi,it,ja,pt")).toBe(true);
    expect(byId("88bdb808").answerNum).toBe(6);
    expect(byId("9ace9041").questionEntities).toEqual([
      { name: "Q44523", entityType: "entity", label: "Twilight", mention: "Twilight", span: [31, 39] },
      { name: 4, entityType: "ordinal", mention: "fourth", span: [12, 18] },
    ]);
  });
});

describe("gold answers", () => {
  it("entity: labels and Q-ids; count questions add the count", () => {
    expect(goldAnswers(byId("9ace9041"), "ja")).toEqual({ strings: ["Breaking Dawn"], ids: ["Q53945"] });
    const count = goldAnswers(byId("88bdb808"), "en");
    expect(count.ids).toEqual(["Q17150", "Q17146", "Q17138", "Q1156718", "Q16681843", "Q28088198"]);
    expect(count.strings.at(-1)).toBe("6");
    expect(count.strings.length).toBe(8); // 6 labels, the mention (the list as written), the count
  });

  it("boolean: the language's yes/no words, then English; numbers, dates and strings as written", () => {
    expect(goldAnswers(byId("db942bdc"), "ja").strings).toEqual(["いいえ", "No", "False"]);
    expect(goldAnswers(byId("db942bdc"), "hi").strings).toEqual(["नहीं", "No", "False"]);
    expect(goldAnswers(byId("26ebd827"), "ar").strings).toEqual(["نعم", "Yes", "True"]);
    expect(goldAnswers(byId("a1bee914"), "de")).toEqual({ strings: ["2"], ids: [] });
    expect(goldAnswers(byId("bccd1dde"), "en").strings).toEqual(["1956-10-20", "20-Oct-56"]);
    expect(goldAnswers(byId("e0f2da35"), "fr").strings).toEqual(["CROSS STITCH"]);
  });
});

describe("conversion to KILT records", () => {
  it("makes one record per question and language: 2,000 per language, 18,000 for all", () => {
    expect([...mintakaToKilt(dev, "hi")].length).toBe(2000);
    const all = [...mintakaToKilt(dev, "all")];
    expect(all.length).toBe(18000);
    expect(all.slice(0, 9).map((r) => r.id)).toEqual(["en", "ar", "de", "es", "fr", "hi", "it", "ja", "pt"].map((l) => `9ace9041-${l}`));
    expect(new Set(all.map((r) => r.id)).size).toBe(18000);
  });

  it("puts the question of the language in input, answers in output and the Wikidata ids in meta", () => {
    const r = mintakaToKiltRecord(byId("9ace9041"), "ja")!;
    expect(r).toEqual({
      id: "9ace9041-ja",
      input: "トワイライトシリーズの四番目の本はなんですか？",
      output: [{ answer: "Breaking Dawn", meta: { wikidata_id: "Q53945" } }],
      meta: {
        mintaka_id: "9ace9041",
        language: "ja",
        category: "books",
        complexity_type: "ordinal",
        answer_type: "entity",
        wikidata_ids: ["Q53945"],
        question_entities: [
          { name: "Q44523", entityType: "entity", label: "Twilight", mention: "Twilight", span: [31, 39] },
          { name: 4, entityType: "ordinal", mention: "fourth", span: [12, 18] },
        ],
        answer_mention: "Breaking Dawn",
        answer_entities: [{ wikidata_id: "Q53945", labels: { en: "Breaking Dawn" } }],
        question_en: "What is the fourth book in the Twilight series?",
      },
    });
    const en = mintakaToKiltRecord(byId("a1bee914"), "en")!;
    expect(en.input).toBe("How many kids does the lead actress of Silence of the Lambs have?");
    expect(en.output).toEqual([{ answer: "2" }]);
    expect(en.meta).toMatchObject({ answer_type: "numerical", answer_values: [2], wikidata_ids: [] });
    expect(en.meta && "question_en" in en.meta).toBe(false);
    expect(mintakaToKiltRecord(byId("88bdb808"), "de")!.meta).toMatchObject({ answer_num: 6, complexity_type: "count" });
  });

  it("parses --lang", () => {
    expect(parseMintakaLang("JA")).toBe("ja");
    expect(parseMintakaLang("all")).toBe("all");
    expect(() => parseMintakaLang("zh")).toThrow(/--lang must be one of en, ar, de, es, fr, hi, it, ja, pt or all/);
  });
});

describe("v1.1 and malformed files", () => {
  const v11 = JSON.stringify([
    {
      id: "c0ffee01",
      question: "How many members of AC/DC were born in Scotland?",
      translations: { ja: "AC/DCのメンバーでスコットランド生まれは何人ですか？" },
      questionEntity: [{ name: "Q1", entityType: "entity", label: { en: "AC/DC", ja: "AC/DC" }, mention: "AC/DC", span: [19, 24] }],
      answer: {
        answerType: "numerical",
        answer: [2],
        mention: "2",
        supportingEnt: [
          { name: "Q9", label: { en: "Angus Young", ja: "アンガス・ヤング", de: null } },
          { name: "Q8", label: { en: "Malcolm Young" } },
        ],
      },
      category: "music",
      complexityType: "count",
    },
    {
      id: "c0ffee02",
      question: "Who is the oldest Beatle?",
      translations: {},
      questionEntity: [],
      answer: { answerType: "entity", answer: [{ name: "Q2632", label: { en: "Ringo Starr", ja: "リンゴ・スター" } }], mention: "Ringo", supportingNum: "1940-07-07" },
      category: "music",
      complexityType: "superlative",
    },
    { id: "c0ffee03", question: "Nickname?", answer: { answerType: "number", answer: 7, mention: "seven" }, category: "sports", complexityType: "generic" },
  ]);

  it("reads per-language labels, supportingEnt (acceptable for count questions), supportingNum (not an answer) and bare values", () => {
    const [a, b, c] = parseMintaka(v11, "v11.json");
    expect(a.supportingEnt).toEqual([
      { id: "Q9", labels: { en: "Angus Young", ja: "アンガス・ヤング" } },
      { id: "Q8", labels: { en: "Malcolm Young" } },
    ]);
    expect(goldAnswers(a, "ja")).toEqual({ strings: ["2", "アンガス・ヤング", "Angus Young", "Malcolm Young"], ids: ["Q9", "Q8"] });
    expect(a.questionEntities[0].label).toBe("AC/DC");
    expect(b.supportingNum).toBe("1940-07-07");
    expect(goldAnswers(b, "ja")).toEqual({ strings: ["リンゴ・スター", "Ringo Starr", "Ringo"], ids: ["Q2632"] });
    expect(goldAnswers(b, "de").strings).toEqual(["Ringo Starr", "Ringo"]);
    expect(c.answerType).toBe("numerical");
    expect(c.values).toEqual([7]);
    expect(mintakaToKiltRecord(b, "ja")).toBeUndefined(); // no Japanese question in this record
    expect(mintakaToKiltRecord(a, "ja")!.output).toEqual([
      { answer: "2" },
      { answer: "アンガス・ヤング", meta: { wikidata_id: "Q9" } },
      { answer: "Angus Young", meta: { wikidata_id: "Q9" } },
      { answer: "Malcolm Young", meta: { wikidata_id: "Q8" } },
    ]);
  });

  it("names the file, record and id of what is wrong", () => {
    expect(() => parseMintaka("{}", "x.json")).toThrow("x.json: expected a JSON array of questions");
    expect(() => parseMintaka("[", "x.json")).toThrow(/^x\.json: invalid JSON/);
    expect(() => parseMintaka(JSON.stringify([{ id: "a", question: "q", answer: { answerType: "colour", answer: [] } }]), "x.json")).toThrow(
      'x.json: record 0 (id a): unknown answerType "colour"',
    );
    expect(() => parseMintaka(JSON.stringify([{ id: "a", question: "q", answer: { answerType: "entity", answer: [{ label: "L" }] } }]), "x.json")).toThrow(
      "x.json: record 0 (id a) answer 0: an answer entity needs a string `name` (a Q-id)",
    );
    const ok = { id: "a", question: "q", answer: { answerType: "string", answer: ["s"] } };
    expect(() => parseMintaka(JSON.stringify([ok, ok]), "x.json")).toThrow("x.json: record 1: duplicate id a");
  });
});

describe("the catalogue entries", () => {
  it("give the official Mintaka files and the WikiReading JSON archives with their counts", () => {
    const m = findDataset("mintaka")!;
    expect(m.pending).toBeUndefined();
    expect(Object.values(m.splits).map((f) => [f.file, f.records, f.url])).toEqual([
      ["mintaka_train.json", 14000, "https://raw.githubusercontent.com/amazon-science/mintaka/main/data/mintaka_train.json"],
      ["mintaka_dev.json", 2000, "https://raw.githubusercontent.com/amazon-science/mintaka/main/data/mintaka_dev.json"],
      ["mintaka_test.json", 4000, "https://raw.githubusercontent.com/amazon-science/mintaka/main/data/mintaka_test.json"],
    ]);
    expect(readMintakaFile(localPath(m, "dev", fileURLToPath(new URL("../../../shared/data/mintaka/", import.meta.url)))).length).toBe(m.splits.dev!.records);
    const w = findDataset("wiki-reading")!;
    expect(w.pending).toBeUndefined();
    expect(Object.values(w.splits).map((f) => [f.file, f.records, f.url])).toEqual([
      ["train.json.tar.gz", 16039400, "https://storage.googleapis.com/wikireading/train.json.tar.gz"],
      ["validation.json.tar.gz", 1886798, "https://storage.googleapis.com/wikireading/validation.json.tar.gz"],
      ["test.json.tar.gz", 941280, "https://storage.googleapis.com/wikireading/test.json.tar.gz"],
    ]);
    expect(w.splits.train!.records + w.splits.dev!.records + w.splits.test!.records).toBe(18867478); // the introduction's 18.87M
  });
});
