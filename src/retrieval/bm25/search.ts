// BM25 search over a `bm25.index`: query terms analyzed like the units and weighted by how often they
// occur (Pyserini's bag of words: OR semantics, boost = count), scored exactly as Lucene 8.7 scores,
// and evaluated document at a time with MaxScore dynamic pruning — terms whose score bounds together
// cannot lift a unit into the top k are only probed for candidates found through the others, and
// per-block bounds skip probes — so results equal exhaustive scoring, ties going to the lower unit.

import { join } from "node:path";
import type { Hit, Retriever } from "../types.js";
import { UnitStore } from "../units.js";
import { getAnalyzer, type Analyzer, type AnalyzerName } from "./analyzer.js";
import { BLOCK_SIZE, INDEX_FILE, readIndexFile, termHash, type IndexArrays } from "./format.js";
import { averageLength, idf, normInverseCache, termWeight } from "./similarity.js";

const f = Math.fround;

/** A query term found in the index: its id and weight (boost × idf). */
export interface QueryTerm {
  term: string;
  id: number;
  weight: number;
}

/** Search counters, for benchmarks and tests. */
export interface SearchStats {
  /** Postings scored. */
  scored: number;
  /** Candidate units considered. */
  candidates: number;
}

/** Keeps the best k (score, unit) pairs; worst = lowest score, then highest unit. */
class TopK {
  readonly scores: Float64Array;
  readonly units: Int32Array;
  size = 0;
  constructor(readonly k: number) {
    this.scores = new Float64Array(k);
    this.units = new Int32Array(k);
  }
  /** Lowest score kept once full, else -Infinity: a unit must score above it to enter. */
  get threshold(): number {
    return this.size < this.k ? -Infinity : this.scores[0];
  }
  private worse(i: number, j: number): boolean {
    const a = this.scores[i];
    const b = this.scores[j];
    return a < b || (a === b && this.units[i] > this.units[j]);
  }
  private swap(i: number, j: number): void {
    const s = this.scores[i];
    this.scores[i] = this.scores[j];
    this.scores[j] = s;
    const u = this.units[i];
    this.units[i] = this.units[j];
    this.units[j] = u;
  }
  /** Offers a unit (units arrive in increasing order, so a tie with the worst never enters). */
  offer(score: number, unit: number): void {
    if (this.size < this.k) {
      let i = this.size++;
      this.scores[i] = score;
      this.units[i] = unit;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(i, parent)) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    if (!(score > this.scores[0])) return;
    this.scores[0] = score;
    this.units[0] = unit;
    this.siftDown(0);
  }
  /** Offers a unit in any order (exhaustive scoring). */
  offerAny(score: number, unit: number): void {
    if (this.size < this.k) return this.offer(score, unit);
    const s0 = this.scores[0];
    if (score > s0 || (score === s0 && unit < this.units[0])) {
      this.scores[0] = score;
      this.units[0] = unit;
      this.siftDown(0);
    }
  }
  private siftDown(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      let m = l;
      if (l + 1 < this.size && this.worse(l + 1, l)) m = l + 1;
      if (!this.worse(m, i)) break;
      this.swap(m, i);
      i = m;
    }
  }
  /** Best first; ties by lower unit. */
  hits(): Hit[] {
    const out: Hit[] = [];
    for (let i = 0; i < this.size; i++) out.push({ unit: this.units[i], score: this.scores[i] });
    return out.sort((a, b) => b.score - a.score || a.unit - b.unit);
  }
}

/** The in-memory BM25 index and its query evaluation. */
export class Bm25Searcher {
  readonly analyzer: Analyzer;
  readonly docCount: number;
  readonly avgdl: number;
  readonly normInverse: Float32Array;
  readonly stats: SearchStats = { scored: 0, candidates: 0 };

  constructor(readonly index: IndexArrays) {
    const h = index.header;
    this.analyzer = getAnalyzer(h.analyzer as AnalyzerName);
    this.docCount = h.docCount;
    this.avgdl = averageLength(h.sumTotalTermFreq, Math.max(1, h.docCount));
    this.normInverse = normInverseCache(h.k1, h.b, this.avgdl);
  }

  static open(dir: string): Bm25Searcher {
    return new Bm25Searcher(readIndexFile(join(dir, INDEX_FILE)));
  }

  /** The id of an index term, or -1. */
  termId(term: string): number {
    const { hash, termOffsets, file, termBytesOffset } = this.index;
    const mask = hash.length - 1;
    for (let h = termHash(term) & mask; ; h = (h + 1) & mask) {
      const slot = hash[h];
      if (slot === 0) return -1;
      const t = slot - 1;
      const a = termBytesOffset + termOffsets[t];
      const b = termBytesOffset + termOffsets[t + 1];
      if (b - a >= term.length && b - a <= term.length * 3 && file.toString("utf8", a, b) === term) return t;
    }
  }

  /** Number of units containing term id `t`. */
  docFreq(t: number): number {
    return this.index.postingStart[t + 1] - this.index.postingStart[t];
  }

  /** The query's terms present in the index, with their weights (a term repeated n times: boost n). */
  queryTerms(query: string): QueryTerm[] {
    const counts = new Map<string, number>();
    for (const t of this.analyzer.analyze(query)) counts.set(t, (counts.get(t) ?? 0) + 1);
    const out: QueryTerm[] = [];
    for (const [term, count] of counts) {
      const id = this.termId(term);
      if (id < 0) continue;
      out.push({ term, id, weight: termWeight(count, idf(this.docFreq(id), this.docCount)) });
    }
    return out;
  }

  /** BM25 score of one posting. */
  private postingScore(weight: number, p: number): number {
    const { tfs, docs, norms } = this.index;
    return f(weight - f(weight / f(1 + f(tfs[p] * this.normInverse[norms[docs[p]]]))));
  }

  /** Top k by scoring every posting of every query term (the reference the pruned search must equal). */
  searchExhaustive(query: string, k: number): Hit[] {
    const terms = this.queryTerms(query);
    if (k <= 0 || terms.length === 0) return [];
    const { postingStart, docs } = this.index;
    const acc = new Map<number, number>();
    for (const qt of terms) {
      for (let p = postingStart[qt.id], end = postingStart[qt.id + 1]; p < end; p++) {
        const d = docs[p];
        acc.set(d, (acc.get(d) ?? 0) + this.postingScore(qt.weight, p));
      }
    }
    const top = new TopK(k);
    for (const [d, s] of acc) top.offerAny(f(s), d);
    return top.hits();
  }

  /** Top k with MaxScore pruning; equal to {@link searchExhaustive}. */
  search(query: string, k: number): Hit[] {
    const terms = this.queryTerms(query);
    const kk = Math.min(Math.floor(k), this.index.header.units);
    if (!(kk > 0) || terms.length === 0) return [];
    return this.searchTerms(terms, kk);
  }

  searchTerms(terms: readonly QueryTerm[], k: number): Hit[] {
    const { postingStart, docs, tfs, norms, blockStart, blockLastDoc, blockMaxX, termMaxX } = this.index;
    const normInverse = this.normInverse;
    const n = terms.length;
    // Terms by upper bound, ascending; bound[i] = the term's best possible score.
    const order = terms
      .map((t) => ({ t, bound: f(t.weight - f(t.weight / f(1 + termMaxX[t.id]))) }))
      .sort((a, b) => a.bound - b.bound || a.t.id - b.t.id);
    const weight = new Float64Array(n);
    const bound = new Float64Array(n);
    const pos = new Uint32Array(n);
    const end = new Uint32Array(n);
    const first = new Uint32Array(n);
    const block = new Uint32Array(n);
    const blockEnd = new Uint32Array(n);
    const blockBase = new Uint32Array(n);
    // prefix[i] = sum of bounds of terms 0..i-1 (the non-essential terms when i = firstEssential).
    const prefix = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) {
      const { t } = order[i];
      weight[i] = t.weight;
      bound[i] = order[i].bound;
      pos[i] = first[i] = postingStart[t.id];
      end[i] = postingStart[t.id + 1];
      block[i] = blockBase[i] = blockStart[t.id];
      blockEnd[i] = blockStart[t.id + 1];
      prefix[i + 1] = prefix[i] + bound[i];
    }
    const top = new TopK(k);
    let threshold = -Infinity;
    let essential = 0; // terms [essential, n) drive the candidates
    let scored = 0;
    let candidates = 0;
    // A bound `b` cannot beat `threshold` when b <= threshold (scores are sums of these bounds' parts;
    // the relative margin guards the comparison against rounding in the double sums).
    const SAFETY = 1 + 1e-12;

    for (;;) {
      let d = 0xffffffff;
      for (let i = essential; i < n; i++) {
        if (pos[i] < end[i]) {
          const di = docs[pos[i]];
          if (di < d) d = di;
        }
      }
      if (d === 0xffffffff) break;
      candidates++;
      let score = 0;
      for (let i = essential; i < n; i++) {
        const p = pos[i];
        if (p < end[i] && docs[p] === d) {
          const w = weight[i];
          score += f(w - f(w / f(1 + f(tfs[p] * normInverse[norms[d]]))));
          pos[i] = p + 1;
          scored++;
        }
      }
      // Non-essential terms, largest bound first, while the unit can still enter the top k.
      let alive = true;
      for (let i = essential - 1; i >= 0; i--) {
        if ((score + prefix[i + 1]) * SAFETY <= threshold) {
          alive = false;
          break;
        }
        // The block of term i that may hold d; its bound may rule d out without a search.
        let blk = block[i];
        const be = blockEnd[i];
        while (blk < be && blockLastDoc[blk] < d) blk++;
        block[i] = blk;
        if (blk === be) {
          pos[i] = end[i];
          continue;
        }
        const w = weight[i];
        const blockBound = f(w - f(w / f(1 + blockMaxX[blk])));
        if ((score + prefix[i] + blockBound) * SAFETY <= threshold) {
          alive = false;
          break;
        }
        // Binary search for d inside the block.
        let lo = Math.max(pos[i], first[i] + (blk - blockBase[i]) * BLOCK_SIZE);
        let hi = Math.min(end[i], first[i] + (blk - blockBase[i] + 1) * BLOCK_SIZE);
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (docs[mid] < d) lo = mid + 1;
          else hi = mid;
        }
        pos[i] = lo;
        if (lo < end[i] && docs[lo] === d) {
          score += f(w - f(w / f(1 + f(tfs[lo] * normInverse[norms[d]]))));
          pos[i] = lo + 1;
          scored++;
        }
      }
      if (!alive) continue;
      const final = f(score);
      if (final > threshold) {
        top.offer(final, d);
        if (top.size === k) {
          threshold = top.threshold;
          while (essential < n && prefix[essential + 1] * SAFETY <= threshold) essential++;
          if (essential === n) break;
        }
      }
    }
    this.stats.scored += scored;
    this.stats.candidates += candidates;
    return top.hits();
  }
}

/** A BM25 index directory opened for search. */
export class Bm25Retriever implements Retriever {
  readonly kind = "bm25" as const;
  readonly units: UnitStore;
  readonly searcher: Bm25Searcher;

  constructor(readonly dir: string) {
    this.searcher = Bm25Searcher.open(dir);
    this.units = UnitStore.open(dir);
    if (this.units.count !== this.searcher.index.header.units)
      throw new Error(`${dir}: ${this.units.count} units stored but the BM25 index has ${this.searcher.index.header.units}`);
  }

  async search(query: string, k: number): Promise<Hit[]> {
    return this.searcher.search(query, k);
  }

  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    return queries.map((q) => this.searcher.search(q, k));
  }

  async close(): Promise<void> {
    this.units.close();
  }
}

/** Opens the BM25 index in `dir`. */
export async function openBm25(dir: string): Promise<Retriever> {
  return new Bm25Retriever(dir);
}
