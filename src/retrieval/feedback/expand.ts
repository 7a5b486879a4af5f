// The expansions of pseudo-relevance feedback, as Anserini computes them (Rm3Reranker, RocchioReranker,
// FeatureVector), in the same float32 and float64 steps (Math.fround where Java rounds to float):
//
// RM3. A feedback document's vector: its terms (re-analysed from its text, as Anserini reads stored term
// vectors) of 2 to 20 characters, of [a-z0-9] only (filterTerms), in at most 10% of the documents, with
// their counts, pruned to its fbTerms largest. A term's relevance weight: Σ over the feedback documents of
// tf / |d| × the document's first-stage BM25 score (|d| the pruned vector's L1 norm; Anserini's query
// likelihood is that raw score: any common scale drops out in the L1 normalisation). The fbTerms largest
// are kept, L1-normalised, and interpolated with the query's L1-normalised term counts:
// w = λ·q + (1 − λ)·rm, λ = originalQueryWeight (λ·q rounded to float32 first, as Java multiplies two floats).
//
// Rocchio. A document's vector: the same terms (no [a-z0-9] filter) and counts, L2-normalised; the mean of
// the top topFbDocs documents' (and with useNegative of the last bottomFbDocs'), pruned to topFbTerms
// (bottomFbTerms) and L2-normalised; w = α·q + β·mean(top) − γ·mean(bottom) over the L2-normalised query
// counts, terms of w ≤ 0 dropped.
//
// Ties among equal weights in a pruning go to the lower term (Java's String.compareTo: UTF-16 order). The
// terms come back best first; their weights are the boosts of the expanded BM25 query (w = boost × idf).

import type { Rm3Params, RocchioParams } from "./params.js";
import { rm3Params, rocchioParams } from "./params.js";

const f = Math.fround;

/** What the filters ask of the collection. */
export interface FeedbackCorpus {
  /** Documents in the index (Lucene's numDocs). */
  readonly numDocs: number;
  /** The term's document frequency (0 when the index lacks it). */
  docFreq(term: string): number;
}

/** One feedback document: its analysed terms with their counts, and its first-stage score. */
export interface FeedbackDoc {
  terms: ReadonlyMap<string, number>;
  score: number;
}

/** One term of an expanded query and its weight (the boost of its BM25 clause). */
export interface ExpandedTerm {
  term: string;
  weight: number;
}

/** term → float32 value (FeatureVector's map). */
type Vec = Map<string, number>;

/** Value descending, ties by term ascending (FeatureVector's VALUE_DESCENDING order). */
function ordered(v: Vec): [string, number][] {
  return [...v].sort((a, b) => (a[1] === b[1] ? (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) : a[1] > b[1] ? -1 : 1));
}

/** FeatureVector.pruneToSize: the k largest. */
function prune(v: Vec, k: number): Vec {
  return new Map(ordered(v).slice(0, k));
}

/** Σ |v| in float64 (in term order: Java's order is its hash map's; the sum of a few floats in float64 is the same to float32). */
function l1(v: Vec): number {
  let s = 0;
  for (const t of [...v.keys()].sort()) s += Math.abs(v.get(t)!);
  return s;
}

function l2(v: Vec): number {
  let s = 0;
  for (const t of [...v.keys()].sort()) s += v.get(t)! ** 2;
  return Math.sqrt(s);
}

/** FeatureVector.scaleToUnitL1Norm / L2Norm: each value / the norm (float64), to float32. */
function scaled(v: Vec, norm: number): Vec {
  const out: Vec = new Map();
  for (const [t, x] of v) out.set(t, f(x / norm));
  return out;
}

/** FeatureVector.fromTerms: each token counts 1. */
function counts(tokens: readonly string[]): Vec {
  const v: Vec = new Map();
  for (const t of tokens) v.set(t, f((v.get(t) ?? 0) + 1));
  return v;
}

/** The document's terms the filters keep, with their counts: 2 to 20 code units, [a-z0-9] when `alnum`, document frequency at most 10%. */
function docVector(doc: FeedbackDoc, corpus: FeedbackCorpus, alnum: boolean, df: Map<string, number>): Vec {
  const v: Vec = new Map();
  const numDocs = f(corpus.numDocs);
  for (const [term, tf] of doc.terms) {
    if (term.length < 2 || term.length > 20) continue;
    if (alnum && !/^[a-z0-9]+$/u.test(term)) continue;
    let n = df.get(term);
    if (n === undefined) df.set(term, (n = corpus.docFreq(term)));
    if (f(f(n) / numDocs) > f(0.1)) continue;
    v.set(term, f(tf));
  }
  return v;
}

function best(v: Vec): ExpandedTerm[] {
  return ordered(v).map(([term, weight]) => ({ term, weight }));
}

/** RM3's expanded query for `queryTokens` (the analysed query, repeats kept) from the feedback documents, best first (see the module comment). */
export function rm3Expansion(queryTokens: readonly string[], docs: readonly FeedbackDoc[], corpus: FeedbackCorpus, params: Rm3Params = {}): ExpandedTerm[] {
  const p = rm3Params(params);
  const q = counts(queryTokens);
  const qfv = scaled(q, l1(q));
  const df = new Map<string, number>();
  const vectors: Vec[] = [];
  const scores: number[] = [];
  for (const d of docs.slice(0, p.fbDocs)) {
    vectors.push(prune(docVector(d, corpus, p.filterTerms, df), p.fbTerms));
    scores.push(f(d.score));
  }
  const norms = vectors.map((v) => f(l1(v)));
  const vocab = new Set<string>();
  for (const v of vectors) for (const t of v.keys()) vocab.add(t);
  let rm: Vec = new Map();
  for (const term of vocab) {
    let w = 0;
    for (let i = 0; i < vectors.length; i++) {
      // zero-length feedback documents (every term filtered) are passed over, as Anserini does
      if (norms[i] > f(0.001)) w = f(w + f(f((vectors[i].get(term) ?? 0) / norms[i]) * scores[i]));
    }
    rm.set(term, w);
  }
  rm = prune(rm, p.fbTerms);
  rm = scaled(rm, l1(rm));
  // FeatureVector.interpolate: (float)(λ × q + (1.0 − λ) × rm), λ × q a float product (both floats), the rest in float64
  const lambda = f(p.originalQueryWeight);
  const out: Vec = new Map();
  for (const t of new Set([...qfv.keys(), ...rm.keys()])) out.set(t, f(f(lambda * (qfv.get(t) ?? 0)) + (1 - lambda) * (rm.get(t) ?? 0)));
  return best(out);
}

/** The mean of the documents' L2-normalised vectors, pruned to `terms`, L2-normalised. */
function meanVector(docs: readonly FeedbackDoc[], corpus: FeedbackCorpus, terms: number, df: Map<string, number>): Vec {
  const vectors = docs.map((d) => docVector(d, corpus, false, df));
  const norms = vectors.map((v) => f(l2(v)));
  const vocab = new Set<string>();
  for (const v of vectors) for (const t of v.keys()) vocab.add(t);
  let mean: Vec = new Map();
  for (const term of vocab) {
    let w = 0;
    for (let i = 0; i < vectors.length; i++) if (norms[i] > f(0.001)) w = f(w + f((vectors[i].get(term) ?? 0) / norms[i]));
    mean.set(term, f(w / vectors.length));
  }
  mean = prune(mean, terms);
  return scaled(mean, l2(mean));
}

/**
 * Rocchio's expanded query for `queryTokens` from the first-stage list `ranked` (best first: its top
 * topFbDocs are the relevant documents, with useNegative its last bottomFbDocs the non-relevant), best first.
 */
export function rocchioExpansion(queryTokens: readonly string[], ranked: readonly FeedbackDoc[], corpus: FeedbackCorpus, params: RocchioParams = {}): ExpandedTerm[] {
  const p = rocchioParams(params);
  const q = counts(queryTokens);
  const qv = scaled(q, l2(q));
  const df = new Map<string, number>();
  const top = meanVector(ranked.slice(0, p.topFbDocs), corpus, p.topFbTerms, df);
  const bottomDocs = p.useNegative ? ranked.slice(Math.max(0, ranked.length - p.bottomFbDocs)).reverse() : [];
  const bottom = p.useNegative ? meanVector(bottomDocs, corpus, p.bottomFbTerms, df) : new Map<string, number>();
  const [alpha, beta, gamma] = [f(p.alpha), f(p.beta), f(p.useNegative ? p.gamma : 0)];
  const out: Vec = new Map();
  for (const t of new Set([...qv.keys(), ...top.keys(), ...bottom.keys()])) {
    const w = f(f(f(alpha * (qv.get(t) ?? 0)) + f(beta * (top.get(t) ?? 0))) - f(gamma * (bottom.get(t) ?? 0)));
    if (w > 0) out.set(t, w);
  }
  return best(out);
}
