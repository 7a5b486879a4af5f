// BM25 search over the on-disk format (./format.ts): query terms analyzed like the units and weighted by
// how often they occur (Pyserini's bag of words: OR semantics, boost = count), scored exactly as Lucene
// 8.7 scores, and evaluated document at a time with MaxScore dynamic pruning — terms whose score bounds
// together cannot lift a unit into the top k are only probed for candidates found through the others,
// and per-block bounds skip probes and whole windows of candidates (block-max MaxScore) — so results
// equal exhaustive scoring, ties going to the lower unit.
// Postings are read with positional reads, a term's skip entries first and then only the 64 KB windows
// holding blocks the search visits, and decoded a block at a time.

import { closeSync, openSync } from "node:fs";
import { cpus } from "node:os";
import { Worker } from "node:worker_threads";
import { workerScript } from "../../util/worker-script.js";
import type { SearchWorkerInit, SearchWorkerReply, SearchWorkerRequest } from "./search-worker.js";
import { join } from "node:path";
import { readManifest } from "../manifest.js";
import type { Hit, IndexManifest, Retriever } from "../types.js";
import { UnitStore } from "../units.js";
import { getAnalyzer, type Analyzer, type AnalyzerName } from "./analyzer.js";
import { Dictionary, FILES, PostingCursor, postingsAt, readNorms, type TermInfo } from "./format.js";
import { checkBm25Files } from "./check.js";
import { averageLength, idf, normInverseCache, termWeight } from "./similarity.js";

const f = Math.fround;

/** A query term found in the index: its dictionary entry and weight (boost × idf). */
export interface QueryTerm {
  term: string;
  info: TermInfo;
  weight: number;
}

/** Search counters, for benchmarks and tests. */
export interface SearchStats {
  /** Postings scored. */
  scored: number;
  /** Candidate units considered. */
  candidates: number;
  /** Block-max windows skipped without decoding or scoring. */
  windowsSkipped: number;
}

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
  readonly stats: SearchStats = { scored: 0, candidates: 0, windowsSkipped: 0 };
  private readonly postingsFd: number;
  private readonly postingsPath: string;

  constructor(
    readonly dir: string,
    manifest: IndexManifest,
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

  /** @internal A cursor over a term's postings (format internals). */
  cursor(info: TermInfo): PostingCursor {
    if (info.offset + info.bytes > Number.MAX_SAFE_INTEGER) throw new Error(`${this.postingsPath}: corrupt dictionary`);
    return new PostingCursor(postingsAt(this.postingsFd, info.offset, info.bytes, this.postingsPath), info.docFreq, this.normInverse, this.norms, this.postingsPath);
  }

  /** Top k by scoring every posting of every query term (the reference the pruned search must equal). */
  searchExhaustive(query: string, k: number): Hit[] {
    const terms = this.queryTerms(query);
    if (k <= 0 || terms.length === 0) return [];
    const acc = new Map<number, number>();
    const { norms, normInverse } = this;
    for (const qt of terms) {
      const c = this.cursor(qt.info);
      const w = qt.weight;
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) {
        acc.set(d, (acc.get(d) ?? 0) + f(w - f(w / f(1 + f(c.tf * normInverse[norms[d]])))));
      }
    }
    const top = new TopK(Math.min(k, acc.size));
    for (const [d, s] of acc) top.offerAny(f(s), d);
    return top.hits();
  }

  /** Top k with MaxScore pruning; equal to {@link searchExhaustive}. */
  search(query: string, k: number): Hit[] {
    const terms = this.queryTerms(query);
    const kk = Math.min(Math.floor(k), this.units);
    if (!(kk > 0) || terms.length === 0) return [];
    return this.searchTerms(terms, kk);
  }

  /** Top k for query terms already looked up (see {@link queryTerms}), best first, ties by lower unit. */
  searchTerms(terms: readonly QueryTerm[], k: number): Hit[] {
    const { norms, normInverse } = this;
    const n = terms.length;
    const NO_MORE = PostingCursor.NO_MORE;
    // Terms by upper bound, ascending; bound[i] = the term's best possible score.
    const order = terms
      .map((t) => {
        const c = this.cursor(t.info);
        return { t, c, bound: f(t.weight - f(t.weight / f(1 + c.maxX))) };
      })
      .sort((a, b) => a.bound - b.bound || (a.t.term < b.t.term ? -1 : a.t.term > b.t.term ? 1 : 0));
    const weight = new Float64Array(n);
    const cursors: PostingCursor[] = [];
    // prefix[i] = sum of bounds of terms 0..i-1 (the non-essential terms when i = firstEssential).
    const prefix = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) {
      weight[i] = order[i].t.weight;
      cursors.push(order[i].c);
      prefix[i + 1] = prefix[i] + order[i].bound;
    }
    for (const c of cursors) c.nextDoc();
    const top = new TopK(k);
    let threshold = -Infinity;
    let essential = 0; // terms [essential, n) drive the candidates
    let scored = 0;
    let candidates = 0;
    let skipped = 0;
    // A bound `b` cannot beat `threshold` when b <= threshold (scores are sums of these bounds' parts;
    // the relative margin guards the comparison against rounding in the double sums).
    const SAFETY = 1 + 1e-12;

    for (;;) {
      let d = NO_MORE;
      for (let i = essential; i < n; i++) {
        const di = cursors[i].doc;
        if (di < d) d = di;
      }
      if (d === NO_MORE) break;
      if (threshold > -Infinity) {
        // Block-max window: every unit from d to `end` (where the first of the essential terms' blocks
        // holding d ends) scores at most those blocks' bounds plus the non-essential terms' bounds; when
        // that cannot beat the threshold, skip the window without decoding or scoring it. (Block bounds of
        // the non-essential terms too prune a little more but cost more per candidate than they save.)
        let ub = prefix[essential];
        let end = NO_MORE - 1;
        for (let i = essential; i < n; i++) {
          const c = cursors[i];
          const bx = c.blockBound(d);
          if (bx < 0) continue;
          const w = weight[i];
          ub += f(w - f(w / f(1 + bx)));
          const e = c.blockEnd();
          if (e < end) end = e;
        }
        if (ub * SAFETY <= threshold) {
          skipped++;
          for (let i = essential; i < n; i++) if (cursors[i].doc <= end) cursors[i].advance(end + 1);
          continue;
        }
      }
      candidates++;
      let score = 0;
      const norm = normInverse[norms[d]];
      for (let i = essential; i < n; i++) {
        const c = cursors[i];
        if (c.doc === d) {
          const w = weight[i];
          score += f(w - f(w / f(1 + f(c.tf * norm))));
          c.nextDoc();
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
        const c = cursors[i];
        if (c.doc > d) continue;
        const bx = c.blockBound(d);
        if (bx < 0) continue;
        const w = weight[i];
        const blockBound = f(w - f(w / f(1 + bx)));
        if ((score + prefix[i] + blockBound) * SAFETY <= threshold) {
          alive = false;
          break;
        }
        if (c.advance(d) === d) {
          score += f(w - f(w / f(1 + f(c.tf * norm))));
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
    this.stats.windowsSkipped += skipped;
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

  async search(query: string, k: number): Promise<Hit[]> {
    return this.searcher.search(query, k);
  }

  /** Many queries on every core: this thread and `cores − 1` workers take chunks of 64 in turn. */
  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    const CHUNK = 64;
    const out: Hit[][] = new Array(queries.length);
    if (queries.length <= CHUNK || cpus().length < 2) {
      for (let i = 0; i < queries.length; i++) out[i] = this.searcher.search(queries[i], k);
      return out;
    }
    const workers = await this.startWorkers();
    let next = 0;
    const take = (): number => {
      const at = next;
      next += CHUNK;
      return at;
    };
    const remote = workers.map(
      (w) =>
        new Promise<void>((resolve, reject) => {
          const send = () => {
            const at = take();
            if (at >= queries.length) {
              w.off("message", onMessage);
              return resolve();
            }
            w.postMessage({ id: at, queries: queries.slice(at, at + CHUNK), k } satisfies SearchWorkerRequest);
          };
          const onMessage = (msg: SearchWorkerReply) => {
            if ("hits" in msg) {
              msg.hits.forEach((h, i) => (out[msg.id + i] = h));
              send();
            } else {
              w.off("message", onMessage);
              reject(new Error(`bm25 search worker: ${"error" in msg ? msg.error : "failed" in msg ? msg.failed : "unexpected reply"}`));
            }
          };
          w.on("message", onMessage);
          send();
        }),
    );
    for (let at = take(); at < queries.length; at = take()) {
      for (let i = at; i < Math.min(queries.length, at + CHUNK); i++) out[i] = this.searcher.search(queries[i], k);
      // Let the workers' replies in between chunks.
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(remote);
    return out;
  }

  private workers: Promise<Worker[]> | null = null;

  private startWorkers(): Promise<Worker[]> {
    this.workers ??= Promise.all(
      Array.from({ length: Math.min(cpus().length, 16) - 1 }, () => {
        const w = new Worker(workerScript(import.meta.url, "search-worker"), { workerData: { tartanBm25Search: true, dir: this.dir } satisfies SearchWorkerInit });
        w.unref();
        return new Promise<Worker>((resolve, reject) => {
          const first = (msg: SearchWorkerReply) => {
            w.off("message", first);
            if ("ready" in msg) resolve(w);
            else reject(new Error(`bm25 search worker: ${"failed" in msg ? msg.failed : "did not start"}`));
          };
          w.on("message", first);
          w.once("error", reject);
        });
      }),
    );
    return this.workers;
  }

  async close(): Promise<void> {
    if (this.workers) await Promise.all((await this.workers.catch(() => [] as Worker[])).map((w) => w.terminate()));
    this.workers = null;
    this.searcher.close();
    this.units.close();
  }
}

/** Opens the BM25 index in `dir`. */
export async function openBm25(dir: string): Promise<Retriever> {
  return new Bm25Retriever(dir);
}
