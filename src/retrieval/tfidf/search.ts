// Searches a TF-IDF index as DrQA's `TfidfDocRanker.closest_docs` does: the query's hashed n-grams
// weighted log1p(tf) × idf, idf = max(0, log((N − Nt + 0.5) / (Nt + 0.5))), scored by sparse dot product
// with the units' log1p(tf) × idf vectors. Only units with a positive score are returned.

import { closeSync, fstatSync, openSync } from "node:fs";
import { join } from "node:path";
import { readManifest } from "../manifest.js";
import type { Hit, IndexManifest, Retriever } from "../types.js";
import { queryText, type QueryInput } from "../query.js";
import { readExactly } from "../buffered-file.js";
import { UnitStore } from "../units/store.js";
import { BUCKETS_FILE, DOCS_FILE, POSTING_OFFSETS_FILE, TFIDF_FORMAT_VERSION, TFS_FILE, type TfidfParams } from "./build.js";
import { hashBucket } from "./hash.js";
import { topK } from "./topk.js";
import { drqaNgrams, drqaTokens } from "./tokenize.js";

const LOG1P = Float64Array.from({ length: 1024 }, (_, i) => Math.log1p(i));
const log1p = (n: number) => (n < 1024 ? LOG1P[n] : Math.log1p(n));

/** A whole small file into an aligned typed array, its size checked against `what` it must hold. */
function readTable(file: string, bytesPer: number): Buffer {
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    if (size % bytesPer !== 0) throw new Error(`${file}: ${size} bytes, not a whole number of ${bytesPer}-byte entries (truncated or corrupt)`);
    const buf = Buffer.alloc(size);
    readExactly(fd, buf, 0, size, 0, file);
    return buf;
  } finally {
    closeSync(fd);
  }
}

/**
 * A DrQA TF-IDF index. The used buckets and their posting offsets are held in memory (20 bytes a used
 * bucket, at most 2^hashBits); postings are read from disk per query term, so memory does not grow
 * with the corpus. Nothing read is trusted: sizes, order and ranges are checked at open, each posting
 * read gets the bytes it asked for, and a unit number out of range is an error naming the file.
 */
export class TfidfRetriever implements Retriever {
  readonly kind = "tfidf" as const;
  readonly units: UnitStore;
  readonly params: TfidfParams;
  private readonly buckets: Uint32Array;
  private readonly offsets: Float64Array;
  private readonly idf: Float64Array;
  private readonly acc: Float64Array;
  private readonly seen: Uint8Array;
  private readonly docsFd: number;
  private readonly tfsFd: number;
  private readonly tfBytes: number;
  private readonly files: { docs: string; tfs: string };
  private docBuf = Buffer.allocUnsafe(1 << 16);
  private tfBuf = Buffer.allocUnsafe(1 << 15);

  constructor(
    readonly dir: string,
    readonly manifest: IndexManifest,
  ) {
    if (manifest.kind !== "tfidf") throw new Error(`${dir}: not a tfidf index (kind ${manifest.kind})`);
    if (manifest.formatVersion !== TFIDF_FORMAT_VERSION) throw new Error(`${dir}: tfidf format ${manifest.formatVersion}, this tartan reads ${TFIDF_FORMAT_VERSION}: rebuild the index`);
    this.params = manifest.params as unknown as TfidfParams;
    const hashBits = Number(this.params.hashBits);
    if (!Number.isInteger(hashBits) || hashBits < 8 || hashBits > 28) throw new Error(`${join(dir, "manifest.json")}: params.hashBits ${String(this.params.hashBits)} out of range 8..28`);
    const n = manifest.units;
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${join(dir, "manifest.json")}: units must be a non-negative integer`);
    this.tfBytes = Number(manifest.params.tfBytes ?? 2);
    if (this.tfBytes !== 2 && this.tfBytes !== 4) throw new Error(`${join(dir, "manifest.json")}: params.tfBytes must be 2 or 4`);

    const bucketsFile = join(dir, BUCKETS_FILE);
    const offsetsFile = join(dir, POSTING_OFFSETS_FILE);
    this.files = { docs: join(dir, DOCS_FILE), tfs: join(dir, TFS_FILE) };
    const b = readTable(bucketsFile, 4);
    this.buckets = new Uint32Array(b.buffer, b.byteOffset, b.length / 4);
    const o = readTable(offsetsFile, 8);
    this.offsets = new Float64Array(o.buffer, o.byteOffset, o.length / 8);
    const used = this.buckets.length;
    const size = 2 ** hashBits;
    for (let j = 0; j < used; j++) {
      const x = this.buckets[j];
      if (x >= size || (j > 0 && x <= this.buckets[j - 1])) throw new Error(`${bucketsFile}: entry ${j} (${x}) is not an increasing bucket below 2^${hashBits} (corrupt)`);
    }
    if (this.offsets.length !== used + 1) throw new Error(`${offsetsFile}: ${this.offsets.length} offsets for ${used} buckets in ${bucketsFile} (${used + 1} expected; truncated, corrupt or from another build)`);
    this.docsFd = openSync(this.files.docs, "r");
    this.tfsFd = openSync(this.files.tfs, "r");
    try {
      const postings = fstatSync(this.docsFd).size / 4;
      const tfCount = fstatSync(this.tfsFd).size / this.tfBytes;
      if (!Number.isInteger(postings)) throw new Error(`${this.files.docs}: not a whole number of 4-byte unit numbers (truncated or corrupt)`);
      if (tfCount !== postings) throw new Error(`${this.files.tfs}: ${tfCount} counts for ${postings} postings in ${this.files.docs} (truncated, corrupt or from another build)`);
      let prev = 0;
      for (let j = 0; j <= used; j++) {
        const x = this.offsets[j];
        if (!Number.isInteger(x) || x < prev || x > postings || (j === 0 && x !== 0) || (j === used && x !== postings) || (j > 0 && x - prev > n))
          throw new Error(`${offsetsFile}: offset ${j} (${x}) is not an increasing position in 0..${postings} with at most ${n} postings a bucket (corrupt or from another build)`);
        prev = x;
      }
    } catch (e) {
      closeSync(this.docsFd);
      closeSync(this.tfsFd);
      throw e;
    }
    this.units = UnitStore.open(dir);
    if (this.units.count !== n) {
      this.release();
      throw new Error(`${dir}: ${this.units.count} units, manifest.json says ${n} (mixed or corrupt index)`);
    }
    this.idf = new Float64Array(used);
    for (let j = 0; j < used; j++) {
      const df = this.offsets[j + 1] - this.offsets[j];
      const idf = Math.log((n - df + 0.5) / (df + 0.5));
      this.idf[j] = idf < 0 ? 0 : idf;
    }
    this.acc = new Float64Array(n);
    this.seen = new Uint8Array(n);
  }

  /** Position of `bucket` among the used buckets, or -1. */
  private find(bucket: number): number {
    let lo = 0;
    let hi = this.buckets.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const b = this.buckets[mid];
      if (b === bucket) return mid;
      if (b < bucket) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The query's sparse vector: used-bucket positions (increasing bucket order) and weights. */
  queryVector(query: string): { slots: number[]; weights: number[] } {
    const size = 2 ** this.params.hashBits;
    const counts = new Map<number, number>();
    for (const gram of drqaNgrams(drqaTokens(query), this.params.ngram)) {
      const b = hashBucket(gram, size);
      counts.set(b, (counts.get(b) ?? 0) + 1);
    }
    const slots: number[] = [];
    const weights: number[] = [];
    for (const b of [...counts.keys()].sort((x, y) => x - y)) {
      const j = this.find(b);
      if (j < 0 || this.idf[j] === 0) continue;
      slots.push(j);
      weights.push(log1p(counts.get(b)!) * this.idf[j]);
    }
    return { slots, weights };
  }

  async search(query: QueryInput, k: number): Promise<Hit[]> {
    return this.searchSync(queryText(query), k);
  }

  /** {@link TfidfRetriever.search} without the promise. */
  searchSync(query: string, k: number): Hit[] {
    const { slots, weights } = this.queryVector(query);
    const touched: number[] = [];
    const { acc, seen, offsets, idf } = this;
    const n = acc.length;
    for (let q = 0; q < slots.length; q++) {
      const j = slots[q];
      const w = weights[q];
      const id = idf[j];
      const first = offsets[j];
      const count = offsets[j + 1] - first;
      const { docs, tfs } = this.postings(first, count);
      for (let i = 0; i < count; i++) {
        const d = docs[i];
        if (d >= n) throw new Error(`${this.files.docs}: unit ${d} at posting ${first + i} is out of range 0..${n - 1} (corrupt or from another build)`);
        if (seen[d] === 0) {
          seen[d] = 1;
          touched.push(d);
        }
        acc[d] += w * (log1p(tfs[i]) * id);
      }
    }
    const hits = topK(touched, touched.length, (u) => acc[u], k).filter((h) => h.score > 0);
    for (const d of touched) {
      acc[d] = 0;
      seen[d] = 0;
    }
    return hits;
  }

  /** Postings `first … first + count − 1`: unit numbers and counts, read from disk. */
  private postings(first: number, count: number): { docs: Uint32Array; tfs: Uint16Array | Uint32Array } {
    if (this.docBuf.length < 4 * count) this.docBuf = Buffer.allocUnsafe(4 * count);
    if (this.tfBuf.length < this.tfBytes * count) this.tfBuf = Buffer.allocUnsafe(this.tfBytes * count);
    readExactly(this.docsFd, this.docBuf, 0, 4 * count, 4 * first, this.files.docs);
    readExactly(this.tfsFd, this.tfBuf, 0, this.tfBytes * count, this.tfBytes * first, this.files.tfs);
    // Copies into aligned arrays (a Buffer's offset in its pool may not be a multiple of 4).
    const docs = new Uint32Array(count);
    for (let i = 0; i < count; i++) docs[i] = this.docBuf.readUInt32LE(4 * i);
    const tfs = this.tfBytes === 4 ? new Uint32Array(count) : new Uint16Array(count);
    if (this.tfBytes === 4) for (let i = 0; i < count; i++) tfs[i] = this.tfBuf.readUInt32LE(4 * i);
    else for (let i = 0; i < count; i++) tfs[i] = this.tfBuf.readUInt16LE(2 * i);
    return { docs, tfs };
  }

  private closed = false;

  private release(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.docsFd);
    closeSync(this.tfsFd);
    this.units.close();
  }

  /** Releases the index files. */
  async close(): Promise<void> {
    this.release();
  }
}

/** Opens the TF-IDF index in `dir`. */
export async function openTfidf(dir: string): Promise<TfidfRetriever> {
  return new TfidfRetriever(dir, readManifest(dir));
}
