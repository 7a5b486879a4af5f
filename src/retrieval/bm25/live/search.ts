// Search over one commit of a live BM25 index (a snapshot: the segments and deletion marks it names,
// opened once; later commits do not change what this retriever sees). Scores use the live units'
// statistics — N, average length and each term's document frequency, deleted units taken out — so they
// equal a fresh build's of the live units, to the bit. Each segment is searched with MaxScore (../maxscore.ts)
// under the live norm cache, its stored block bounds (built under the segment's own statistics) carried
// over by the search-time k1/b machinery (../search-params.ts), deleted units kept out of its top k; the
// segments' top k are merged by score, ties to the lower unit (units are numbered across the segments in
// order). A unit number is `segment base + unit in the segment`, stable for this snapshot.

import { readManifest } from "../../manifest.js";
import type { Hit, IndexManifest, Retriever } from "../../types.js";
import { queryText, type QueryInput, type SearchOptions } from "../../query.js";
import { checkUnitNumber, type Unit, type UnitInfo, type UnitStore } from "../../units/unit.js";
import { getAnalyzer, type Analyzer } from "../analyzer.js";
import type { TermInfo } from "../dictionary.js";
import { maxScoreSearch, type QueryTerm } from "../maxscore.js";
import { PostingCursor } from "../postings-reader.js";
import type { ScoringModel } from "../scorer.js";
import { EXHAUSTIVE_SHARE } from "../search.js";
import { checkBm25Params, RescaledBm25Scoring, type Bm25SearchParams } from "../search-params.js";
import { averageLength, idf, normInverseCache, scoreOf, termWeight, tfNorm } from "../similarity.js";
import { TopK } from "../top-k.js";
import { CommitGoneError, generationOf, readCommit, rootManifest, type Commit } from "./layout.js";
import { openSegments, type LiveSegment } from "./segment.js";

const f = Math.fround;

/** The units of a commit, numbered across its segments in order (deleted units keep their numbers). */
export class LiveUnits implements UnitStore {
  readonly count: number;
  /** @internal Made by the retriever over its segments and their first unit numbers. */
  constructor(
    readonly dir: string,
    private readonly segments: readonly LiveSegment[],
    private readonly bases: Int32Array,
  ) {
    this.count = segments.reduce((n, s) => n + s.info.units, 0);
  }
  private at(i: number): [LiveSegment, number] {
    checkUnitNumber(i, this.count);
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.bases[mid] <= i) lo = mid;
      else hi = mid - 1;
    }
    return [this.segments[lo], i - this.bases[lo]];
  }
  /** Unit number `i` with its text. */
  get(i: number): Unit {
    const [s, u] = this.at(i);
    return s.units.get(u);
  }
  /** Unit number `i`'s provenance. */
  info(i: number): UnitInfo {
    const [s, u] = this.at(i);
    return s.units.info(u);
  }
  /** Nothing: the retriever closes the segments. */
  close(): void {
    /* the retriever closes the segments */
  }
}

/** A segment's scorings by search parameters. */
interface SegmentScoring {
  scoring: ScoringModel;
  normInverse: Float32Array;
}

/** One commit of a live BM25 index opened for search. */
export class LiveBm25Retriever implements Retriever {
  readonly kind = "bm25" as const;
  readonly units: LiveUnits;
  /** The commit's generation (a server reopens when {@link newerCommit} says a later one is published). */
  readonly generation: number;
  readonly analyzer: Analyzer;
  /** Live statistics: units with a term, the average length, the norm cache. */
  readonly docCount: number;
  readonly avgdl: number;
  private readonly bases: Int32Array;
  private readonly liveUnits: number;
  private readonly scorings = new Map<string, SegmentScoring[]>();

  private constructor(
    readonly dir: string,
    readonly manifest: IndexManifest,
    /** @internal The commit point opened (./layout.ts). */
    readonly commit: Commit,
    /** @internal Its segments, opened. */
    readonly segments: LiveSegment[],
  ) {
    this.generation = commit.generation;
    this.analyzer = getAnalyzer(commit.params.analyzer);
    this.docCount = commit.live.docCount;
    this.liveUnits = commit.live.units;
    this.avgdl = averageLength(commit.live.sumTotalTermFreq, Math.max(1, commit.live.docCount));
    this.bases = new Int32Array(segments.length);
    for (let i = 1; i < segments.length; i++) this.bases[i] = this.bases[i - 1] + segments[i - 1].info.units;
    this.units = new LiveUnits(dir, segments, this.bases);
  }

  /** Opens the commit `manifest` names (reading the manifest again when a newer commit replaced it meanwhile). */
  static open(dir: string, manifest?: IndexManifest): LiveBm25Retriever {
    let m = manifest ?? readManifest(dir);
    for (let attempt = 0; ; attempt++) {
      try {
        const commit = readCommit(dir, generationOf(m), m);
        const segments = openSegments(dir, commit.segments, rootManifest(dir, m));
        return new LiveBm25Retriever(dir, m, commit, segments);
      } catch (e) {
        if (attempt >= 5 || !(e instanceof CommitGoneError || (e as NodeJS.ErrnoException).code === "ENOENT" || /missing/.test((e as Error).message))) throw e;
        const again = readManifest(dir);
        if (generationOf(again) === generationOf(m)) throw e;
        m = again;
      }
    }
  }

  /** Whether a newer commit than this snapshot's is published (a cheap read of the manifest). */
  newerCommit(): boolean {
    return generationOf(readManifest(this.dir)) > this.generation;
  }

  /** The segments' scorings under `params` (k1, b) and the live statistics. */
  private scoringFor(params: Bm25SearchParams | undefined): SegmentScoring[] {
    if (params !== undefined) checkBm25Params(params);
    const k1 = params?.k1 ?? this.commit.params.k1;
    const b = params?.b ?? this.commit.params.b;
    const key = `${k1} ${b}`;
    let r = this.scorings.get(key);
    if (r === undefined) {
      const normInverse = normInverseCache(k1, b, this.avgdl);
      r = this.segments.map((s) => {
        const own = s.searcher.normInverse;
        const same = normInverse.every((x, i) => x === own[i] || (Number.isNaN(x) && Number.isNaN(own[i])));
        return { normInverse, scoring: same ? s.searcher.scoring : new RescaledBm25Scoring(own, normInverse, s.searcher.norms) };
      });
      if (this.scorings.size >= 16) this.scorings.delete(this.scorings.keys().next().value as string);
      this.scorings.set(key, r);
    }
    return r;
  }

  /** The query's terms with a live unit: per segment the dictionary entries, and the weight from live statistics. */
  private queryTerms(query: string): { term: string; weight: number; infos: (TermInfo | null)[] }[] {
    const counts = new Map<string, number>();
    for (const t of this.analyzer.analyze(query)) {
      const term = (t as unknown as { toWellFormed(): string }).toWellFormed();
      counts.set(term, (counts.get(term) ?? 0) + 1);
    }
    const out: { term: string; weight: number; infos: (TermInfo | null)[] }[] = [];
    for (const [term, count] of counts) {
      let df = 0;
      const infos = this.segments.map((s) => {
        const info = s.searcher.dictionary.lookup(term);
        if (info !== null) df += info.docFreq - (s.deletions.df.get(term) ?? 0);
        return info;
      });
      if (df <= 0) continue;
      out.push({ term, weight: termWeight(count, idf(df, this.docCount)), infos });
    }
    return out;
  }

  /** Top k, best first, ties to the lower unit; `params`: k1 and b for this search. */
  searchText(query: string, k: number, params?: Bm25SearchParams): Hit[] {
    const terms = this.queryTerms(query);
    const kk = Math.min(Math.floor(k), this.liveUnits);
    if (!(kk > 0) || terms.length === 0) return [];
    const scorings = this.scoringFor(params);
    const all: Hit[] = [];
    for (let i = 0; i < this.segments.length; i++) {
      const s = this.segments[i];
      if (s.live === 0) continue;
      const qts: QueryTerm[] = [];
      for (const t of terms) {
        const info = t.infos[i];
        if (info !== null) qts.push({ term: t.term, info, weight: t.weight });
      }
      if (qts.length === 0) continue;
      const ks = Math.min(kk, s.live);
      const { scoring, normInverse } = scorings[i];
      const base = this.bases[i];
      const hits = ks * EXHAUSTIVE_SHARE >= s.info.units ? this.scoreAll(s, qts, ks, normInverse) : this.pruned(s, qts, ks, scoring);
      for (const h of hits) all.push({ unit: base + h.unit, score: h.score });
    }
    all.sort((a, c) => c.score - a.score || a.unit - c.unit);
    return all.slice(0, kk);
  }

  private pruned(s: LiveSegment, terms: QueryTerm[], k: number, scoring: ScoringModel): Hit[] {
    const sr = s.searcher;
    const deleted = s.deletions.deleted > 0 ? s.deletions.bits : null;
    if (scoring === sr.scoring) return maxScoreSearch({ scoring, stats: sr.stats, scratch: sr.scratch, deleted, cursor: (info, reuse) => sr.cursor(info, reuse) }, terms, k);
    return maxScoreSearch({ scoring, stats: sr.stats, scratch: sr.scratch, deleted, cursor: (info, reuse) => sr.cursor(info, reuse, scoring) }, terms, k);
  }

  /** Per segment, the buffers of {@link scoreAll} (kept from query to query). */
  private readonly exhaustive = new Map<LiveSegment, { acc: Float64Array; seen: Uint8Array; touched: Int32Array; cursor?: PostingCursor }>();

  /** Every posting scored (k a large share of the segment), deleted units left out. */
  private scoreAll(s: LiveSegment, terms: QueryTerm[], k: number, normInverse: Float32Array): Hit[] {
    const sr = s.searcher;
    const norms = sr.norms;
    const bits = s.deletions.bits;
    let b = this.exhaustive.get(s);
    if (b === undefined) this.exhaustive.set(s, (b = { acc: new Float64Array(s.info.units), seen: new Uint8Array(s.info.units), touched: new Int32Array(s.info.units) }));
    const { acc, seen, touched } = b;
    let n = 0;
    for (const qt of terms) {
      const c = (b.cursor = sr.cursor(qt.info, b.cursor));
      const w = qt.weight;
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) {
        if (bits[d]) continue;
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

  /** The best `k` units for a query (`options.bm25`: k1 and b for this call). */
  async search(query: QueryInput, k: number, options?: SearchOptions): Promise<Hit[]> {
    return this.searchText(queryText(query), k, options?.bm25);
  }

  /** Many queries, one after another on this thread. */
  async searchBatch(queries: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]> {
    return queries.map((q) => this.searchText(queryText(q), k, options?.bm25));
  }

  /** Closes the segments' files. */
  async close(): Promise<void> {
    for (const s of this.segments) s.close();
  }
}

/** Opens the live BM25 index in `dir` (its newest commit). */
export async function openLiveBm25(dir: string, manifest?: IndexManifest): Promise<LiveBm25Retriever> {
  return LiveBm25Retriever.open(dir, manifest);
}
