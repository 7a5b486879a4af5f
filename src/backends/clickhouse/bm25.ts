// BM25 on ClickHouse: tartan analyses (the embedded build's SegmentCollector, segments on disk so
// memory stays bounded), ClickHouse stores and scores. Tables, sharded by unit number (unit mod shards), every shard also holding the meta:
//   <name>_postings_local (term, unit, tf, norm, idf)   ORDER BY (term, unit)
//   <name>_units_local    (unit, data)                  ORDER BY unit      (data: the unit as JSON)
// `norm` is the unit's SmallFloat length byte and `idf` the term's Lucene idf (float32, computed by
// tartan from the global document frequency), both stored beside each posting so a score needs no
// join. One SELECT answers a batch of queries: every shard scores its postings exactly as
// ../../retrieval/bm25/similarity.ts does (each float operation wrapped in toFloat32, the 256-entry
// norm cache sent as a literal), sums per (query, unit), keeps its top k, and the initiator merges
// the shards' lists (score descending, then lower unit), so rankings and scores equal the embedded index.

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bm25IndexedText, resolveParams, type Bm25BuildParams, type Bm25Params } from "../../retrieval/bm25/build.js";
import { SegmentCollector, SegmentReader } from "../../retrieval/bm25/segment.js";
import { getAnalyzer, type Analyzer, type AnalyzerName } from "../../retrieval/bm25/analyzer.js";
import { averageLength, idf, intToByte4, normInverseCache } from "../../retrieval/bm25/similarity.js";
import type { Hit, Retriever, UnitKind } from "../../retrieval/types.js";
import type { Unit, UnitSource } from "../../retrieval/units.js";
import { ClickHouseDatabase, ClickHouseError, num, quote } from "./client.js";
import { BM25_FORMAT, createMeta, requireMeta, tableBytes, tsvField, tsvRows, writeMeta } from "./schema.js";

export const DEFAULT_BM25_NAME = "bm25";
/** Queries per SELECT in searchBatch (at most: see GROUP_BUDGET). */
export const DEFAULT_BATCH = 100;
/**
 * (query, unit) groups a shard may hold for one SELECT: the scoring is exhaustive (every posting of
 * every query term), so a statement of q queries can group up to q × units-per-shard rows; statements
 * take fewer queries when the shards are large (4M groups: about 200 MB on a shard). Past that,
 * ClickHouse spills the GROUP BY to disk (MAX_GROUP_BY_BYTES) instead of failing.
 */
export const GROUP_BUDGET = 4_000_000;
const MAX_GROUP_BY_BYTES = 500_000_000;
/** Bytes of TabSeparated text per INSERT (each INSERT is one part). */
const FLUSH_BYTES = 16 << 20;

const POSTINGS_COLUMNS = "term String, unit UInt32, tf UInt32, norm UInt8, idf Float32";
const UNITS_COLUMNS = "unit UInt32, data String";

export interface ClickHouseBm25Stats {
  units: number;
  terms: number;
  postings: number;
  docCount: number;
  shards: number;
  /** Bytes of the index's tables on all shards after merging. */
  bytes: number;
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

/**
 * Builds a BM25 index into the ClickHouse database of `url` (replacing an index of the same name):
 * units and postings go to shard `unit mod shards`, the meta to every shard, `complete` last.
 */
export async function buildBm25ClickHouse(
  units: AsyncIterable<Unit> | Iterable<Unit>,
  url: string,
  params: Bm25BuildParams = {},
  onProgress?: (units: number) => void,
  memory = 512 << 20,
): Promise<ClickHouseBm25Stats> {
  const p: Bm25Params = resolveParams(params);
  const db = await ClickHouseDatabase.connect(url);
  try {
    const name = indexName(db);
    const S = db.shards.length;
    for (const t of ["postings", "units"]) await db.dropTable(`${name}_${t}`);
    // (the meta goes first and `complete` last, so a killed build is refused at open, never half-read)
    for (const s of db.shards) await s.command(`DROP TABLE IF EXISTS ${db.qualified(`${name}_meta_local`)}`, db.qualified(`${name}_meta_local`));
    await createMeta(db, name);
    await writeMeta(db, name, { kind: "bm25", format: BM25_FORMAT, complete: 0 });
    await db.createTable(`${name}_postings`, POSTINGS_COLUMNS, "MergeTree ORDER BY (term, unit) SETTINGS index_granularity = 2048");
    await db.createTable(`${name}_units`, UNITS_COLUMNS, "MergeTree ORDER BY unit SETTINGS index_granularity = 1024");
    let stats: { units: number; terms: number; postings: number; docCount: number; sumTotalTermFreq: number };

    // Analysis: units go to their shard at once; postings collect in segments (bounded memory) on disk.
    const collector = new SegmentCollector(p.analyzer);
    const segments: string[] = [];
    const tmp = mkdtempSync(join(tmpdir(), "tartan-ch-bm25-"));
    let docCount = 0;
    let sumTotalTermFreq = 0;
    let N = 0;
    const flushSegment = () => {
      if (collector.units === 0) return;
      const path = join(tmp, `segment-${segments.length}`);
      const st = collector.flush(path);
      docCount += st.docCount;
      sumTotalTermFreq += st.sumTotalTermFreq;
      segments.push(path);
    };
    try {
      const unitRows = new ShardBuffers(db, db.qualified(`${name}_units_local`));
      for await (const unit of units as AsyncIterable<Unit>) {
        const d = N++;
        const text = bm25IndexedText(unit, p);
        collector.add(d, text);
        await unitRows.add(d % S, `${d}\t${tsvField(JSON.stringify(unit))}\n`);
        if (collector.memoryEstimate > memory) flushSegment();
        onProgress?.(N);
      }
      flushSegment();
      await unitRows.flushAll();

      // Document frequencies over all segments, then each posting with its unit's norm byte and its term's idf.
      const df = new Map<string, number>();
      for (const path of segments) {
        const r = new SegmentReader(path, statSync(path).size);
        let docs = new Int32Array(1024);
        let tfs = new Int32Array(1024);
        while (r.nextTerm()) {
          if (r.count > docs.length) ((docs = new Int32Array(r.count * 2)), (tfs = new Int32Array(r.count * 2)));
          r.readPostings(docs, tfs, 0);
          df.set(r.term, (df.get(r.term) ?? 0) + r.count);
        }
        r.close();
      }
      const postings = new ShardBuffers(db, db.qualified(`${name}_postings_local`));
      let P = 0;
      for (const path of segments) {
        const r = new SegmentReader(path, statSync(path).size);
        const base = r.unitIds[0];
        const norms = Uint8Array.from(r.lengths, (n) => intToByte4(n));
        let docs = new Int32Array(1024);
        let tfs = new Int32Array(1024);
        while (r.nextTerm()) {
          if (r.count > docs.length) ((docs = new Int32Array(r.count * 2)), (tfs = new Int32Array(r.count * 2)));
          const n = r.readPostings(docs, tfs, 0);
          const suffix = `\t${num(idf(df.get(r.term)!, docCount))}\n`;
          const term = tsvField(r.term);
          for (let i = 0; i < n; i++) await postings.add(docs[i] % S, `${term}\t${docs[i]}\t${tfs[i]}\t${norms[docs[i] - base]}${suffix}`);
          P += n;
        }
        r.close();
      }
      await postings.flushAll();
      stats = { units: N, terms: df.size, postings: P, docCount, sumTotalTermFreq };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    for (const s of db.shards) {
      for (const t of ["postings", "units"]) await s.command(`OPTIMIZE TABLE ${db.qualified(`${name}_${t}_local`)} FINAL`, db.qualified(`${name}_${t}_local`));
    }
    await writeMeta(db, name, {
      k1: p.k1,
      b: p.b,
      analyzer: p.analyzer,
      title: p.title ? 1 : 0,
      unit: params.unit ?? "passage",
      source: params.source ?? "",
      units: stats.units,
      docCount: stats.docCount,
      sumTotalTermFreq: stats.sumTotalTermFreq,
      terms: stats.terms,
      postings: stats.postings,
      shards: S,
      created: new Date().toISOString(),
    });
    await writeMeta(db, name, { complete: 1 });
    return { units: stats.units, terms: stats.terms, postings: stats.postings, docCount: stats.docCount, shards: S, bytes: await tableBytes(db, name) };
  } finally {
    await db.close();
  }
}

/** Units of a ClickHouse index: read for each batch's hits, then served from memory. */
export class ClickHouseUnits implements UnitSource {
  private readonly cache = new Map<number, Unit>();
  constructor(
    private readonly db: ClickHouseDatabase,
    private readonly table: string,
    readonly count: number,
    private readonly max = 100_000,
  ) {}

  /** Reads the units not cached yet (one SELECT). */
  async load(units: Iterable<number>): Promise<void> {
    const missing = [...new Set(units)].filter((u) => !this.cache.has(u));
    if (missing.length === 0) return;
    const text = await this.db.main.text(`SELECT unit, data FROM ${this.table} WHERE unit IN (${missing.join(",")})`, this.table);
    for (const [unit, data] of tsvRows(text)) {
      if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value as number);
      this.cache.set(Number(unit), JSON.parse(data) as Unit);
    }
  }

  get(i: number): Unit {
    const u = this.cache.get(i);
    if (u !== undefined) return u;
    if (!Number.isInteger(i) || i < 0 || i >= this.count) throw new RangeError(`unit ${i} out of range 0..${this.count - 1}`);
    throw new Error(`${this.db.url}: unit ${i} was not loaded (units are read with the hits of a search; call load() first)`);
  }
}

/** A BM25 index in ClickHouse opened for search. */
export class ClickHouseBm25Retriever implements Retriever {
  readonly kind = "bm25" as const;
  readonly analyzer: Analyzer;
  readonly unit: UnitKind;
  private readonly cacheLiteral: string;
  private readonly postings: string;

  private constructor(
    readonly db: ClickHouseDatabase,
    readonly meta: Record<string, string>,
    readonly units: ClickHouseUnits,
    readonly batch: number,
  ) {
    const name = indexName(db);
    this.analyzer = getAnalyzer(meta.analyzer as AnalyzerName);
    this.unit = meta.unit as UnitKind;
    const docCount = Number(meta.docCount);
    const avgdl = averageLength(Number(meta.sumTotalTermFreq), Math.max(1, docCount));
    const cache = normInverseCache(Number(meta.k1), Number(meta.b), avgdl);
    this.cacheLiteral = `[${Array.from(cache, num).join(",")}]`;
    this.postings = db.readTable(`${name}_postings`);
  }

  /** Opens the index of `url` (`clickhouse://host:port/db/name?cluster=C`). */
  static async open(url: string, options: { batch?: number } = {}): Promise<ClickHouseBm25Retriever> {
    const db = await ClickHouseDatabase.connect(url);
    try {
      const name = indexName(db);
      const meta = await requireMeta(db, name, "bm25", BM25_FORMAT, "its build did not finish; run `tartan index build --kind bm25 --backend` again");
      if (db.cluster !== null && Number(meta.shards) !== db.shards.length) {
        throw new ClickHouseError(`${db.url} (table ${db.qualified(`${name}_meta_local`)}): built on ${meta.shards} shards, the cluster has ${db.shards.length}`, db.url);
      }
      const units = new ClickHouseUnits(db, db.readTable(`${name}_units`), Number(meta.units));
      return new ClickHouseBm25Retriever(db, meta, units, Math.max(1, options.batch ?? DEFAULT_BATCH));
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

  /** The SELECT answering `queries` (already analysed) with their top k: rows (q, unit, score). */
  batchSql(queries: readonly Map<string, number>[], k: number): string | null {
    const termIndex = new Map<string, number>();
    const qs: number[][] = [];
    const boosts: number[][] = [];
    queries.forEach((terms, q) => {
      for (const [term, count] of terms) {
        let j = termIndex.get(term);
        if (j === undefined) {
          j = termIndex.size;
          termIndex.set(term, j);
          qs.push([]);
          boosts.push([]);
        }
        qs[j].push(q);
        boosts[j].push(count);
      }
    });
    if (termIndex.size === 0) return null;
    const T = `[${[...termIndex.keys()].map(quote).join(",")}]`;
    const I = `[${Array.from({ length: termIndex.size }, (_, j) => j + 1).join(",")}]`;
    const Q = `[${qs.map((a) => `[${a.join(",")}]`).join(",")}]`;
    const B = `[${boosts.map((a) => `[${a.join(",")}]`).join(",")}]`;
    // Each step in float32 as Lucene (and similarity.ts): w = boost * idf; x = tf * cache[norm];
    // score = w - w / (1 + x); per unit the sum of its terms' scores in double, rounded to float.
    const perShard = [
      `SELECT q, unit, toFloat32(sum(toFloat32((toFloat32(toFloat32(boost) * idf) AS w) - toFloat32(w / toFloat32(1 + toFloat32(tf * arrayElement(${this.cacheLiteral}, norm + 1))))))) AS score`,
      `FROM ${this.postings}`,
      `ARRAY JOIN arrayElement(${Q}, transform(term, ${T}, ${I}, 0)) AS q, arrayElement(${B}, transform(term, ${T}, ${I}, 0)) AS boost`,
      `WHERE term IN ${T.replace(/^\[/, "(").replace(/\]$/, ")")}`,
      `GROUP BY q, unit`,
      `ORDER BY q, score DESC, unit`,
      `LIMIT ${k} BY q`,
    ].join("\n");
    return `SELECT q, unit, toFloat64(score) AS score FROM (\n${perShard}\n) ORDER BY q, score DESC, unit LIMIT ${k} BY q`;
  }

  /** Queries per SELECT: the batch, fewer when the shards' units times the queries pass GROUP_BUDGET. */
  statementSize(): number {
    const unitsPerShard = Math.ceil(this.units.count / Math.max(1, Number(this.meta.shards)));
    return Math.max(1, Math.min(this.batch, Math.floor(GROUP_BUDGET / Math.max(1, unitsPerShard))));
  }

  /** Top k of each query, best first, ties by lower unit; the hits' units are loaded into `units`. */
  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    const out: Hit[][] = queries.map(() => []);
    const kk = Math.min(Math.floor(k), this.units.count);
    if (!(kk > 0)) return out;
    const step = this.statementSize();
    for (let start = 0; start < queries.length; start += step) {
      const slice = queries.slice(start, start + step).map((q) => this.queryTerms(q));
      const sql = this.batchSql(slice, kk);
      if (sql === null) continue;
      const text = await this.db.main.text(sql, this.postings, {
        distributed_group_by_no_merge: this.db.cluster === null ? 0 : 1,
        max_query_size: Math.max(262_144, sql.length + 1024),
        max_bytes_before_external_group_by: MAX_GROUP_BY_BYTES,
      });
      const seen: number[] = [];
      for (const line of text.split("\n")) {
        if (line.length === 0) continue;
        const [q, unit, score] = line.split("\t");
        const u = Number(unit);
        out[start + Number(q)].push({ unit: u, score: Math.fround(Number(score)) });
        seen.push(u);
      }
      await this.units.load(seen);
    }
    return out;
  }

  async search(query: string, k: number): Promise<Hit[]> {
    return (await this.searchBatch([query], k))[0];
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** Opens a ClickHouse BM25 index as a Retriever. */
export async function openClickHouseBm25(url: string, options: { batch?: number } = {}): Promise<ClickHouseBm25Retriever> {
  return ClickHouseBm25Retriever.open(url, options);
}
