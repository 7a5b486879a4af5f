// nltk sentence_bleu semantics (clipping, brevity penalty, zero counts) and KILT's get_bleu weights,
// against values worked out by hand in the comments; fsum and the correctly rounded exp/log.

import { describe, expect, it } from "vitest";
import {
  BleuScorer,
  bleuFromCounts,
  brevityPenalty,
  closestRefLength,
  crExp,
  crLog,
  FLOAT_MIN,
  fsum,
  kiltBleu,
  kiltWeights,
  modifiedPrecision,
  sentenceBleu,
} from "../../src/mapping/bleu.js";

const t = (s: string) => s.split(" ");

// nltk's docstring sentences.
const hyp1 = t("It is a guide to action which ensures that the military always obeys the commands of the party");
const ref1 = t("It is a guide to action that ensures that the military will forever heed Party commands");
const ref2 = t("It is the guiding principle which guarantees the military forces always being under the command of the Party");
const ref3 = t("It is the practical guide for the army always to heed the directions of the party");

describe("modified precision and brevity penalty", () => {
  it("clips hypothesis counts by the reference counts", () => {
    // "the" ×7 against refs with at most 2 "the": 2/7 (nltk docstring 0.2857…).
    expect(modifiedPrecision([t("the cat is on the mat"), t("there is a cat on the mat")], t("the the the the the the the"), 1)).toEqual([2, 7]);
    // Bigrams of hyp1: 17, of which 10 occur in some reference (docstring: 0.5882352941176471 = 10/17).
    expect(modifiedPrecision([ref1, ref2, ref3], hyp1, 2)).toEqual([10, 17]);
    // No 5-grams in a 4-token hypothesis: numerator 0, denominator max(1, 0) = 1.
    expect(modifiedPrecision([t("a b c d")], t("a b c d"), 5)).toEqual([0, 1]);
  });

  it("uses the closest reference length, the shorter on ties", () => {
    expect(closestRefLength([t("a a a a a a a a a a a a a"), t("a a")], 12)).toBe(13);
    expect(closestRefLength([t("a a a a a a a a a a a a a"), t("a a a a a a a a a a a")], 12)).toBe(11);
  });

  it("penalizes hypotheses shorter than the reference: exp(1 - r/c)", () => {
    expect(brevityPenalty(12, 12)).toBe(1); // exp(0)
    expect(brevityPenalty(11, 12)).toBe(1); // c > r
    expect(brevityPenalty(28, 12)).toBe(0.2635971381157267); // exp(1 - 28/12) = exp(-4/3), nltk docstring
    expect(brevityPenalty(5, 0)).toBe(0);
  });
});

describe("sentenceBleu (nltk, no smoothing)", () => {
  it("is 1 for an identical sentence and 0 without a single unigram match", () => {
    expect(sentenceBleu([t("a b c d")], t("a b c d"))).toBe(1);
    expect(sentenceBleu([t("a b c d")], t("w x y z"))).toBe(0);
  });

  it("weights unigram precision only with weights [1]: 'the the the the' vs 'the cat the' = 2/4", () => {
    // p1 = min(4, 2)/4 = 0.5; c = 4 > r = 3 so BP = 1; exp(1 · ln 0.5) = 0.5.
    expect(sentenceBleu([t("the cat the")], t("the the the the"), [1])).toBe(0.5);
  });

  it("applies the brevity penalty alone when every n-gram matches: a b c d vs ref a b c d e", () => {
    // p1..p4 = 1, BP = exp(1 - 5/4) = exp(-0.25)
    expect(sentenceBleu([t("a b c d e")], t("a b c d"))).toBe(0.7788007830714049);
    expect(sentenceBleu([t("a b c d e")], t("a b c d"))).toBe(crExp(-0.25));
  });

  it("turns a zero count at a higher order into sys.float_info.min, not 0", () => {
    // a b c d vs ref a b x d: p1 = 3/4, p2 = 1/3 ("a b"), p3 = p4 = 0 → float_info.min; BP = 1.
    // 0.25·(ln 3/4 + ln 1/3) + 0.5·ln 2^-1022 = 0.25·ln(1/4) − 511·ln 2 = −511.5·ln 2 → 2^-511.5
    const v = sentenceBleu([t("a b x d")], t("a b c d"));
    expect(v).toBe(1.0547686614863434e-154); // CPython + this formula
    expect(v / (Math.SQRT2 * 2 ** -512)).toBeCloseTo(1, 12); // ln(2^-1022) ≈ −708.4 carries ~1e-13 rounding
    expect(v).toBeGreaterThan(0);
  });

  it("reproduces nltk's documented results", () => {
    expect(sentenceBleu([ref1, ref2, ref3], hyp1)).toBe(0.5045666840058485); // docstring 0.5045…
    expect(sentenceBleu([ref1], hyp1)).toBe(0.41180376356915777); // docstring 0.4118…
    expect(sentenceBleu([ref1, ref2, ref3], hyp1, [0.1666, 0.1666, 0.1666, 0.1666, 0.1666])).toBe(0.45838627164939455); // docstring, exact
  });
});

describe("KILT get_bleu", () => {
  it("uses BLEU-4 from 4 answer tokens and uniform 1/n weights below", () => {
    expect(kiltWeights(7)).toEqual([0.25, 0.25, 0.25, 0.25]);
    expect(kiltWeights(3)).toEqual([1 / 3, 1 / 3, 1 / 3]);
    expect(kiltWeights(1)).toEqual([1]);
  });

  it("takes the span as reference and the answer as hypothesis", () => {
    // answer "denver broncos" in span "denver broncos won": p1 = p2 = 1, c = 2 < r = 3: BP = exp(1 - 3/2) = exp(-0.5)
    expect(kiltBleu(t("denver broncos won"), t("denver broncos"))).toBe(0.6065306597126334);
    // span "broncos": p1 = 1/2, p2 = 0 → float_info.min, c = 2 > r = 1: BP 1; exp(0.5 ln 0.5 + 0.5 ln 2^-1022) = 2^-511.5
    expect(kiltBleu(t("broncos"), t("denver broncos"))).toBe(1.0547686614863434e-154);
    // reversed roles: span "denver broncos", answer "broncos" → p1 = 1, BP = exp(1 - 2/1)
    expect(kiltBleu(t("denver broncos"), t("broncos"))).toBe(crExp(-1));
  });

  it("drops empty tokens from both sides before counting", () => {
    expect(kiltBleu(["denver", "", "broncos"], ["denver", "broncos"])).toBe(1);
    expect(kiltBleu(["a"], ["", " "])).toBe(0);
  });
});

describe("BleuScorer and bleuFromCounts", () => {
  it("give the same value as sentenceBleu from the counts", () => {
    const hyp = t("a b c d e f");
    const ref = t("a b c x e f a b");
    const weights = kiltWeights(hyp.length);
    const m: number[] = [];
    const tot: number[] = [];
    for (let n = 1; n <= 4; n++) {
      const [num] = modifiedPrecision([ref], hyp, n);
      m.push(num);
      tot.push(hyp.length - n + 1);
    }
    expect(m).toEqual([5, 3, 1, 0]); // d is missing; "a b", "b c", "e f"; "a b c"
    const direct = sentenceBleu([ref], hyp, weights);
    expect(bleuFromCounts(m, tot, hyp.length, ref.length, weights)).toBe(direct);
    expect(new BleuScorer(hyp.length, tot, weights).score(m, ref.length)).toBe(direct);
  });
});

describe("fsum, crExp, crLog", () => {
  it("sums exactly (CPython's math.fsum)", () => {
    expect(fsum([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])).toBe(1);
    expect(fsum([1e16, 1, 1e-16])).toBe(10000000000000002);
    expect(fsum([1e100, 1, -1e100, 1e-100, 1e50, -1, -1e50])).toBe(1e-100);
    expect(fsum([])).toBe(0);
  });

  it("rounds exp and log correctly where V8's Math functions are off by one ulp", () => {
    // True values (60-digit decimal): ln(0.839622641509434) = -0.174802724379927263…, e^-0.25 = 0.778800783071404868…
    expect(crLog(0.839622641509434)).toBe(-0.17480272437992725);
    expect(crLog(2)).toBe(Math.LN2);
    expect(crLog(FLOAT_MIN)).toBe(-708.3964185322641);
    expect(crLog(1)).toBe(0);
    expect(crExp(1)).toBe(Math.E);
    expect(crExp(0)).toBe(1);
    expect(crExp(-0.9884222745895386)).toBe(0.3721633997203135);
  });
});
