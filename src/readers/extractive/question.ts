// Question analysis for the extractive reader: content stems, bigrams, and the expected answer type
// read off the question words (who → person, when → date, how many → number, where → location, …).

import { analyzeCached, type Analysis } from "./text.js";

/** Expected answer types, in feature order. */
export const QUESTION_TYPES = [
  "who",
  "when",
  "where",
  "why",
  "how_many",
  "how_much",
  "how_long",
  "how_other",
  "what_year",
  "which",
  "what",
  "other",
] as const;
/** The question types the reader distinguishes (from the wh-word and its head). */
export type QuestionType = (typeof QUESTION_TYPES)[number];

/** A question analysed once for candidate generation and features: type, content stems, bigrams and entities. */
export interface QuestionInfo {
  text: string;
  analysis: Analysis;
  type: QuestionType;
  /** Distinct content stems. */
  stems: Set<string>;
  /** Content-stem bigrams ("a b"), over consecutive non-punctuation tokens. */
  bigrams: Set<string>;
  /** All lower-cased word tokens (stop words included), to tell spans made only of question words. */
  words: Set<string>;
}

const YEARISH = /^(year|date|day|month|century|decade|time|era|period)s?$/;

/** The expected answer type of a question, from its first question word and the word after it. */
export function questionType(a: Analysis): QuestionType {
  const words = a.tokens.filter((t) => !t.punct).map((t) => t.lower);
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    const next = words[i + 1] ?? "";
    switch (w) {
      case "who":
      case "whom":
      case "whose":
        return "who";
      case "when":
        return "when";
      case "where":
        return "where";
      case "why":
        return "why";
      case "how":
        if (next === "many") return "how_many";
        if (next === "much") return "how_much";
        if (next === "long" || next === "old") return "how_long";
        return "how_other";
      case "which":
      case "what":
        if (YEARISH.test(next) || (next !== "" && YEARISH.test(words[i + 2] ?? "") && words[i + 1] === "the")) return "what_year";
        return w === "which" ? "which" : "what";
      default:
    }
  }
  return "other";
}

/** Analyses a question (memoized analysis). */
export function analyzeQuestion(text: string): QuestionInfo {
  const analysis = analyzeCached(text);
  const stems = new Set<string>();
  const bigrams = new Set<string>();
  const words = new Set<string>();
  let prev = "";
  for (const t of analysis.tokens) {
    if (t.punct) {
      prev = "";
      continue;
    }
    words.add(t.lower);
    if (!t.stop) stems.add(t.stem);
    if (prev !== "") bigrams.add(`${prev} ${t.stem}`);
    prev = t.stem;
  }
  return { text, analysis, type: questionType(analysis), stems, bigrams, words };
}
