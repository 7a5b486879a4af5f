// BM25 on ClickHouse that reads a small part of the postings and still returns the embedded index's
// top k and scores exactly (the threshold algorithm over impact-ordered postings). Layout: besides
// <name>_postings_local (term, unit, tf, norm) ORDER BY (term, unit), each shard holds
//   <name>_impacts_local (term, rank, unit, tf, norm) ORDER BY (term, rank), granules of 256 rows,
// where rank orders a term's postings on that shard by x = tf * cache[norm] (Lucene's float, as
// ../../retrieval/bm25/similarity.ts computes it) descending, then unit: the postings most able to
// score high come first. A batch of queries is answered shard by shard (each shard's top k, merged):
//  1. prefix: the first D postings by rank of every query term (one SELECT for the whole batch, each
//     term read once to the depth its deepest query needs; the primary key reads only those ranks);
//  2. per query: the scores known from the prefixes (each a lower bound of a unit's score), theta = the
//     k-th best of them, and each term's bound b = score(w, x of its last posting read) (0 when its
//     postings were read to the end); a unit seen in no prefix scores at most Σ b, a seen unit at most
//     its known part plus the b of the terms whose prefix it is not in. When Σ b < theta, only the seen
//     units whose bound reaches theta can be in the top k (ties included): they are the candidates;
//     otherwise the query goes another round with its unfinished terms 4 times deeper;
//  3. completion: the candidates' postings of the terms whose prefix they were not in, looked up by
//     (term, unit) in the postings table (one SELECT per round for the batch; the key reads only the
//     granules holding them); a pair not found is a term the unit lacks. The candidates' scores are
//     then exact, summed as the embedded index sums them (float contributions in double, one fround).
// A query still unresolved after MAX_ROUNDS, or with more than 30 distinct terms, is left to the
// exhaustive plan (null), as is every query of an index built before this table existed.

import { scoreOf, tfNorm } from "../../retrieval/bm25/similarity.js";
import type { Hit } from "../../retrieval/types.js";
import { quote, type ClickHouseDatabase, type ClickHouseEndpoint } from "./client.js";
import { tsvField } from "./schema.js";

/** Rows per granule of the impacts table (a prefix read costs at most one granule more per term). */
export const IMPACTS_GRANULARITY = 256;
/** Postings a shard ranks per INSERT … SELECT (terms are split by hash into groups of about this many). */
const RANK_GROUP_POSTINGS = 20_000_000;
/** Rounds of deepening before a query goes to the exhaustive plan (depths D0, 4 D0, 16 D0, …). */
export const MAX_ROUNDS = 5;
/** How much deeper a term's prefix goes in the next round. */
const GROWTH = 8;
/** A depth that reads a term's postings to the end. */
const ALL = 2 ** 31;
/** Completion lookups one query may ask for in a round; more and it goes deeper instead. */
const MAX_PAIRS = 5_000;
/** A query goes deeper on its largest bounds until the others add up to less than this share of theta. */
const DEEPEN = 0.25;
/** Bounds compared to theta are raised by this factor (leaving a unit in is always safe). */
const SAFETY = 1 + 1e-6;
const f = Math.fround;

/** A query term as the impact plan scores it: the term and its weight w = boost × idf (float). */
export interface ImpactTerm {
  term: string;
  weight: number;
  /** The term's document frequency over all shards (how deep is deep: see searchShard). */
  df: number;
}

/** What the impact plan did (summed over shards and batches). */
export interface ImpactStats {
  /** Queries answered by the plan on every shard. */
  queries: number;
  /** Queries left to the exhaustive plan. */
  fallback: number;
  /** Prefix statements and completion statements sent (all shards). */
  statements: number;
  /** Postings read by rank (prefixes) and looked up by (term, unit) (completion pairs asked). */
  prefixPostings: number;
  lookups: number;
}

/**
 * Creates <name>_impacts_local on every shard from its postings, ranked by x descending then unit;
 * `cacheSql` is the SQL of the norm cache entry of a posting's `norm` (the retriever's transform()).
 */
export async function buildImpacts(db: ClickHouseDatabase, name: string, cacheSql: string): Promise<void> {
  const impacts = db.qualified(`${name}_impacts_local`);
  const postings = db.qualified(`${name}_postings_local`);
  await db.dropTable(`${name}_impacts`);
  await db.createTable(`${name}_impacts`, "term String, rank UInt32, unit UInt32, tf UInt32, norm UInt8", `MergeTree ORDER BY (term, rank) SETTINGS index_granularity = ${IMPACTS_GRANULARITY}`);
  for (const s of db.shards) {
    const n = Number((await s.text(`SELECT count() FROM ${postings}`, postings)).trim());
    const groups = Math.max(1, Math.ceil(n / RANK_GROUP_POSTINGS));
    for (let g = 0; g < groups; g++) {
      // (x as the scorer computes it: toFloat32 of the double product, Math.fround(tf * cache[norm]))
      await s.command(
        [
          `INSERT INTO ${impacts} SELECT term, toUInt32(r - 1), p.1, p.2, p.3 FROM (`,
          `SELECT term, arraySort((t) -> (-t.4, t.1), groupArray((unit, tf, norm, toFloat32(tf * ${cacheSql})))) AS ps`,
          `FROM ${postings} ${groups > 1 ? `WHERE cityHash64(term) % ${groups} = ${g} ` : ""}GROUP BY term`,
          `) ARRAY JOIN ps AS p, arrayEnumerate(ps) AS r`,
        ].join("\n"),
        impacts,
      );
    }
    await s.command(`OPTIMIZE TABLE ${impacts} FINAL`, impacts);
  }
}

/** Settings of a statement with long IN lists (the parser's limits raised to its size). */
function bigStatement(sql: string): Record<string, number> {
  return { max_query_size: Math.max(262_144, sql.length + 1024), max_ast_elements: Math.max(50_000, sql.length), max_expanded_ast_elements: Math.max(500_000, sql.length) };
}

/** A term's postings on one shard read so far, in rank order. */
interface Prefix {
  /** Postings [0, length) of units and xs hold ranks 0, 1, …; the arrays grow by doubling. */
  units: Uint32Array;
  xs: Float32Array;
  length: number;
  /** Every posting of the term on the shard has been read. */
  complete: boolean;
  /** Contributions of the postings by query weight (see contributions()). */
  scores: Map<number, Float64Array>;
}

/** A query resolved in a round: its candidates' known sums, which terms they lack, and the lookups. */
interface Resolved {
  q: number;
  units: number[];
  sums: number[];
  /** Per candidate, bit i: term i still to look up. */
  todo: number[];
}

/** The impact plan on one index: one shard's top k of each query of a batch. */
export class ImpactSearch {
  readonly stats: ImpactStats = { queries: 0, fallback: 0, statements: 0, prefixPostings: 0, lookups: 0 };
  private readonly impacts: string;
  private readonly postings: string;
  /** Per unit id: its slot in the query being resolved, valid where stamp equals gen. */
  private readonly slot: Int32Array;
  private readonly stamp: Uint32Array;
  private gen = 0;
  /** resolve()'s scratch arrays: the query's seen units, their known sums and the terms they are in (bits). */
  private units = new Int32Array(0);
  private sums = new Float64Array(0);
  private seen = new Int32Array(0);
  private heapArray = new Float64Array(0);

  constructor(
    db: ClickHouseDatabase,
    name: string,
    /** The norm cache (normInverseCache of the index's k1, b and avgdl). */
    private readonly cache: Float32Array,
    /** Units in the index (unit ids are below it). */
    units: number,
    /** Shards of the index. */
    private readonly shards: number,
    /** First depth (ranks per term); default 2 k, at least 64. */
    private readonly firstDepth?: number,
  ) {
    this.slot = new Int32Array(units);
    this.stamp = new Uint32Array(units);
    this.impacts = db.qualified(`${name}_impacts_local`);
    this.postings = db.qualified(`${name}_postings_local`);
  }

  private x(tf: number, norm: number): number {
    return tfNorm(tf, this.cache[norm]);
  }

  /** Reads ranks [from, to) of each term into its prefix (one SELECT); terms with fewer are complete. */
  private async readPrefixes(s: ClickHouseEndpoint, prefixes: Map<string, Prefix>, wanted: Map<string, number>): Promise<void> {
    if (wanted.size === 0) return;
    const terms = [...wanted.keys()];
    const ranges = new Map<string, string[]>();
    for (const term of terms) {
      if (!prefixes.has(term)) prefixes.set(term, { units: new Uint32Array(0), xs: new Float32Array(0), length: 0, complete: false, scores: new Map() });
      const key = `${prefixes.get(term)!.length}\t${wanted.get(term)}`;
      ranges.set(key, [...(ranges.get(key) ?? []), term]);
    }
    const where = [...ranges].map(([key, group]) => {
      const [from, to] = key.split("\t");
      return `(term IN (${group.map(quote).join(",")}) AND rank >= ${from} AND rank < ${to})`;
    });
    // RowBinary rows: the term's index in `terms` (UInt16), rank, unit, tf (UInt32), norm (UInt8)
    const sql = `SELECT toUInt16(transform(term, [${terms.map(quote).join(",")}], [${terms.map((_, i) => i).join(",")}], 65535)), rank, unit, tf, norm FROM ${this.impacts} WHERE ${where.join(" OR ")}`;
    const buf = await s.raw(sql, this.impacts, "RowBinary", bigStatement(sql));
    this.stats.statements++;
    const list = terms.map((t) => prefixes.get(t)!);
    const got = new Array<number>(terms.length).fill(0);
    for (let o = 0; o + 15 <= buf.length; o += 15) got[buf.readUInt16LE(o)]++;
    list.forEach((p, t) => {
      const need = p.length + got[t];
      if (p.units.length >= need) return;
      const size = Math.max(need, 2 * p.units.length);
      const units = new Uint32Array(size);
      const xs = new Float32Array(size);
      units.set(p.units.subarray(0, p.length));
      xs.set(p.xs.subarray(0, p.length));
      p.units = units;
      p.xs = xs;
    });
    const damaged = (t: number) => new Error(`${s.url} (table ${this.impacts}): ranks of ${JSON.stringify(terms[t])} not contiguous (index damaged?)`);
    const filled = new Array<number>(terms.length).fill(0);
    for (let o = 0; o + 15 <= buf.length; o += 15) {
      const t = buf.readUInt16LE(o);
      const p = list[t];
      const i = buf.readUInt32LE(o + 2);
      // (ranks [length, length + got) each once: the range asked for, unique in the table)
      if (i < p.length || i >= p.length + got[t]) throw damaged(t);
      p.units[i] = buf.readUInt32LE(o + 6);
      p.xs[i] = this.x(buf.readUInt32LE(o + 10), buf[o + 14]);
      filled[t]++;
    }
    list.forEach((p, t) => {
      if (filled[t] !== got[t]) throw damaged(t);
      p.length += got[t];
      this.stats.prefixPostings += got[t];
      if (p.length < wanted.get(terms[t])!) p.complete = true;
    });
  }

  /** Looks up (term, unit) pairs in the postings table: the x of each pair found (one SELECT). */
  private async lookup(s: ClickHouseEndpoint, pairs: Map<string, Set<number>>): Promise<Map<string, Map<number, number>>> {
    const out = new Map<string, Map<number, number>>();
    if (pairs.size === 0) return out;
    const terms = [...pairs.keys()];
    // (one set of (term, unit) pairs sent as external data: the key reads only the granules holding
    // them; PREWHERE first reads the unit column alone and keeps the rows of a candidate unit, so the
    // term strings of the others are neither read nor hashed: 3.4x fewer bytes, about a third less
    // CPU on 200,000 synthetic passages, 2026-11-26)
    const lines: string[] = [];
    for (const [term, units] of pairs) {
      const t = tsvField(term);
      for (const u of units) lines.push(`${t}\t${u}\n`);
    }
    const sql = `SELECT toUInt16(transform(term, [${terms.map(quote).join(",")}], [${terms.map((_, i) => i).join(",")}], 65535)), unit, tf, norm FROM ${this.postings} PREWHERE unit IN (SELECT unit FROM pairs) WHERE (term, unit) IN pairs`;
    const buf = await s.raw(sql, this.postings, "RowBinary", bigStatement(sql), { name: "pairs", structure: "term String, unit UInt32", data: lines.join("") });
    this.stats.statements++;
    this.stats.lookups += lines.length;
    const maps = terms.map((t) => {
      const m = new Map<number, number>();
      out.set(t, m);
      return m;
    });
    for (let o = 0; o + 11 <= buf.length; o += 11) maps[buf.readUInt16LE(o)].set(buf.readUInt32LE(o + 2), this.x(buf.readUInt32LE(o + 6), buf[o + 10]));
    return out;
  }

  /**
   * Shard `s`'s top k of each query (best first, ties by lower unit), or null for a query left to the
   * exhaustive plan. Each query: its distinct terms found in the index with their weights.
   */
  async searchShard(s: ClickHouseEndpoint, queries: readonly ImpactTerm[][], k: number): Promise<(Hit[] | null)[]> {
    const out: (Hit[] | null)[] = queries.map((terms) => (terms.length === 0 ? [] : null));
    const d0 = Math.max(64, this.firstDepth ?? 2 * k);
    const depth = queries.map((terms) => terms.map(() => d0));
    const prefixes = new Map<string, Prefix>();
    let pending = queries.flatMap((terms, q) => (terms.length > 0 && terms.length <= 30 ? [q] : []));
    for (let round = 0; round < MAX_ROUNDS && pending.length > 0; round++) {
      const wanted = new Map<string, number>();
      for (const q of pending) {
        queries[q].forEach(({ term }, i) => {
          const p = prefixes.get(term);
          if (p?.complete || (p?.length ?? 0) >= depth[q][i]) return;
          wanted.set(term, Math.max(wanted.get(term) ?? 0, depth[q][i]));
        });
      }
      await this.readPrefixes(s, prefixes, wanted);
      const resolved: Resolved[] = [];
      const pairs = new Map<string, Set<number>>();
      const next: number[] = [];
      for (const q of pending) {
        const r = this.resolve(queries[q], prefixes, k, q, depth[q]);
        if ("deeper" in r) {
          for (const i of r.deeper) {
            const d = depth[q][i] * GROWTH;
            // (past half of the term's postings on a shard, as the global df says, the rest in one go)
            depth[q][i] = d * 2 * this.shards >= queries[q][i].df ? ALL : d;
          }
          next.push(q);
        } else if (Array.isArray(r)) {
          out[q] = r;
        } else {
          resolved.push(r);
        }
      }
      const found = await this.lookup(s, this.pairsOf(queries, resolved, resolved.map((r) => r.units.map((_, c) => c))));
      for (const r of resolved) out[r.q] = topK(r.units.map((unit, c) => ({ unit, score: this.complete(queries[r.q], r, c, found) })), k);
      pending = next;
    }
    return out;
  }

  /** The (term, unit) pairs to look up for candidates `chosen[j]` of each resolved query j. */
  private pairsOf(queries: readonly ImpactTerm[][], resolved: readonly Resolved[], chosen: readonly number[][]): Map<string, Set<number>> {
    const pairs = new Map<string, Set<number>>();
    resolved.forEach((r, j) => {
      for (const c of chosen[j]) {
        for (let i = 0, bits = r.todo[c]; bits !== 0; i++, bits >>>= 1) {
          if ((bits & 1) === 0) continue;
          const term = queries[r.q][i].term;
          let set = pairs.get(term);
          if (set === undefined) pairs.set(term, (set = new Set()));
          set.add(r.units[c]);
        }
      }
    });
    return pairs;
  }

  /** Candidate c's exact score: its known sum plus the contributions found by the lookups (double, one fround). */
  private complete(terms: readonly ImpactTerm[], r: Resolved, c: number, found: Map<string, Map<number, number>>): number {
    let sum = r.sums[c];
    for (let i = 0, bits = r.todo[c]; bits !== 0; i++, bits >>>= 1) {
      if ((bits & 1) === 0) continue;
      const x = found.get(terms[i].term)?.get(r.units[c]);
      if (x !== undefined) sum += scoreOf(terms[i].weight, x);
    }
    return f(sum);
  }

  /**
   * One query on one shard from the prefixes read: its exact top k (every term read to the end), the
   * candidates and their lookups (exact once completed), or "deeper" when the prefixes cannot bound it.
   */
  private resolve(terms: readonly ImpactTerm[], prefixes: Map<string, Prefix>, k: number, q: number, depth: readonly number[]): Hit[] | Resolved | { deeper: number[] } {
    // (a unit's slot in this query's scratch arrays: slot[unit] where stamp[unit] is this call's; the
    // scratch arrays are reused from call to call, so that summing allocates nothing per posting)
    const gen = ++this.gen;
    const { slot, stamp } = this;
    let total = 0;
    const lists = terms.map(({ term }, i) => {
      const p = prefixes.get(term)!;
      // (the query's own depth: a term read deeper for another query is not summed again here)
      const n = Math.min(p.length, depth[i]);
      total += n;
      return { p, n };
    });
    this.reserve(total);
    const { units, sums, seen } = this;
    const bound: number[] = [];
    let count = 0;
    let unseen = 0;
    for (let i = 0; i < terms.length; i++) {
      const { p, n } = lists[i];
      const b = (p.complete && n === p.length) || n === 0 ? 0 : scoreOf(terms[i].weight, p.xs[n - 1]);
      bound.push(b);
      unseen += b;
      const scores = contributions(p, terms[i].weight);
      const pu = p.units;
      const bit = 1 << i;
      for (let j = 0; j < n; j++) {
        const u = pu[j];
        if (stamp[u] !== gen) {
          stamp[u] = gen;
          slot[u] = count;
          units[count] = u;
          sums[count] = scores[j];
          seen[count] = bit;
          count++;
        } else {
          const c = slot[u];
          sums[c] += scores[j];
          seen[c] |= bit;
        }
      }
    }
    if (unseen === 0) {
      const hits: Hit[] = [];
      for (let c = 0; c < count; c++) hits.push({ unit: units[c], score: f(sums[c]) });
      return topK(hits, k);
    }
    const open = terms.flatMap((_, i) => (bound[i] > 0 ? [i] : []));
    if (count < k) return { deeper: open };
    const theta = kthLargest(sums, count, k, this.heap(k));
    // Deeper: the terms of largest bound, until the others' bounds add up to less than DEEPEN of theta.
    const deeper = () => {
      const order = [...open].sort((a, b) => bound[b] - bound[a]);
      let rest = unseen;
      const out: number[] = [];
      for (const i of order) {
        if (rest < theta * DEEPEN && out.length > 0) break;
        out.push(i);
        rest -= bound[i];
      }
      return { deeper: out };
    };
    if (!(f(unseen) * SAFETY < theta)) return deeper();
    const r: Resolved = { q, units: [], sums: [], todo: [] };
    let lookups = 0;
    const all = open.reduce((m, i) => m | (1 << i), 0);
    for (let c = 0; c < count; c++) {
      const todo = all & ~seen[c];
      let upper = sums[c];
      for (let i = 0, b = todo; b !== 0; i++, b >>>= 1) if (b & 1) upper += bound[i];
      if (f(upper) * SAFETY < theta) continue;
      r.units.push(units[c]);
      r.sums.push(sums[c]);
      r.todo.push(todo);
      for (let b = todo; b !== 0; b &= b - 1) lookups++;
      if (lookups > MAX_PAIRS) return deeper();
    }
    return r;
  }

  /** Grows the scratch arrays of resolve() to hold n units. */
  private reserve(n: number): void {
    if (this.units.length >= n) return;
    const size = Math.max(n, 2 * this.units.length);
    this.units = new Int32Array(size);
    this.sums = new Float64Array(size);
    this.seen = new Int32Array(size);
  }

  /** A scratch min-heap of k entries for kthLargest. */
  private heap(k: number): Float64Array {
    if (this.heapArray.length < k) this.heapArray = new Float64Array(k);
    return this.heapArray;
  }
}

/**
 * The k-th largest of fround(values[0..n)) (n >= k), with a min-heap of the k largest seen: O(n log k)
 * and no allocation (the values are the lower bounds; theta is the k-th best).
 */
export function kthLargest(values: Float64Array, n: number, k: number, heap: Float64Array): number {
  for (let i = 0; i < k; i++) {
    // sift up
    let j = i;
    const v = f(values[i]);
    while (j > 0) {
      const parent = (j - 1) >> 1;
      if (heap[parent] <= v) break;
      heap[j] = heap[parent];
      j = parent;
    }
    heap[j] = v;
  }
  for (let i = k; i < n; i++) {
    const v = f(values[i]);
    if (v <= heap[0]) continue;
    // replace the root and sift down
    let j = 0;
    for (;;) {
      const l = 2 * j + 1;
      if (l >= k) break;
      const r = l + 1;
      const m = r < k && heap[r] < heap[l] ? r : l;
      if (heap[m] >= v) break;
      heap[j] = heap[m];
      j = m;
    }
    heap[j] = v;
  }
  return heap[0];
}

/** The contributions score(w, x) of a prefix's postings for weight w, computed once per weight. */
function contributions(p: Prefix, weight: number): Float64Array {
  let c = p.scores.get(weight);
  if (c === undefined || c.length < p.length) {
    const old = c ?? new Float64Array(0);
    c = new Float64Array(p.length);
    c.set(old);
    for (let j = old.length; j < p.length; j++) c[j] = scoreOf(weight, p.xs[j]);
    p.scores.set(weight, c);
  }
  return c;
}

/** The k best hits, score descending, ties by lower unit. */
export function topK(hits: Hit[], k: number): Hit[] {
  return hits.sort((a, b) => b.score - a.score || a.unit - b.unit).slice(0, k);
}
