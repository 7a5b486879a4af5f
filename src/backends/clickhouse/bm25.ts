// BM25 on ClickHouse: tartan analyses (the embedded build's SegmentCollector, so the terms and lengths
// are the same), ClickHouse stores and scores. Tables, sharded by unit number (unit mod shards):
//   <name>_postings_local (term, unit, tf, norm)  ORDER BY (term, unit), PARTITION BY chunk of units
//   <name>_units_local    (unit, data)            ORDER BY unit, PARTITION BY chunk (data: the unit as JSON)
//   <name>_terms_local    (term, df)              ORDER BY term: the shard's document frequencies
//   <name>_meta_local     on every shard: parameters, statistics, each shard's chunks done, `complete`
// `norm` is the unit's SmallFloat length byte. The build goes chunk by chunk (chunkUnits units): a
// chunk's units and postings go to their shards, then each shard records the chunk as done; a build
// killed at any moment and run again with the same arguments drops what a shard holds of chunks it had
// not recorded (whole partitions) and goes on from the first chunk some shard lacks, so the tables end
// up as one uninterrupted build makes them. Then each shard counts its terms' document frequencies.
// A batch of queries takes two SELECTs, each a UNION ALL of one sub-SELECT per query: the global df of
// the batch's terms (summed over the shards) gives each term's idf and weight, computed by tartan
// exactly as the embedded index does; every shard scores its postings as ../../retrieval/bm25/similarity.ts
// does (each float operation wrapped in toFloat32, the 256-entry norm cache and the weights sent as
// literals), sums per unit, keeps its top k, and the initiator merges the shards' lists (score
// descending, then lower unit), so rankings and scores equal the embedded index. The first SELECT
// scores each query's rarest terms only, for a threshold its k-th best unit reaches; the second scores
// only the units holding a term that can still lift a unit to it (exact max-score pruning). That is
// the fallback now: builds also write <name>_impacts_local (postings in impact order) and searches use
// the threshold algorithm of ./bm25-impacts.ts, which reads a part of the postings. The build is in
// ./bm25-build.ts.

import { getAnalyzer, type Analyzer, type AnalyzerName } from "../../retrieval/bm25/analyzer.js";
import { averageLength, idf, normInverseCache, termWeight } from "../../retrieval/bm25/similarity.js";
import type { Hit, IndexManifest, Retriever, UnitKind } from "../../retrieval/types.js";
import { queryText, type QueryInput, type SearchOptions } from "../../retrieval/query.js";
import { TARTAN_VERSION } from "../../retrieval/manifest.js";
import { ClickHouseDatabase, ClickHouseError, num, quote } from "./client.js";
import { BM25_FORMAT, requireMeta, tsvRows } from "./schema.js";
import { ClickHouseUnits } from "./units.js";
import { ImpactSearch, topK, type ImpactStats, type ImpactTerm } from "./bm25-impacts.js";
import { indexName, normCacheSql } from "./bm25-build.js";

export { buildBm25ClickHouse, DEFAULT_BM25_NAME, DEFAULT_CHUNK_UNITS, type ClickHouseBm25Stats, type ClickHouseBm25BuildOptions } from "./bm25-build.js";

export { ClickHouseUnits };

/** Queries per SELECT in searchBatch (at most: see GROUP_BUDGET). */
export const DEFAULT_BATCH = 100;
/**
 * (query, unit) groups a shard may hold for one SELECT: a query may group every unit of its shard (a
 * threshold of 0 prunes nothing), so a statement of q queries can group up to q × units-per-shard rows;
 * statements take fewer queries when the shards are large (4M groups: about 200 MB on a shard). Past
 * that, ClickHouse spills a GROUP BY to disk (MAX_GROUP_BY_BYTES) instead of failing. (Conservative since
 * each query groups on its own: docs/scale-out.md, scaling model.)
 */
export const GROUP_BUDGET = 4_000_000;
const MAX_GROUP_BY_BYTES = 500_000_000;
/** Postings (summed df) of the rarest terms a statement's first step scores per query (see searchBatch). */
export const PROBE_POSTINGS = 50_000;


/** Options of {@link openClickHouseBm25}. */
export interface ClickHouseBm25OpenOptions {
  /** Most queries per SELECT (default 100; fewer when the shards are large, see GROUP_BUDGET). */
  batch?: number;
  /** Postings of each query's rarest terms scored first to find its pruning threshold (default PROBE_POSTINGS). */
  probePostings?: number;
  /**
   * "impacts" (default where the index has them): the threshold algorithm over impact-ordered
   * postings (bm25-impacts.ts), the exhaustive plan for the queries it leaves; "scan": the exhaustive plan.
   */
  plan?: "impacts" | "scan";
  /** Queries per round of the impact plan (default 1,000: a term shared by queries is read once). */
  impactBatch?: number;
  /** The impact plan's first depth per term (default 2 k, at least 64). */
  firstDepth?: number;
}

/** A BM25 index in ClickHouse opened for search. */
export class ClickHouseBm25Retriever implements Retriever {
  readonly kind = "bm25" as const;
  readonly analyzer: Analyzer;
  readonly unit: UnitKind;
  /** The SQL of the norm cache entry of a posting's norm (Lucene's 256-entry cache, exact double literals). */
  private readonly cacheLiteral: string;
  private readonly postings: string;
  /** The postings table on each shard (the candidates' subquery runs where the postings are). */
  private readonly postingsLocal: string;
  private readonly terms: string;
  private readonly docCount: number;
  /**
   * Queries searched so far: answered by the first step alone (all their terms rare), and scored
   * only on the units of their essential terms (pruned); the rest were scored in full.
   */
  readonly pruning = { queries: 0, probeOnly: 0, pruned: 0 };
  /** The impact plan (null: an index built without impacts, or plan "scan"). */
  private readonly impactSearch: ImpactSearch | null;
  private readonly impactBatch: number;
  /** Global document frequencies of terms already asked for (0: not in the index). */
  private readonly df = new Map<string, number>();

  private constructor(
    readonly db: ClickHouseDatabase,
    readonly meta: Record<string, string>,
    readonly units: ClickHouseUnits,
    readonly batch: number,
    readonly probePostings: number,
    options: ClickHouseBm25OpenOptions,
  ) {
    const name = indexName(db);
    this.analyzer = getAnalyzer(meta.analyzer as AnalyzerName);
    this.unit = meta.unit as UnitKind;
    this.docCount = Number(meta.docCount);
    const avgdl = averageLength(Number(meta.sumTotalTermFreq), Math.max(1, this.docCount));
    const cache = normInverseCache(Number(meta.k1), Number(meta.b), avgdl);
    this.cacheLiteral = normCacheSql(cache);
    this.impactSearch = meta.impacts === "1" && options.plan !== "scan" ? new ImpactSearch(db, name, cache, units.count, Math.max(1, Number(meta.shards)), options.firstDepth) : null;
    this.impactBatch = Math.max(1, options.impactBatch ?? 1000);
    this.postings = db.readTable(`${name}_postings`);
    this.postingsLocal = db.qualified(`${name}_postings_local`);
    this.terms = db.readTable(`${name}_terms`);
    this.manifest = {
      kind: "bm25",
      unit: this.unit,
      units: Number(meta.units),
      params: { k1: Number(meta.k1), b: Number(meta.b), analyzer: meta.analyzer, title: meta.title === "1", shards: Number(meta.shards) },
      source: meta.source ?? "",
      created: meta.created ?? "",
      tartanVersion: TARTAN_VERSION,
      formatVersion: 0,
    };
  }

  /** The index as a manifest would describe it (from the index's meta table; no files). */
  readonly manifest: IndexManifest;

  /** Opens the index of `url` (`clickhouse://host:port/db/name?cluster=C`). */
  static async open(url: string, options: ClickHouseBm25OpenOptions = {}): Promise<ClickHouseBm25Retriever> {
    const db = await ClickHouseDatabase.connect(url);
    try {
      const name = indexName(db);
      const meta = await requireMeta(db, name, "bm25", BM25_FORMAT, "its build did not finish; run `tartan index build --kind bm25 --backend` again");
      db.checkShardCount(Number(meta.shards), "built", db.qualified(`${name}_meta_local`));
      const units = new ClickHouseUnits(db, db.readTable(`${name}_units`), Number(meta.units));
      return new ClickHouseBm25Retriever(db, meta, units, Math.max(1, options.batch ?? DEFAULT_BATCH), Math.max(0, options.probePostings ?? PROBE_POSTINGS), options);
    } catch (e) {
      await db.close();
      throw e;
    }
  }

  /** The query's distinct analysed terms with their counts (Lucene's boost), in first-seen order. */
  queryTerms(query: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const t of this.analyzer.analyze(query)) {
      // Terms are stored as UTF-8: lone surrogates become U+FFFD, as in the embedded index.
      const term = (t as unknown as { toWellFormed(): string }).toWellFormed();
      counts.set(term, (counts.get(term) ?? 0) + 1);
    }
    return counts;
  }

  /** Fetches the global document frequency of the terms not asked for yet (one SELECT, summed over the shards). */
  async loadDocFreqs(terms: Iterable<string>): Promise<void> {
    const missing = [...new Set(terms)].filter((t) => !this.df.has(t));
    if (missing.length === 0) return;
    if (this.df.size + missing.length > 1_000_000) this.df.clear();
    const text = await this.db.main.text(`SELECT term, sum(df) FROM ${this.terms} WHERE term IN (${missing.map(quote).join(",")}) GROUP BY term`, this.terms, {
      max_query_size: Math.max(262_144, missing.reduce((n, t) => n + t.length * 2 + 4, 1024)),
    });
    for (const t of missing) this.df.set(t, 0);
    for (const [term, df] of tsvRows(text)) this.df.set(term, Number(df));
  }

  /**
   * The SELECT answering `queries` (already analysed) with their top k: rows (q, unit, score); terms
   * whose document frequency (loadDocFreqs) is 0 are not in the index and are left out. One sub-SELECT
   * per query (UNION ALL), each scoring its terms' postings on every shard and keeping the shard's top k;
   * with `essential`, query q scores only the units holding one of `essential[q]`'s terms (null: every
   * unit of its terms), found by each shard in its own postings (a unit's postings are on its shard).
   */
  batchSql(queries: readonly Map<string, number>[], k: number, essential?: readonly (ReadonlySet<string> | null)[]): string | null {
    const list = (terms: Iterable<string>) => [...terms].map(quote).join(",");
    const parts: string[] = [];
    queries.forEach((terms, q) => {
      const known = [...terms].filter(([t]) => this.df.get(t)! > 0);
      if (known.length === 0) return;
      // Each term's weight w = boost * idf as the embedded index computes it (a float, written exactly).
      const T = `[${list(known.map(([t]) => t))}]`;
      const W = `[${known.map(([t, count]) => num(termWeight(count, idf(this.df.get(t)!, this.docCount)))).join(",")}]`;
      const ess = essential?.[q] ?? null;
      const candidates = ess === null ? "" : ` AND unit IN (SELECT unit FROM ${this.postingsLocal} WHERE term IN (${list(ess)}))`;
      // Each step in float32 as Lucene (and similarity.ts): x = tf * cache[norm]; score = w - w / (1 + x);
      // per unit the sum of its terms' scores in double, rounded to float.
      parts.push(
        [
          `SELECT toUInt32(${q}) AS q, unit, toFloat32(sum(toFloat32((toFloat32(transform(term, ${T}, ${W}, toFloat64(0))) AS w) - toFloat32(w / toFloat32(1 + toFloat32(tf * ${this.cacheLiteral})))))) AS score`,
          `FROM ${this.postings}`,
          `PREWHERE term IN (${T.slice(1, -1)})${candidates}`,
          `GROUP BY unit`,
          `ORDER BY score DESC, unit`,
          `LIMIT ${k}`,
        ].join("\n"),
      );
    });
    if (parts.length === 0) return null;
    return `SELECT q, unit, toFloat64(score) AS score FROM (\n${parts.join("\nUNION ALL\n")}\n) ORDER BY q, score DESC, unit LIMIT ${k} BY q`;
  }

  /** Queries per SELECT: the batch, fewer when the shards' units times the queries pass GROUP_BUDGET. */
  statementSize(): number {
    const unitsPerShard = Math.ceil(this.units.count / Math.max(1, Number(this.meta.shards)));
    return Math.max(1, Math.min(this.batch, Math.floor(GROUP_BUDGET / Math.max(1, unitsPerShard))));
  }

  /** Runs one batch SELECT: the top k of each query of the slice, as hits. */
  private async runBatch(queries: readonly Map<string, number>[], k: number, essential?: readonly (ReadonlySet<string> | null)[]): Promise<Hit[][]> {
    const out: Hit[][] = queries.map(() => []);
    const sql = this.batchSql(queries, k, essential);
    if (sql === null) return out;
    const text = await this.db.main.text(sql, this.postings, {
      distributed_group_by_no_merge: this.db.cluster === null ? 0 : 1,
      max_query_size: Math.max(262_144, sql.length + 1024),
      max_bytes_before_external_group_by: MAX_GROUP_BY_BYTES,
    });
    for (const line of text.split("\n")) {
      if (line.length === 0) continue;
      const [q, unit, score] = line.split("\t");
      out[Number(q)].push({ unit: Number(unit), score: Math.fround(Number(score)) });
    }
    return out;
  }

  /**
   * Each query's essential terms (null: all of them) given a score `theta` that its k-th best unit
   * reaches: the terms left out are the query's lowest-weight ones whose weights, each a bound of the
   * term's score (score = w - w / (1 + x) ≤ w), add up to less than theta, so a unit holding only those
   * scores less than theta and cannot be in the top k (not even by a tie).
   */
  essentialTerms(terms: Map<string, number>, theta: number): Set<string> | null {
    const weighted = [...terms]
      .filter(([t]) => this.df.get(t)! > 0)
      .map(([t, count]) => ({ t, w: termWeight(count, idf(this.df.get(t)!, this.docCount)) }))
      .sort((a, b) => a.w - b.w);
    let bound = 0;
    let cut = 0;
    // (the margin covers the double sums' rounding; leaving a term essential is always safe)
    while (cut < weighted.length && Math.fround((bound + weighted[cut].w) * (1 + 1e-9)) < theta) bound += weighted[cut++].w;
    return cut === 0 ? null : new Set(weighted.slice(cut).map((x) => x.t));
  }

  /**
   * Top k of each query, best first, ties by lower unit; the hits' units are loaded into `units`.
   * With impacts (the default where the index has them) each shard answers a round of up to
   * impactBatch queries by the threshold algorithm (bm25-impacts.ts); the queries it leaves, and all
   * of them with plan "scan", go to the exhaustive plan (scanBatch): per statement, first the top k
   * over each query's rarest terms (postings up to PROBE_POSTINGS) gives a score theta its k-th best
   * unit reaches at least; then only the units holding one of the query's essential terms
   * (essentialTerms) are scored in full. Both are exact.
   */
  async searchBatch(batch: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]> {
    // query feedback (rm3, rocchio) re-analyses feedback units against the embedded index's dictionary: not here
    if (options?.feedback !== undefined) throw new Error(`${options.feedback.method}: query feedback is for BM25 index directories, not a ClickHouse index`);
    const queries = batch.map(queryText);
    const out: Hit[][] = queries.map(() => []);
    const kk = Math.min(Math.floor(k), this.units.count);
    if (!(kk > 0)) return out;
    let rest = queries.map((_, i) => i);
    const impacts = this.impactSearch;
    if (impacts !== null) {
      // The impact plan, every shard at once; a query a shard leaves goes to the exhaustive plan.
      rest = [];
      for (let start = 0; start < queries.length; start += this.impactBatch) {
        const slice = queries.slice(start, start + this.impactBatch).map((q) => this.queryTerms(q));
        await this.loadDocFreqs(slice.flatMap((terms) => [...terms.keys()]));
        const terms: ImpactTerm[][] = slice.map((t) => [...t].filter(([x]) => this.df.get(x)! > 0).map(([term, count]) => ({ term, weight: termWeight(count, idf(this.df.get(term)!, this.docCount)), df: this.df.get(term)! })));
        const shards = await Promise.all(this.db.shards.map((s, i) => impacts.searchShard(s, terms, kk).catch((e: unknown) => this.shardFailure(e, i))));
        slice.forEach((_, i) => {
          if (shards.some((r) => r[i] === null)) {
            rest.push(start + i);
            impacts.stats.fallback++;
          } else {
            out[start + i] = topK(shards.flatMap((r) => r[i]!), kk);
            impacts.stats.queries++;
          }
        });
      }
    }
    const step = this.statementSize();
    for (let start = 0; start < rest.length; start += step) {
      const idx = rest.slice(start, start + step);
      const hits = await this.scanBatch(idx.map((i) => queries[i]), kk);
      idx.forEach((i, j) => (out[i] = hits[j]));
    }
    // One load for the whole call: every hit stays readable until the next search (the caller renders
    // them after this returns; a load per statement let a later statement's units evict an earlier one's).
    await this.units.load(out.flatMap((hits) => hits.map((h) => h.unit)));
    return out;
  }

  /** A shard's statement failed: the error names the URL, the table and the shard (and whether it answers /ping). */
  private async shardFailure(e: unknown, i: number): Promise<never> {
    const s = this.db.shards[i];
    const table = e instanceof ClickHouseError ? e.table : undefined;
    const message = e instanceof Error ? e.message : String(e);
    const inner = message.startsWith(s.url) ? message.slice(message.indexOf(": ") + 2) : message;
    const where = `shard ${i + 1} of ${this.db.shards.length} (${s.host}:${s.port})`;
    // (the URL's own server names the shards that do not answer itself)
    if (message.includes(`: ${where} `)) throw e;
    const answers = await s.ping(2000);
    throw new ClickHouseError(`${this.db.main.url}${table ? ` (table ${table})` : ""}: ${where} ${answers ? "failed" : "does not answer"}; ${inner}`, this.db.main.url, table, !answers || (e instanceof ClickHouseError && e.unavailable));
  }

  /** What the impact plan did so far (null: not used). */
  get impactStats(): ImpactStats | null {
    return this.impactSearch?.stats ?? null;
  }

  /** The exhaustive plan (with exact max-score pruning) on one statement's queries: two SELECTs. */
  private async scanBatch(queries: readonly string[], kk: number): Promise<Hit[][]> {
    const out: Hit[][] = queries.map(() => []);
    const slice = queries.map((q) => this.queryTerms(q));
    await this.loadDocFreqs(slice.flatMap((terms) => [...terms.keys()]));
    const probes = slice.map((terms) => this.probeTerms(terms));
    const first = await this.runBatch(probes, kk);
    const rest: number[] = [];
    const essential: (Set<string> | null)[] = [];
    slice.forEach((terms, i) => {
      this.pruning.queries++;
      if (probes[i].size === terms.size) {
        out[i] = first[i];
        this.pruning.probeOnly++;
      } else {
        rest.push(i);
        const e = this.essentialTerms(terms, first[i].length === kk ? first[i][kk - 1].score : 0);
        if (e !== null) this.pruning.pruned++;
        essential.push(e);
      }
    });
    if (rest.length > 0) {
      const second = await this.runBatch(rest.map((i) => slice[i]), kk, essential.some((e) => e !== null) ? essential : undefined);
      rest.forEach((i, r) => (out[i] = second[r]));
    }
    return out;
  }

  /** The query's rarest terms whose postings add up to `probePostings` at most (the rarest one at least). */
  probeTerms(terms: Map<string, number>): Map<string, number> {
    const known = [...terms].filter(([t]) => this.df.get(t)! > 0).sort((a, b) => this.df.get(a[0])! - this.df.get(b[0])!);
    const probe = new Map<string, number>();
    let postings = 0;
    for (const [t, count] of known) {
      const df = this.df.get(t)!;
      if (probe.size > 0 && postings + df > this.probePostings) break;
      probe.set(t, count);
      postings += df;
    }
    // (terms not in the index count as probed: they score nothing)
    for (const [t, count] of terms) if (!(this.df.get(t)! > 0)) probe.set(t, count);
    return probe;
  }

  async search(query: QueryInput, k: number, options?: SearchOptions): Promise<Hit[]> {
    return (await this.searchBatch([query], k, options))[0];
  }

  /** Closes the connections to the cluster. */
  async close(): Promise<void> {
    await this.db.close();
  }
}

/** Opens a ClickHouse BM25 index as a Retriever. */
export async function openClickHouseBm25(url: string, options: ClickHouseBm25OpenOptions = {}): Promise<ClickHouseBm25Retriever> {
  return ClickHouseBm25Retriever.open(url, options);
}
