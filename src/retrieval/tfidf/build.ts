// Builds a DrQA-style TF-IDF index (DrQA `scripts/retriever/build_tfidf.py`): the units' n-grams hashed
// into 2^hashBits buckets, counted per unit, and laid out as an inverted index over the used buckets.
// Weights (log1p(tf) × idf) are computed at search time from the stored counts, so the index holds
// exactly DrQA's count matrix. Files: docs/retrieval.md ("TF-IDF").

import { closeSync, fstatSync, mkdirSync, openSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeManifest } from "../manifest.js";
import type { UnitKind } from "../types.js";
import { BufferedFile, readExactly } from "../buffered-file.js";
import type { Unit } from "../units/unit.js";
import { UnitWriter } from "../units/store.js";
import { hashBucket } from "./hash.js";
import { drqaNgrams, drqaTokens } from "./tokenize.js";

/** What a TF-IDF index is built with (DrQA's settings by default). */
export interface TfidfParams {
  /** Longest n-gram (DrQA `--ngram`, default 2: unigrams and bigrams). */
  ngram: number;
  /** log2 of the number of hash buckets (DrQA `--hash-size` 2^24). */
  hashBits: number;
  /** Index the unit's title line before its text (DrQA's pages start with their title). Default true. */
  title: boolean;
}

/** DrQA's TF-IDF parameters. */
export const DEFAULT_TFIDF_PARAMS: TfidfParams = { ngram: 2, hashBits: 24, title: true };

export { TFIDF_FORMAT_VERSION } from "./format.js";
import { TFIDF_FORMAT_VERSION } from "./format.js";
export const BUCKETS_FILE = "tfidf.buckets";
export const POSTING_OFFSETS_FILE = "tfidf.offsets";
export const DOCS_FILE = "tfidf.docs";
export const TFS_FILE = "tfidf.tfs";

/** The text TF-IDF indexes for a unit (and the one `tartan search` highlights). */
export function indexedText(unit: Unit, params: Pick<TfidfParams, "title">): string {
  return params.title ? `${unit.wikipedia_title}\n${unit.text}` : unit.text;
}

/** Hashed n-gram counts of one text, as DrQA's `count()`: bucket → count. */
export function ngramCounts(text: string, params: Pick<TfidfParams, "ngram" | "hashBits">): Map<number, number> {
  const buckets = 2 ** params.hashBits;
  const counts = new Map<number, number>();
  for (const gram of drqaNgrams(drqaTokens(text), params.ngram)) {
    const b = hashBucket(gram, buckets);
    counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  return counts;
}

/** What a TF-IDF build wrote. */
export interface TfidfBuildStats {
  units: number;
  buckets: number;
  postings: number;
  /** Segments flushed to disk and merged (1 when everything fitted in memory). */
  segments: number;
}

function checkParams(p: TfidfParams): void {
  if (!Number.isInteger(p.ngram) || p.ngram < 1 || p.ngram > 5) throw new Error(`tfidf ngram must be 1..5, got ${p.ngram}`);
  if (!Number.isInteger(p.hashBits) || p.hashBits < 8 || p.hashBits > 28) throw new Error(`tfidf hashBits must be 8..28, got ${p.hashBits}`);
}

/** Options of a TF-IDF build that are not recorded in the manifest (memory). */
export interface TfidfBuildOptions {
  /** Memory budget in bytes for the build's posting buffer (default 1 GiB); postings beyond it go to segments on disk. */
  memory?: number;
  /** Postings per segment (overrides `memory`; tests use small values to force many segments). */
  segmentPostings?: number;
}

/**
 * Indexes `units` into `outDir` (created): the units, the inverted index and manifest.json.
 * `onProgress(n)` is called with the number of units indexed so far.
 *
 * Memory is bounded whatever the corpus size: (bucket, unit, count) triples fill fixed buffers; a full
 * buffer is sorted by bucket (counting sort) and written as a segment; the segments, which hold
 * increasing unit ranges, are merged bucket by bucket into the final files, read and written through
 * small buffers. The files are the same, byte for byte, however many segments there were.
 */
export async function buildTfidfIndex(
  units: AsyncIterable<Unit> | Iterable<Unit>,
  outDir: string,
  params: Partial<TfidfParams> & { unit: UnitKind; source: string },
  onProgress?: (units: number) => void,
  options: TfidfBuildOptions = {},
): Promise<TfidfBuildStats> {
  const p: TfidfParams = { ngram: params.ngram ?? DEFAULT_TFIDF_PARAMS.ngram, hashBits: params.hashBits ?? DEFAULT_TFIDF_PARAMS.hashBits, title: params.title ?? DEFAULT_TFIDF_PARAMS.title };
  checkParams(p);
  mkdirSync(outDir, { recursive: true });
  const size = 2 ** p.hashBits;
  // 12 bytes a buffered posting, plus the sort's output (8 bytes a posting) and 8 bytes a bucket for counts.
  const capacity = Math.max(1, options.segmentPostings ?? Math.floor(Math.max(64 << 20, (options.memory ?? 1 << 30) - 8 * size) / 20));
  const segments = new SegmentSorter(outDir, size, capacity);
  const writer = new UnitWriter(outDir);
  let n = 0;
  try {
    for await (const unit of units as AsyncIterable<Unit>) {
      const doc = await writer.add(unit);
      for (const [bucket, tf] of ngramCounts(indexedText(unit, p), p)) segments.push(bucket, doc, tf);
      n = doc + 1;
      onProgress?.(n);
    }
    await writer.close();
    const merged = segments.finish();
    writeManifest(outDir, {
      kind: "tfidf",
      unit: params.unit,
      units: n,
      params: { ...p, tfBytes: merged.tfBytes, tokenizer: "drqa-simple", hash: "murmur3_32" },
      source: params.source,
      formatVersion: TFIDF_FORMAT_VERSION,
    });
    return { units: n, buckets: merged.buckets, postings: merged.postings, segments: merged.segments };
  } finally {
    segments.cleanup();
  }
}

/** Postings buffered in fixed arrays, sorted by bucket and spilled to segment files when full. */
class SegmentSorter {
  private readonly bucket: Uint32Array;
  private readonly doc: Uint32Array;
  private readonly tf: Uint32Array;
  private readonly perBucket: Uint32Array;
  private used = 0;
  private maxTf = 0;
  private total = 0;
  readonly files: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly size: number,
    private readonly capacity: number,
  ) {
    this.bucket = new Uint32Array(capacity);
    this.doc = new Uint32Array(capacity);
    this.tf = new Uint32Array(capacity);
    this.perBucket = new Uint32Array(size);
  }

  push(bucket: number, doc: number, tf: number): void {
    if (this.used === this.capacity) this.spill();
    this.bucket[this.used] = bucket;
    this.doc[this.used] = doc;
    this.tf[this.used] = tf;
    this.used++;
    if (tf > this.maxTf) this.maxTf = tf;
  }

  /**
   * Writes the buffered postings as a segment: for each used bucket in increasing order,
   * [bucket, count, docs × count, tfs × count] as little-endian u32 (docs increasing within a bucket).
   */
  private spill(): void {
    const file = join(this.dir, `tfidf.segment-${this.files.length}`);
    const out = new BufferedFile(file);
    this.writeSorted((bucket, docs, tfs) => {
      out.u32(bucket);
      out.u32(docs.length);
      for (let i = 0; i < docs.length; i++) out.u32(docs[i]);
      for (let i = 0; i < tfs.length; i++) out.u32(tfs[i]);
    });
    out.close();
    this.files.push(file);
    this.used = 0;
  }

  /** Counting sort of the buffer by bucket; calls `emit` per used bucket in increasing order. */
  private writeSorted(emit: (bucket: number, docs: Uint32Array, tfs: Uint32Array) => void): void {
    const { perBucket, used } = this;
    for (let i = 0; i < used; i++) perBucket[this.bucket[i]]++;
    // Prefix sums over the used buckets only, in bucket order.
    const order: number[] = [];
    for (let i = 0; i < used; i++) {
      const b = this.bucket[i];
      if (perBucket[b] !== 0 && (perBucket[b] & 0x80000000) === 0) {
        order.push(b);
        perBucket[b] |= 0x80000000; // seen mark
      }
    }
    order.sort((a, b) => a - b);
    const start = new Map<number, number>();
    let at = 0;
    for (const b of order) {
      const count = perBucket[b] & 0x7fffffff;
      start.set(b, at);
      perBucket[b] = at; // cursor
      at += count;
    }
    const docs = new Uint32Array(used);
    const tfs = new Uint32Array(used);
    for (let i = 0; i < used; i++) {
      const j = perBucket[this.bucket[i]]++;
      docs[j] = this.doc[i];
      tfs[j] = this.tf[i];
    }
    for (const b of order) {
      const s = start.get(b)!;
      const e = perBucket[b];
      emit(b, docs.subarray(s, e), tfs.subarray(s, e));
      perBucket[b] = 0;
    }
    this.total += used;
  }

  /** Merges the segments (and what is still buffered) into the final files. */
  finish(): { buckets: number; postings: number; tfBytes: number; segments: number } {
    const tfBytes = this.maxTf > 0xffff ? 4 : 2;
    const buckets = new BufferedFile(join(this.dir, BUCKETS_FILE));
    const offsets = new BufferedFile(join(this.dir, POSTING_OFFSETS_FILE));
    const docsOut = new BufferedFile(join(this.dir, DOCS_FILE));
    const tfsOut = new BufferedFile(join(this.dir, TFS_FILE));
    let used = 0;
    let postings = 0;
    offsets.f64(0);
    const emitBucket = (bucket: number, parts: { docs: Uint32Array; tfs: Uint32Array }[]) => {
      buckets.u32(bucket);
      for (const part of parts) {
        for (let i = 0; i < part.docs.length; i++) docsOut.u32(part.docs[i]);
        if (tfBytes === 4) for (let i = 0; i < part.tfs.length; i++) tfsOut.u32(part.tfs[i]);
        else for (let i = 0; i < part.tfs.length; i++) tfsOut.u16(part.tfs[i]);
        postings += part.docs.length;
      }
      offsets.f64(postings);
      used++;
    };
    if (this.files.length === 0) {
      this.writeSorted((bucket, docs, tfs) => emitBucket(bucket, [{ docs, tfs }]));
    } else {
      if (this.used > 0) this.spill();
      const readers = this.files.map((f) => new SegmentReader(f));
      // Segments hold increasing unit ranges: per bucket, their lists concatenated in segment order stay sorted.
      for (;;) {
        let min = Infinity;
        for (const r of readers) if (r.bucket < min) min = r.bucket;
        if (min === Infinity) break;
        const parts: { docs: Uint32Array; tfs: Uint32Array }[] = [];
        for (const r of readers) if (r.bucket === min) parts.push(r.take());
        emitBucket(min, parts);
      }
      for (const r of readers) r.close();
    }
    buckets.close();
    offsets.close();
    docsOut.close();
    tfsOut.close();
    return { buckets: used, postings, tfBytes, segments: Math.max(1, this.files.length) };
  }

  cleanup(): void {
    for (const f of this.files) rmSync(f, { force: true });
  }
}

/** Reads a segment bucket by bucket through a small buffer. */
class SegmentReader {
  private readonly fd: number;
  private readonly size: number;
  private pos = 0;
  bucket = Infinity;
  private count = 0;

  constructor(private readonly file: string) {
    this.fd = openSync(file, "r");
    this.size = fstatSync(this.fd).size;
    this.next();
  }

  private readU32s(n: number): Uint32Array {
    const buf = Buffer.allocUnsafe(4 * n);
    readExactly(this.fd, buf, 0, 4 * n, this.pos, this.file);
    this.pos += 4 * n;
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i++) out[i] = buf.readUInt32LE(4 * i);
    return out;
  }

  private next(): void {
    if (this.pos >= this.size) {
      this.bucket = Infinity;
      return;
    }
    const head = this.readU32s(2);
    this.bucket = head[0];
    this.count = head[1];
  }

  take(): { docs: Uint32Array; tfs: Uint32Array } {
    const docs = this.readU32s(this.count);
    const tfs = this.readU32s(this.count);
    this.next();
    return { docs, tfs };
  }

  close(): void {
    closeSync(this.fd);
  }
}
