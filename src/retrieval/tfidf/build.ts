// Builds a DrQA-style TF-IDF index (DrQA `scripts/retriever/build_tfidf.py`): the units' n-grams hashed
// into 2^hashBits buckets, counted per unit, and laid out as an inverted index over the used buckets.
// Weights (log1p(tf) × idf) are computed at search time from the stored counts, so the index holds
// exactly DrQA's count matrix. Files: docs/retrieval.md ("TF-IDF").

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeManifest } from "../manifest.js";
import type { UnitKind } from "../types.js";
import { UnitWriter, type Unit } from "../units.js";
import { hashBucket } from "./hash.js";
import { drqaNgrams, drqaTokens } from "./tokenize.js";

export interface TfidfParams {
  /** Longest n-gram (DrQA `--ngram`, default 2: unigrams and bigrams). */
  ngram: number;
  /** log2 of the number of hash buckets (DrQA `--hash-size` 2^24). */
  hashBits: number;
  /** Index the unit's title line before its text (DrQA's pages start with their title). Default true. */
  title: boolean;
}

export const DEFAULT_TFIDF_PARAMS: TfidfParams = { ngram: 2, hashBits: 24, title: true };

export const TFIDF_FORMAT_VERSION = 1;
export const BUCKETS_FILE = "tfidf.buckets";
export const POSTING_OFFSETS_FILE = "tfidf.offsets";
export const DOCS_FILE = "tfidf.docs";
export const TFS_FILE = "tfidf.tfs";

/** A growable Uint32 array. */
class U32List {
  data = new Uint32Array(1 << 16);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

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

export interface TfidfBuildStats {
  units: number;
  buckets: number;
  postings: number;
}

function checkParams(p: TfidfParams): void {
  if (!Number.isInteger(p.ngram) || p.ngram < 1 || p.ngram > 5) throw new Error(`tfidf ngram must be 1..5, got ${p.ngram}`);
  if (!Number.isInteger(p.hashBits) || p.hashBits < 8 || p.hashBits > 28) throw new Error(`tfidf hashBits must be 8..28, got ${p.hashBits}`);
}

/**
 * Indexes `units` into `outDir` (created): units.jsonl/offsets, the inverted index and manifest.json.
 * `onProgress(n)` is called with the number of units indexed so far.
 */
export async function buildTfidfIndex(
  units: AsyncIterable<Unit> | Iterable<Unit>,
  outDir: string,
  params: Partial<TfidfParams> & { unit: UnitKind; source: string },
  onProgress?: (units: number) => void,
): Promise<TfidfBuildStats> {
  const p: TfidfParams = { ngram: params.ngram ?? DEFAULT_TFIDF_PARAMS.ngram, hashBits: params.hashBits ?? DEFAULT_TFIDF_PARAMS.hashBits, title: params.title ?? DEFAULT_TFIDF_PARAMS.title };
  checkParams(p);
  mkdirSync(outDir, { recursive: true });
  const writer = new UnitWriter(outDir);
  const rowBucket = new U32List();
  const rowDoc = new U32List();
  const rowTf = new U32List();
  let maxTf = 0;
  let n = 0;
  for await (const unit of units as AsyncIterable<Unit>) {
    const doc = await writer.add(unit);
    for (const [bucket, tf] of ngramCounts(indexedText(unit, p), p)) {
      rowBucket.push(bucket);
      rowDoc.push(doc);
      rowTf.push(tf);
      if (tf > maxTf) maxTf = tf;
    }
    n = doc + 1;
    onProgress?.(n);
  }
  await writer.close();

  // Counting sort of the (bucket, doc, tf) triples by bucket; docs stay in increasing order per bucket.
  const size = 2 ** p.hashBits;
  const perBucket = new Uint32Array(size);
  for (let i = 0; i < rowBucket.length; i++) perBucket[rowBucket.data[i]]++;
  let used = 0;
  for (let b = 0; b < size; b++) if (perBucket[b] > 0) used++;
  const buckets = new Uint32Array(used);
  const offsets = new Float64Array(used + 1);
  const cursor = new Float64Array(used);
  const slot = new Int32Array(size).fill(-1);
  for (let b = 0, j = 0; b < size; b++) {
    if (perBucket[b] === 0) continue;
    buckets[j] = b;
    slot[b] = j;
    offsets[j + 1] = offsets[j] + perBucket[b];
    cursor[j] = offsets[j];
    j++;
  }
  const postings = rowBucket.length;
  const docs = new Uint32Array(postings);
  const tfs = maxTf > 0xffff ? new Uint32Array(postings) : new Uint16Array(postings);
  for (let i = 0; i < postings; i++) {
    const j = slot[rowBucket.data[i]];
    const at = cursor[j]++;
    docs[at] = rowDoc.data[i];
    tfs[at] = rowTf.data[i];
  }
  const write = (file: string, a: ArrayBufferView) => writeFileSync(join(outDir, file), new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  write(BUCKETS_FILE, buckets);
  write(POSTING_OFFSETS_FILE, offsets);
  write(DOCS_FILE, docs);
  write(TFS_FILE, tfs);
  writeManifest(outDir, {
    kind: "tfidf",
    unit: params.unit,
    units: n,
    params: { ...p, tfBytes: tfs.BYTES_PER_ELEMENT, tokenizer: "drqa-simple", hash: "murmur3_32" },
    source: params.source,
    formatVersion: TFIDF_FORMAT_VERSION,
  });
  return { units: n, buckets: used, postings };
}
