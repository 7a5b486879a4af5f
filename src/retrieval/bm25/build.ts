// Builds a BM25 index: analyzes every unit once (term ids cached per distinct token), collects
// (term, unit, tf) postings in unit order, counting-sorts them by term, and writes `bm25.index`
// (./format.ts) with per-block score bounds for dynamic pruning, the units (UnitWriter) and
// manifest.json. Scoring statistics follow Lucene 8.7 (./similarity.ts).

import { closeSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { UnitKind } from "../types.js";
import { UnitWriter, type Unit } from "../units.js";
import { writeManifest } from "../manifest.js";
import { getAnalyzer, type AnalyzerName } from "./analyzer.js";
import { TokenTable } from "./token-table.js";
import type { TokenSink } from "./word-break.js";
import { BLOCK_SIZE, FORMAT_VERSION, INDEX_FILE, hashSizeFor, layout, termHash } from "./format.js";
import { averageLength, intToByte4, normInverseCache, tfNorm } from "./similarity.js";

export interface Bm25Params {
  /** Term-frequency saturation (Pyserini's default 0.9). */
  k1: number;
  /** Length normalization (Pyserini's default 0.4). */
  b: number;
  analyzer: AnalyzerName;
  /** Index the unit's title on a line before its text. Default true. */
  title: boolean;
}

export const DEFAULT_BM25_PARAMS: Bm25Params = { k1: 0.9, b: 0.4, analyzer: "english", title: true };

export type Bm25BuildParams = Partial<Bm25Params> & { unit?: UnitKind; source?: string };

export interface Bm25BuildStats {
  units: number;
  terms: number;
  postings: number;
  /** Units with at least one term. */
  docCount: number;
  /** Bytes of bm25.index. */
  indexBytes: number;
}

/** The text BM25 indexes for a unit: `title + "\n" + text`, or the text alone with `title: false`. */
export function bm25IndexedText(unit: Unit, params: Pick<Bm25Params, "title">): string {
  return params.title ? `${unit.wikipedia_title}\n${unit.text}` : unit.text;
}

export function resolveParams(p: Partial<Bm25Params>): Bm25Params {
  const out: Bm25Params = {
    k1: p.k1 ?? DEFAULT_BM25_PARAMS.k1,
    b: p.b ?? DEFAULT_BM25_PARAMS.b,
    analyzer: p.analyzer ?? DEFAULT_BM25_PARAMS.analyzer,
    title: p.title ?? DEFAULT_BM25_PARAMS.title,
  };
  if (typeof out.k1 !== "number" || !(out.k1 >= 0) || !Number.isFinite(out.k1)) throw new Error(`bm25 k1 must be a finite number ≥ 0, got ${String(p.k1)}`);
  if (typeof out.b !== "number" || !(out.b >= 0 && out.b <= 1)) throw new Error(`bm25 b must be in [0, 1], got ${String(p.b)}`);
  if (typeof out.title !== "boolean") throw new Error(`bm25 title must be true or false, got ${String(p.title)}`);
  getAnalyzer(out.analyzer);
  return out;
}

/** A growable Uint32 array. */
class U32List {
  data: Uint32Array;
  length = 0;
  constructor(capacity = 1 << 16) {
    this.data = new Uint32Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) this.grow();
    this.data[this.length++] = v;
  }
  grow(): void {
    const next = new Uint32Array(this.data.length * 2);
    next.set(this.data);
    this.data = next;
  }
}

/** Collects terms and postings unit by unit. */
export class Bm25Collector {
  readonly analyzer;
  /** Distinct raw token → term id, or -1 for a dropped token (stop word). Cleared when it grows too big. */
  private readonly tokenIds = new TokenTable();
  readonly termIds = new Map<string, number>();
  readonly terms: string[] = [];
  private tf = new Int32Array(1 << 16);
  private touched = new Int32Array(1 << 12);
  private touchedCount = 0;
  private length = 0;
  private text = "";
  private readonly sink: TokenSink;
  /** One row per (unit, term), in unit order: the term and its frequency. */
  readonly rowTerm = new U32List(1 << 20);
  readonly rowTf = new U32List(1 << 20);
  /** Rows (distinct terms) of each unit, so rows need not carry their unit. */
  readonly rowsPerUnit = new U32List(1 << 16);
  readonly lengths = new U32List(1 << 16);
  maxTf = 0;
  sumTotalTermFreq = 0;
  docCount = 0;

  constructor(readonly params: Bm25Params) {
    this.analyzer = getAnalyzer(params.analyzer);
    this.sink = (start, end) => this.token(start, end);
  }

  get units(): number {
    return this.lengths.length;
  }

  private token(start: number, end: number): void {
    const text = this.text;
    const h = TokenTable.hash(text, start, end);
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

  /** Analyzes one unit's indexed text as the next unit. */
  add(text: string): void {
    this.text = text;
    this.length = 0;
    this.touchedCount = 0;
    this.analyzer.tokenize(text, this.sink);
    this.text = "";
    const { touched, touchedCount, tf } = this;
    for (let i = 0; i < touchedCount; i++) {
      const id = touched[i];
      const n = tf[id];
      tf[id] = 0;
      this.rowTerm.push(id);
      this.rowTf.push(n);
      if (n > this.maxTf) this.maxTf = n;
    }
    this.rowsPerUnit.push(touchedCount);
    const length = this.length;
    this.lengths.push(length);
    this.sumTotalTermFreq += length;
    if (length > 0) this.docCount++;
    if (this.tokenIds.size > 4_000_000) this.tokenIds.clear();
  }

  private termId(term: string | null): number {
    if (term === null) return -1;
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.terms.push(term);
      this.termIds.set(term, id);
      if (id >= this.tf.length) {
        const next = new Int32Array(this.tf.length * 2);
        next.set(this.tf);
        this.tf = next;
      }
    }
    return id;
  }

  /** The index file's bytes and statistics. */
  finish(): { chunks: Buffer[]; stats: Omit<Bm25BuildStats, "indexBytes"> } {
    const T = this.terms.length;
    const P = this.rowTerm.length;
    const N = this.lengths.length;
    if (P > 0xffffffff || N > 0xffffffff) throw new Error(`bm25: ${P} postings / ${N} units exceed this index format (2^32)`);
    const { params } = this;

    // Counting sort by term; units stay in increasing order within a term.
    const postingStart = new Uint32Array(T + 1);
    const rowTerm = this.rowTerm.data;
    for (let i = 0; i < P; i++) postingStart[rowTerm[i] + 1]++;
    for (let t = 0; t < T; t++) postingStart[t + 1] += postingStart[t];
    const cursor = postingStart.slice(0, T);
    const docs = new Uint32Array(P);
    const tfBytes: 1 | 2 | 4 = this.maxTf <= 0xff ? 1 : this.maxTf <= 0xffff ? 2 : 4;
    const tfs = tfBytes === 1 ? new Uint8Array(P) : tfBytes === 2 ? new Uint16Array(P) : new Uint32Array(P);
    const rowTf = this.rowTf.data;
    const rowsPerUnit = this.rowsPerUnit.data;
    for (let d = 0, i = 0; d < N; d++) {
      for (const stop = i + rowsPerUnit[d]; i < stop; i++) {
        const j = cursor[rowTerm[i]]++;
        docs[j] = d;
        tfs[j] = rowTf[i];
      }
    }

    // Norm bytes and the score bounds: per block of BLOCK_SIZE postings, the largest tf * normInverse.
    const norms = new Uint8Array(N);
    for (let d = 0; d < N; d++) norms[d] = intToByte4(this.lengths.data[d]);
    const avgdl = averageLength(this.sumTotalTermFreq, Math.max(1, this.docCount));
    const normInverse = normInverseCache(params.k1, params.b, avgdl);
    const blockStart = new Uint32Array(T + 1);
    for (let t = 0; t < T; t++) blockStart[t + 1] = blockStart[t] + Math.ceil((postingStart[t + 1] - postingStart[t]) / BLOCK_SIZE);
    const B = blockStart[T];
    const blockLastDoc = new Uint32Array(B);
    const blockMaxX = new Float32Array(B);
    const termMaxX = new Float32Array(T);
    for (let t = 0; t < T; t++) {
      let termMax = 0;
      for (let blk = blockStart[t], p = postingStart[t], end = postingStart[t + 1]; p < end; blk++) {
        const stop = Math.min(end, p + BLOCK_SIZE);
        let max = 0;
        for (; p < stop; p++) {
          const x = tfNorm(tfs[p], normInverse[norms[docs[p]]]);
          if (x > max) max = x;
        }
        blockLastDoc[blk] = docs[stop - 1];
        blockMaxX[blk] = max;
        if (max > termMax) termMax = max;
      }
      termMaxX[t] = termMax;
    }

    // Term dictionary: UTF-8 texts and an open-addressing hash table of term ids.
    const termParts = this.terms.map((t) => Buffer.from(t, "utf8"));
    const termOffsets = new Uint32Array(T + 1);
    for (let t = 0; t < T; t++) termOffsets[t + 1] = termOffsets[t] + termParts[t].length;
    const termBytes = Buffer.concat(termParts, termOffsets[T]);
    const hashSize = hashSizeFor(T);
    const hash = new Uint32Array(hashSize);
    const mask = hashSize - 1;
    for (let t = 0; t < T; t++) {
      let h = termHash(this.terms[t]) & mask;
      while (hash[h] !== 0) h = (h + 1) & mask;
      hash[h] = t + 1;
    }

    const { chunks } = layout(
      {
        formatVersion: FORMAT_VERSION,
        analyzer: params.analyzer,
        k1: params.k1,
        b: params.b,
        title: params.title,
        units: N,
        docCount: this.docCount,
        sumTotalTermFreq: this.sumTotalTermFreq,
        terms: T,
        postings: P,
        blocks: B,
        hashSize,
        tfBytes,
      },
      { termBytes, termOffsets, hash, postingStart, docs, tfs, blockStart, blockLastDoc, blockMaxX, termMaxX, norms },
    );
    return { chunks, stats: { units: N, terms: T, postings: P, docCount: this.docCount } };
  }
}

function writeChunks(path: string, chunks: Buffer[]): number {
  const tmp = `${path}.partial`;
  const fd = openSync(tmp, "w");
  let bytes = 0;
  try {
    for (const c of chunks) {
      let off = 0;
      while (off < c.length) off += writeSync(fd, c, off, c.length - off);
      bytes += c.length;
    }
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  return bytes;
}

/**
 * Indexes `units` into `outDir` (created): units.jsonl/offsets, bm25.index and manifest.json (kind
 * "bm25"). `onProgress(n)` is called with the number of units indexed so far.
 */
export async function buildBm25Index(
  units: AsyncIterable<Unit> | Iterable<Unit>,
  outDir: string,
  params: Bm25BuildParams = {},
  onProgress?: (units: number) => void,
): Promise<Bm25BuildStats> {
  const p = resolveParams(params);
  mkdirSync(outDir, { recursive: true });
  const writer = new UnitWriter(outDir);
  const collector = new Bm25Collector(p);
  for await (const unit of units as AsyncIterable<Unit>) {
    await writer.add(unit);
    collector.add(bm25IndexedText(unit, p));
    onProgress?.(collector.units);
  }
  await writer.close();
  const { chunks, stats } = collector.finish();
  const indexBytes = writeChunks(join(outDir, INDEX_FILE), chunks);
  writeManifest(outDir, {
    kind: "bm25",
    unit: params.unit ?? "passage",
    units: stats.units,
    params: { k1: p.k1, b: p.b, analyzer: p.analyzer, title: p.title },
    source: params.source ?? "",
    formatVersion: FORMAT_VERSION,
  });
  return { ...stats, indexBytes };
}
