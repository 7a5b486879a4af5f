// Search in a compressed dense index (./ivf-build.ts): each query probes its `nprobe` nearest coarse
// lists (the nearest top centroids first, then their sub-centroids), scans the lists' codes in memory
// (binary: Hamming distance through the SIMD kernel of ./hamming.ts; PQ: one look-up table per query;
// 4-bit PQ: the same table in bytes, 16 codes a look-up by the fast-scan kernel of ./fastscan.ts, whose
// blocks are laid out list by list when the index is opened; int8: the rescoring vectors themselves), keeps the `rerank` best candidates, and rescores those with the
// int8 vectors read from disk (pread; the page cache holds what is hot) and scored by the SIMD kernel of
// ./int8-kernel.ts. Memory is the codes (dim/8 bytes
// a vector for binary), the ids (4 bytes a vector) and the centroids; the int8 vectors stay on disk.
// Scores are the int8 approximation of the inner product; ties go to the lower unit number.
// `searchBatch` spreads a batch over worker threads (./ivf-search-worker.ts) that attach to the same codes
// and ids in shared memory, so both cores search while the index is held once.

import { closeSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import type { Hit, IndexManifest } from "../types.js";
import type { SearchOptions } from "../query.js";
import { WorkerPool } from "../../util/worker-pool.js";
import { workerScript } from "../../util/worker-script.js";
import { HammingMemory, TABLE_CHUNK, type HammingShare } from "./hamming.js";
import { FastScanMemory, FS_BLOCK, FS_SCAN_BLOCKS, blockStarts, quantizeTable, toBlocks, type FastScanShare } from "./fastscan.js";
import { Int8Scorer } from "./int8-kernel.js";
import { Quantizer } from "./quantizer.js";
import { IVF_FILES, openIvfFile, readAll } from "./ivf-files.js";
import { Prober, probeDepth } from "./ivf-probe.js";
import { TopHeap, TopHits } from "./top-heap.js";

/** Search parameters (defaults: the manifest's): the search options of one call (../query.ts). */
export type IvfSearchOptions = SearchOptions;

/** How an index is opened: search threads for batches (default: the number of cores; 1 = the calling thread only). */
export interface IvfOpenOptions {
  threads?: number;
}

/** What a search worker needs to attach to an opened index: its directory, and the arrays in shared memory. */
export interface IvfShare {
  dir: string;
  manifest: IndexManifest;
  offsets: Float64Array;
  ids: SharedArrayBuffer;
  hamming: HammingShare | null;
  pq: HammingShare | null;
  /** 4-bit PQ codes in fast-scan blocks. */
  fastscan: FastScanShare | null;
}

/** One request to a search worker: queries (`n × dim`), depth and options. */
export interface IvfSearchRequest {
  qs: Float32Array;
  k: number;
  options: IvfSearchOptions;
}

/** Rows the rescoring kernel reads and scores at a time (3 MiB at 768 dimensions). */
const RESCORE_ROWS = 4096;
/** Rows between two candidates that one read takes in rather than starting another. */
const RESCORE_GAP = 8;

/** A compressed dense index opened for search. */
export class IvfIndex {
  private readonly prober: Prober;
  private readonly rescoreFd: number;
  private readonly rescoreOffset: number;
  private readonly scorer: Int8Scorer;
  private readonly spanPos = new Float64Array(RESCORE_ROWS);
  private refine = 4;
  private pool: WorkerPool<IvfSearchRequest, Hit[][]> | null = null;

  private constructor(
    readonly dir: string,
    private readonly q: Quantizer,
    readonly count: number,
    readonly offsets: Float64Array,
    readonly ids: Uint32Array,
    private readonly hamming: HammingMemory | null,
    private readonly pq: HammingMemory | null,
    private readonly fast: { memory: FastScanMemory; starts: Float64Array } | null,
    rescore: { fd: number; offset: number },
    readonly defaults: { nprobe: number; rerank: number },
    private readonly manifest: IndexManifest,
    private readonly threads: number,
  ) {
    this.prober = new Prober(q);
    this.rescoreFd = rescore.fd;
    this.rescoreOffset = rescore.offset;
    this.scorer = new Int8Scorer(q.dim, RESCORE_ROWS);
  }

  /** Opens the index files of `dir`, checking each belongs to the manifest's build. */
  static open(dir: string, m: IndexManifest, o: IvfOpenOptions = {}): IvfIndex {
    const threads = Math.max(1, o.threads ?? cpus().length);
    return IvfIndex.load(dir, m, threads, null);
  }

  /** The index `share` describes, attached from a worker thread that scans with scratch slot `slot`. */
  static attach(share: IvfShare, slot: number): IvfIndex {
    return IvfIndex.load(share.dir, share.manifest, 1, { share, slot });
  }

  private static load(dir: string, m: IndexManifest, threads: number, attach: { share: IvfShare; slot: number } | null): IvfIndex {
    const p = m.params as { build: string; dim: number; lists: number; codeBytes: number; quantize: string; nprobe: number; rerank: number };
    const build = p.build;
    const q = Quantizer.load(join(dir, IVF_FILES.quantizer), build);
    if (q.dim !== p.dim || q.lists !== p.lists || q.kind !== p.quantize) throw new Error(`${join(dir, IVF_FILES.quantizer)}: does not match manifest.json (dimensions, lists or quantization)`);
    const n = m.units;
    const rescore = openIvfFile(join(dir, IVF_FILES.rescore), { file: "rescore", build, rows: n, rowBytes: q.dim });
    const defaults = { nprobe: p.nprobe, rerank: p.rerank };
    if (attach) {
      const s = attach.share;
      const hamming = s.hamming ? HammingMemory.attach(s.hamming, attach.slot) : null;
      const pq = s.pq ? HammingMemory.attach(s.pq, attach.slot) : null;
      const fast = s.fastscan ? { memory: FastScanMemory.attach(s.fastscan, attach.slot), starts: blockStarts(s.offsets) } : null;
      return new IvfIndex(dir, q, n, s.offsets, new Uint32Array(s.ids), hamming, pq, fast, rescore, defaults, m, 1);
    }
    const read = (name: string, file: string, rows: number, rowBytes: number, into?: Uint8Array): Uint8Array => {
      const path = join(dir, name);
      const f = openIvfFile(path, { file, build, rows, rowBytes });
      try {
        const out = into ?? new Uint8Array(rows * rowBytes);
        for (let off = 0; off < out.length; off += 1 << 28) readAll(f.fd, out.subarray(off, Math.min(out.length, off + (1 << 28))), f.offset + off, path);
        return out;
      } finally {
        closeSync(f.fd);
      }
    };
    try {
      const offsets = new Float64Array(read(IVF_FILES.lists, "lists", q.lists + 1, 8).buffer);
      if (offsets[q.lists] !== n) throw new Error(`${join(dir, IVF_FILES.lists)}: lists hold ${offsets[q.lists]} vectors, the index has ${n}`);
      // ids and codes in shared memory, so that search workers attach to them instead of copying
      const ids = new Uint32Array(new SharedArrayBuffer(n * 4));
      read(IVF_FILES.ids, "ids", n, 4, new Uint8Array(ids.buffer));
      let hamming: HammingMemory | null = null;
      let pq: HammingMemory | null = null;
      let fast: { memory: FastScanMemory; starts: Float64Array } | null = null;
      let maxList = 0;
      for (let l = 0; l < q.lists; l++) maxList = Math.max(maxList, offsets[l + 1] - offsets[l]);
      if (q.kind === "binary") {
        hamming = HammingMemory.create(n, q.codeBytes, Math.max(1, maxList), threads > 1 ? threads + 1 : 1);
        read(IVF_FILES.codes, "codes", n, q.codeBytes, hamming.codes());
      } else if (q.kind === "pq") {
        // PQ codes in the same kind of shared kernel memory: its table kernel sums a code's look-ups
        pq = HammingMemory.create(n, q.codeBytes, 1, threads > 1 ? threads + 1 : 1);
        read(IVF_FILES.codes, "codes", n, q.codeBytes, pq.codes());
      } else if (q.kind === "pq4") {
        const starts = blockStarts(offsets);
        const memory = FastScanMemory.create(starts[q.lists], q.codeBytes, threads > 1 ? threads + 1 : 1);
        readBlocks(join(dir, IVF_FILES.codes), build, n, q.codeBytes, offsets, starts, memory.codes());
        fast = { memory, starts };
      } else read(IVF_FILES.codes, "codes", n, 0);
      return new IvfIndex(dir, q, n, offsets, ids, hamming, pq, fast, rescore, defaults, m, threads);
    } catch (e) {
      closeSync(rescore.fd);
      throw e;
    }
  }

  /** The best `k` units of each query (`qs`: `nq × dim`, unit length). */
  search(qs: Float32Array, k: number, o: IvfSearchOptions = {}): Hit[][] {
    const q = this.q;
    const dim = q.dim;
    const nq = qs.length / dim;
    if (this.count === 0 || k <= 0) return Array.from({ length: nq }, () => []);
    const { nprobe, topProbe } = probeDepth(q, o.nprobe, this.defaults.nprobe, o.topProbe);
    const rerank = Math.max(k, o.rerank ?? this.defaults.rerank);
    const probes = this.prober.probe(qs, nq, nprobe, topProbe);
    this.refine = Math.max(1, o.refine ?? 4);
    const out: Hit[][] = [];
    for (let i = 0; i < nq; i++) {
      const positions = this.candidates(qs, i * dim, probes[i], rerank);
      out.push(this.rescore(qs, i * dim, positions, k));
    }
    return out;
  }

  /**
   * {@link search} over the index's search threads: the batch is cut into chunks that the workers answer
   * (the same hits as one thread gives). One query, or an index opened with one thread, is searched here.
   */
  async searchBatch(qs: Float32Array, k: number, o: IvfSearchOptions = {}): Promise<Hit[][]> {
    const dim = this.q.dim;
    const nq = qs.length / dim;
    if (this.threads <= 1 || nq < 2) return this.search(qs, k, o);
    this.pool ??= this.startPool();
    const chunk = Math.max(1, Math.min(32, Math.ceil(nq / (this.threads * 4))));
    const jobs: Promise<Hit[][]>[] = [];
    for (let i = 0; i < nq; i += chunk) {
      const part = qs.slice(i * dim, Math.min(nq, i + chunk) * dim);
      jobs.push(this.pool.run({ qs: part, k, options: o }, [part.buffer]));
    }
    return (await Promise.all(jobs)).flat();
  }

  private startPool(): WorkerPool<IvfSearchRequest, Hit[][]> {
    const share: IvfShare = {
      dir: this.dir,
      manifest: this.manifest,
      offsets: this.offsets,
      ids: this.ids.buffer as unknown as SharedArrayBuffer,
      hamming: this.hamming?.share() ?? null,
      pq: this.pq?.share() ?? null,
      fastscan: this.fast?.memory.share() ?? null,
    };
    return new WorkerPool(workerScript(import.meta.url, "ivf-search-worker"), this.threads, (t: number) => ({ share, slot: t + 1 }), "dense search worker");
  }

  /** Positions (in list order) of the best `rerank` candidates of one query in its probed lists. */
  private candidates(qs: Float32Array, qo: number, lists: Int32Array, rerank: number): Float64Array {
    const q = this.q;
    let total = 0;
    for (const l of lists) total += this.offsets[l + 1] - this.offsets[l];
    if (q.kind === "int8" || total <= rerank) {
      const all = new Float64Array(total);
      let t = 0;
      for (const l of lists) for (let p = this.offsets[l]; p < this.offsets[l + 1]; p++) all[t++] = p;
      return all;
    }
    if (this.hamming) {
      const code = new Uint8Array(q.codeBytes);
      q.binaryCode(qs, qo, code, 0);
      this.hamming.setQuery(code);
      const bits = q.codeBytes * 8;
      const hist = new Int32Array(bits + 1);
      const dist = new Uint16Array(total);
      const pos = new Float64Array(total);
      let t = 0;
      for (const l of lists) {
        const o0 = this.offsets[l];
        const len = this.offsets[l + 1] - o0;
        if (len === 0) continue;
        const d = this.hamming.scan(o0, len);
        for (let j = 0; j < len; j++) {
          dist[t] = d[j];
          pos[t++] = o0 + j;
          hist[d[j]]++;
        }
      }
      // the `depth` nearest by Hamming distance (those at the cut distance taken in list order) ...
      const depth = Math.min(total, rerank * this.refine);
      let cut = 0;
      let below = 0;
      while (below + hist[cut] < depth) below += hist[cut++];
      let atCut = depth - below;
      const near = new Float64Array(depth);
      let s = 0;
      for (let j = 0; j < total; j++) {
        const d = dist[j];
        if (d < cut || (d === cut && atCut-- > 0)) near[s++] = pos[j];
      }
      if (depth <= rerank) return near;
      // ... then the best `rerank` of those by the query's float values against the code's bits
      // (asymmetric: Σ (q − mean)_d over the set bits, one table of 256 sums per code byte)
      this.hamming.setTable(q.binaryTable(qs, qo));
      const heap = new TopHeap(rerank);
      for (let j0 = 0; j0 < depth; j0 += TABLE_CHUNK) {
        const n = Math.min(TABLE_CHUNK, depth - j0);
        const sums = this.hamming.tableScores(near, j0, n);
        for (let j = 0; j < n; j++) heap.push(sums[j], near[j0 + j]);
      }
      return heap.items();
    }
    // PQ: score = q·(list centroid) + Σ_s LUT[s][code_s] (the sum by the table kernel), kept in a bounded min-heap
    const m = q.pqM;
    const dsub = q.dsub;
    const ksub = q.ksub;
    const lut = new Float32Array(m * ksub);
    for (let s = 0; s < m; s++)
      for (let c = 0; c < ksub; c++) {
        let v = 0;
        const cbo = (s * ksub + c) * dsub;
        for (let d = 0; d < dsub; d++) v += qs[qo + s * dsub + d] * q.codebooks[cbo + d];
        lut[s * ksub + c] = v;
      }
    if (this.fast) return this.fastCandidates(qs, qo, lists, rerank, lut);
    const pq = this.pq as HammingMemory;
    pq.setTable(lut);
    const heap = new TopHeap(rerank);
    for (const l of lists) {
      const base = this.centroidScore(qs, qo, l);
      const o0 = this.offsets[l];
      const len = this.offsets[l + 1] - o0;
      for (let j0 = 0; j0 < len; j0 += TABLE_CHUNK) {
        const n = Math.min(TABLE_CHUNK, len - j0);
        const sums = pq.rangeTableScores(o0 + j0, n);
        for (let j = 0; j < n; j++) heap.push(base + sums[j], o0 + j0 + j);
      }
    }
    return heap.items();
  }

  /** `from` plus the query's inner product with the centroid of list `l` (the PQ codes encode the residual to it), added in dimension order. */
  private centroidScore(qs: Float32Array, qo: number, l: number, from = 0): number {
    const q = this.q;
    let s = from;
    for (let d = 0; d < q.dim; d++) s += qs[qo + d] * q.sub[l * q.dim + d];
    return s;
  }

  /** {@link candidates} of 4-bit PQ codes: the byte table's sums by the fast-scan kernel, `delta · sum + bias` added to the list's centroid score. */
  private fastCandidates(qs: Float32Array, qo: number, lists: Int32Array, rerank: number, lut: Float32Array): Float64Array {
    const q = this.q;
    const { memory, starts } = this.fast as { memory: FastScanMemory; starts: Float64Array };
    const { table, delta, bias } = quantizeTable(lut, q.pqM);
    memory.setTable(table);
    const heap = new TopHeap(rerank);
    for (const l of lists) {
      const base = this.centroidScore(qs, qo, l, bias);
      const o0 = this.offsets[l];
      const len = this.offsets[l + 1] - o0;
      const b0 = starts[l];
      const nb = starts[l + 1] - b0;
      for (let j0 = 0; j0 < nb; j0 += FS_SCAN_BLOCKS) {
        const k = Math.min(FS_SCAN_BLOCKS, nb - j0);
        const sums = memory.scan(b0 + j0, k);
        const first = j0 * FS_BLOCK;
        const count = Math.min(k * FS_BLOCK, len - first);
        // sums at or below `skip` cannot beat the heap's floor (one below the bound, so the heap still
        // decides every near case and the candidates are those of pushing every code)
        let skip = Math.floor((heap.floor - base) / delta) - 1;
        for (let j = 0; j < count; j++) {
          if (sums[j] <= skip) continue;
          heap.push(base + delta * sums[j], o0 + first + j);
          skip = Math.floor((heap.floor - base) / delta) - 1;
        }
      }
    }
    return heap.items();
  }

  /** Scores the candidates at `positions` with the int8 vectors; the best `k`, ties to the lower unit. */
  private rescore(qs: Float32Array, qo: number, positions: Float64Array, k: number): Hit[] {
    const dim = this.q.dim;
    const { weights, bias } = this.q.int8Query(qs, qo);
    const scorer = this.scorer;
    scorer.setQuery(weights, bias);
    const sorted = Float64Array.from(positions).sort();
    const path = join(this.dir, IVF_FILES.rescore);
    const best = new TopHits(k);
    const cap = scorer.maxRows;
    const wanted = new Int32Array(cap); // rows of the buffer that are candidates
    let i = 0;
    while (i < sorted.length) {
      // spans of rows read straight into the kernel's memory (a span takes in gaps of up to RESCORE_GAP
      // rows: one read costs more than scoring a few rows that are not candidates), then scored
      const buf = scorer.rows(cap);
      let filled = 0;
      let nWanted = 0;
      const posOf = this.spanPos;
      while (i < sorted.length && filled < cap) {
        const first = sorted[i];
        let j = i + 1;
        while (j < sorted.length && sorted[j] - sorted[j - 1] <= RESCORE_GAP && sorted[j] - first < cap - filled) j++;
        const rows = sorted[j - 1] - first + 1;
        readAll(this.rescoreFd, buf.subarray(filled * dim, (filled + rows) * dim), this.rescoreOffset + first * dim, path);
        for (let t = i; t < j; t++) {
          wanted[nWanted] = filled + (sorted[t] - first);
          posOf[nWanted++] = sorted[t];
        }
        filled += rows;
        i = j;
      }
      const scores = scorer.score(filled);
      for (let w = 0; w < nWanted; w++) best.push(scores[wanted[w]], this.ids[posOf[w]]);
    }
    return best.hits();
  }

  /** Closes the int8 rows file and stops the search workers (the codes are released with the object). */
  async close(): Promise<void> {
    closeSync(this.rescoreFd);
    await this.pool?.close();
    this.pool = null;
  }
}

/**
 * Reads the row-major 4-bit codes of `codes.bin` (list by list, as the build laid them out) into fast-scan
 * blocks: a few lists at a time, so no second copy of all the codes is held.
 */
function readBlocks(path: string, build: string, n: number, codeBytes: number, offsets: Float64Array, starts: Float64Array, dst: Uint8Array): void {
  const f = openIvfFile(path, { file: "codes", build, rows: n, rowBytes: codeBytes });
  try {
    const lists = offsets.length - 1;
    const chunkRows = Math.max(1, Math.floor((1 << 25) / Math.max(1, codeBytes)));
    let buf = new Uint8Array(0);
    let l = 0;
    while (l < lists) {
      // lists l … e−1: as many whole lists as fit in the chunk (at least one)
      let e = l + 1;
      while (e < lists && offsets[e + 1] - offsets[l] <= chunkRows) e++;
      const rows = offsets[e] - offsets[l];
      if (buf.length < rows * codeBytes) buf = new Uint8Array(rows * codeBytes);
      readAll(f.fd, buf.subarray(0, rows * codeBytes), f.offset + offsets[l] * codeBytes, path);
      for (let t = l; t < e; t++) toBlocks(buf, (offsets[t] - offsets[l]) * codeBytes, offsets[t + 1] - offsets[t], codeBytes, dst, starts[t] * codeBytes * FS_BLOCK);
      l = e;
    }
  } finally {
    closeSync(f.fd);
  }
}
