// match_answer port: tokens and offsets, the exact passes (substring at word boundaries, token run),
// the BLEU span search on deliberately perturbed sentences of a real SQuAD paragraph (values derived
// by hand below), and every SQuAD v1.1 dev answer mapped back onto the SQuAD pages.

import { describe, expect, it } from "vitest";
import { readSquadFile, squadQuestionsToKilt, squadToPages } from "../../src/knowledge/squad.js";
import {
  answerTokens,
  findAtBoundaries,
  isMatch,
  kiltNormalize,
  matchAnswer,
  PreparedPage,
  spanSearch,
  tokenizeParagraph,
  type MatchResult,
} from "../../src/mapping/match.js";
import { cpSlice } from "../../src/knowledge/codepoints.js";
import { kiltBleu } from "../../src/mapping/bleu.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const squad = readSquadFile(V11);
const pages = squadToPages(squad);
const superBowl = new PreparedPage(pages[0]);

const page = (...text: string[]) => new PreparedPage({ wikipedia_id: "1", wikipedia_title: "T", text: ["T\n", ...text] });
const spanOf = (p: PreparedPage, m: MatchResult) => cpSlice(p.page.text[m.paragraph], m.start, m.end);

describe("normalization and tokens", () => {
  it("lower-cases and drops ASCII punctuation only (KILT's kilt_utils.normalize_answer)", () => {
    expect(kiltNormalize("The U.S. (Army)!")).toBe("the us army");
    expect(kiltNormalize("Café — “quoted”")).toBe("café — “quoted”");
  });

  it("drops characters of 3+ UTF-8 bytes from tokens and keeps code-point ranges of what is left", () => {
    const t = tokenizeParagraph("Broncos, 24–10 “win” — 😀x done.");
    expect(t.tokens).toEqual(["broncos", "2410", "win", "", "x", "done"]);
    // "Broncos" without the comma; "24–10" keeps both ends; "😀x" is one code point then x at 23.
    expect(t.starts).toEqual([0, 9, 16, 21, 24, 26]);
    expect(t.ends).toEqual([7, 14, 19, 21, 25, 30]);
    expect(answerTokens("Denver  Broncos!")).toEqual(["denver", "broncos"]);
  });

  it("finds substrings only at word boundaries", () => {
    expect(findAtBoundaries("often ten", "ten")).toBe(6);
    expect(findAtBoundaries("often", "ten")).toBe(-1);
    expect(findAtBoundaries("$5 million", "$5")).toBe(0);
    expect(findAtBoundaries("a ten b ten", "ten", 9)).toBe(8);
  });
});

describe("matchAnswer exact passes", () => {
  it("takes the normalized text first, then the text as given, and returns code-point offsets", () => {
    const p = page("He won in 1995. Then", "😀 The Denver Broncos won.");
    expect(matchAnswer("1995.", p)).toEqual({ paragraph: 1, start: 10, end: 14, bleu: 1, method: "substring" });
    // astral character before the match: offsets count it as one
    expect(matchAnswer("Denver Broncos", p)).toEqual({ paragraph: 2, start: 6, end: 20, bleu: 1, method: "substring" });
  });

  it("matches a token run when punctuation differs, spanning first to last kept character", () => {
    const p = page("It was played at Santa Clara, California, in 2016.");
    const m = matchAnswer("santa clara (california)", p) as MatchResult;
    expect(m).toEqual({ paragraph: 1, start: 17, end: 40, bleu: 1, method: "token" });
    expect(spanOf(p, m)).toBe("Santa Clara, California");
  });

  it("prefers a whole-word occurrence on a later paragraph to an in-word one, and uses the in-word one last", () => {
    const p = page("It happens often.", "There were ten of them.");
    expect(matchAnswer("ten", p)).toMatchObject({ paragraph: 2, start: 11, end: 14, method: "substring" });
    expect(matchAnswer("ten", page("It happens often."))).toMatchObject({ paragraph: 1, start: 13, end: 16, method: "substring-in-word" });
  });

  it("reports texts it cannot search for", () => {
    expect(matchAnswer(".", superBowl)).toEqual({ reason: "empty-text" });
    expect(matchAnswer("北京", page("Nothing here."))).toEqual({ reason: "no-tokens" });
    expect(matchAnswer("x", { wikipedia_id: "e", wikipedia_title: "E", text: [] })).toEqual({ reason: "empty-page" });
  });
});

describe("BLEU span search on perturbed sentences of SQuAD's Super Bowl 50 paragraph 1", () => {
  const sentence = "Super Bowl 50 was an American football game to determine the champion of the National Football League (NFL) for the 2015 season.";
  const w = sentence.split(" ");
  const source = "Super Bowl 50 was an American football game to determine the champion of the National Football League (NFL) for the 2015 season";
  // The original sentence has 22 normalized tokens; the best span is always all of it (paragraph 1, 0–127).
  const expectSpan = (m: ReturnType<typeof matchAnswer>, bleu: number) => {
    expect(m).toEqual({ paragraph: 1, start: 0, end: 127, bleu, method: "bleu" });
    expect(spanOf(superBowl, m as MatchResult)).toBe(source);
  };

  it("one word replaced: (21/22 · 19/21 · 17/20 · 15/19)^(1/4) = (255/440)^(1/4)", () => {
    const m = matchAnswer(w.map((x, i) => (i === 6 ? "soccer" : x)).join(" "), superBowl);
    expectSpan(m, 0.8725129388059689);
    expect((m as MatchResult).bleu).toBeCloseTo((255 / 440) ** 0.25, 15);
  });

  it("one word dropped: c = 21 < r = 22, exp(-1/21) · (19/20 · 17/19 · 15/18)^(1/4)", () => {
    const m = matchAnswer(w.filter((_, i) => i !== 5).join(" "), superBowl);
    expectSpan(m, 0.8747394842931362);
    expect((m as MatchResult).bleu).toBeCloseTo(Math.exp(-1 / 21) * (255 / 360) ** 0.25, 15);
  });

  it("two words swapped: (22/22 · 18/21 · 16/20 · 14/19)^(1/4)", () => {
    const m = matchAnswer([...w.slice(0, 5), w[6], w[5], ...w.slice(7)].join(" "), superBowl);
    expectSpan(m, 0.8431006187347456);
    expect((m as MatchResult).bleu).toBeCloseTo(((18 / 21) * (16 / 20) * (14 / 19)) ** 0.25, 15);
  });

  it("three isolated words replaced: (19/22 · 15/21 · 11/20 · 7/19)^(1/4) = (1/8)^(1/4) = 2^(-3/4)", () => {
    expectSpan(matchAnswer(w.map((x, i) => ([3, 9, 15].includes(i) ? "xyz" : x)).join(" "), superBowl), 2 ** -0.75);
  });

  it("four words replaced falls below 0.5: (18/22 · 13/21 · 8/20 · 3/19)^(1/4)", () => {
    expectSpan(matchAnswer(w.map((x, i) => ([3, 8, 13, 18].includes(i) ? "xyz" : x)).join(" "), superBowl), 0.42291236365358204);
  });

  it("every other word kept: no bigram survives, BLEU is a float_info.min power on some other paragraph", () => {
    const m = matchAnswer(w.filter((_, i) => i % 2 === 0).join(" "), superBowl) as MatchResult;
    expect(m).toEqual({ paragraph: 45, start: 250, end: 311, bleu: 6.061838450024688e-155, method: "bleu" });
  });

  it("case and punctuation changes only: an exact token run, BLEU 1", () => {
    // The sentence repeats "the" and "football", so KILT's first pass (token sets) is skipped and the
    // candidate pass finds the run.
    const m = matchAnswer(sentence.toLowerCase().replace(/[().]/g, ""), superBowl) as MatchResult;
    expect(m).toEqual({ paragraph: 1, start: 0, end: 127, bleu: 1, method: "token" });
  });

  it("ties go to the shorter span", () => {
    // answer "a b c" (weights 1/3): "x a b", "a b" and "a b y" all have p1 = 2/3, p2 = 1/2, p3 = 0 and
    // BP 1 (c = 3 ≥ r); "x a b" is met first, "a b" replaces it as shorter, "a b y" does not.
    const p = page("x a b y");
    const m = spanSearch(p, [1], ["a", "b", "c"]);
    expect(spanOf(p, m)).toBe("a b");
  });
});

describe("the span search equals an exhaustive search with from-scratch BLEU", () => {
  it("on 600 random pages and answers (repeats, empty tokens, several candidates)", () => {
    let seed = 99;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const vocab = ["a", "b", "c", "d", "e", "f", "—"]; // "—" becomes an empty token
    let checked = 0;
    for (let n = 0; n < 600; n++) {
      const v = 3 + Math.floor(rnd() * 5);
      const pick = () => vocab[Math.floor(rnd() * v)];
      const paras = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => Array.from({ length: 1 + Math.floor(rnd() * 25) }, pick).join(" "));
      const answer = answerTokens(Array.from({ length: 1 + Math.floor(rnd() * 7) }, () => vocab[Math.floor(rnd() * Math.min(v, 6))]).join(" "));
      const p = new PreparedPage({ wikipedia_id: "r", wikipedia_title: "R", text: paras });
      const got = spanSearch(p, paras.map((_, i) => i), answer);
      // exhaustive: exact run first, else every span, highest BLEU, shorter on ties, earlier first
      let want: { idx: number; init: number; end: number; bleu: number } | null = null;
      outer: for (let idx = 0; idx < paras.length; idx++) {
        const P = p.paragraph(idx).tokens;
        for (let i = 0; i + answer.length <= P.length; i++)
          if (answer.every((t, k) => P[i + k] === t)) {
            want = { idx, init: i, end: i + answer.length - 1, bleu: 1 };
            break outer;
          }
      }
      if (want === null)
        search: for (let idx = 0; idx < paras.length; idx++) {
          const P = p.paragraph(idx).tokens;
          for (let init = 0; init < P.length; init++)
            for (let end = init; end < P.length; end++) {
              const b = kiltBleu(P.slice(init, end + 1), answer);
              if (want === null || b > want.bleu || (b === want.bleu && end - init < want.end - want.init)) want = { idx, init, end, bleu: b };
              if (want.bleu === 1) break search;
            }
        }
      const pt = p.paragraph(want!.idx);
      let a = want!.init;
      while (a < want!.end && pt.tokens[a] === "") a++;
      let b = want!.end;
      while (b > a && pt.tokens[b] === "") b--;
      expect([got.paragraph, got.start, got.end, got.bleu]).toEqual([want!.idx, pt.starts[a], pt.ends[b], want!.bleu]);
      checked++;
    }
    expect(checked).toBe(600);
  });
});

describe("SQuAD v1.1 dev answers mapped back onto the SQuAD pages", () => {
  const { records } = squadQuestionsToKilt(squad, { pages });
  const prepared = new Map(pages.map((p) => [p.wikipedia_id, new PreparedPage(p)]));
  const answers = records.flatMap((r) => r.output.map((o) => ({ answer: o.answer!, prov: o.provenance![0] })));

  it("with the page only (KILT's setting): the first occurrence, the gold paragraph for 82.4%", () => {
    let paragraph = 0;
    let exact = 0;
    const methods: Record<string, number> = {};
    const reasons: Record<string, number> = {};
    for (const { answer, prov } of answers) {
      const m = matchAnswer(answer, prepared.get(String(prov.wikipedia_id))!);
      if (!isMatch(m)) {
        reasons[m.reason] = (reasons[m.reason] ?? 0) + 1;
        continue;
      }
      methods[m.method] = (methods[m.method] ?? 0) + 1;
      if (m.paragraph === prov.start_paragraph_id) {
        paragraph++;
        if (m.start === prov.start_character && m.end === prov.end_character) exact++;
      }
    }
    expect(answers.length).toBe(18015);
    expect(methods).toEqual({ substring: 17749, token: 229, "substring-in-word": 34 });
    expect(reasons).toEqual({ "empty-text": 3 }); // three answers are "."
    expect(paragraph).toBe(14849);
    expect(exact).toBe(14324);
  });
});
