// Candidate spans and their features for a real SQuAD question and paragraph.
import { describe, expect, test } from "vitest";
import { candidateText, generateCandidates } from "../../../src/readers/extractive/candidates.js";
import { FEATURE_COUNT, FEATURE_NAMES, featureMatrix, spanType } from "../../../src/readers/extractive/features.js";
import { analyzeQuestion } from "../../../src/readers/extractive/question.js";
import { analyze } from "../../../src/readers/extractive/text.js";
import { pageParagraphPassages } from "../../../src/readers/extractive/squad-data.js";
import { squad } from "../helpers.js";

function setup() {
  const passage = pageParagraphPassages(squad().pages[0])[0];
  const q = analyzeQuestion(squad().records[0].input as string);
  return { passage, q, set: generateCandidates(q, [passage]) };
}

describe("candidates", () => {
  test("count, first spans and the gold span for 'Which NFL team represented the AFC at Super Bowl 50?'", () => {
    const { set } = setup();
    expect(set.candidates.length).toBe(248);
    expect(set.sentences.length).toBe(4);
    expect(set.candidates.slice(0, 3).map((c) => candidateText(set, c).text)).toEqual([
      "Super Bowl 50 was an American",
      "Super Bowl 50 was an American football",
      "Super Bowl 50 was an American football game",
    ]);
    const gold = set.candidates.find((c) => candidateText(set, c).text === "Denver Broncos");
    expect(gold).toEqual({ sentence: 1, first: 33, last: 34 });
    expect(candidateText(set, gold!)).toEqual({ text: "Denver Broncos", start: 177, end: 191 });
  });

  test("pruning: edges are content words or numbers, no clause breaks, never only question words", () => {
    const { set, q } = setup();
    for (const c of set.candidates) {
      const toks = set.sentences[c.sentence].analysis.tokens;
      for (const t of [toks[c.first], toks[c.last]]) {
        expect(t.punct).toBe(false);
        expect(!t.stop || t.pos === "NUM" || t.digit).toBe(true);
      }
      expect(c.last - c.first).toBeLessThan(8);
      const inside = toks.slice(c.first, c.last + 1);
      expect(inside.some((t) => [".", "(", ")", ";", "?", "!"].includes(t.text))).toBe(false);
      expect(inside.every((t) => t.punct || q.words.has(t.lower) || (!t.stop && q.stems.has(t.stem)))).toBe(false);
    }
    const texts = set.candidates.map((c) => candidateText(set, c).text);
    expect(texts).not.toContain("Super Bowl 50");
    expect(texts).not.toContain("AFC");
    expect(new Set(texts).size).toBeLessThanOrEqual(texts.length);
  });

  test("maxWords limits span length", () => {
    const { passage, q } = setup();
    const set = generateCandidates(q, [passage], { maxWords: 2 });
    expect(set.candidates.length).toBe(97);
    expect(set.candidates.every((c) => c.last - c.first < 2)).toBe(true);
  });
});

describe("features", () => {
  test("the gold span's non-zero features", () => {
    const { passage, q, set } = setup();
    const i = set.candidates.findIndex((c) => candidateText(set, c).text === "Denver Broncos");
    const m = featureMatrix(q, [passage], set);
    expect(m.length).toBe(set.candidates.length * FEATURE_COUNT);
    const row = m.subarray(i * FEATURE_COUNT, (i + 1) * FEATURE_COUNT);
    const nonZero = Object.fromEntries(FEATURE_NAMES.flatMap((n, j) => (row[j] !== 0 ? [[n, row[j]]] : [])));
    expect(nonZero).toEqual({
      passage_recip_rank: 1,
      passage_is_top: 1,
      sent_overlap_frac: 3 / 7,
      sent_idf_overlap: nonZero.sent_idf_overlap,
      sent_bigram_hits: Math.log(2),
      sent_recip_rank: 0.5,
      sent_position: 0.5,
      dist_nearest: 1 / 3,
      dist_avg: Math.log1p(14),
      window3_overlap: 1 / 7,
      window6_overlap: 1 / 7,
      window6_idf_overlap: nonZero.window6_idf_overlap,
      span_position: 8 / 31,
      span_cap_frac: 1,
      span_all_cap: 1,
      len_2: 1,
      first_PROPN: 1,
      last_PROPN: 1,
      left_OTHER: 1,
      right_VERB: 1,
      q_which_x_proper: 1,
      q_which_x_len2: 1,
      q_which_x_last_PROPN: 1,
    });
    expect(nonZero.sent_idf_overlap).toBeCloseTo(0.22772100373064164, 12);
    expect(nonZero.window6_idf_overlap).toBeCloseTo(0.14299621893611428, 12);
  });

  test("span types", () => {
    const a = analyze("On February 7, 2016, the Denver Broncos won 24 games worth $5 million in Santa Clara.");
    const span = (text: string) => {
      const f = a.tokens.findIndex((t) => t.text === text.split(" ")[0]);
      return spanType(a.tokens, f, f + text.split(" ").length - 1);
    };
    expect(span("February 7")).toBe("date");
    expect(span("Denver Broncos")).toBe("proper");
    expect(span("24")).toBe("number");
    expect(span("games")).toBe("noun");
    expect(span("won")).toBe("other");
  });
});
