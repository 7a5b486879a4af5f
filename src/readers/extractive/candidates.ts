// Candidate answer spans for the extractive reader: every run of 1..maxWords tokens inside one
// sentence of a passage, pruned: no span starts or ends with a stop word (numbers excepted) or
// punctuation, none crosses brackets, quotes or sentence-internal stops, and none is made only of
// question words. Each sentence also carries how much it overlaps the question (used as features).

import type { ReaderPassage } from "../types.js";
import type { QuestionInfo } from "./question.js";
import { analyzeCached, idfWeights, type Analysis, type Token } from "./text.js";

/** A passage sentence that candidate spans come from. */
export interface SentenceContext {
  /** Index of the passage in the reader's input. */
  passage: number;
  analysis: Analysis;
  /** Token range [first, last] of the sentence in `analysis`. */
  first: number;
  last: number;
  /** Distinct question content stems present in the sentence. */
  matched: Set<string>;
  /** Token positions whose stem is a question content stem. */
  matchPositions: number[];
  /** Question bigrams present in the sentence. */
  bigramHits: number;
  /** Sum of IDF of matched question stems over the sum for all question stems (0..1). */
  idfOverlap: number;
  /** Rank of the sentence by `idfOverlap` among all sentences for the question (0 = best). */
  rank: number;
}

/** A candidate answer span: a token range in one sentence. */
export interface Candidate {
  /** Index into the sentence contexts. */
  sentence: number;
  /** Token range [first, last] inclusive in the sentence's analysis. */
  first: number;
  last: number;
}

/** The candidate spans of one question over its passages, with the sentences they come from and the question stems' IDF. */
export interface CandidateSet {
  sentences: SentenceContext[];
  candidates: Candidate[];
  /** IDF of each question content stem over the sentences, and their sum. */
  idf: Map<string, number>;
  idfTotal: number;
}

/** How candidate spans are generated. */
export interface CandidateOptions {
  /** Longest span in tokens (default 8). */
  maxWords?: number;
}

/** Tokens a span may not contain: they end clauses or open/close brackets and quotes. */
const BREAKS = new Set([".", "!", "?", ";", ":", "(", ")", "[", "]", "{", "}", '"', "“", "”", "…"]);

function canEdge(t: Token): boolean {
  if (t.punct) return false;
  return !t.stop || t.pos === "NUM" || t.digit;
}

function inQuestion(t: Token, q: QuestionInfo): boolean {
  return t.punct || q.words.has(t.lower) || (!t.stop && q.stems.has(t.stem));
}

/** Sentence contexts of the passages, with question overlap and IDF-weighted overlap. */
export function sentenceContexts(
  q: QuestionInfo,
  passages: readonly ReaderPassage[],
): { sentences: SentenceContext[]; idf: Map<string, number>; idfTotal: number } {
  const out: SentenceContext[] = [];
  passages.forEach((p, pi) => {
    const a = analyzeCached(p.text);
    for (const [first, last] of a.sentences) {
      const matched = new Set<string>();
      const matchPositions: number[] = [];
      let bigramHits = 0;
      let prev = "";
      for (let i = first; i <= last; i++) {
        const t = a.tokens[i];
        if (t.punct) {
          prev = "";
          continue;
        }
        if (!t.stop && q.stems.has(t.stem)) {
          matched.add(t.stem);
          matchPositions.push(i);
        }
        if (prev !== "" && q.bigrams.has(`${prev} ${t.stem}`)) bigramHits++;
        prev = t.stem;
      }
      out.push({ passage: pi, analysis: a, first, last, matched, matchPositions, bigramHits, idfOverlap: 0, rank: 0 });
    }
  });
  const { idf, total } = idfWeights(q.stems, out.map((c) => c.matched));
  for (const c of out) {
    let sum = 0;
    for (const s of c.matched) sum += idf.get(s) ?? 0;
    c.idfOverlap = total > 0 ? sum / total : 0;
  }
  const order = out.map((_, i) => i).sort((x, y) => out[y].idfOverlap - out[x].idfOverlap || x - y);
  order.forEach((si, r) => (out[si].rank = r));
  return { sentences: out, idf, idfTotal: total };
}

/** All pruned candidate spans of the passages for a question. */
export function generateCandidates(q: QuestionInfo, passages: readonly ReaderPassage[], options: CandidateOptions = {}): CandidateSet {
  const maxWords = options.maxWords ?? 8;
  const { sentences, idf, idfTotal } = sentenceContexts(q, passages);
  const candidates: Candidate[] = [];
  sentences.forEach((s, si) => {
    const toks = s.analysis.tokens;
    for (let f = s.first; f <= s.last; f++) {
      if (!canEdge(toks[f])) continue;
      let allInQuestion = true;
      for (let l = f; l <= s.last && l - f < maxWords; l++) {
        const t = toks[l];
        if (BREAKS.has(t.text)) break;
        if (!inQuestion(t, q)) allInQuestion = false;
        if (!canEdge(t) || allInQuestion) continue;
        candidates.push({ sentence: si, first: f, last: l });
      }
    }
  });
  return { sentences, candidates, idf, idfTotal };
}

/** The text of a candidate exactly as the passage writes it, and its UTF-16 offsets in the passage. */
export function candidateText(set: CandidateSet, c: Candidate): { text: string; start: number; end: number } {
  const a = set.sentences[c.sentence].analysis;
  const start = a.tokens[c.first].start;
  const end = a.tokens[c.last].end;
  return { text: a.text.slice(start, end), start, end };
}
