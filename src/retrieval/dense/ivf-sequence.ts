// The search sequence of a compressed dense index, one implementation for every place its lists are
// stored: probe each query's `nprobe` nearest coarse lists (./ivf-probe.ts), take the `refine` best
// candidates of those lists (the code type's scan: nearest codes, refined with the query's table), read
// the candidates' int8 rows, score them with the SIMD kernel of ./int8-kernel.ts and keep the top k, ties
// to the lower unit. Where the codes and rows are is the storage side, behind two small interfaces:
//   - `ListStore` (synchronous): the embedded index (./ivf-search.ts), codes in shared memory and int8 rows
//     read from rescore.i8;
//   - `RemoteLists` (asynchronous): lists held by shards elsewhere (ClickHouse, ../../backends/clickhouse/
//     dense.ts), which answer "each shard's nearest codes of a batch's probed lists" and "the rows at these
//     positions"; `remoteStore` turns them into a store: the shards' lists are merged here, cut to the
//     `refine × refineFactor` nearest (ties in list order) and refined to `refine` by the code type's table.

import type { Hit } from "../types.js";
import { refineDepth, type SearchOptions } from "../query.js";
import { Int8Scorer } from "./int8-kernel.js";
import type { Quantizer } from "./quantizer.js";
import { Prober, probeDepth } from "./ivf-probe.js";
import { TopHits } from "./top-heap.js";

/** The search depth a compressed dense index's manifest records: `nprobe` and `refine` (manifests written before the rename name it `rerank`). */
export function storedDepth(params: Record<string, unknown>): { nprobe: number; refine: number } {
  return { nprobe: params.nprobe as number, refine: (params.refine ?? params.rerank) as number };
}

/** Rows the rescoring kernel reads and scores at a time (3 MiB at 768 dimensions). */
export const RESCORE_ROWS = 4096;

/** A batch of queries with their probed lists and the search depth of this call. */
export interface ProbedBatch {
  /** The queries (`nq × dim`, unit length). */
  readonly qs: Float32Array;
  readonly nq: number;
  /** The lists each query probes (nearest first). */
  readonly probes: readonly Int32Array[];
  /** Each query's inner product with the centroid of each list it probes (in the order of `probes`). */
  readonly probeScores: readonly Float64Array[];
  /** Rows in each query's probed lists. */
  readonly totals: Float64Array;
  /** Candidates rescored per query (at least k). */
  readonly refine: number;
  /** Refinement depth factor: code types that refine shortlist `refine × refineFactor` first. */
  readonly refineFactor: number;
  /** The hits asked for (code types with an error bound prune by it). */
  readonly k: number;
}

/** Where the rescoring kernel's rows come from while one query's candidates are scored. */
export interface RowReader {
  /**
   * Reads rows for the sorted candidate positions `sorted[i …]` into `buf` (at most `cap` rows, `dim`
   * bytes each) and returns how far it got: `next` (the first position not read), `filled` (rows of
   * `buf` used) and `wanted` (how many candidates were read); for each, `rowOf[w]` is its row in `buf`
   * and `unitOf[w]` its unit.
   */
  fill(sorted: Float64Array, i: number, buf: Uint8Array, cap: number, rowOf: Int32Array, unitOf: Float64Array): { next: number; filled: number; wanted: number };
  /** Where the rows are scored in place instead (same scores as reading them): `fill` is then not called. */
  readonly inPlace?: InPlaceRows;
}

/** Rows held where a kernel scores them in place, with no copy (the embedded index's rows in memory). */
export interface InPlaceRows {
  /** Rows scored at a time at most. */
  readonly maxRows: number;
  /** The query: score = bias + Σ weights[d] · row[d], in the rescoring kernel's integer arithmetic. */
  setQuery(weights: Float32Array, bias: number): void;
  /** Scores of the rows at positions `sorted[i … i + n − 1]` (a view valid until the next call). */
  scoreAt(sorted: Float64Array, i: number, n: number): Float64Array;
  /** The unit at position `p`. */
  unit(p: number): number;
}

/** The storage of an index's lists searched on the calling thread: codes scanned and rows read synchronously. */
export interface ListStore {
  /** The positions of the `refine` best candidates of each query of the batch (all of them when its lists hold no more). */
  candidates(b: ProbedBatch): Float64Array[];
  /** The int8 rows of the batch's candidates. */
  rows(b: ProbedBatch, candidates: readonly Float64Array[]): RowReader;
}

/** A {@link ListStore} whose answers come asynchronously (lists on remote shards). */
export interface AsyncListStore {
  candidates(b: ProbedBatch): Promise<Float64Array[]>;
  rows(b: ProbedBatch, candidates: readonly Float64Array[]): Promise<RowReader>;
}

/** One candidate a shard returned for a query: probe rank of its list, position, unit, code distance, code bytes. */
export interface ShardCandidate {
  r: number;
  pos: number;
  unit: number;
  d: number;
  code: Uint8Array;
}

/** Lists held by remote shards, each of which scans the codes of the lists it holds. */
export interface RemoteLists {
  /**
   * For each query of `b` whose `depth` is above 0: every shard's `limit` nearest codes (by the code
   * type's distance, then probe rank, then position) in the query's probed lists it holds, all the
   * shards' together (in any order).
   */
  nearest(b: ProbedBatch, depth: readonly number[], limit: number): Promise<ShardCandidate[][]>;
  /** The int8 rows at `positions` (each with its list, which names its shard): position → row. */
  rows(wanted: readonly { list: number; pos: number }[]): Promise<Map<number, Uint8Array>>;
  /** The error for a candidate whose row no shard returned. */
  missingRow(pos: number): Error;
}

/** Probe, candidates, rescore, top k: the search of a compressed index over a store of its lists. */
export class IvfSequence {
  private readonly prober: Prober;
  private readonly scorer: Int8Scorer;
  private readonly rowOf = new Int32Array(RESCORE_ROWS);
  private readonly unitOf = new Float64Array(RESCORE_ROWS);

  constructor(
    private readonly q: Quantizer,
    private readonly offsets: Float64Array,
    private readonly count: number,
    private readonly defaults: { nprobe: number; refine: number },
  ) {
    this.prober = new Prober(q);
    this.scorer = new Int8Scorer(q.dim, RESCORE_ROWS);
  }

  /** The best `k` units of each query (`qs`: `nq × dim`, unit length) over a synchronous store. */
  search(store: ListStore, qs: Float32Array, k: number, o: SearchOptions = {}): Hit[][] {
    const b = this.probe(qs, k, o);
    if (!b) return Array.from({ length: qs.length / this.q.dim }, () => []);
    const candidates = store.candidates(b);
    return this.rescore(b, candidates, store.rows(b, candidates), k);
  }

  /** {@link search} over an asynchronous store. */
  async searchAsync(store: ListStore | AsyncListStore, qs: Float32Array, k: number, o: SearchOptions = {}): Promise<Hit[][]> {
    const b = this.probe(qs, k, o);
    if (!b) return Array.from({ length: qs.length / this.q.dim }, () => []);
    const candidates = await store.candidates(b);
    return this.rescore(b, candidates, await store.rows(b, candidates), k);
  }

  /** The batch's probed lists and depth (null when there is nothing to search). */
  private probe(qs: Float32Array, k: number, o: SearchOptions): ProbedBatch | null {
    const q = this.q;
    const nq = qs.length / q.dim;
    if (this.count === 0 || k <= 0) return null;
    const { nprobe, topProbe } = probeDepth(q, o.nprobe, this.defaults.nprobe, o.topProbe);
    const refine = Math.max(k, refineDepth(o) ?? this.defaults.refine);
    const { lists: probes, scores: probeScores } = this.prober.probeScored(qs, nq, nprobe, topProbe);
    const totals = new Float64Array(nq);
    for (let i = 0; i < nq; i++) {
      let total = 0;
      for (const l of probes[i]) total += this.offsets[l + 1] - this.offsets[l];
      totals[i] = total;
    }
    return { qs, nq, probes, probeScores, totals, refine, refineFactor: Math.max(1, o.refineFactor ?? 4), k };
  }

  /** Scores each query's candidates with their int8 rows; the best `k`, ties to the lower unit. */
  private rescore(b: ProbedBatch, candidates: readonly Float64Array[], rows: RowReader, k: number): Hit[][] {
    const q = this.q;
    const scorer = this.scorer;
    const cap = scorer.maxRows;
    const rowOf = this.rowOf;
    const unitOf = this.unitOf;
    const out: Hit[][] = [];
    const inPlace = rows.inPlace;
    for (let qi = 0; qi < b.nq; qi++) {
      const { weights, bias } = q.int8Query(b.qs, qi * q.dim);
      const sorted = Float64Array.from(candidates[qi]).sort();
      const best = new TopHits(k);
      if (inPlace) {
        inPlace.setQuery(weights, bias);
        for (let i = 0; i < sorted.length; i += inPlace.maxRows) {
          const n = Math.min(inPlace.maxRows, sorted.length - i);
          const scores = inPlace.scoreAt(sorted, i, n);
          for (let j = 0; j < n; j++) best.push(scores[j], inPlace.unit(sorted[i + j]));
        }
        out.push(best.hits());
        continue;
      }
      scorer.setQuery(weights, bias);
      let i = 0;
      while (i < sorted.length) {
        const r = rows.fill(sorted, i, scorer.rows(cap), cap, rowOf, unitOf);
        const scores = scorer.score(r.filled);
        for (let w = 0; w < r.wanted; w++) best.push(scores[rowOf[w]], unitOf[w]);
        i = r.next;
      }
      out.push(best.hits());
    }
    return out;
  }
}

/**
 * The store of lists on remote shards: the shards' nearest codes merged (by distance, then probe rank,
 * then position), the `refine × refineFactor` nearest kept (ties in list order, as the embedded scan cuts),
 * refined to `refine` by the code type's table over the codes the shards returned; rows fetched for the
 * batch's candidates. `offsets` are the lists' positions (lists.bin).
 */
export function remoteStore(q: Quantizer, offsets: Float64Array, remote: RemoteLists): AsyncListStore {
  const codec = q.codes;
  const refineCodes = codec.refineCodes?.bind(codec);
  // the units of the candidates of the batch in flight, by position (one map per batch)
  const units = new WeakMap<readonly Float64Array[], Map<number, number>>();
  return {
    async candidates(b) {
      const depth = Array.from(b.totals, (t) => Math.min(t, b.refine * b.refineFactor));
      const found = await remote.nearest(b, depth, b.refine * b.refineFactor);
      const byPos = new Map<number, number>();
      const out: Float64Array[] = [];
      for (let i = 0; i < b.nq; i++) {
        const all = found[i] ?? [];
        all.sort((a, c) => a.d - c.d || a.r - c.r || a.pos - c.pos);
        let near = all.slice(0, depth[i]).sort((a, c) => a.r - c.r || a.pos - c.pos);
        if (near.length > b.refine) {
          if (!refineCodes) throw new Error(`${codec.kind} codes cannot be refined from a shard's codes`);
          near = Array.from(refineCodes(b.qs, i * q.dim, near.map((c) => c.code), b.refine, q), (j) => near[j]);
        }
        const pos = new Float64Array(near.length);
        near.forEach((c, j) => {
          pos[j] = c.pos;
          byPos.set(c.pos, c.unit);
        });
        out.push(pos);
      }
      units.set(out, byPos);
      return out;
    },
    async rows(b, candidates) {
      const unitAt = units.get(candidates) ?? new Map<number, number>();
      const wanted: { list: number; pos: number }[] = [];
      for (let i = 0; i < b.nq; i++) for (const pos of candidates[i]) wanted.push({ list: listOf(b, i, pos), pos });
      const rowAt = await remote.rows(wanted);
      const dim = q.dim;
      return {
        fill(sorted, i, buf, cap, rowOf, unitOf) {
          const n = Math.min(cap, sorted.length - i);
          for (let r = 0; r < n; r++) {
            const row = rowAt.get(sorted[i + r]);
            if (!row) throw remote.missingRow(sorted[i + r]);
            buf.set(row, r * dim);
            rowOf[r] = r;
            unitOf[r] = unitAt.get(sorted[i + r]) as number;
          }
          return { next: i + n, filled: n, wanted: n };
        },
      };
    },
  };

  /** The probed list of query `i` that holds `pos`. */
  function listOf(b: ProbedBatch, i: number, pos: number): number {
    for (const l of b.probes[i]) if (pos >= offsets[l] && pos < offsets[l + 1]) return l;
    throw new Error(`position ${pos} is in none of the query's probed lists`);
  }
}
