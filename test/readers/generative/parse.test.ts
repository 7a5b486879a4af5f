import { describe, expect, it } from "vitest";
import { cleanAnswer, factLabel, parseCitations, stripCitations, stripReasoning, wikiTitle } from "../../../src/readers/generative/parse.js";

describe("parseCitations", () => {
  it("reads the citation forms models write, in first-cited order, each once", () => {
    expect(parseCitations("Denver Broncos [2]", 3)).toEqual({ cited: [2], invalid: [] });
    expect(parseCitations("Denver Broncos [3][1]", 3)).toEqual({ cited: [3, 1], invalid: [] });
    expect(parseCitations("Denver Broncos [1, 3] and later [3]", 3)).toEqual({ cited: [1, 3], invalid: [] });
    expect(parseCitations("x [2; 1]", 3)).toEqual({ cited: [2, 1], invalid: [] });
    expect(parseCitations("x [2-4]", 5)).toEqual({ cited: [2, 3, 4], invalid: [] });
    expect(parseCitations("x [4–2]", 5)).toEqual({ cited: [4, 2], invalid: [] });
    expect(parseCitations("x [Passage 2] and [passages 1 and 3]", 3)).toEqual({ cited: [2, 1, 3], invalid: [] });
    expect(parseCitations("x [#2], [Source 1]", 3)).toEqual({ cited: [2, 1], invalid: [] });
  });

  it("keeps numbers that name no passage apart", () => {
    expect(parseCitations("x [0] [4] [2] [4]", 3)).toEqual({ cited: [2], invalid: [0, 4] });
    expect(parseCitations("closed book [1]", 0)).toEqual({ cited: [], invalid: [1] });
  });

  it("ignores brackets that are not citations", () => {
    expect(parseCitations("Super Bowl [L] in [2016 season]", 3)).toEqual({ cited: [], invalid: [] });
    expect(parseCitations("see [1a]", 3)).toEqual({ cited: [], invalid: [] });
  });
});

describe("stripCitations, stripReasoning", () => {
  it("removes markers and think blocks only", () => {
    expect(stripCitations("Broncos [1][2], then [Passage 3].")).toBe("Broncos , then .");
    expect(stripReasoning("<think>the AFC champion…</think>\nDenver Broncos")).toBe("\nDenver Broncos");
    expect(stripReasoning("reasoning without an opening tag</think>Denver")).toBe("Denver");
  });
});

describe("cleanAnswer", () => {
  const qa = (s: string) => cleanAnswer(s, "qa").answer;

  it("strips prefixes, quotes, emphasis, citations and a lone final period from short answers", () => {
    expect(qa("Denver Broncos [2]")).toBe("Denver Broncos");
    expect(qa("Answer: \"Denver Broncos\" [1]")).toBe("Denver Broncos");
    expect(qa("**Denver Broncos**.")).toBe("Denver Broncos");
    expect(qa("Final answer: “Santa Clara, California” [1][3].")).toBe("Santa Clara, California");
    expect(qa("Washington, D.C. [1]")).toBe("Washington, D.C.");
    expect(qa("  'Levi's Stadium'  ")).toBe("Levi's Stadium");
    expect(qa("`24–10`")).toBe("24–10");
  });

  it("keeps the first line of a short answer and drops a Sources line", () => {
    expect(qa("Sources: [1]\nDenver Broncos\nThey beat the Panthers.")).toBe("Denver Broncos");
    expect(qa("<think>\nAFC means…\n</think>\n\nAnswer: Denver Broncos [2]")).toBe("Denver Broncos");
    expect(qa("")).toBe("");
  });

  it("keeps every line of long answers, tidying spaces left by citations", () => {
    expect(cleanAnswer("Answer: Futures contracts [1] let traders lock a price [2].\nThe Dukes lost [3] .", "long-qa").answer).toBe(
      "Futures contracts let traders lock a price.\nThe Dukes lost.",
    );
    expect(cleanAnswer("Assistant: Tears for Fears formed in 1981 [1], in Bath.", "dialogue").answer).toBe(
      "Tears for Fears formed in 1981, in Bath.",
    );
  });

  it("turns fact-checking replies into KILT labels", () => {
    expect(cleanAnswer("SUPPORTS [1]", "fact-checking")).toEqual({ answer: "SUPPORTS", labelled: true });
    expect(cleanAnswer("Verdict: refutes.", "fact-checking")).toEqual({ answer: "REFUTES", labelled: true });
    expect(cleanAnswer("The claim is not supported by [2].", "fact-checking")).toEqual({ answer: "REFUTES", labelled: true });
    expect(cleanAnswer("I cannot tell", "fact-checking")).toEqual({ answer: "I cannot tell", labelled: false });
  });
});

describe("factLabel", () => {
  it("takes the first word that names a verdict, flipping negations", () => {
    expect(factLabel("True")).toBe("SUPPORTS");
    expect(factLabel("false, it is Spanish-language")).toBe("REFUTES");
    expect(factLabel("It isn't true")).toBe("REFUTES");
    expect(factLabel("never refuted")).toBe("SUPPORTS");
    expect(factLabel("No.")).toBe("REFUTES");
    expect(factLabel("Supported by passage 1")).toBe("SUPPORTS");
    expect(factLabel("unsupportive")).toBeUndefined();
  });
});

describe("wikiTitle", () => {
  it("turns links, URLs and underscores into KILT titles", () => {
    expect(wikiTitle("Sculcoates")).toBe("Sculcoates");
    expect(wikiTitle("[[Hull Kingston Rovers]]")).toBe("Hull Kingston Rovers");
    expect(wikiTitle("[[Hull_Kingston_Rovers|Hull KR]]")).toBe("Hull Kingston Rovers");
    expect(wikiTitle("https://en.wikipedia.org/wiki/Soul_Food_%28film%29")).toBe("Soul Food (film)");
    expect(wikiTitle("See <https://en.wikipedia.org/wiki/Sculcoates>")).toBe("Sculcoates");
    expect(wikiTitle("https://en.wikipedia.org/wiki/100%_bad")).toBe("100% bad");
  });

  it("is applied to entity-linking answers only", () => {
    expect(cleanAnswer("Wikipedia title: [[Sculcoates]] [2]", "entity-linking").answer).toBe("Sculcoates");
    expect(cleanAnswer("New_York", "qa").answer).toBe("New_York");
  });
});
