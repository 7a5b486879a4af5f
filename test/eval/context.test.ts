// The context metrics' matcher (answer/entity in context): normalized answers and titles searched in
// one buffer of normalized passage bytes must find the same first passages (with an answer, a title,
// both) as Python's `in` on normalized strings, including non-ASCII and escaped texts, empty answers,
// and lone surrogates (no UTF-8).

import { describe, expect, it } from "vitest";
import { evaluate, type PerQueryRow } from "../../src/eval/evaluate.js";
import { normalizeAnswer } from "../../src/eval/normalize.js";
import { ContextMatcher } from "../../src/eval/provenance.js";
import { viewOfValue } from "../../src/eval/scan.js";

/** The official definition: `normalize_answer(a) in normalize_answer(text)` per passage. */
function expected(texts: (string | undefined)[], answers: string[], titles: string[], maxK: number) {
  const n = Math.min(texts.length, maxK);
  const answer: number[] = [];
  const title: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = texts[i];
    const text = t === undefined ? undefined : normalizeAnswer(t);
    answer.push(text !== undefined && answers.some((a) => text.includes(a)) ? 1 : 0);
    title.push(text !== undefined && titles.some((a) => text.includes(a)) ? 1 : 0);
  }
  const firstOf = (f: (i: number) => boolean) => {
    for (let i = 0; i < n; i++) if (f(i)) return i;
    return n;
  };
  return { firstAnswer: firstOf((i) => answer[i] === 1), firstTitle: firstOf((i) => title[i] === 1), firstBoth: firstOf((i) => answer[i] === 1 && title[i] === 1) };
}

function flags(texts: (string | undefined)[], answers: string[], titles: string[], maxK: number) {
  const prov = texts.map((t, i) => (t === undefined ? { wikipedia_id: String(i) } : { wikipedia_id: String(i), text: t }));
  const view = viewOfValue({ id: "q", output: [{ provenance: prov }] }, { provKeys: ["wikipedia_id"], texts: true });
  const m = new ContextMatcher();
  m.match(view.outputs[0].provenance, maxK, answers, titles);
  return { firstAnswer: m.firstAnswer, firstTitle: m.firstTitle, firstBoth: m.firstBoth };
}

describe("ContextMatcher", () => {
  const cases: [string, (string | undefined)[], string[], string[], number][] = [
    ["ASCII, several passages", ["The cat sat.", "a dog", "Cat-sitting", undefined, "the end"], ["cat"], ["dog", "end"], 20],
    ["maxK cuts the list", ["x cat", "cat", "cat"], ["cat"], [], 2],
    ["empty answer is in every passage with text", ["abc", undefined, ""], [""], ["zzz"], 20],
    ["no match anywhere", ["abc", "def"], ["xyz"], ["uvw"], 20],
    ["match across a passage boundary does not count", ["ab", "cd"], ["b c", "bc"], [], 20],
    ["non-ASCII passages and answers", ["Café au lait", "naïve the café", "東京タワー", "emoji 😀 here"], ["café", "京タ", "😀"], ["naïve"], 20],
    ["escaped JSON text (quotes, newlines)", ['say "hi"\nthere', "tab\there"], ["say hi there"], ["tab here"], 20],
    ["lone surrogate in a passage", ["x\ud800y cat", "cat \udc00"], ["cat"], ["\ud800"], 20],
    ["lone surrogate in an answer", ["a\ud800b", "ab"], ["\ud800"], [], 20],
    ["U+FFFD is not a lone surrogate", ["a\ufffdb", "a\ud800b"], ["\ufffd"], [], 20],
    ["answer found several times in one passage and in later ones", ["cat cat cat", "dog", "the cat"], ["cat", "dog"], [], 20],
    ["a later answer is found in an earlier passage", ["x", "dog", "cat"], ["cat", "dog", "x"], [], 20],
    ["both: titled passages before the first answer do not count", ["title", "cat", "cat title", "title cat"], ["cat"], ["title"], 20],
    ["both: an answer other than the first one", ["dog", "title x", "title cat"], ["dog", "cat"], ["title"], 20],
  ];
  it.each(cases)("%s", (_name, texts, answers, titles, maxK) => {
    const a = answers.map(normalizeAnswer);
    const t = titles.map(normalizeAnswer);
    expect(flags(texts, a, t, maxK)).toEqual(expected(texts, a, t, maxK));
  });

  it("equals the string definition on 2,000 random passage lists", () => {
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const words = ["the", "a", "cat", "Cat", "é", "東", "😀", "x.y", " ", "  ", "-", "an", "dog", "\u00a0", "\u0085", "ab"];
    const phrase = (n: number) => Array.from({ length: n }, () => words[Math.floor(rnd() * words.length)]).join(rnd() < 0.5 ? " " : "");
    for (let c = 0; c < 2000; c++) {
      const texts = Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => (rnd() < 0.1 ? undefined : phrase(Math.floor(rnd() * 12))));
      const answers = Array.from({ length: Math.floor(rnd() * 3) }, () => normalizeAnswer(phrase(1 + Math.floor(rnd() * 3))));
      const titles = Array.from({ length: Math.floor(rnd() * 3) }, () => normalizeAnswer(phrase(1 + Math.floor(rnd() * 2))));
      const maxK = 1 + Math.floor(rnd() * 8);
      expect(flags(texts, answers, titles, maxK)).toEqual(expected(texts, answers, titles, maxK));
    }
  });

  it("through the evaluator: gold titles, answers and inputs (non-ASCII, lone surrogates) give the string definition", async () => {
    let seed = 17;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const words = ["the", "Cat", "é", "東", "\ud800", "\udc00x", "dog", "a", "ab", "x.y", "Title 7"];
    const phrase = (n: number) => Array.from({ length: n }, () => words[Math.floor(rnd() * words.length)]).join(" ");
    const gold = [];
    const guess = [];
    const want: { entity: number; answer: number; title: number; both: number }[] = [];
    for (let c = 0; c < 400; c++) {
      const answers = Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => phrase(1 + Math.floor(rnd() * 2)));
      const titles = Array.from({ length: Math.floor(rnd() * 3) }, () => phrase(1 + Math.floor(rnd() * 2)));
      const input = phrase(Math.floor(rnd() * 8));
      const texts = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => phrase(Math.floor(rnd() * 8)));
      gold.push({ id: `q${c}`, input, output: answers.map((answer, i) => ({ answer, provenance: i === 0 ? titles.map((title) => ({ wikipedia_id: "1", title })) : [] })) });
      guess.push({ id: `q${c}`, output: [{ answer: "x", provenance: texts.map((text, i) => ({ wikipedia_id: String(i), text })) }] });
      const a = [...new Set(answers.map((x) => x.trim()))].filter((x) => x !== "").map(normalizeAnswer);
      const t = [...new Set(titles.map((x) => x.trim()))].filter((x) => x !== "").map(normalizeAnswer);
      const e = expected(texts, a, t, 5);
      // `expected` gives the passage count where there is none.
      const at = (first: number) => (first < Math.min(texts.length, 5) ? 1 : 0);
      want.push({ entity: t.some((x) => normalizeAnswer(input).includes(x)) ? 1 : 0, answer: at(e.firstAnswer), title: at(e.firstTitle), both: at(e.firstBoth) });
    }
    const rows: PerQueryRow[] = [];
    await evaluate(gold, guess, { ks: [5], mode: "retrieval", perQuery: (r) => rows.push(r) });
    const got = rows.map((r) => {
      const v = r.eval_retrieval!;
      return { entity: v.entity_in_input, answer: v["answer_in_context@5"], title: v["entity_in_context@5"], both: v["answer_and_ent_in_context@5"] };
    });
    expect(got).toEqual(want);
    // The cases cover each outcome.
    for (const k of ["entity", "answer", "title", "both"] as const) expect(new Set(want.map((w) => w[k]))).toEqual(new Set([0, 1]));
  });
});
