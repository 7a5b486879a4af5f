// The scoring seam of the postings search: what a posting's stored value scores, apart from how postings are
// decoded (./postings-reader.ts) and how MaxScore prunes (./maxscore.ts). As Lucene keeps its similarity
// (Similarity → SimScorer.score(freq, norm)) apart from its postings enums, and PISA's query algorithms
// take a scorer beside a cursor (docid, freq, max_score), the search takes per query term a TermScorer.
//
// A posting stores (doc, tf): for BM25 the term's frequency in the unit (./bm25-scorer.ts); for an impact
// index the quantized impact itself (./impact-scorer.ts: score = impact × query weight). The postings also
// store, per block and per term, the largest *impact* x of their postings: a query-independent value that
// a term's score grows with (BM25: x = tf × normInverse[norm]; impacts: x = the impact). A TermScorer turns
// that x into the bound MaxScore and block-max skipping need.
//
// The contract (test/retrieval/bm25/scorer.test.ts checks it for each implementation): a posting scores
// exactly bound(impact(tf, doc)), and bound never decreases as x grows and is never negative, so that the
// largest x of a block bounds its scores and the x of one posting is that posting's score (the score floor
// of ./maxscore.ts counts on both).

/**
 * A query term's scorer: a posting's score and the bound of postings whose impact is at most x. The
 * search calls both in its hot loops, so an implementation is a small class with a few fields (the call
 * sites stay monomorphic while one kind of index is searched, and V8 inlines them).
 */
export interface TermScorer {
  /** The score of a posting storing `tf` (a frequency or an impact) in unit `doc`; equal to bound(impact(tf, doc)). */
  score(tf: number, doc: number): number;
  /** The largest score of a posting whose impact is at most `x` (never negative; non-decreasing in x). */
  bound(x: number): number;
}

/**
 * How an index scores its postings: a posting's impact (what the writer's block bounds hold) and a
 * {@link TermScorer} per query term.
 */
export interface ScoringModel<S extends TermScorer = TermScorer> {
  /** The impact x of a posting storing `tf` in unit `doc` (query-independent: the block bounds are the largest x). */
  impact(tf: number, doc: number): number;
  /** The scorer of a query term of weight `weight` (≥ 0); `reuse`, when given, is reset to it instead of making one. */
  termScorer(weight: number, reuse?: S): S;
  /** True when bound(impact(tf, doc)) only bounds score(tf, doc) (BM25 at search-time k1 and b, ./search-params.ts): the score floor then comes from decoded scores only, not from a block bound. */
  readonly looseBounds?: boolean;
}
