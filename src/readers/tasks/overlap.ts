// Sentence-level evidence search shared by the task readers: the sentences of the passages ranked by
// IDF-weighted overlap of content stems with a query (IDF over those sentences), ties broken by
// passage, then sentence order.

import { cpLength } from "../../knowledge/codepoints.js";
import { analyzeCached, idfWeights, stemSet, type Analysis } from "../extractive/text.js";
import type { ReaderPassage } from "../types.js";

/** A passage sentence scored by its overlap with a query. */
export interface ScoredSentence {
  passage: number;
  /** Sentence number within its passage. */
  sentence: number;
  text: string;
  /** Code-point offsets of the sentence in the passage text. */
  start: number;
  end: number;
  /** IDF-weighted share of the query's content stems the sentence contains (0..1). */
  score: number;
  /** Distinct query content stems found. */
  matched: number;
  analysis: Analysis;
  first: number;
  last: number;
}

/** Every sentence of the passages, scored against `query` (extra weighted queries add to the score). */
export function rankSentences(
  query: string,
  passages: readonly ReaderPassage[],
  extra: readonly { text: string; weight: number }[] = [],
): ScoredSentence[] {
  const out: ScoredSentence[] = [];
  const stems: Set<string>[] = [];
  passages.forEach((p, pi) => {
    const a = analyzeCached(p.text);
    a.sentences.forEach(([first, last], si) => {
      const set = new Set<string>();
      for (let i = first; i <= last; i++) if (!a.tokens[i].stop && !a.tokens[i].punct) set.add(a.tokens[i].stem);
      stems.push(set);
      const s0 = a.tokens[first].start;
      const s1 = a.tokens[last].end;
      const start = cpLength(p.text.slice(0, s0));
      const text = p.text.slice(s0, s1);
      out.push({ passage: pi, sentence: si, text, start, end: start + cpLength(text), score: 0, matched: 0, analysis: a, first, last });
    });
  });
  const queries = [{ text: query, weight: 1 }, ...extra];
  let totalWeight = 0;
  for (const q of queries) {
    const qs = stemSet(q.text);
    const { idf, total } = idfWeights(qs, stems);
    if (total <= 0) continue;
    totalWeight += q.weight;
    out.forEach((o, i) => {
      let sum = 0;
      let m = 0;
      for (const s of qs)
        if (stems[i].has(s)) {
          sum += idf.get(s) ?? 0;
          m++;
        }
      o.score += (q.weight * sum) / total;
      if (q === queries[0]) o.matched = m;
    });
  }
  if (totalWeight > 0) for (const o of out) o.score /= totalWeight;
  return out
    .map((o, i) => ({ o, i }))
    .sort((a, b) => b.o.score - a.o.score || a.i - b.i)
    .map(({ o }) => o);
}
