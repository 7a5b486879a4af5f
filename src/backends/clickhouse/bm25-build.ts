// Building BM25 on ClickHouse (see ./bm25.ts for the tables and the search): tartan analyses each chunk
// of units with the embedded build's SegmentCollector, the chunk's units and postings go to their shards
// (unit mod shards) in TabSeparated INSERTs, then each shard records the chunk as done; a killed build
// drops what a shard holds of unrecorded chunks and goes on from the first chunk some shard lacks. At the
// end each shard counts its terms' document frequencies and writes the impact-ordered postings.

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bm25IndexedText, resolveParams, type Bm25BuildParams, type Bm25Params } from "../../retrieval/bm25/build.js";
import { SegmentCollector, SegmentReader } from "../../retrieval/bm25/segment.js";
import { averageLength, intToByte4, normInverseCache } from "../../retrieval/bm25/similarity.js";
import type { Unit } from "../../retrieval/units/unit.js";
import { ClickHouseDatabase, ClickHouseError, num, quote, type ClickHouseEndpoint } from "./client.js";
import { BM25_FORMAT, createMeta, readMeta, tableBytes, tsvField, tsvRows, writeMeta } from "./schema.js";
import { buildImpacts } from "./bm25-impacts.js";

/** The index name when the URL gives none. */
export const DEFAULT_BM25_NAME = "bm25";
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
export function indexName(db: ClickHouseDatabase): string {
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
export function normCacheSql(cache: Float32Array): string {
  return `transform(toUInt16(norm), [${Array.from(cache, (_, i) => i).join(",")}], [${Array.from(cache, num).join(",")}], toFloat64(0))`;
}
