// One BM25 build segment: units analysed into (term, unit, tf) postings held in flat typed arrays (term
// ids from a per-segment dictionary; no object per posting), flushed to a sorted segment file when the
// memory budget is reached, and read back term by term for the merge (./merge.ts). A segment file is
// a build's temporary: the final index format is ./format.ts.
//
// Segment file: "TBM25SEG" | u32 version | u32 JSON bytes | JSON {units, terms, postings, docCount,
// sumTotalTermFreq} | u32 unit[units] | u32 length[units] | per term in UTF-16 order: varint UTF-8
// bytes, the bytes, varint postings, then per posting varint (unit − previous unit), varint tf.

import { renameSync } from "node:fs";
import { getAnalyzer, type Analyzer, type AnalyzerName } from "./analyzer.js";
import { ByteSource, InFile, OutFile } from "./codec.js";
import { TokenTable } from "./token-table.js";
import type { TokenSink } from "./word-break.js";

const SEG_MAGIC = "TBM25SEG";
const SEG_VERSION = 1;

/** A growable Uint32 array. */
class U32List {
  data: Uint32Array;
  length = 0;
  constructor(capacity = 1 << 16) {
    this.data = new Uint32Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

export interface SegmentStats {
  units: number;
  terms: number;
  postings: number;
  docCount: number;
  sumTotalTermFreq: number;
}

/** Collects postings of units (any increasing unit numbers) until flushed. */
export class SegmentCollector {
  readonly analyzer: Analyzer;
  /** Distinct raw token → term id, or -1 for a dropped token (stop word). */
  private tokenIds = new TokenTable();
  private termIds = new Map<string, number>();
  private terms: string[] = [];
  private termChars = 0;
  private tf = new Int32Array(1 << 16);
  private touched = new Int32Array(1 << 12);
  private touchedCount = 0;
  private length = 0;
  private text = "";
  private readonly sink: TokenSink;
  /** One row per (unit, term) in unit order: the term and its frequency. */
  private rowTerm = new U32List(1 << 20);
  private rowTf = new U32List(1 << 20);
  private rowsPerUnit = new U32List(1 << 14);
  private unitIds = new U32List(1 << 14);
  private lengths = new U32List(1 << 14);
  private sumTotalTermFreq = 0;
  private docCount = 0;

  constructor(analyzer: AnalyzerName) {
    this.analyzer = getAnalyzer(analyzer);
    this.sink = (start, end, hash) => this.token(start, end, hash ?? TokenTable.hash(this.text, start, end));
  }

  get units(): number {
    return this.lengths.length;
  }

  /** Bytes this segment holds and will need at its flush (an estimate on the high side), with row capacity `rows`. */
  private estimate(rows: number): number {
    // Rows: 8 bytes each as held (capacity), 8 more per row used while sorting; terms: Map entry, string,
    // id arrays; raw tokens: table entry and string; units: 4 arrays.
    return rows * 8 + this.rowTerm.length * 8 + this.terms.length * 120 + this.termChars * 2 + this.tokenIds.size * 90 + this.lengths.data.length * 16;
  }

  /** Bytes this segment holds and will need at its flush. */
  get memoryEstimate(): number {
    return this.estimate(this.rowTerm.data.length);
  }

  /** Whether the segment should be flushed to stay under `cap` bytes: it is there, or its rows are about to double past it. */
  full(cap: number): boolean {
    const capacity = this.rowTerm.data.length;
    return this.estimate(capacity) >= cap || (this.rowTerm.length > capacity * 0.85 && this.estimate(capacity * 2) + capacity * 8 >= cap);
  }

  private token(start: number, end: number, h: number): void {
    const text = this.text;
    let id = this.tokenIds.get(text, start, end, h);
    if (id === undefined) {
      const raw = text.slice(start, end);
      id = this.termId(this.analyzer.normalize(raw));
      this.tokenIds.set(raw, h, id);
    }
    if (id < 0) return;
    this.length++;
    if (this.tf[id]++ === 0) {
      if (this.touchedCount === this.touched.length) {
        const next = new Int32Array(this.touchedCount * 2);
        next.set(this.touched);
        this.touched = next;
      }
      this.touched[this.touchedCount++] = id;
    }
  }

  private termId(term: string | null): number {
    if (term === null) return -1;
    // Terms are stored as UTF-8: lone surrogates become U+FFFD here, as at query time.
    term = (term as unknown as { toWellFormed(): string }).toWellFormed();
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.terms.push(term);
      this.termChars += term.length;
      this.termIds.set(term, id);
      if (id >= this.tf.length) {
        const next = new Int32Array(this.tf.length * 2);
        next.set(this.tf);
        this.tf = next;
      }
    }
    return id;
  }

  /** Analyses one unit's indexed text as unit number `unit` (greater than the previous one). */
  add(unit: number, text: string): void {
    this.text = text;
    this.length = 0;
    this.touchedCount = 0;
    this.analyzer.tokenize(text, this.sink);
    this.text = "";
    const { touched, touchedCount, tf } = this;
    for (let i = 0; i < touchedCount; i++) {
      const id = touched[i];
      this.rowTerm.push(id);
      this.rowTf.push(tf[id]);
      tf[id] = 0;
    }
    this.rowsPerUnit.push(touchedCount);
    this.unitIds.push(unit);
    this.lengths.push(this.length);
    this.sumTotalTermFreq += this.length;
    if (this.length > 0) this.docCount++;
    // The raw-token cache only saves work: bound it.
    if (this.tokenIds.size > 2_000_000) this.tokenIds = new TokenTable();
  }

  /**
   * Adds one unit given as terms with their values (already distinct; an impact index's quantized
   * weights, ../impact/build.ts), as unit number `unit` (greater than the previous one): no analysis.
   * The unit's length is the sum of the values.
   */
  addTerms(unit: number, terms: readonly string[], values: ArrayLike<number>): void {
    let length = 0;
    for (let i = 0; i < terms.length; i++) {
      const v = values[i];
      this.rowTerm.push(this.termId(terms[i]));
      this.rowTf.push(v);
      length += v;
    }
    this.rowsPerUnit.push(terms.length);
    this.unitIds.push(unit);
    this.lengths.push(Math.min(length, 0xffffffff));
    this.sumTotalTermFreq += length;
    if (length > 0) this.docCount++;
  }

  /** Writes the segment to `path` (via a temporary name) and empties the collector; returns its statistics. */
  flush(path: string): SegmentStats {
    const T = this.terms.length;
    const P = this.rowTerm.length;
    const N = this.lengths.length;
    const stats: SegmentStats = { units: N, terms: T, postings: P, docCount: this.docCount, sumTotalTermFreq: this.sumTotalTermFreq };
    // Counting sort of the rows by term; units stay increasing within a term.
    const start = new Uint32Array(T + 1);
    const rowTerm = this.rowTerm.data;
    for (let i = 0; i < P; i++) start[rowTerm[i] + 1]++;
    for (let t = 0; t < T; t++) start[t + 1] += start[t];
    const cursor = start.slice(0, T);
    const docs = new Uint32Array(P);
    const tfs = new Uint32Array(P);
    const rowTf = this.rowTf.data;
    const rowsPerUnit = this.rowsPerUnit.data;
    const unitIds = this.unitIds.data;
    for (let d = 0, i = 0; d < N; d++) {
      const u = unitIds[d];
      for (const stop = i + rowsPerUnit[d]; i < stop; i++) {
        const j = cursor[rowTerm[i]]++;
        docs[j] = u;
        tfs[j] = rowTf[i];
      }
    }
    const order = Array.from({ length: T }, (_, i) => i);
    const terms = this.terms;
    order.sort((a, b) => (terms[a] < terms[b] ? -1 : terms[a] > terms[b] ? 1 : 0));

    const tmp = `${path}.partial`;
    const out = new OutFile(tmp);
    try {
      const s = out.sink;
      const json = Buffer.from(JSON.stringify(stats));
      s.bytes(Buffer.from(SEG_MAGIC, "latin1"));
      s.u32(SEG_VERSION);
      s.u32(json.length);
      s.bytes(json);
      for (let d = 0; d < N; d++) s.u32(unitIds[d]);
      for (let d = 0; d < N; d++) s.u32(this.lengths.data[d]);
      for (let k = 0; k < T; k++) {
        const t = order[k];
        const bytes = Buffer.from(terms[t], "utf8");
        s.varint(bytes.length);
        s.bytes(bytes);
        const a = start[t];
        const b = start[t + 1];
        s.varint(b - a);
        let prev = -1;
        for (let p = a; p < b; p++) {
          s.varint(docs[p] - prev);
          prev = docs[p];
          s.varint(tfs[p]);
        }
        out.maybeFlush();
      }
    } finally {
      out.close();
    }
    renameSync(tmp, path);
    this.reset();
    return stats;
  }

  private reset(): void {
    this.tokenIds = new TokenTable();
    this.termIds = new Map();
    this.terms = [];
    this.termChars = 0;
    this.tf = new Int32Array(1 << 16);
    // Fresh arrays: the next segment grows its own (memory is given back between segments).
    this.rowTerm = new U32List(1 << 20);
    this.rowTf = new U32List(1 << 20);
    this.rowsPerUnit = new U32List(1 << 14);
    this.unitIds = new U32List(1 << 14);
    this.lengths = new U32List(1 << 14);
    this.sumTotalTermFreq = 0;
    this.docCount = 0;
  }
}

/**
 * Writes a segment file term by term (terms given in UTF-16 order, each with its postings by increasing
 * unit), for postings that come term-major already (../impact/from-bm25.ts); renamed into place at close.
 */
export class SegmentFileWriter {
  private readonly out: OutFile;
  private readonly tmp: string;
  private written = 0;

  constructor(
    readonly path: string,
    readonly stats: SegmentStats,
    unitIds: Uint32Array,
    lengths: Uint32Array,
  ) {
    this.tmp = `${path}.partial`;
    this.out = new OutFile(this.tmp);
    const s = this.out.sink;
    const json = Buffer.from(JSON.stringify(stats));
    s.bytes(Buffer.from(SEG_MAGIC, "latin1"));
    s.u32(SEG_VERSION);
    s.u32(json.length);
    s.bytes(json);
    for (let d = 0; d < stats.units; d++) s.u32(unitIds[d]);
    for (let d = 0; d < stats.units; d++) s.u32(lengths[d]);
  }

  /** One term's postings: `count` (unit, value) pairs, units increasing. */
  term(term: string, docs: ArrayLike<number>, values: ArrayLike<number>, count: number): void {
    const s = this.out.sink;
    const bytes = Buffer.from(term, "utf8");
    s.varint(bytes.length);
    s.bytes(bytes);
    s.varint(count);
    let prev = -1;
    for (let p = 0; p < count; p++) {
      s.varint(docs[p] - prev);
      prev = docs[p];
      s.varint(values[p]);
    }
    this.written++;
    this.out.maybeFlush();
  }

  /** Finishes the file (its term count must be the stats' terms). */
  close(): void {
    this.out.close();
    if (this.written !== this.stats.terms) throw new Error(`${this.path}: ${this.written} terms written, the header says ${this.stats.terms}`);
    renameSync(this.tmp, this.path);
  }
}

/** A segment file read back: its statistics, units and lengths, then its terms in order. */
export class SegmentReader {
  readonly stats: SegmentStats;
  readonly unitIds: Uint32Array;
  readonly lengths: Uint32Array;
  private readonly file: InFile;
  private left: number;
  /** The current term (after `nextTerm`), its UTF-8 bytes and posting count. */
  term = "";
  termBytes: Uint8Array = new Uint8Array(0);
  count = 0;

  /** `chunk`: bytes of the read buffer. */
  constructor(
    readonly path: string,
    size: number,
    chunk = 1 << 20,
  ) {
    this.file = new InFile(path, 0, size, chunk);
    let src = this.file.need(16);
    const magic = Buffer.from(src.buf.subarray(src.pos, src.pos + 8)).toString("latin1");
    src.pos += 8;
    if (magic !== SEG_MAGIC) throw new Error(`${path}: not a BM25 build segment`);
    if (src.u32() !== SEG_VERSION) throw new Error(`${path}: segment version differs (delete the build directory and rebuild)`);
    const jlen = src.u32();
    src = this.file.need(jlen);
    this.stats = JSON.parse(Buffer.from(src.buf.subarray(src.pos, src.pos + jlen)).toString("utf8")) as SegmentStats;
    src.pos += jlen;
    const n = this.stats.units;
    this.unitIds = this.readU32s(n);
    this.lengths = this.readU32s(n);
    this.left = this.stats.terms;
  }

  private readU32s(n: number): Uint32Array {
    const out = new Uint32Array(n);
    for (let i = 0; i < n; ) {
      const src = this.file.need(Math.min(n - i, 1 << 16) * 4);
      const m = Math.min(n - i, Math.floor((src.end - src.pos) / 4));
      if (m === 0) throw new Error(`${this.path}: truncated`);
      for (let k = 0; k < m; k++) out[i + k] = src.u32();
      i += m;
    }
    return out;
  }

  /** Moves to the next term; false at the end. */
  nextTerm(): boolean {
    if (this.left === 0) {
      this.term = "";
      return false;
    }
    this.left--;
    let src = this.file.need(10);
    const len = src.varint();
    src = this.file.need(len + 10);
    this.termBytes = src.buf.slice(src.pos, src.pos + len);
    src.pos += len;
    this.term = Buffer.from(this.termBytes.buffer, this.termBytes.byteOffset, len).toString("utf8");
    this.count = src.varint();
    return true;
  }

  /** Reads the current term's postings into docs/tfs at `at`; returns at + count. */
  readPostings(docs: Int32Array, tfs: Int32Array, at: number): number {
    let prev = -1;
    let src: ByteSource;
    for (let k = 0; k < this.count; ) {
      src = this.file.need(Math.min(this.count - k, 4096) * 20);
      const stop = Math.min(this.count, k + 4096);
      for (; k < stop; k++) {
        prev += src.varint();
        docs[at] = prev;
        tfs[at++] = src.varint();
      }
    }
    return at;
  }

  close(): void {
    this.file.close();
  }
}
