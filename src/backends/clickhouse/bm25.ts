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
// the threshold algorithm of ./bm25-impacts.ts, which reads a part of the postings.

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bm25IndexedText, resolveParams, type Bm25BuildParams, type Bm25Params } from "../../retrieval/bm25/build.js";
import { SegmentCollector, SegmentReader } from "../../retrieval/bm25/segment.js";
import { getAnalyzer, type Analyzer, type AnalyzerName } from "../../retrieval/bm25/analyzer.js";
import { averageLength, idf, intToByte4, normInverseCache, termWeight } from "../../retrieval/bm25/similarity.js";
import type { Hit, IndexManifest, Retriever, UnitKind } from "../../retrieval/types.js";
import { TARTAN_VERSION } from "../../retrieval/manifest.js";
import type { Unit, UnitSource } from "../../retrieval/units.js";
import { ClickHouseDatabase, ClickHouseError, num, quote, type ClickHouseEndpoint } from "./client.js";
import { BM25_FORMAT, createMeta, readMeta, requireMeta, tableBytes, tsvField, tsvRows, writeMeta } from "./schema.js";
import { ClickHouseUnits } from "./units.js";
import { buildImpacts, ImpactSearch, topK, type ImpactStats, type ImpactTerm } from "./bm25-impacts.js";

export { ClickHouseUnits };

export const DEFAULT_BM25_NAME = "bm25";
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
/** Units per chunk: the unit of resumption and the tables' partition. */
export const DEFAULT_CHUNK_UNITS = 1_000_000;
/** Bytes of TabSeparated text per INSERT (each INSERT is one part). */
const FLUSH_BYTES = 16 << 20;

const POSTINGS_COLUMNS = "term String, unit UInt32, tf UInt32, norm UInt8";
const UNITS_COLUMNS = "unit UInt32, data String";
const TERMS_COLUMNS = "term String, df UInt32";

/** What a BM25 build into ClickHouse wrote. */
export interface ClickHouseBm25Stats {
  units: number;
  terms: number;
  postings: number;
  docCount: number;
  shards: number;
  /** Bytes of the index's tables on all shards after merging. */
  bytes: number;
  /** Units whose chunk a killed build had finished on every shard (not analysed again). */
  resumedUnits: number;
}

/** Options of {@link buildBm25ClickHouse} that are not recorded with the index. */
export interface ClickHouseBm25BuildOptions {
  /** Memory for the analysis's segments before they go to disk; default 512 MiB. */
  memory?: number;
  /** Units per chunk (resumption and partitions); default 1,000,000. */
  chunkUnits?: number;
  /** Go on with a killed build of the same arguments (default true); false starts afresh. */
  resume?: boolean;
  /** Called when every shard holds chunk `chunk` (tests stop the build here). */
  onChunk?: (chunk: number) => void;
}

/** Per-shard TabSeparated buffers, flushed as one INSERT each when large. */
class ShardBuffers {
  private readonly parts: string[][];
  private readonly sizes: number[];
  constructor(
    private readonly db: ClickHouseDatabase,
    private readonly table: string,
  ) {
    this.parts = db.shards.map(() => []);
    this.sizes = db.shards.map(() => 0);
  }
  async add(shard: number, line: string): Promise<void> {
    this.parts[shard].push(line);
    this.sizes[shard] += line.length;
    if (this.sizes[shard] >= FLUSH_BYTES) await this.flush(shard);
  }
  async flush(shard: number): Promise<void> {
    if (this.parts[shard].length === 0) return;
    const text = this.parts[shard].join("");
    this.parts[shard] = [];
    this.sizes[shard] = 0;
    await this.db.shards[shard].insertTsv(this.table, text);
  }
  async flushAll(): Promise<void> {
    await Promise.all(this.db.shards.map((_, i) => this.flush(i)));
  }
}

/** The index name of a URL (its second path segment, default "bm25"). */
function indexName(db: ClickHouseDatabase): string {
  return db.u.name ?? DEFAULT_BM25_NAME;
}

/** Rows of a one-row SELECT on one shard as numbers. */
async function counts(s: ClickHouseEndpoint, sql: string, table: string): Promise<number[]> {
  const rows = tsvRows(await s.text(sql, table));
  return (rows[0] ?? []).map(Number);
}

/**
 * Builds a BM25 index into the ClickHouse database of `url` (replacing an index of the same name, or
 * going on with a killed build of the same arguments): units and postings go to shard `unit mod
 * shards`, chunk by chunk; then the shards' term statistics, the meta, and `complete` last.
 */
export async function buildBm25ClickHouse(
  units: AsyncIterable<Unit> | Iterable<Unit>,
  url: string,
  params: Bm25BuildParams = {},
  onProgress?: (units: number) => void,
  options: ClickHouseBm25BuildOptions = {},
): Promise<ClickHouseBm25Stats> {
  const p: Bm25Params = resolveParams(params);
  const memory = options.memory ?? 512 << 20;
  const C = Math.max(1, Math.floor(options.chunkUnits ?? DEFAULT_CHUNK_UNITS));
  const db = await ClickHouseDatabase.connect(url);
  try {
    const name = indexName(db);
    const S = db.shards.length;
    const q = (t: string) => db.qualified(`${name}_${t}_local`);
    const key = JSON.stringify({ params: p, unit: params.unit ?? "passage", source: params.source ?? "", chunkUnits: C, shards: S, format: BM25_FORMAT });
    // Chunks each shard holds (0 on a fresh build); a resumed build goes on from the smallest.
    let done: number[] = db.shards.map(() => 0);
    const metas = await Promise.all(db.shards.map((s) => readMeta(db, name, s)));
    const resumable = options.resume !== false && metas.every((m) => m !== null && m.kind === "bm25" && m.format === BM25_FORMAT && m.complete === "0" && m.build_key === key);
    if (resumable) {
      done = metas.map((m) => Number(m!.chunks_done ?? 0));
      // What a shard holds of the chunks it had not recorded goes, whole partitions at a time.
      for (let i = 0; i < S; i++) {
        for (const t of ["postings", "units"]) {
          const parts = tsvRows(await db.shards[i].text(`SELECT DISTINCT partition FROM system.parts WHERE active AND database = ${quote(db.database)} AND table = ${quote(`${name}_${t}_local`)}`, "system.parts"));
          for (const [partition] of parts) if (Number(partition) >= done[i]) await db.shards[i].command(`ALTER TABLE ${q(t)} DROP PARTITION ${Number(partition)}`, q(t));
        }
      }
    } else {
      for (const t of ["postings", "units", "terms"]) await db.dropTable(`${name}_${t}`);
      // (the meta goes first and `complete` last, so a killed build is refused at open, never half-read)
      for (const s of db.shards) await s.command(`DROP TABLE IF EXISTS ${q("meta")}`, q("meta"));
      await createMeta(db, name);
      await writeMeta(db, name, { kind: "bm25", format: BM25_FORMAT, complete: 0, build_key: key, chunks_done: 0 });
      await db.createTable(`${name}_postings`, POSTINGS_COLUMNS, `MergeTree PARTITION BY intDiv(unit, ${C}) ORDER BY (term, unit) SETTINGS index_granularity = 2048`);
      await db.createTable(`${name}_units`, UNITS_COLUMNS, `MergeTree PARTITION BY intDiv(unit, ${C}) ORDER BY unit SETTINGS index_granularity = 1024`);
    }
    const first = Math.min(...done);

    // Analysis, one chunk at a time: units go to their shard at once; postings collect in segments
    // (bounded memory, on disk) and go to their shards when the chunk ends.
    const tmp = mkdtempSync(join(tmpdir(), "tartan-ch-bm25-"));
    const unitRows = new ShardBuffers(db, q("units"));
    const postings = new ShardBuffers(db, q("postings"));
    let collector = new SegmentCollector(p.analyzer);
    let segments: string[] = [];
    let chunk = first;
    let N = 0;
    const flushSegment = () => {
      if (collector.units === 0) return;
      const path = join(tmp, `segment-${segments.length}`);
      collector.flush(path);
      segments.push(path);
    };
    const endChunk = async () => {
      flushSegment();
      for (const path of segments) {
        const r = new SegmentReader(path, statSync(path).size);
        const base = r.unitIds[0];
        const norms = Uint8Array.from(r.lengths, (n) => intToByte4(n));
        let docs = new Int32Array(1024);
        let tfs = new Int32Array(1024);
        while (r.nextTerm()) {
          if (r.count > docs.length) ((docs = new Int32Array(r.count * 2)), (tfs = new Int32Array(r.count * 2)));
          const n = r.readPostings(docs, tfs, 0);
          const term = tsvField(r.term);
          for (let i = 0; i < n; i++) {
            const shard = docs[i] % S;
            if (chunk >= done[shard]) await postings.add(shard, `${term}\t${docs[i]}\t${tfs[i]}\t${norms[docs[i] - base]}\n`);
          }
        }
        r.close();
        rmSync(path);
      }
      segments = [];
      collector = new SegmentCollector(p.analyzer);
      await unitRows.flushAll();
      await postings.flushAll();
      const behind = db.shards.filter((_, i) => chunk >= done[i]);
      await writeMeta(db, name, { chunks_done: chunk + 1 }, behind);
      options.onChunk?.(chunk);
    };
    try {
      for await (const unit of units as AsyncIterable<Unit>) {
        const d = N++;
        if (d < first * C) {
          onProgress?.(N);
          continue;
        }
        if (Math.floor(d / C) !== chunk) {
          await endChunk();
          chunk = Math.floor(d / C);
        }
        collector.add(d, bm25IndexedText(unit, p));
        if (chunk >= done[d % S]) await unitRows.add(d % S, `${d}\t${tsvField(JSON.stringify(unit))}\n`);
        if (collector.memoryEstimate > memory) flushSegment();
        onProgress?.(N);
      }
      if (N > first * C) await endChunk();
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }

    // Each shard's document frequencies and counts, from its own postings.
    await db.dropTable(`${name}_terms`);
    await db.createTable(`${name}_terms`, TERMS_COLUMNS, "MergeTree ORDER BY term SETTINGS index_granularity = 1024");
    let postingsTotal = 0;
    let sumTotalTermFreq = 0;
    let docCount = 0;
    let stored = 0;
    for (const s of db.shards) {
      await s.command(`INSERT INTO ${q("terms")} SELECT term, toUInt32(count()) FROM ${q("postings")} GROUP BY term`, q("terms"));
      const [n, tf, docs] = await counts(s, `SELECT count(), sum(tf), uniqExact(unit) FROM ${q("postings")}`, q("postings"));
      postingsTotal += n;
      sumTotalTermFreq += tf;
      docCount += docs;
      stored += (await counts(s, `SELECT count() FROM ${q("units")}`, q("units")))[0];
    }
    if (stored !== N) throw new ClickHouseError(`${db.url} (table ${db.readTable(`${name}_units`)}): ${stored} units stored, the source gave ${N}; build again with resume off (a different source?)`, db.url, db.readTable(`${name}_units`));
    const terms = Number(tsvRows(await db.main.text(`SELECT count() FROM (SELECT term FROM ${db.readTable(`${name}_terms`)} GROUP BY term)`, db.readTable(`${name}_terms`)))[0][0]);
    for (const s of db.shards) {
      for (const t of ["postings", "units", "terms"]) await s.command(`OPTIMIZE TABLE ${q(t)} FINAL`, q(t));
    }
    // The impact-ordered postings (bm25-impacts.ts), ranked with the index's norm cache.
    await buildImpacts(db, name, normCacheSql(normInverseCache(p.k1, p.b, averageLength(sumTotalTermFreq, Math.max(1, docCount)))));
    await writeMeta(db, name, {
      k1: p.k1,
      b: p.b,
      analyzer: p.analyzer,
      title: p.title ? 1 : 0,
      unit: params.unit ?? "passage",
      source: params.source ?? "",
      units: N,
      docCount,
      sumTotalTermFreq,
      impacts: 1,
      terms,
      postings: postingsTotal,
      shards: S,
      chunkUnits: C,
      created: new Date().toISOString(),
    });
    await writeMeta(db, name, { complete: 1 });
    return { units: N, terms, postings: postingsTotal, docCount, shards: S, bytes: await tableBytes(db, name), resumedUnits: Math.min(N, first * C) };
  } finally {
    await db.close();
  }
}

/**
 * The SQL of the norm cache entry of a posting's `norm` (Lucene's 256-entry cache, exact double
 * literals). transform() (a hash lookup) rather than arrayElement on a constant array: 18.16
 * materialises the 256-entry array for every row it indexes, which was half of a statement's time.
 */
function normCacheSql(cache: Float32Array): string {
  return `transform(toUInt16(norm), [${Array.from(cache, (_, i) => i).join(",")}], [${Array.from(cache, num).join(",")}], toFloat64(0))`;
}

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
      if (db.cluster !== null && Number(meta.shards) !== db.shards.length) {
        throw new ClickHouseError(`${db.url} (table ${db.qualified(`${name}_meta_local`)}): built on ${meta.shards} shards, the cluster has ${db.shards.length}`, db.url);
      }
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
  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
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
    throw new ClickHouseError(`${this.db.main.url}${table ? ` (table ${table})` : ""}: ${where} ${answers ? "failed" : "does not answer"}; ${inner}`, this.db.main.url, table);
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

  async search(query: string, k: number): Promise<Hit[]> {
    return (await this.searchBatch([query], k))[0];
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
