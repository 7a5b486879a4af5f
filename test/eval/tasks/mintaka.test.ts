// Mintaka hits@1: the multilingual normalization (Japanese, Arabic, Hindi, French, German, numbers),
// the judging rules (Wikidata id first, else normalized string), and exact scores with breakdowns of
// fixed predictions on the real dev file.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { goldAnswers, readMintakaFile } from "../../../src/datasets/mintaka.js";
import { normalizeMultilingual as n } from "../../../src/eval/tasks/normalize-multilingual.js";
import { evaluateMintaka, mintakaGoldFromJson, mintakaGoldFromKilt, mintakaHit, type MintakaGoldItem } from "../../../src/eval/tasks/mintaka.js";

const DEV = fileURLToPath(new URL("../../../../shared/data/mintaka/mintaka_dev.json", import.meta.url));
const devText = readFileSync(DEV, "utf8");
const tmp = mkdtempSync(join(tmpdir(), "tartan-mintaka-eval-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const golds = mintakaGoldFromJson(devText, DEV, ["en", "ar", "de", "es", "fr", "hi", "it", "ja", "pt"]);
const gold = (key: string) => golds.find((g) => g.key === key) as MintakaGoldItem;
const hit = (key: string, answer: string, ids: string[] = []) => mintakaHit({ answer, ids }, gold(key)).hit;

describe("multilingual normalization", () => {
  it("Japanese: NFKC, no spaces, Japanese punctuation removed", () => {
    expect(n("ブレイキング・ドーン", "ja")).toBe("ブレイキングドーン");
    expect(n("ブレイキング ドーン", "ja")).toBe("ブレイキングドーン");
    expect(n("東京　タワー。", "ja")).toBe("東京タワー");
    expect(n("ＡＢＣ１２３", "ja")).toBe("abc123");
    expect(n("「いいえ」", "ja")).toBe("いいえ");
  });

  it("Arabic: harakat and tatweel dropped, alef forms unified, the article ال dropped, Arabic-Indic digits", () => {
    expect(n("أَلْقَاهِرَة", "ar")).toBe("قاهرة");
    expect(n("القاهرة", "ar")).toBe("قاهرة");
    expect(n("إسطنبول", "ar")).toBe(n("اسطنبول", "ar"));
    expect(n("مـصـر", "ar")).toBe("مصر");
    expect(n("٢٠١٥", "ar")).toBe("2015");
    expect(n("لا", "ar")).toBe("لا"); // too short to be ال + a word
  });

  it("Hindi: danda removed, vowel signs kept, Devanagari digits, nukta forms unified", () => {
    expect(n("नई दिल्ली।", "hi")).toBe("नई दिल्ली");
    expect(n("नहीं", "hi")).not.toBe(n("नह", "hi"));
    expect(n("२०१५", "hi")).toBe("2015");
    expect(n("\u0958ुतुब", "hi")).toBe(n("\u0915\u093cुतुब", "hi"));
  });

  it("European languages: articles, elision, ß, accents kept; English as SQuAD", () => {
    expect(n("L’Amérique du Nord", "fr")).toBe("amérique du nord");
    expect(n("l'Aquila", "it")).toBe("aquila");
    expect(n("Die Straße", "de")).toBe("strasse");
    expect(n("Los Ángeles", "es")).toBe("ángeles");
    expect(n("O Rio", "pt")).toBe("rio");
    expect(n("The Rock", "en")).toBe("rock");
    expect(n("Spider-Man", "en")).toBe("spiderman");
    expect(n("The Rock", "de")).toBe("the rock");
  });

  it("numbers: thousands separators and trailing zeros; empty stays empty", () => {
    expect(n("1,234.50", "en")).toBe("1234.5");
    expect(n("2.0", "en")).toBe("2");
    expect(n("  ", "en")).toBe("");
    expect(n("The", "en")).toBe("");
  });
});

describe("hits@1 judging", () => {
  it("entity answers: by Wikidata id when the prediction has one, else by normalized label", () => {
    expect(mintakaHit({ answer: "zzz", ids: ["Q53945"] }, gold("9ace9041-ja"))).toEqual({ hit: 1, route: "wikidata_id" });
    expect(mintakaHit({ answer: "Breaking Dawn", ids: ["Q1"] }, gold("9ace9041-ja"))).toEqual({ hit: 0, route: "wikidata_id" });
    expect(mintakaHit({ answer: "breaking dawn.", ids: [] }, gold("9ace9041-ja"))).toEqual({ hit: 1, route: "string" });
    expect(hit("9ace9041-ja", "ブレイキング・ドーン")).toBe(0); // v1.0 has English labels only
    expect(mintakaHit(undefined, gold("9ace9041-en"))).toEqual({ hit: 0, route: "none" });
  });

  it("count questions are answered by the count, a number; a counted entity is not the answer (--count-entities: appendix D)", () => {
    expect(hit("88bdb808-en", "6")).toBe(1);
    expect(hit("88bdb808-en", "6.0")).toBe(1);
    expect(hit("88bdb808-ja", "６")).toBe(1);
    expect(hit("88bdb808-en", "uncharted 2 among thieves")).toBe(0);
    expect(mintakaHit({ answer: "zzz", ids: ["Q17146"] }, gold("88bdb808-en"))).toEqual({ hit: 0, route: "string" });
    expect(hit("88bdb808-en", "7")).toBe(0);
    expect(mintakaHit({ answer: "uncharted 2 among thieves", ids: [] }, gold("88bdb808-en"), "exact", true).hit).toBe(1);
    expect(mintakaHit({ answer: "zzz", ids: ["Q17146"] }, gold("88bdb808-en"), "exact", true)).toEqual({ hit: 1, route: "wikidata_id" });
  });

  it("yes/no in the question's language or English", () => {
    expect(hit("db942bdc-ja", "いいえ")).toBe(1);
    expect(hit("db942bdc-ja", "いいえ。")).toBe(1);
    expect(hit("db942bdc-ja", "はい")).toBe(0);
    expect(hit("db942bdc-ja", "No")).toBe(1);
    expect(hit("db942bdc-hi", "नहीं।")).toBe(1);
    expect(hit("db942bdc-ar", "لا")).toBe(1);
    expect(hit("db942bdc-fr", "Non")).toBe(1);
    expect(hit("26ebd827-ar", "نعم")).toBe(1);
    expect(hit("26ebd827-it", "si")).toBe(1);
    expect(hit("26ebd827-pt", "SIM")).toBe(1);
    expect(hit("26ebd827-de", "Nein")).toBe(0);
  });

  it("numbers in any script, dates as written, strings", () => {
    expect(hit("a1bee914-ja", "２")).toBe(1);
    expect(hit("a1bee914-ar", "٢")).toBe(1);
    expect(hit("a1bee914-hi", "२")).toBe(1);
    expect(hit("a1bee914-en", "2.0")).toBe(1);
    expect(hit("a1bee914-en", "two")).toBe(0);
    expect(hit("bccd1dde-en", "1956-10-20")).toBe(1);
    expect(hit("bccd1dde-en", "20-Oct-56")).toBe(1);
    expect(hit("bccd1dde-en", "October 20, 1956")).toBe(0);
    expect(hit("e0f2da35-en", "Cross Stitch")).toBe(1);
    expect(hit("e0f2da35-en", "It was called Cross Stitch.")).toBe(0);
    expect(mintakaHit({ answer: "It was called Cross Stitch.", ids: [] }, gold("e0f2da35-en"), "contains").hit).toBe(1);
  });

  it("KILT gold records in Arabic and Japanese", () => {
    const ar = mintakaGoldFromKilt(
      { id: "x-ar", input: "?", output: [{ answer: "القاهرة" }], meta: { mintaka_id: "x", language: "ar", category: "geography", complexity_type: "generic", answer_type: "entity" } },
      "t",
    );
    expect(mintakaHit({ answer: "أَلْقَاهِرَة", ids: [] }, ar).hit).toBe(1);
    const ja = mintakaGoldFromKilt({ id: "y-ja", output: [{ answer: "東京タワー", meta: { wikidata_id: "Q193482" } }], meta: { mintaka_id: "y", language: "ja" } }, "t");
    expect(ja.ids).toEqual(["Q193482"]);
    expect(mintakaHit({ answer: "東京 タワー", ids: [] }, ja).hit).toBe(1);
    expect(() => mintakaGoldFromKilt({ id: 1, output: [] }, "g.jsonl:1")).toThrow(/g\.jsonl:1: not a Mintaka KILT record/);
  });
});

describe("hits@1 of fixed predictions on the real dev file", () => {
  // Every linked entity answer predicted by its first Q-id (with a wrong string), everything else wrong.
  const questions = readMintakaFile(DEV);
  const guessFile = join(tmp, "by-id.jsonl");
  writeFileSync(
    guessFile,
    questions
      .map((q) => {
        const ids = goldAnswers(q, "en").ids;
        return JSON.stringify(ids.length > 0 ? { id: q.id, output: [{ answer: "zzz", meta: { wikidata_id: ids[0] } }] } : { id: q.id, output: [{ answer: "wrong" }] });
      })
      .join("\n") + "\n",
  );

  it("scores 1,229 of 2,000 with the exact breakdowns: a count question's entity is not its count", async () => {
    // Independently: the non-count questions with a linked entity answer (Python over mintaka_dev.json).
    const { report, problems } = await evaluateMintaka(DEV, guessFile);
    expect(report.languages).toEqual(["en"]);
    expect(report.overall).toEqual({ count: 2000, hits: 1229, "hits@1": 0.6145 });
    const h = (o: Record<string, Record<string, number>>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, [v.hits, v.count]]));
    expect(h(report.by_complexity_type)).toEqual({
      comparative: [116, 200], count: [0, 200], difference: [172, 200], generic: [280, 400], intersection: [197, 200],
      multihop: [99, 200], ordinal: [165, 200], superlative: [199, 200], yesno: [1, 200],
    });
    expect(h(report.by_category)).toEqual({
      books: [142, 250], geography: [160, 250], history: [171, 250], movies: [150, 250], music: [156, 250], politics: [155, 250], sports: [138, 250], videogames: [157, 250],
    });
    expect(h(report.by_answer_type)).toEqual({ entity: [1229, 1443], boolean: [0, 284], numerical: [0, 136], date: [0, 136], string: [0, 1] });
    expect(report.by_language).toEqual({ en: { count: 2000, hits: 1229, "hits@1": 0.6145 } });
    expect(report.judged_by).toEqual({ wikidata_id: 1229, string: 771 });
    expect(report.predictions).toEqual({ scored: 2000, missing: 0, ignored: 0 });
    expect(problems).toEqual([]);
  });

  it("with countEntities (appendix D) the counted entities count: 1,419 of 2,000", async () => {
    const { report } = await evaluateMintaka(DEV, guessFile, { countEntities: true });
    expect(report.overall).toEqual({ count: 2000, hits: 1419, "hits@1": 0.7095 });
    expect(report.by_complexity_type.count).toEqual({ count: 200, hits: 190, "hits@1": 0.95 });
  });

  it("scores several languages by their id suffixes; missing predictions score 0", async () => {
    const f = join(tmp, "multi.jsonl");
    const lines = [
      { id: "db942bdc-ja", output: [{ answer: "いいえ" }] },
      { id: "db942bdc-ar", output: [{ answer: "لا" }] },
      { id: "a1bee914-hi", output: [{ answer: "२" }] },
      { id: "9ace9041-ja", output: [{ answer: "ブレイキング・ドーン", meta: { wikidata_id: "Q53945" } }] },
      { id: "9ace9041-ar", output: [{ answer: "الفجر", provenance: [{ wikipedia_id: "1", wikidata_id: "Q53945" }] }] },
      { id: "nope-ja", output: [{ answer: "x" }] },
    ];
    writeFileSync(f, lines.map((l) => JSON.stringify(l)).join("\n"));
    const { report, problems } = await evaluateMintaka(DEV, f);
    expect(report.languages).toEqual(["ar", "hi", "ja"]);
    expect(report.overall).toEqual({ count: 6000, hits: 4, "hits@1": 4 / 6000 });
    expect(report.by_language.ja).toEqual({ count: 2000, hits: 2, "hits@1": 0.001 });
    expect(report.by_language.ar).toEqual({ count: 2000, hits: 1, "hits@1": 0.0005 });
    expect(report.by_language.hi).toEqual({ count: 2000, hits: 1, "hits@1": 0.0005 });
    expect(report.predictions).toEqual({ scored: 5, missing: 5995, ignored: 1 });
    expect(problems.map((p) => [p.code, p.count])).toEqual([
      ["unknown-id", 1],
      ["missing", 1],
      ["provenance-qid", 1],
    ]);
  });
});
