// Approximate nearest-neighbour search with an HNSW graph (hnswlib-node 3.0, inner-product space over unit
// vectors), chosen over usearch's HNSW for more queries/s at the same recall@10 on 200k × 384 vectors
// (docs/decisions.md). Scores are hnswlib's 1 − distance, i.e. the inner product up to float rounding.

import { closeSync } from "node:fs";
import type { Hit } from "../types.js";
import { commitTemp, createTempFor, discardTemp } from "../../util/safe-output.js";
import { requireOptional } from "../../util/optional.js";


interface Hnsw {
  initIndex(maxElements: number, m?: number, efConstruction?: number, randomSeed?: number): void;
  readIndexSync(file: string): void;
  writeIndexSync(file: string): void;
  addPoint(point: number[], label: number): void;
  searchKnn(point: number[], k: number): { distances: number[]; neighbors: number[] };
  getCurrentCount(): number;
  setEf(ef: number): void;
  getEf(): number;
}
type HnswCtor = new (space: "ip", dim: number) => Hnsw;

export const HNSW_FILE = "hnsw.bin";

/** How an HNSW graph is built and searched. */
export interface HnswParams {
  /** Graph degree; default 16. */
  M?: number;
  /** Candidate list size while building; default 128. */
  efConstruction?: number;
  /** Candidate list size while searching (raised to k when smaller); default 128. */
  ef?: number;
  /** Random seed of level assignment; default 100. */
  seed?: number;
}

/** An HNSW graph over unit vectors (hnswlib-node), built in one thread and searched approximately. */
export class HnswIndex {
  private constructor(
    private readonly index: Hnsw,
    readonly dim: number,
    private ef: number,
  ) {}

  private static ctor(): HnswCtor {
    return requireOptional<{ HierarchicalNSW: HnswCtor }>("hnswlib-node", "the HNSW graph of a dense index").HierarchicalNSW;
  }

  /** Adds `matrix`'s rows (unit vectors) as labels 0..n−1, one thread; `onProgress(n)` every 10,000 rows. */
  static build(matrix: Float32Array, dim: number, params: HnswParams = {}, onProgress?: (added: number) => void): HnswIndex {
    const n = matrix.length / dim;
    const index = new (HnswIndex.ctor())("ip", dim);
    index.initIndex(Math.max(1, n), params.M ?? 16, params.efConstruction ?? 128, params.seed ?? 100);
    for (let i = 0; i < n; i++) {
      index.addPoint(Array.from(matrix.subarray(i * dim, (i + 1) * dim)), i);
      if (onProgress && (i + 1) % 10000 === 0) onProgress(i + 1);
    }
    return new HnswIndex(index, dim, params.ef ?? 128);
  }

  static load(file: string, dim: number, ef = 128): HnswIndex {
    const index = new (HnswIndex.ctor())("ip", dim);
    index.readIndexSync(file);
    return new HnswIndex(index, dim, ef);
  }

  get count(): number {
    return this.index.getCurrentCount();
  }

  /** Writes the graph to `file` through an exclusive unique temporary file and a rename (never through a planted link). */
  save(file: string): void {
    const temp = createTempFor(file);
    closeSync(temp.fd); // hnswlib writes by path: into the file just created, ours
    try {
      this.index.writeIndexSync(temp.path);
    } catch (e) {
      discardTemp(temp);
      throw e;
    }
    commitTemp(temp, file);
  }

  /** Sets the candidate list size of searches (raised to k when smaller). */
  setEf(ef: number): void {
    this.ef = ef;
  }

  /** Approximate best `k` for each query (normalised, `n × dim`), best first, ties by lower unit. */
  search(queries: Float32Array, k: number): Hit[][] {
    const nq = queries.length / this.dim;
    k = Math.min(Math.max(0, Math.floor(k)), this.count);
    this.index.setEf(Math.max(this.ef, k));
    const out: Hit[][] = [];
    for (let q = 0; q < nq; q++) {
      if (k === 0) {
        out.push([]);
        continue;
      }
      const r = this.index.searchKnn(Array.from(queries.subarray(q * this.dim, (q + 1) * this.dim)), k);
      const hits = r.neighbors.map((unit, i) => ({ unit, score: 1 - r.distances[i] }));
      hits.sort((a, b) => b.score - a.score || a.unit - b.unit);
      out.push(hits);
    }
    return out;
  }
}
