// BM25 search over the on-disk format (./format.ts): query terms analyzed like the units and weighted by
// how often they occur (Pyserini's bag of words: OR semantics, boost = count), scored exactly as Lucene
// 8.7 scores, with MaxScore dynamic pruning over windows of units (as Lucene 9's MaxScoreBulkScorer):
// per window, the terms whose bounds there together cannot lift a unit into the top k are only probed
// for the candidates the others find; those others are scored term at a time into a buffer of the
// window's units, skipping the blocks whose bound cannot matter; a window no unit of which can enter is
// skipped whole — so results equal exhaustive scoring, ties going to the lower unit.
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
import { Dictionary, FILES, PostingCursor, SEARCH_SAFETY, postingsAt, readNorms, type TermInfo } from "./format.js";
import { checkBm25Files } from "./check.js";
import { averageLength, idf, normInverseCache, termWeight } from "./similarity.js";

const f = Math.fround;

/** Units scored term at a time into the buffer at once (a multiple of 32). */
const WINDOW = 4096;
/**
 * Units a partition window covers at least (more when the first blocks of the terms driving the previous
 * window all reach further); a window ends early when the threshold rises, to partition again. Measured
 * on the 1M-page KILT source (4.2M units), queries per CPU second against 65,536 in one process: 16,384
 * 0.86×, 262,144 1.12×, 1,048,576 1.12×, 16M (the whole index) 0.99× — a partition reads the bounds of
 * every block in its window, so very wide ones cost more than they save.
 */
const MIN_WINDOW = 1 << 18;

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
  /** Windows skipped whole without decoding or scoring: no unit there can enter the top k. */
  windowsSkipped: number;
  /** Blocks of the terms driving a window passed over without decoding (their bound is too low). */
  blocksSkipped: number;
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
  readonly stats: SearchStats = { scored: 0, candidates: 0, windowsSkipped: 0, blocksSkipped: 0 };
  private readonly postingsFd: number;
  private readonly postingsPath: string;
  /** Window scratch of searchTerms: scores and a bit per unit of a window of WINDOW units. */
  private readonly acc = new Float64Array(WINDOW);
  private readonly seen = new Int32Array(WINDOW >> 5);
  /** Postings read buffers, one per query term position, reused from query to query. */
  private readonly readBuffers: Uint8Array[] = [];

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

  /** @internal A cursor over a term's postings (format internals), reading into `readBuffer` when given, to reuse it. */
  cursor(info: TermInfo, readBuffer?: Uint8Array): PostingCursor {
    if (info.offset + info.bytes > Number.MAX_SAFE_INTEGER) throw new Error(`${this.postingsPath}: corrupt dictionary`);
    return new PostingCursor(postingsAt(this.postingsFd, info.offset, info.bytes, this.postingsPath), info.docFreq, this.normInverse, this.norms, this.postingsPath, readBuffer);
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
    const cursors: PostingCursor[] = new Array(n);
    const weight = new Float64Array(n);
    // Per term: its scores for tf 1 and 2 by norm byte (most postings), and its bound.
    const tables: Float32Array[] = new Array(n);
    let boundSum = 0;
    for (let i = 0; i < n; i++) {
      const t = terms[i];
      const c = (cursors[i] = this.cursor(t.info, this.readBuffers[i]));
      const w = (weight[i] = t.weight);
      const table = (tables[i] = new Float32Array(512));
      for (let nb = 0; nb < 256; nb++) {
        table[nb] = f(w - f(w / f(1 + f(1 * normInverse[nb]))));
        table[256 + nb] = f(w - f(w / f(1 + f(2 * normInverse[nb]))));
      }
      boundSum += f(w - f(w / f(1 + c.maxX)));
      c.nextDoc();
    }
    const top = new TopK(k);
    let threshold = -Infinity;
    let scored = 0;
    let candidates = 0;
    let skipped = 0;
    const SAFETY = SEARCH_SAFETY;
    const { acc, seen } = this;
    acc.fill(0);
    seen.fill(0);
    // Per window: the terms with postings there, ascending by their bound in the window; the first
    // `probed` of them (whose bounds together cannot beat the threshold) are only probed, the rest
    // (`drive`) are scored term at a time and drive the candidates.
    const order = new Int32Array(n);
    const wbound = new Float64Array(n);
    const prefix = new Float64Array(n + 1);
    const drive = new Int32Array(n);
    let driving = n;
    for (let i = 0; i < n; i++) drive[i] = i;
    let windowMin = 0;

    for (;;) {
      // The next window starts at the first posting left (cursors behind a skipped window count from its end).
      let d = NO_MORE;
      for (let i = 0; i < n; i++) {
        const di = cursors[i].doc;
        if (di < d) d = di;
      }
      if (d < windowMin) d = windowMin;
      if (d >= NO_MORE) break;
      // Window [d, windowMax): up to where the first block of a driving term ends, at least WINDOW units.
      let windowMax = NO_MORE;
      for (let j = 0; j < driving; j++) {
        const c = cursors[drive[j]];
        if (c.doc === NO_MORE) continue;
        const e = c.blockEndFor(Math.max(c.doc, d)) + 1;
        if (e < windowMax) windowMax = e;
      }
      if (windowMax < d + MIN_WINDOW) windowMax = d + MIN_WINDOW;
      if (windowMax > NO_MORE) windowMax = NO_MORE;
      // Bounds in the window; terms without postings there drop out.
      let live = 0;
      for (let i = 0; i < n; i++) {
        const bx = cursors[i].maxXIn(d, windowMax - 1);
        if (bx < 0) continue;
        const w = weight[i];
        const b = f(w - f(w / f(1 + bx)));
        // Insertion by bound, ascending (ties: lower term index first).
        let j = live++;
        while (j > 0 && wbound[order[j - 1]] > b) {
          order[j] = order[j - 1];
          j--;
        }
        order[j] = i;
        wbound[i] = b;
      }
      for (let j = 0; j < live; j++) prefix[j + 1] = prefix[j] + wbound[order[j]];
      let probed = 0;
      while (probed < live && prefix[probed + 1] * SAFETY <= threshold) probed++;
      if (probed === live) {
        // No unit of the window can enter the top k.
        skipped++;
        windowMin = windowMax;
        continue;
      }
      driving = live - probed;
      const probedBound = prefix[probed];
      const all = prefix[live];
      const partitioned = threshold;
      for (let j = 0; j < driving; j++) drive[j] = order[probed + j];
      // Score the window in chunks of WINDOW units.
      let lo = d;
      while (lo < windowMax) {
        const hi = Math.min(windowMax, lo + WINDOW);
        let any = 0;
        for (let j = 0; j < driving; j++) {
          const i = drive[j];
          any += cursors[i].scoreWindow(lo, hi, acc, seen, tables[i], weight[i], normInverse, norms, all - wbound[i], threshold);
        }
        scored += any;
        if (any > 0) {
          const words = (hi - lo + 31) >> 5;
          for (let wi = 0; wi < words; wi++) {
            let word = seen[wi];
            if (word === 0) continue;
            seen[wi] = 0;
            while (word !== 0) {
              const low = word & -word;
              word ^= low;
              const o = (wi << 5) | (31 - Math.clz32(low));
              let score = acc[o];
              acc[o] = 0;
              candidates++;
              // The probed terms, largest bound first, while the unit can still enter the top k.
              if ((score + probedBound) * SAFETY <= threshold) continue;
              const doc = lo + o;
              let alive = true;
              for (let j = probed - 1; j >= 0; j--) {
                if ((score + prefix[j + 1]) * SAFETY <= threshold) {
                  alive = false;
                  break;
                }
                const i = order[j];
                const c = cursors[i];
                if (c.doc > doc) continue;
                const bx = c.blockBound(doc);
                if (bx < 0) continue;
                const w = weight[i];
                if ((score + prefix[j] + f(w - f(w / f(1 + bx)))) * SAFETY <= threshold) {
                  alive = false;
                  break;
                }
                if (c.advance(doc) === doc) {
                  const tf = c.tf;
                  score += tf <= 2 ? tables[i][((tf - 1) << 8) | norms[doc]] : f(w - f(w / f(1 + f(tf * normInverse[norms[doc]]))));
                  scored++;
                }
              }
              if (!alive) continue;
              const final = f(score);
              if (final > threshold) {
                top.offer(final, doc);
                if (top.size === k) threshold = top.threshold;
              }
            }
          }
        }
        lo = hi;
        // A higher threshold may leave more terms to probe only: partition again from here.
        if (threshold > partitioned) break;
      }
      windowMin = lo;
      if (boundSum * SAFETY <= threshold) break;
    }
    this.stats.scored += scored;
    this.stats.candidates += candidates;
    this.stats.windowsSkipped += skipped;
    for (let i = 0; i < n; i++) {
      const c = cursors[i];
      this.stats.blocksSkipped += c.blocksSkipped;
      // Keep the read buffers for the next query (up to 1 MB each).
      if (c.readBuffer.length <= 1 << 20) this.readBuffers[i] = c.readBuffer;
    }
    return top.hits();
  }
}

/** A BM25 index directory opened for search. */
export class Bm25Retriever implements Retriever {
  readonly kind = "bm25" as const;
  readonly units: UnitStore;
  readonly searcher: Bm25Searcher;

  /** The index's manifest (read once, by the searcher). */
  get manifest(): IndexManifest {
    return this.searcher.manifest;
  }

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
export async function openBm25(dir: string): Promise<Bm25Retriever> {
  return new Bm25Retriever(dir);
}
