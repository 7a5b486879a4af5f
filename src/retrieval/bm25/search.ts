// BM25 search over the on-disk format (./format.ts): query terms analyzed like the units and weighted by
// how often they occur (Pyserini's bag of words: OR semantics, boost = count), scored exactly as Lucene
// 8.7 scores (./bm25-scorer.ts, behind the scoring seam ./scorer.ts), ranked with MaxScore dynamic pruning
// (./maxscore.ts), so results equal exhaustive scoring,
// ties going to the lower unit. A batch is searched on the calling thread: SearchPool (../pool.ts) spreads
// batches over the cores.
// Postings are read with positional reads, a term's skip entries first and then only the 64 KB windows
// holding blocks the search visits, and decoded a block at a time.

import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { readManifest } from "../manifest.js";
import type { Hit, IndexManifest, Retriever } from "../types.js";
import { queryText, type QueryInput, type SearchOptions } from "../query.js";
import { UnitStore } from "../units/store.js";
import { getAnalyzer, type Analyzer, type AnalyzerName } from "./analyzer.js";
import { Dictionary, type TermInfo } from "./dictionary.js";
import { FILES, readNorms } from "./format.js";
import { PostingCursor, postingsAt } from "./postings-reader.js";
import { checkBm25Files } from "./check.js";
import { maxScoreScratch, maxScoreSearch, type MaxScoreScratch, type QueryTerm, type SearchStats } from "./maxscore.js";
import { TopK } from "./top-k.js";
import { Bm25Scoring } from "./bm25-scorer.js";
import { checkBm25Params, RescaledBm25Scoring, type Bm25SearchParams } from "./search-params.js";
import type { ScoringModel } from "./scorer.js";
import { expandQuery, feedbackSearch } from "./feedback.js";
import type { ExpandedTerm } from "../feedback/expand.js";
import type { FeedbackSpec } from "../feedback/params.js";

export type { QueryTerm, SearchStats };
import { averageLength, idf, normInverseCache, scoreOf, termWeight, tfNorm } from "./similarity.js";

const f = Math.fround;

/** The statistics and parameters a BM25 index's manifest records. */
export interface Bm25IndexParams {
  k1: number;
  b: number;
  analyzer: AnalyzerName;
  title: boolean;
  buildId: string;
  docCount: number;
  sumTotalTermFreq: number;
  terms: number;
  postings: number;
}

/** A BM25 index opened for search: the term index and norms in memory, postings read per query. */
export class Bm25Searcher {
  readonly analyzer: Analyzer;
  readonly docCount: number;
  readonly avgdl: number;
  readonly normInverse: Float32Array;
  readonly norms: Uint8Array;
  /** @internal The on-disk term dictionary (format internals). */
  readonly dictionary: Dictionary;
  readonly params: Bm25IndexParams;
  readonly units: number;
  readonly stats: SearchStats = { scored: 0, candidates: 0, windowsSkipped: 0, blocksSkipped: 0 };
  private readonly postingsFd: number;
  private readonly postingsPath: string;
  /** @internal Buffers of searchTerms (window scores and bits, cursors, term scorers), reused from query to query. */
  readonly scratch: MaxScoreScratch = maxScoreScratch();
  /** @internal How the postings score: BM25 over the norms and the norm cache (./scorer.ts, the search's scoring seam). */
  readonly scoring: Bm25Scoring;

  constructor(
    readonly dir: string,
    readonly manifest: IndexManifest,
  ) {
    const p = manifest.params as unknown as Bm25IndexParams;
    this.params = p;
    this.units = manifest.units;
    checkBm25Files(dir, manifest);
    this.analyzer = getAnalyzer(p.analyzer);
    this.docCount = p.docCount;
    this.avgdl = averageLength(p.sumTotalTermFreq, Math.max(1, p.docCount));
    this.normInverse = normInverseCache(p.k1, p.b, this.avgdl);
    this.norms = readNorms(dir, manifest.units);
    this.scoring = new Bm25Scoring(this.normInverse, this.norms);
    this.dictionary = new Dictionary(dir, p.terms);
    this.postingsPath = join(dir, FILES.postings);
    this.postingsFd = openSync(this.postingsPath, "r");
  }

  /** Opens the BM25 index in `dir` (its manifest must say kind "bm25"); checks its files first. */
  static open(dir: string): Bm25Searcher {
    const m = readManifest(dir);
    if (m.kind !== "bm25") throw new Error(`${dir}: a ${m.kind} index, not a BM25 one`);
    return new Bm25Searcher(dir, m);
  }

  /** Closes the dictionary and postings files. */
  close(): void {
    this.dictionary.close();
    closeSync(this.postingsFd);
  }

  /** The query's terms present in the index, with their weights (a term repeated n times: boost n). */
  queryTerms(query: string): QueryTerm[] {
    const counts = new Map<string, number>();
    for (const t of this.analyzer.analyze(query)) {
      const term = (t as unknown as { toWellFormed(): string }).toWellFormed();
      counts.set(term, (counts.get(term) ?? 0) + 1);
    }
    const out: QueryTerm[] = [];
    for (const [term, count] of counts) {
      const info = this.dictionary.lookup(term);
      if (info === null) continue;
      out.push({ term, info, weight: termWeight(count, idf(info.docFreq, this.docCount)) });
    }
    return out;
  }

  /** @internal A cursor over a term's postings (format internals); `reuse`, when given, is moved to the term instead of making one. */
  cursor(info: TermInfo, reuse?: PostingCursor, scoring: Pick<ScoringModel, "impact"> = this.scoring): PostingCursor {
    if (info.offset + info.bytes > Number.MAX_SAFE_INTEGER) throw new Error(`${this.postingsPath}: corrupt dictionary`);
    const src = postingsAt(this.postingsFd, info.offset, info.bytes, this.postingsPath);
    if (reuse) return reuse.reset(src, info.docFreq, scoring, this.postingsPath);
    return new PostingCursor(src, info.docFreq, scoring, this.postingsPath);
  }

  /** Search-time scorings by `k1 b` (a few kept: a server's requests repeat their parameters). */
  private readonly rescaled = new Map<string, { normInverse: Float32Array; scoring: RescaledBm25Scoring }>();

  /** The norm cache and scoring for `params` (null: the build's own, also when they equal it). */
  private scoringFor(params: Bm25SearchParams | undefined): { normInverse: Float32Array; scoring: RescaledBm25Scoring } | null {
    if (params === undefined) return null;
    checkBm25Params(params);
    const k1 = params.k1 ?? this.params.k1;
    const b = params.b ?? this.params.b;
    if (k1 === this.params.k1 && b === this.params.b) return null;
    const key = `${k1} ${b}`;
    let r = this.rescaled.get(key);
    if (r === undefined) {
      const normInverse = normInverseCache(k1, b, this.avgdl);
      r = { normInverse, scoring: new RescaledBm25Scoring(this.normInverse, normInverse, this.norms) };
      if (this.rescaled.size >= 16) this.rescaled.delete(this.rescaled.keys().next().value as string);
      this.rescaled.set(key, r);
    }
    return r;
  }

  /** Top k by scoring every posting of every query term (the reference the pruned search must equal), under `params` when given. */
  searchExhaustive(query: string, k: number, params?: Bm25SearchParams): Hit[] {
    const terms = this.queryTerms(query);
    if (k <= 0 || terms.length === 0) return [];
    const acc = new Map<number, number>();
    const norms = this.norms;
    const normInverse = this.scoringFor(params)?.normInverse ?? this.normInverse;
    for (const qt of terms) {
      const c = this.cursor(qt.info);
      const w = qt.weight;
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) {
        acc.set(d, (acc.get(d) ?? 0) + scoreOf(w, tfNorm(c.tf, normInverse[norms[d]])));
      }
    }
    const top = new TopK(Math.min(k, acc.size));
    for (const [d, s] of acc) top.offerAny(f(s), d);
    return top.hits();
  }

  private accumulator: { acc: Float64Array; touched: Int32Array; seen: Uint8Array } | null = null;

  /** {@link searchExhaustive} over looked-up terms into one array of the units (the deep route of {@link searchTerms}). */
  private scoreAll(terms: readonly QueryTerm[], k: number, normInverse: Float32Array): Hit[] {
    const a = (this.accumulator ??= { acc: new Float64Array(this.units), touched: new Int32Array(this.units), seen: new Uint8Array(this.units) });
    const { acc, touched, seen } = a;
    const norms = this.norms;
    let n = 0;
    for (const qt of terms) {
      const c = this.cursor(qt.info);
      const w = qt.weight;
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) {
        if (seen[d] === 0) {
          seen[d] = 1;
          touched[n++] = d;
        }
        acc[d] += scoreOf(w, tfNorm(c.tf, normInverse[norms[d]]));
      }
    }
    const top = new TopK(Math.min(k, n));
    for (let i = 0; i < n; i++) {
      const d = touched[i];
      top.offerAny(f(acc[d]), d);
      acc[d] = 0;
      seen[d] = 0;
    }
    return top.hits();
  }

  /** Top k with MaxScore pruning, under `params` (k1, b) when given; equal to {@link searchExhaustive}. */
  search(query: string, k: number, params?: Bm25SearchParams): Hit[] {
    const terms = this.queryTerms(query);
    const kk = Math.min(Math.floor(k), this.units);
    if (!(kk > 0) || terms.length === 0) return [];
    return this.searchTerms(terms, kk, params);
  }

  /** Top k for query terms already looked up (see {@link queryTerms}), best first, ties by lower unit (./maxscore.ts); `params`: k1 and b for this search. */
  searchTerms(terms: readonly QueryTerm[], k: number, params?: Bm25SearchParams): Hit[] {
    const r = this.scoringFor(params);
    // k a large share of the units: little to prune and every candidate probed; scoring every posting into
    // one array is the faster route, with the same sums (each unit's in float64, term by term, rounded once)
    if (k * EXHAUSTIVE_SHARE >= this.units) return this.scoreAll(terms, k, r?.normInverse ?? this.normInverse);
    if (r === null) return maxScoreSearch(this, terms, k);
    const scoring = r.scoring;
    return maxScoreSearch({ scoring, stats: this.stats, scratch: this.scratch, cursor: (info, reuse) => this.cursor(info, reuse, scoring) }, terms, k);
  }
}

/** {@link Bm25Searcher.searchTerms} scores every posting once k × this reaches the units (k ≥ 1/8 of them). */
export const EXHAUSTIVE_SHARE = 8;

/** A BM25 index directory opened for search. */
export class Bm25Retriever implements Retriever {
  readonly kind = "bm25" as const;
  readonly units: UnitStore;
  readonly searcher: Bm25Searcher;

  /** The index's manifest (read once, by the searcher). */
  get manifest(): IndexManifest {
    return this.searcher.manifest;
  }

  /** `manifest`: the directory's, when the caller has read it already (the registry of kinds has). */
  constructor(
    readonly dir: string,
    manifest?: IndexManifest,
  ) {
    this.searcher = manifest ? new Bm25Searcher(dir, manifest) : Bm25Searcher.open(dir);
    try {
      this.units = UnitStore.open(dir);
    } catch (e) {
      this.searcher.close();
      throw e;
    }
    if (this.units.count !== this.searcher.units) {
      this.close();
      throw new Error(`${dir}: ${this.units.count} units stored but the BM25 index has ${this.searcher.units}`);
    }
  }

  /** `options.bm25`: k1 and b for this call (./search-params.ts); `options.feedback`: the query expanded by RM3 or Rocchio first (./feedback.ts). */
  async search(query: QueryInput, k: number, options?: SearchOptions): Promise<Hit[]> {
    return this.searchOne(queryText(query), k, options);
  }

  private searchOne(text: string, k: number, options?: SearchOptions): Hit[] {
    if (options?.feedback !== undefined) return feedbackSearch(this.searcher, this.units, text, k, options.feedback, options.bm25);
    return this.searcher.search(text, k, options?.bm25);
  }

  /** The expanded query pseudo-relevance feedback searches for `query` (its terms and boosts, best first), its first stage under `bm25` when given. */
  expansion(query: QueryInput, spec: FeedbackSpec, bm25?: Bm25SearchParams): ExpandedTerm[] {
    return expandQuery(this.searcher, this.units, queryText(query), spec, bm25);
  }

  /**
   * Many queries, one after another on this thread. Spreading a batch over the cores is `SearchPool`'s
   * job (../pool.ts), the one layer that does it for every kind.
   */
  async searchBatch(queries: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]> {
    return queries.map((q) => this.searchOne(queryText(q), k, options));
  }

  async close(): Promise<void> {
    this.searcher.close();
    this.units.close();
  }
}

/** Opens the BM25 index in `dir`. */
export async function openBm25(dir: string): Promise<Bm25Retriever> {
  return new Bm25Retriever(dir);
}
