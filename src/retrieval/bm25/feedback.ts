// Pseudo-relevance feedback over a BM25 index (the `feedback` search option; the `rm3` and `rocchio`
// stages set it): the first-stage BM25 search, each feedback unit's term counts by re-analysing the text
// the index indexed (its unit store's, with the index's analyzer: what Anserini reads from stored term
// vectors), the expansion (../feedback/expand.ts), and the expanded query searched as a weighted BM25
// query: one clause per term, w = boost × idf in float32 as Lucene's BoostQuery, the same pruned search.

import type { Hit } from "../types.js";
import type { UnitSource } from "../units/unit.js";
import { rm3Expansion, rocchioExpansion, type ExpandedTerm, type FeedbackCorpus, type FeedbackDoc } from "../feedback/expand.js";
import { checkFeedback, rm3Params, rocchioParams, type FeedbackSpec } from "../feedback/params.js";
import type { Bm25SearchParams } from "./search-params.js";
import type { Analyzer } from "./analyzer.js";
import type { Dictionary } from "./dictionary.js";
import type { QueryTerm } from "./maxscore.js";
import { idf, termWeight } from "./similarity.js";

/**
 * What feedback needs of a BM25 searcher: ./search.ts's `Bm25Searcher` is one. Named here, not imported, so
 * that the searcher's retriever can call feedback without an import cycle.
 */
export interface FeedbackSearcher {
  readonly analyzer: Analyzer;
  readonly dictionary: Dictionary;
  readonly docCount: number;
  readonly units: number;
  readonly params: { readonly title: boolean };
  search(query: string, k: number, params?: Bm25SearchParams): Hit[];
  searchTerms(terms: readonly QueryTerm[], k: number, params?: Bm25SearchParams): Hit[];
}

/** A string as the index stores it (lone surrogates replaced, as the build does). */
function wellFormed(s: string): string {
  return (s as unknown as { toWellFormed(): string }).toWellFormed();
}

/** The analysed query's terms in order, repeats kept (what Anserini's query vector counts). */
export function queryTokens(searcher: FeedbackSearcher, text: string): string[] {
  return searcher.analyzer.analyze(text).map(wellFormed);
}

/** What feedback keeps per open index between queries: document frequencies and units' term counts (bounded: a large index's are not all held). */
interface FeedbackCache {
  df: Map<string, number>;
  units: Map<number, Map<string, number>>;
}
const CACHED_TERMS = 1 << 18;
const CACHED_UNITS = 1 << 12;
const caches = new WeakMap<FeedbackSearcher, FeedbackCache>();

function cacheOf(searcher: FeedbackSearcher): FeedbackCache {
  let c = caches.get(searcher);
  if (c === undefined) caches.set(searcher, (c = { df: new Map(), units: new Map() }));
  return c;
}

/** `map` with `key` set, its oldest entry dropped once it holds `max`. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): V {
  if (map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
  return value;
}

/** A unit's term counts: the text the index indexed (`title + "\n" + text` when it indexes titles, as bm25IndexedText) re-analysed. */
function unitTerms(searcher: FeedbackSearcher, units: UnitSource, unit: number): Map<string, number> {
  const cache = cacheOf(searcher).units;
  const known = cache.get(unit);
  if (known !== undefined) return known;
  const u = units.get(unit);
  const text = searcher.params.title ? `${u.wikipedia_title}\n${u.text}` : u.text;
  const out = new Map<string, number>();
  for (const t of searcher.analyzer.analyze(text)) {
    const term = wellFormed(t);
    out.set(term, (out.get(term) ?? 0) + 1);
  }
  return remember(cache, unit, out, CACHED_UNITS);
}

/** The collection the filters read: the index's unit count and document frequencies. */
function corpusOf(searcher: FeedbackSearcher): FeedbackCorpus {
  const df = cacheOf(searcher).df;
  return {
    numDocs: searcher.units,
    docFreq: (term) => df.get(term) ?? remember(df, term, searcher.dictionary.lookup(term)?.docFreq ?? 0, CACHED_TERMS),
  };
}

/** The expanded query of `text` under `spec` (its first stage under `params`), best first. */
export function expandQuery(searcher: FeedbackSearcher, units: UnitSource, text: string, spec: FeedbackSpec, params?: Bm25SearchParams): ExpandedTerm[] {
  checkFeedback(spec);
  const tokens = queryTokens(searcher, text);
  const docs = (hits: readonly Hit[]): FeedbackDoc[] => hits.map((h) => ({ terms: unitTerms(searcher, units, h.unit), score: h.score }));
  if (spec.method === "rm3") {
    const p = rm3Params(spec);
    return rm3Expansion(tokens, docs(searcher.search(text, p.fbDocs, params)), corpusOf(searcher), p);
  }
  const p = rocchioParams(spec);
  const first = searcher.search(text, p.useNegative ? p.depth : p.topFbDocs, params);
  // Only the documents the expansion reads are re-analysed: the top, and with useNegative the tail.
  const wanted = p.useNegative ? new Set([...first.slice(0, p.topFbDocs), ...first.slice(Math.max(0, first.length - p.bottomFbDocs))].map((h) => h.unit)) : null;
  const ranked = first.map((h) => ({ terms: wanted === null || wanted.has(h.unit) ? unitTerms(searcher, units, h.unit) : new Map<string, number>(), score: h.score }));
  return rocchioExpansion(tokens, ranked, corpusOf(searcher), p);
}

/** The expanded terms the index has, as weighted query terms (w = boost × idf, float32). */
export function weightedTerms(searcher: FeedbackSearcher, terms: readonly ExpandedTerm[]): QueryTerm[] {
  const out: QueryTerm[] = [];
  for (const { term, weight } of terms) {
    if (!(weight > 0)) continue;
    const info = searcher.dictionary.lookup(term);
    if (info === null) continue;
    out.push({ term, info, weight: termWeight(weight, idf(info.docFreq, searcher.docCount)) });
  }
  return out;
}

/** Top k of the query expanded under `spec` (both searches under `params`). */
export function feedbackSearch(searcher: FeedbackSearcher, units: UnitSource, text: string, k: number, spec: FeedbackSpec, params?: Bm25SearchParams): Hit[] {
  const kk = Math.min(Math.floor(k), searcher.units);
  if (!(kk > 0)) return [];
  const terms = weightedTerms(searcher, expandQuery(searcher, units, text, spec, params));
  if (terms.length === 0) return [];
  return searcher.searchTerms(terms, kk, params);
}
