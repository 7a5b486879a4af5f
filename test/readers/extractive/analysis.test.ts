// Text analysis and question typing on real SQuAD text.
import { describe, expect, test } from "vitest";
import { analyze } from "../../../src/readers/extractive/text.js";
import { analyzeQuestion, questionType } from "../../../src/readers/extractive/question.js";
import { pageParagraphPassages } from "../../../src/readers/extractive/squad-data.js";
import { squad } from "../helpers.js";

describe("analyze", () => {
  test("tokens, offsets, tags and entities of the first Super Bowl 50 paragraph", () => {
    const text = pageParagraphPassages(squad().pages[0])[0].text;
    const a = analyze(text);
    expect([a.tokens.length, a.sentences.length]).toEqual([151, 4]);
    expect(a.tokens.slice(0, 6).map((t) => [t.text, t.pos, t.stem, t.start, t.end, t.stop, t.ent])).toEqual([
      ["Super", "PROPN", "super", 0, 5, false, ""],
      ["Bowl", "PROPN", "bowl", 6, 10, false, ""],
      ["50", "NUM", "50", 11, 13, false, "CARDINAL"],
      ["was", "AUX", "was", 14, 17, true, ""],
      ["an", "DET", "an", 18, 20, true, ""],
      ["American", "PROPN", "american", 21, 29, false, ""],
    ]);
    expect(a.entities.slice(0, 6)).toEqual([
      { first: 2, last: 2, type: "CARDINAL" },
      { first: 22, last: 22, type: "DATE" },
      { first: 46, last: 46, type: "CARDINAL" },
      { first: 48, last: 48, type: "CARDINAL" },
      { first: 52, last: 52, type: "ORDINAL" },
      { first: 62, last: 65, type: "DATE" },
    ]);
    // Every token is the exact text at its offsets.
    for (const t of a.tokens) expect(text.slice(t.start, t.end)).toBe(t.text);
  });

  test("offsets hold past astral characters and odd spacing", () => {
    const text = "The 𝔸 sign  cost $5.2 million (about 30%) on February 7, 2016.";
    const a = analyze(text);
    for (const t of a.tokens) expect(text.slice(t.start, t.end)).toBe(t.text);
    expect(a.entities.map((e) => e.type)).toEqual(["MONEY", "PERCENT", "DATE"]);
  });
});

describe("questions", () => {
  test.each([
    ["Who led the Normans?", "who"],
    ["When did Tesla die?", "when"],
    ["Where is Warsaw?", "where"],
    ["Why did it fail?", "why"],
    ["How many people live in Warsaw?", "how_many"],
    ["How much did it cost?", "how_much"],
    ["How long is the Rhine?", "how_long"],
    ["How old was Tesla?", "how_long"],
    ["How did it work?", "how_other"],
    ["What year did it end?", "what_year"],
    ["In what century did it start?", "what_year"],
    ["Which NFL team represented the AFC at Super Bowl 50?", "which"],
    ["What is oxygen?", "what"],
    ["Name the river.", "other"],
  ])("%s → %s", (q, type) => {
    expect(analyzeQuestion(q).type).toBe(type);
  });

  test("content stems and bigrams of a real SQuAD question", () => {
    const q = analyzeQuestion(squad().records[0].input as string);
    expect(q.text).toBe("Which NFL team represented the AFC at Super Bowl 50?");
    expect([...q.stems]).toEqual(["nfl", "team", "repres", "afc", "super", "bowl", "50"]);
    expect(q.bigrams.has("super bowl")).toBe(true);
    expect(q.bigrams.has("bowl 50")).toBe(true);
    expect(questionType(q.analysis)).toBe("which");
  });
});
