// Dense retrieval on ClickHouse: a compressed dense index copied in by ./dense-build.ts (binary codes and
// int8 rows sharded by coarse list), searched by the embedded index's own search sequence
// (../../retrieval/dense/ivf-sequence.ts: probe, candidates, refinement, rescore, top k) over remote storage
// of its lists, so the hits are the same. This file supplies only that storage (`RemoteLists`): for a
// batch, every shard computes, in one SELECT, the Hamming distance of the codes in each query's probed
// lists it holds (./dense-sql.ts: popcount in UInt64 arithmetic, 18.16 has no bitCount) and returns its
// `refine × refineFactor` nearest with their codes (the sequence merges the shards' lists and refines them);
// then a second SELECT per shard returns the chosen candidates' int8 rows.

import { join } from "node:path";
import type { Hit, IndexManifest, Retriever } from "../../retrieval/types.js";
import { createEncoder, type Encoder, type EncoderSpec } from "../../retrieval/dense/encoder.js";
import { NO_ENCODER, queryMatrix } from "../../retrieval/dense/query-vectors.js";
import { mergeSearchOptions, type QueryInput, type SearchOptions } from "../../retrieval/query.js";
import { IVF_FILES, openIvfFile, readAll } from "../../retrieval/dense/ivf-files.js";
import type { IvfSearchOptions } from "../../retrieval/dense/ivf-search.js";
import { IvfSequence, remoteStore, storedDepth, type AsyncListStore, type ProbedBatch, type RemoteLists, type ShardCandidate } from "../../retrieval/dense/ivf-sequence.js";
import { Quantizer } from "../../retrieval/dense/quantizer.js";
import { binaryCode } from "../../retrieval/dense/codes/binary.js";
import { closeSync } from "node:fs";
import { ClickHouseDatabase } from "./client.js";
import { DENSE_FORMAT, requireMeta } from "./schema.js";
import { ClickHouseUnits } from "./units.js";
import { codeColumns, codeWords, denseName, fetchIndexFiles } from "./dense-build.js";
import { candidatesSql, rowsSql } from "./dense-sql.js";

export { buildDenseClickHouse, DEFAULT_DENSE_NAME, type ClickHouseDenseStats } from "./dense-build.js";

/** Options of {@link ClickHouseDenseRetriever.open}. */
export interface ClickHouseDenseOpenOptions {
  /** Queries per SELECT (default 32). */
  batch?: number;
  /** Lists probed, candidates rescored, … (default: the index's). */
  ivf?: IvfSearchOptions;
  /** A query encoder instead of the one the manifest names. */
  encoder?: Encoder;
}

/** A compressed dense index in ClickHouse opened for search. */
export class ClickHouseDenseRetriever implements Retriever {
  readonly kind = "dense" as const;
  private readonly sequence: IvfSequence;
  private readonly store: AsyncListStore;
  private encoder: Promise<Encoder> | null;
  private readonly ownEncoder: boolean;
  private options: IvfSearchOptions;

  private constructor(
    readonly db: ClickHouseDatabase,
    readonly manifest: IndexManifest,
    readonly units: ClickHouseUnits,
    private readonly q: Quantizer,
    offsets: Float64Array,
    readonly batch: number,
    o: ClickHouseDenseOpenOptions,
  ) {
    this.sequence = new IvfSequence(q, offsets, manifest.units, storedDepth(manifest.params));
    this.store = remoteStore(q, offsets, new ClickHouseLists(db, q));
    this.encoder = o.encoder ? Promise.resolve(o.encoder) : null;
    this.ownEncoder = !o.encoder;
    this.options = { ...(o.ivf ?? {}) };
  }

  /** Opens the dense index of `url` (`clickhouse://host:port/db/name?cluster=C`). */
  static async open(url: string, o: ClickHouseDenseOpenOptions = {}): Promise<ClickHouseDenseRetriever> {
    const db = await ClickHouseDatabase.connect(url);
    try {
      const name = denseName(db);
      const meta = await requireMeta(db, name, "dense", DENSE_FORMAT, "its build did not finish; run `tartan index build --kind dense --from-index DIR --backend URL` again");
      db.checkShardCount(Number(meta.shards), "built", db.qualified(`${name}_meta_local`));
      const files = await fetchIndexFiles(db, name);
      try {
        const q = Quantizer.load(join(files.dir, IVF_FILES.quantizer), meta.build);
        const lists = openIvfFile(join(files.dir, IVF_FILES.lists), { file: "lists", build: meta.build, rows: q.lists + 1, rowBytes: 8 });
        const offsets = new Float64Array(q.lists + 1);
        try {
          readAll(lists.fd, new Uint8Array(offsets.buffer), lists.offset, IVF_FILES.lists);
        } finally {
          closeSync(lists.fd);
        }
        const manifest = JSON.parse(meta.manifest) as IndexManifest;
        const units = new ClickHouseUnits(db, db.readTable(`${name}_units`), manifest.units);
        return new ClickHouseDenseRetriever(db, manifest, units, q, offsets, Math.max(1, o.batch ?? 32), o);
      } finally {
        files.done();
      }
    } catch (e) {
      await db.close();
      throw e;
    }
  }

  async search(query: QueryInput, k: number, options?: SearchOptions): Promise<Hit[]> {
    return (await this.searchBatch([query], k, options))[0];
  }

  /** Queries with a vector search it; the others' texts are encoded. `options` hold for this call. */
  async searchBatch(queries: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]> {
    if (queries.length === 0) return [];
    const encoder = (): Promise<Encoder> => {
      const spec = (this.manifest.params as { encoder?: EncoderSpec | null }).encoder;
      if (!spec && !this.encoder) return Promise.reject(new Error(NO_ENCODER));
      this.encoder ??= createEncoder(spec as EncoderSpec);
      return this.encoder;
    };
    return this.searchVectors(await queryMatrix(queries, this.q.dim, encoder), k, options);
  }

  /** Search with query vectors (`n × dim`, unit length), `o` over the index's options for this call. */
  async searchVectors(vectors: Float32Array, k: number, o: SearchOptions = {}): Promise<Hit[][]> {
    const dim = this.q.dim;
    if (vectors.length % dim !== 0) throw new Error(`query vectors are not ${dim}-d (the index's size)`);
    const nq = vectors.length / dim;
    const out: Hit[][] = [];
    for (let i = 0; i < nq; i += this.batch) out.push(...(await this.sequence.searchAsync(this.store, vectors.subarray(i * dim, Math.min(nq, i + this.batch) * dim), k, mergeSearchOptions(this.options, o))));
    await this.units.load(out.flatMap((hits) => hits.map((h) => h.unit)));
    return out;
  }

  async close(): Promise<void> {
    if (this.ownEncoder && this.encoder) await (await this.encoder).close();
    await this.db.close();
  }
}

/** The lists of a dense index in ClickHouse as the search sequence's remote storage: codes scanned and rows read by SQL on the shards. */
class ClickHouseLists implements RemoteLists {
  private readonly codesLocal: string;
  private readonly words: string[];

  constructor(
    private readonly db: ClickHouseDatabase,
    private readonly q: Quantizer,
  ) {
    this.codesLocal = db.qualified(`${denseName(db)}_codes_local`);
    this.words = codeColumns(q.codeBytes);
  }

  /** Each shard's `limit` nearest codes of each query's probed lists it holds (one SELECT per shard for the batch). */
  async nearest(b: ProbedBatch, depth: readonly number[], limit: number): Promise<ShardCandidate[][]> {
    const q = this.q;
    const dim = q.dim;
    const S = this.db.shards.length;
    const qwords = Array.from({ length: b.nq }, (_, i) => {
      const code = new Uint8Array(q.codeBytes);
      binaryCode(q.mean, b.qs, i * dim, code, 0);
      return codeWords(code, 0, q.codeBytes);
    });
    const found: ShardCandidate[][] = Array.from({ length: b.nq }, () => []);
    await Promise.all(
      this.db.shards.map(async (shard, s) => {
        const parts = [];
        for (let i = 0; i < b.nq; i++) {
          const here = Array.from(b.probes[i]).filter((l) => l % S === s);
          if (here.length > 0 && depth[i] > 0) parts.push({ query: i, lists: Array.from(b.probes[i]), here, words: qwords[i] });
        }
        if (parts.length === 0) return;
        const { sql, external } = candidatesSql(this.codesLocal, this.words, parts, limit);
        const buf = await shard.raw(sql, this.codesLocal, "RowBinary", { max_query_size: 1 << 24 }, external);
        const rec = 20 + q.codeBytes;
        for (let o2 = 0; o2 < buf.length; o2 += rec) {
          found[buf.readUInt32LE(o2)].push({ r: buf.readUInt32LE(o2 + 4), pos: buf.readUInt32LE(o2 + 8), unit: buf.readUInt32LE(o2 + 12), d: buf.readUInt32LE(o2 + 16), code: buf.subarray(o2 + 20, o2 + rec) });
        }
      }),
    );
    return found;
  }

  /** The int8 rows at the positions, from the shards that hold their lists (one SELECT per shard). */
  async rows(wanted: readonly { list: number; pos: number }[]): Promise<Map<number, Uint8Array>> {
    const dim = this.q.dim;
    const S = this.db.shards.length;
    const rows = new Map<number, Uint8Array>();
    await Promise.all(
      this.db.shards.map(async (shard, s) => {
        const lists = new Set<number>();
        const positions = new Set<number>();
        for (const w of wanted)
          if (w.list % S === s) {
            lists.add(w.list);
            positions.add(w.pos);
          }
        if (positions.size === 0) return;
        const buf = await shard.raw(rowsSql(this.codesLocal, [...lists], [...positions]), this.codesLocal, "RowBinary", { max_query_size: 1 << 28 });
        for (let o2 = 0; o2 < buf.length; o2 += 4 + dim) rows.set(buf.readUInt32LE(o2), buf.subarray(o2 + 4, o2 + 4 + dim));
      }),
    );
    return rows;
  }

  /** The error for a candidate whose row its shard did not return. */
  missingRow(pos: number): Error {
    return new Error(`${this.db.url} (table ${this.codesLocal}): no row at position ${pos} on its shard`);
  }
}

/** Opens a ClickHouse dense index (`clickhouse://host:port/db/name?cluster=C`). */
export async function openClickHouseDense(url: string, o: ClickHouseDenseOpenOptions = {}): Promise<ClickHouseDenseRetriever> {
  return ClickHouseDenseRetriever.open(url, o);
}
