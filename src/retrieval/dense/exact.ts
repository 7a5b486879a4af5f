// Exact maximum-inner-product search over every vector, on both cores: the row-major matrix is split into
// one contiguous range of rows per worker thread, each worker copies its range into the memory of the
// WebAssembly SIMD kernel (./simd.ts) and answers whole batches of queries; per-query best-k lists are
// merged in the calling thread. Scores are float32 sums (as in FAISS or usearch), the same bit for bit
// whatever the number of threads, and equal `dotF32`'s; ties go to the lower row number.

import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { cpus } from "node:os";
import { Worker } from "node:worker_threads";
import { crc32 } from "node:zlib";
import type { Hit } from "../types.js";
import { crcHex } from "../manifest.js";
import { dotF32, kernelModule, localRangeSearcher, rangeSearcher, type RangeResult } from "./simd.js";

/** Best-first hits of one query from per-range results (`parts[p]` = ids/scores of range p, ranges in row order). */
function mergeHits(parts: RangeResult[], q: number, k: number): Hit[] {
  const out: Hit[] = [];
  const pos = parts.map(() => 0);
  while (out.length < k) {
    let best = -1;
    let bs = -Infinity;
    let bu = Infinity;
    for (let p = 0; p < parts.length; p++) {
      if (pos[p] >= k) continue;
      const i = q * k + pos[p];
      const u = parts[p].ids[i];
      if (u < 0) continue;
      const s = parts[p].scores[i];
      if (s > bs || (s === bs && u < bu)) {
        best = p;
        bs = s;
        bu = u;
      }
    }
    if (best < 0) break;
    pos[best]++;
    out.push({ unit: bu, score: bs });
  }
  return out;
}

function workerSource(): string {
  return `
const { parentPort, workerData } = require("node:worker_threads");
const dotF32 = ${dotF32.toString()};
const rangeSearcher = ${rangeSearcher.toString()};
const rows = new Float32Array(workerData.buffer, workerData.byteOffset + workerData.r0 * workerData.dim * 4, (workerData.r1 - workerData.r0) * workerData.dim);
const search = rangeSearcher(WebAssembly, workerData.module, rows, workerData.dim, workerData.r0);
delete workerData.buffer; // the range now lives in the kernel's memory
parentPort.on("message", (m) => {
  const r = search(m.qs, m.nq, m.k);
  parentPort.postMessage({ id: m.id, ids: r.ids, scores: r.scores }, [r.ids.buffer, r.scores.buffer]);
});
parentPort.postMessage({ ready: true });
`;
}

type Reply = { ready: true } | { id: number; ids: Int32Array; scores: Float64Array };

export interface ExactOptions {
  /** Worker threads, each holding an equal share of the rows; default: the number of cores. 0 = search in the calling thread. */
  threads?: number;
  /** Use the JavaScript kernel instead of WebAssembly (same results; for tests and comparisons). */
  noWasm?: boolean;
}

/** What a build recorded of its vectors file: its size and CRC-32 (8 hex digits). */
export interface VectorsIdentity {
  bytes: number;
  crc32: string;
}

/**
 * Reads a little-endian float32 file straight into shared memory. With `expect` (what the build recorded),
 * a file of another size or checksum (another build's, truncated, changed) is refused naming the file.
 */
export function readVectorsShared(file: string, dim: number, expect?: VectorsIdentity): Float32Array {
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    if (expect && size !== expect.bytes)
      throw new Error(`${file}: ${size} bytes, the index recorded ${expect.bytes} at build (${size < expect.bytes ? "truncated" : "another build's or changed"}; rebuild the index)`);
    if (size % (4 * dim) !== 0) throw new Error(`${file}: ${size} bytes is not a whole number of ${dim}-d float32 rows`);
    const sab = new SharedArrayBuffer(size);
    const bytes = new Uint8Array(sab);
    let crc = 0;
    for (let off = 0; off < size; ) {
      const n = readSync(fd, bytes, off, Math.min(1 << 26, size - off), off);
      if (n <= 0) throw new Error(`${file}: short read at byte ${off}`);
      if (expect) crc = crc32(bytes.subarray(off, off + n), crc);
      off += n;
    }
    if (expect) {
      const got = crcHex(crc);
      if (got !== expect.crc32) throw new Error(`${file}: checksum ${got}, the index recorded ${expect.crc32} at build (a vectors file of another build, or corrupt; rebuild the index)`);
    }
    return new Float32Array(sab);
  } finally {
    closeSync(fd);
  }
}

interface Pending {
  resolve(r: RangeResult): void;
  reject(e: Error): void;
}

/** Exact inner-product search over every vector (SIMD dot products, on worker threads for many queries). */
export class ExactIndex {
  readonly rows: number;
  private matrix: Float32Array | null;
  private local: ((qs: Float32Array, nq: number, k: number) => RangeResult) | null = null;
  private readonly workers: Worker[] = [];
  private started: Promise<void> | null = null;
  private readonly waiting = new Map<number, Pending>();
  private nextId = 0;
  private readonly threads: number;
  private failure: Error | null = null;

  /** `matrix`: `rows × dim` unit vectors (workers read it from shared memory; it is copied there if needed). */
  constructor(
    matrix: Float32Array,
    readonly dim: number,
    private readonly options: ExactOptions = {},
  ) {
    if (dim <= 0 || matrix.length % dim !== 0) throw new Error(`matrix of ${matrix.length} values is not a whole number of ${dim}-d rows`);
    this.rows = matrix.length / dim;
    this.threads = Math.max(0, Math.min(options.threads ?? cpus().length, 64, this.rows));
    if (this.threads > 0 && !(matrix.buffer instanceof SharedArrayBuffer)) {
      const shared = new Float32Array(new SharedArrayBuffer(matrix.byteLength));
      shared.set(matrix);
      matrix = shared;
    }
    this.matrix = matrix;
  }

  /** Starts the workers (each copies its range of rows); the matrix is released once they hold it. */
  private start(): Promise<void> {
    if (this.started) return this.started;
    const matrix = this.matrix as Float32Array;
    const per = Math.ceil(this.rows / this.threads);
    const module = this.options.noWasm ? null : kernelModule();
    const ready: Promise<void>[] = [];
    for (let t = 0; t < this.threads; t++) {
      const r0 = Math.min(this.rows, t * per);
      const r1 = Math.min(this.rows, r0 + per);
      const w = new Worker(workerSource(), {
        eval: true,
        workerData: { buffer: matrix.buffer, byteOffset: matrix.byteOffset, r0, r1, dim: this.dim, module },
      });
      this.workers.push(w);
      ready.push(
        new Promise<void>((resolve, reject) => {
          w.on("message", (r: Reply) => {
            if ("ready" in r) return resolve();
            const p = this.waiting.get(r.id);
            this.waiting.delete(r.id);
            if (this.waiting.size === 0) for (const x of this.workers) x.unref();
            p?.resolve(r);
          });
          w.on("error", (e) => {
            this.failure = e;
            reject(e);
            for (const p of this.waiting.values()) p.reject(e);
            this.waiting.clear();
          });
        }),
      );
    }
    this.started = Promise.all(ready).then(() => {
      this.matrix = null;
      for (const x of this.workers) x.unref(); // idle workers do not keep the process alive
    });
    return this.started;
  }

  /** Starts the workers now rather than on the first search. */
  async warm(): Promise<void> {
    if (this.threads > 0) await this.start();
    else this.inThread();
  }

  private inThread(): (qs: Float32Array, nq: number, k: number) => RangeResult {
    if (!this.local) {
      const m = this.matrix as Float32Array;
      this.local = this.options.noWasm ? rangeSearcher(globalThis as never, null, m, this.dim, 0) : localRangeSearcher(m, this.dim, 0);
      this.matrix = null;
    }
    return this.local;
  }

  /** The best `k` rows for each query (`queries`: `n × dim`, normalised by the caller), best first. */
  async search(queries: Float32Array, k: number): Promise<Hit[][]> {
    if (queries.length % this.dim !== 0) throw new Error(`queries of ${queries.length} values are not ${this.dim}-d rows`);
    const nq = queries.length / this.dim;
    k = Math.min(Math.max(0, Math.floor(k)), this.rows);
    if (nq === 0) return [];
    if (k === 0) return Array.from({ length: nq }, () => []);
    let parts: RangeResult[];
    if (this.threads === 0) {
      parts = [this.inThread()(queries, nq, k)];
    } else {
      await this.start();
      if (this.failure) throw this.failure;
      parts = await Promise.all(
        this.workers.map((w) => {
          const id = this.nextId++;
          return new Promise<RangeResult>((resolve, reject) => {
            this.waiting.set(id, { resolve, reject });
            w.ref();
            w.postMessage({ id, qs: queries, nq, k });
          });
        }),
      );
    }
    const out: Hit[][] = new Array(nq);
    for (let q = 0; q < nq; q++) out[q] = mergeHits(parts, q, k);
    return out;
  }

  /** Stops the worker threads and drops the vectors. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers.length = 0;
  }
}
