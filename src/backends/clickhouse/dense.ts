// Dense retrieval on ClickHouse: a compressed dense index copied in by ./dense-build.ts (binary codes and
// int8 rows sharded by coarse list), searched with the embedded index's rules so the hits are the same
// (../../retrieval/dense/ivf-search.ts). For a batch of queries the client computes each query's probed
// lists with the index's own coarse quantizer (loaded from the files table) and its binary code; every
// shard computes, in one SELECT (a UNION ALL of one sub-SELECT per query), the Hamming distance of the
// codes in the query's probed lists it holds (./dense-sql.ts: popcount in UInt64 arithmetic, 18.16 has no
// bitCount) and returns its `rerank × refine` nearest, ordered by distance, then probe rank, then position
// (the embedded index's "ties at the cut in list order"), with their codes. The client merges the shards'
// lists on the same order, keeps the global `rerank × refine`, refines them to `rerank` with the query's
// asymmetric look-up table (pushed in list order into the same bounded heap), fetches those candidates'
// int8 rows from their shards (a second SELECT per shard for the batch) and scores them with the same
// int8 kernel: the top k, ties to the lower unit.

import { join } from "node:path";
import type { Hit, IndexManifest, Retriever } from "../../retrieval/types.js";
import { createEncoder, type Encoder, type EncoderSpec } from "../../retrieval/dense/encoder.js";
import { NO_ENCODER, queryMatrix } from "../../retrieval/dense/query-vectors.js";
import { mergeSearchOptions, type QueryInput, type SearchOptions } from "../../retrieval/query.js";
import { IVF_FILES, openIvfFile, readAll } from "../../retrieval/dense/ivf-files.js";
import type { IvfSearchOptions } from "../../retrieval/dense/ivf-search.js";
import { Prober, probeDepth } from "../../retrieval/dense/ivf-probe.js";
import { TopHeap } from "../../retrieval/dense/top-heap.js";
import { Int8Scorer } from "../../retrieval/dense/int8-kernel.js";
import { Quantizer } from "../../retrieval/dense/quantizer.js";
import { binaryCode, binaryTable } from "../../retrieval/dense/codes/binary.js";
import { closeSync } from "node:fs";
import { ClickHouseDatabase, ClickHouseError } from "./client.js";
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


/** One candidate a shard returned: probe rank, position, unit, Hamming distance, code bytes. */
interface Candidate {
  r: number;
  pos: number;
  unit: number;
  d: number;
  code: Uint8Array;
}

/** Rows the rescoring kernel scores at a time (as the embedded index). */
const RESCORE_ROWS = 4096;

/** A compressed dense index in ClickHouse opened for search. */
export class ClickHouseDenseRetriever implements Retriever {
  readonly kind = "dense" as const;
  private readonly prober: Prober;
  private readonly scorer: Int8Scorer;
  private readonly codesLocal: string;
  private readonly words: string[];
  private encoder: Promise<Encoder> | null;
  private readonly ownEncoder: boolean;
  private options: IvfSearchOptions;

  private constructor(
    readonly db: ClickHouseDatabase,
    readonly manifest: IndexManifest,
    readonly units: ClickHouseUnits,
    private readonly q: Quantizer,
    private readonly offsets: Float64Array,
    readonly batch: number,
    o: ClickHouseDenseOpenOptions,
  ) {
    this.prober = new Prober(q);
    this.scorer = new Int8Scorer(q.dim, RESCORE_ROWS);
    this.codesLocal = db.qualified(`${denseName(db)}_codes_local`);
    this.words = codeColumns(q.codeBytes);
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
      if (Number(meta.shards) !== db.shards.length) throw new ClickHouseError(`${db.url} (table ${db.qualified(`${name}_meta_local`)}): built on ${meta.shards} shards, the URL names ${db.shards.length}`, db.url);
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
    for (let i = 0; i < nq; i += this.batch) out.push(...(await this.searchChunk(vectors.subarray(i * dim, Math.min(nq, i + this.batch) * dim), k, mergeSearchOptions(this.options, o))));
    await this.units.load(out.flatMap((hits) => hits.map((h) => h.unit)));
    return out;
  }

  private async searchChunk(qs: Float32Array, k: number, o: IvfSearchOptions): Promise<Hit[][]> {
    const q = this.q;
    const dim = q.dim;
    const nq = qs.length / dim;
    if (this.manifest.units === 0 || k <= 0) return Array.from({ length: nq }, () => []);
    const defaults = this.manifest.params as { nprobe: number; rerank: number };
    const { nprobe, topProbe } = probeDepth(q, o.nprobe, defaults.nprobe, o.topProbe);
    const rerank = Math.max(k, o.rerank ?? defaults.rerank);
    const refine = Math.max(1, o.refine ?? 4);
    const probes = this.prober.probe(qs, nq, nprobe, topProbe);
    const S = this.db.shards.length;
    const depth = probes.map((lists) => {
      let total = 0;
      for (const l of lists) total += this.offsets[l + 1] - this.offsets[l];
      return Math.min(total, rerank * refine);
    });
    // 1. every shard: the nearest codes of each query's probed lists it holds
    const qwords = Array.from({ length: nq }, (_, i) => {
      const code = new Uint8Array(q.codeBytes);
      binaryCode(q.mean, qs, i * dim, code, 0);
      return codeWords(code, 0, q.codeBytes);
    });
    const found: Candidate[][] = Array.from({ length: nq }, () => []);
    await Promise.all(
      this.db.shards.map(async (shard, s) => {
        const parts = [];
        for (let i = 0; i < nq; i++) {
          const here = Array.from(probes[i]).filter((l) => l % S === s);
          if (here.length > 0 && depth[i] > 0) parts.push({ query: i, lists: Array.from(probes[i]), here, words: qwords[i] });
        }
        if (parts.length === 0) return;
        // (each shard returns at most rerank × refine a query: depth when a query's lists hold more)
        const { sql, external } = candidatesSql(this.codesLocal, this.words, parts, rerank * refine);
        const buf = await shard.raw(sql, this.codesLocal, "RowBinary", { max_query_size: 1 << 24 }, external);
        const rec = 20 + q.codeBytes;
        for (let o2 = 0; o2 < buf.length; o2 += rec) {
          found[buf.readUInt32LE(o2)].push({ r: buf.readUInt32LE(o2 + 4), pos: buf.readUInt32LE(o2 + 8), unit: buf.readUInt32LE(o2 + 12), d: buf.readUInt32LE(o2 + 16), code: buf.subarray(o2 + 20, o2 + rec) });
        }
      }),
    );
    // 2. merged: the `depth` nearest (ties in list order), then refined to `rerank`
    const chosen: Candidate[][] = [];
    for (let i = 0; i < nq; i++) {
      const all = found[i];
      all.sort((a, b) => a.d - b.d || a.r - b.r || a.pos - b.pos);
      const near = all.slice(0, depth[i]).sort((a, b) => a.r - b.r || a.pos - b.pos);
      chosen.push(near.length <= rerank ? near : this.refine(qs, i * dim, near, rerank));
    }
    // 3. the chosen candidates' int8 rows from their shards, rescored
    const rows = new Map<number, Uint8Array>();
    await Promise.all(
      this.db.shards.map(async (shard, s) => {
        const lists = new Set<number>();
        const positions = new Set<number>();
        chosen.forEach((cs, i) => {
          for (const c of cs) {
            const l = probes[i][c.r];
            if (l % S === s) {
              lists.add(l);
              positions.add(c.pos);
            }
          }
        });
        if (positions.size === 0) return;
        const buf = await shard.raw(rowsSql(this.codesLocal, [...lists], [...positions]), this.codesLocal, "RowBinary", { max_query_size: 1 << 28 });
        for (let o2 = 0; o2 < buf.length; o2 += 4 + dim) rows.set(buf.readUInt32LE(o2), buf.subarray(o2 + 4, o2 + 4 + dim));
      }),
    );
    return chosen.map((cs, i) => this.rescore(qs, i * dim, cs, rows, k));
  }

  /** The best `rerank` of `near` (in list order) by the query's float values against the codes' bits. */
  private refine(qs: Float32Array, qo: number, near: Candidate[], rerank: number): Candidate[] {
    const q = this.q;
    const cb = q.codeBytes;
    const lut = binaryTable(q.mean, qs, qo);
    const heap = new TopHeap(rerank);
    for (let j = 0; j < near.length; j++) {
      const code = near[j].code;
      let v = 0;
      for (let b = 0; b < cb; b++) v += lut[b * 256 + code[b]];
      heap.push(v, j);
    }
    return Array.from(heap.items(), (j) => near[j]);
  }

  /** Scores the candidates with their int8 rows; the best `k`, ties to the lower unit. */
  private rescore(qs: Float32Array, qo: number, cs: Candidate[], rows: Map<number, Uint8Array>, k: number): Hit[] {
    const dim = this.q.dim;
    const { weights, bias } = this.q.int8Query(qs, qo);
    const scorer = this.scorer;
    scorer.setQuery(weights, bias);
    const sorted = [...cs].sort((a, b) => a.pos - b.pos);
    const hits: Hit[] = [];
    for (let i = 0; i < sorted.length; i += scorer.maxRows) {
      const n = Math.min(scorer.maxRows, sorted.length - i);
      const buf = scorer.rows(n);
      for (let r = 0; r < n; r++) {
        const row = rows.get(sorted[i + r].pos);
        if (!row) throw new Error(`${this.db.url} (table ${this.codesLocal}): no row at position ${sorted[i + r].pos} on its shard`);
        buf.set(row, r * dim);
      }
      const scores = scorer.score(n);
      for (let r = 0; r < n; r++) hits.push({ unit: sorted[i + r].unit, score: scores[r] });
    }
    hits.sort((a, b) => b.score - a.score || a.unit - b.unit);
    return hits.slice(0, k);
  }

  async close(): Promise<void> {
    if (this.ownEncoder && this.encoder) await (await this.encoder).close();
    await this.db.close();
  }
}

/** Opens a ClickHouse dense index (`clickhouse://host:port/db/name?cluster=C`). */
export async function openClickHouseDense(url: string, o: ClickHouseDenseOpenOptions = {}): Promise<ClickHouseDenseRetriever> {
  return ClickHouseDenseRetriever.open(url, o);
}
