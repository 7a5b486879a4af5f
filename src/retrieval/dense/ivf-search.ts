// Search in a compressed dense index (./ivf-build.ts), embedded: the store of its lists that the shared
// search sequence (./ivf-sequence.ts: probe, candidates, rescore, top k) runs over. The lists' codes are
// held in memory and scanned with the index's code type (./codes/: binary codes by Hamming distance, PQ
// and 4-bit PQ by look-up tables, int8 by taking every row; each keeps the `refine` best candidates its own
// way); the candidates' int8 vectors are read from disk (pread; the page cache holds what is hot) straight
// into the rescoring kernel's memory. Memory is the codes (dim/8 bytes a vector for binary), the ids
// (4 bytes a vector) and the centroids; the int8 vectors stay on disk. Nothing here depends on which code
// type an index has. `searchBatch` spreads a batch over worker threads (./ivf-search-worker.ts) that
// attach to the same codes and ids in shared memory, so both cores search while the index is held once.

import { closeSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import type { Hit, IndexManifest } from "../types.js";
import type { SearchOptions } from "../query.js";
import { WorkerPool } from "../../util/worker-pool.js";
import { workerScript } from "../../util/worker-script.js";
import { Quantizer } from "./quantizer.js";
import { IVF_FILES, openIvfFile, readAll } from "./ivf-files.js";
import { IvfSequence, RESCORE_ROWS, storedDepth, type InPlaceRows, type ListStore, type ProbedBatch, type RowReader } from "./ivf-sequence.js";
import { Int8RowMemory, type Int8RowShare } from "./int8-kernel.js";
import { allPositions, type ListCodes, type ListSource } from "./codes/code-type.js";

/** Search parameters (defaults: the manifest's): the search options of one call (../query.ts). */
export type IvfSearchOptions = SearchOptions;

/** How an index is opened: search threads for batches (default: the number of cores; 1 = the calling thread only). */
export interface IvfOpenOptions {
  threads?: number;
  /**
   * Holds the int8 rescoring rows in memory (rescore.i8 read once into shared memory, `n × dim` bytes,
   * which search workers attach to) instead of reading each query's candidates from disk: the same hits,
   * without a read per candidate. For indexes whose rows fit in RAM (1M × 768: 768 MB).
   */
  rowsInMemory?: boolean;
}

/** What a search worker needs to attach to an opened index: its directory, and the arrays in shared memory. */
export interface IvfShare {
  dir: string;
  manifest: IndexManifest;
  offsets: Float64Array;
  ids: SharedArrayBuffer;
  /** The code type's codes in shared memory (what its `ListCodes.share` gave). */
  codes: unknown;
  /** The int8 rescoring rows, when held in memory: in the gathering kernel's memory, or (where they cannot be) a plain shared buffer. */
  rows: Int8RowShare | SharedArrayBuffer | null;
}

/** One request to a search worker: queries (`n × dim`), depth and options. */
export interface IvfSearchRequest {
  qs: Float32Array;
  k: number;
  options: IvfSearchOptions;
}

/** Rows between two candidates that one read takes in rather than starting another. */
const RESCORE_GAP = 8;

/** A compressed dense index opened for search (the shared search sequence, ./ivf-sequence.ts, over its lists). */
export class IvfIndex {
  private readonly sequence: IvfSequence;
  private readonly store: LocalLists;
  private readonly rescoreFd: number;
  private readonly rescoreOffset: number;
  private pool: WorkerPool<IvfSearchRequest, Hit[][]> | null = null;

  private constructor(
    readonly dir: string,
    private readonly q: Quantizer,
    readonly count: number,
    readonly offsets: Float64Array,
    readonly ids: Uint32Array,
    private readonly codes: ListCodes,
    rescore: { fd: number; offset: number },
    readonly defaults: { nprobe: number; refine: number },
    private readonly manifest: IndexManifest,
    private readonly threads: number,
    /** The int8 rows when held in memory: in the gathering kernel's memory, or a plain shared buffer. */
    private readonly rows: Int8RowMemory | Uint8Array | null,
  ) {
    this.rescoreFd = rescore.fd;
    this.rescoreOffset = rescore.offset;
    this.sequence = new IvfSequence(q, offsets, count, defaults);
    this.store = new LocalLists(q.dim, offsets, ids, codes, rescore.fd, rescore.offset, join(dir, IVF_FILES.rescore), rows);
  }

  /** Opens the index files of `dir`, checking each belongs to the manifest's build. */
  static open(dir: string, m: IndexManifest, o: IvfOpenOptions = {}): IvfIndex {
    const threads = Math.max(1, o.threads ?? cpus().length);
    return IvfIndex.load(dir, m, threads, null, o.rowsInMemory === true);
  }

  /** The index `share` describes, attached from a worker thread that scans with scratch slot `slot`. */
  static attach(share: IvfShare, slot: number): IvfIndex {
    return IvfIndex.load(share.dir, share.manifest, 1, { share, slot }, false);
  }

  private static load(dir: string, m: IndexManifest, threads: number, attach: { share: IvfShare; slot: number } | null, rowsInMemory: boolean): IvfIndex {
    const p = m.params as { build: string; dim: number; lists: number; codeBytes: number; quantize: string };
    const build = p.build;
    const q = Quantizer.load(join(dir, IVF_FILES.quantizer), build);
    if (q.dim !== p.dim || q.lists !== p.lists || q.kind !== p.quantize) throw new Error(`${join(dir, IVF_FILES.quantizer)}: does not match manifest.json (dimensions, lists or quantization)`);
    const n = m.units;
    const rescore = openIvfFile(join(dir, IVF_FILES.rescore), { file: "rescore", build, rows: n, rowBytes: q.dim });
    const defaults = storedDepth(m.params);
    if (attach) {
      const s = attach.share;
      const codes = q.codes.attachLists(s.codes, attach.slot, s.offsets, q);
      const rows = s.rows === null ? null : s.rows instanceof SharedArrayBuffer ? new Uint8Array(s.rows) : Int8RowMemory.attach(s.rows, attach.slot);
      return new IvfIndex(dir, q, n, s.offsets, new Uint32Array(s.ids), codes, rescore, defaults, m, 1, rows);
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
      let maxList = 0;
      for (let l = 0; l < q.lists; l++) maxList = Math.max(maxList, offsets[l + 1] - offsets[l]);
      const cb = q.codeBytes;
      const path = join(dir, IVF_FILES.codes);
      const src: ListSource = {
        path,
        count: n,
        offsets,
        maxList,
        slots: threads > 1 ? threads + 1 : 1,
        read: (into) => read(IVF_FILES.codes, "codes", n, cb, into),
        withRows: (f) => {
          const c = openIvfFile(path, { file: "codes", build, rows: n, rowBytes: cb });
          try {
            return f((from, into) => readAll(c.fd, into, c.offset + from * cb, path));
          } finally {
            closeSync(c.fd);
          }
        },
      };
      const codes = q.codes.openLists(src, q);
      let rows: Int8RowMemory | Uint8Array | null = null;
      if (rowsInMemory) {
        // scored in place by the gathering kernel where they fit its memory; copied to the kernel otherwise
        rows = Int8RowMemory.fits(n, q.dim, src.slots, RESCORE_ROWS) ? Int8RowMemory.create(n, q.dim, src.slots, RESCORE_ROWS) : new Uint8Array(new SharedArrayBuffer(n * q.dim));
        const bytes = rows instanceof Int8RowMemory ? rows.bytes() : rows;
        const path = join(dir, IVF_FILES.rescore);
        for (let off = 0; off < bytes.length; off += 1 << 28) readAll(rescore.fd, bytes.subarray(off, Math.min(bytes.length, off + (1 << 28))), rescore.offset + off, path);
      }
      return new IvfIndex(dir, q, n, offsets, ids, codes, rescore, defaults, m, threads, rows);
    } catch (e) {
      closeSync(rescore.fd);
      throw e;
    }
  }

  /** The best `k` units of each query (`qs`: `nq × dim`, unit length). */
  search(qs: Float32Array, k: number, o: IvfSearchOptions = {}): Hit[][] {
    return this.sequence.search(this.store, qs, k, o);
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
      codes: this.codes.share(),
      rows: this.rows === null ? null : this.rows instanceof Int8RowMemory ? this.rows.share() : (this.rows.buffer as SharedArrayBuffer),
    };
    return new WorkerPool(workerScript(import.meta.url, "ivf-search-worker"), this.threads, (t: number) => ({ share, slot: t + 1 }), "dense search worker");
  }

  /** Closes the int8 rows file and stops the search workers (the codes are released with the object). */
  async close(): Promise<void> {
    closeSync(this.rescoreFd);
    await this.pool?.close();
    this.pool = null;
  }
}

/** The embedded index's lists as the search sequence's store: codes scanned in memory, int8 rows read from rescore.i8 (or held in memory). */
class LocalLists implements ListStore, RowReader {
  constructor(
    private readonly dim: number,
    private readonly offsets: Float64Array,
    private readonly ids: Uint32Array,
    private readonly codes: ListCodes,
    private readonly fd: number,
    private readonly offset: number,
    private readonly path: string,
    /** The int8 rows in memory (null: read from rescore.i8). */
    rows: Int8RowMemory | Uint8Array | null,
  ) {
    this.inMemory = rows instanceof Uint8Array ? rows : null;
    if (rows instanceof Int8RowMemory) this.inPlace = { maxRows: rows.maxRows, setQuery: (w, b) => rows.setQuery(w, b), scoreAt: (s, i, n) => rows.scoreAt(s, i, n), unit: (p) => this.ids[p] };
  }

  /** The int8 rows copied from memory to the rescoring kernel (where they are not scored in place). */
  private readonly inMemory: Uint8Array | null;
  /** The int8 rows scored where they lie (held in the gathering kernel's memory). */
  readonly inPlace?: InPlaceRows;

  /** The positions of each query's best `refine` candidates in its probed lists (all of them when they hold no more). */
  candidates(b: ProbedBatch): Float64Array[] {
    const dim = this.dim;
    const refineFactor = b.refineFactor;
    const out: Float64Array[] = [];
    for (let i = 0; i < b.nq; i++) {
      const total = b.totals[i];
      out.push(total <= b.refine ? allPositions(this.offsets, b.probes[i], total) : this.codes.candidates({ qs: b.qs, qo: i * dim, lists: b.probes[i], listScores: b.probeScores[i], total, refine: b.refine, refineFactor, k: b.k }));
    }
    return out;
  }

  /** The int8 rows are read from rescore.i8 as they are scored. */
  rows(): RowReader {
    return this;
  }

  /**
   * Spans of rows read straight into the kernel's memory (a span takes in gaps of up to RESCORE_GAP rows:
   * one read costs more than scoring a few rows that are not candidates).
   */
  fill(sorted: Float64Array, i: number, buf: Uint8Array, cap: number, rowOf: Int32Array, unitOf: Float64Array): { next: number; filled: number; wanted: number } {
    const dim = this.dim;
    const path = this.path;
    let filled = 0;
    let nWanted = 0;
    const mem = this.inMemory;
    if (mem) {
      // rows copied from memory, the candidates' only
      for (; i < sorted.length && filled < cap; i++, filled++) {
        const p = sorted[i];
        buf.set(mem.subarray(p * dim, (p + 1) * dim), filled * dim);
        rowOf[filled] = filled;
        unitOf[filled] = this.ids[p];
      }
      return { next: i, filled, wanted: filled };
    }
    while (i < sorted.length && filled < cap) {
      const first = sorted[i];
      let j = i + 1;
      while (j < sorted.length && sorted[j] - sorted[j - 1] <= RESCORE_GAP && sorted[j] - first < cap - filled) j++;
      const rows = sorted[j - 1] - first + 1;
      readAll(this.fd, buf.subarray(filled * dim, (filled + rows) * dim), this.offset + first * dim, path);
      for (let t = i; t < j; t++) {
        rowOf[nWanted] = filled + (sorted[t] - first);
        unitOf[nWanted++] = this.ids[sorted[t]];
      }
      filled += rows;
      i = j;
    }
    return { next: i, filled, wanted: nWanted };
  }
}
