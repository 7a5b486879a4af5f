// Searches a TF-IDF index as DrQA's `TfidfDocRanker.closest_docs` does: the query's hashed n-grams
// weighted log1p(tf) × idf, idf = max(0, log((N − Nt + 0.5) / (Nt + 0.5))), scored by sparse dot product
// with the units' log1p(tf) × idf vectors. Only units with a positive score are returned.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readManifest } from "../manifest.js";
import type { Hit, IndexManifest, Retriever } from "../types.js";
import { UnitStore } from "../units.js";
import { BUCKETS_FILE, DOCS_FILE, POSTING_OFFSETS_FILE, TFIDF_FORMAT_VERSION, TFS_FILE, type TfidfParams } from "./build.js";
import { hashBucket } from "./hash.js";
import { topK } from "./topk.js";
import { drqaNgrams, drqaTokens } from "./tokenize.js";

function readArray<T>(file: string, make: (b: ArrayBuffer, offset: number, length: number) => T, bytes: number): T {
  const raw = readFileSync(file);
  // Copy into a fresh, aligned buffer (Buffer pools may be unaligned for the element size).
  const copy = new Uint8Array(raw.byteLength);
  copy.set(raw);
  return make(copy.buffer, 0, raw.byteLength / bytes);
}

const LOG1P = Float64Array.from({ length: 1024 }, (_, i) => Math.log1p(i));
const log1p = (n: number) => (n < 1024 ? LOG1P[n] : Math.log1p(n));

export class TfidfRetriever implements Retriever {
  readonly kind = "tfidf" as const;
  readonly units: UnitStore;
  readonly params: TfidfParams;
  private readonly buckets: Uint32Array;
  private readonly offsets: Float64Array;
  private readonly docs: Uint32Array;
  private readonly tfs: Uint16Array | Uint32Array;
  private readonly idf: Float64Array;
  private readonly acc: Float64Array;
  private readonly seen: Uint8Array;

  constructor(
    readonly dir: string,
    readonly manifest: IndexManifest,
  ) {
    if (manifest.kind !== "tfidf") throw new Error(`${dir}: not a tfidf index (kind ${manifest.kind})`);
    if (manifest.formatVersion !== TFIDF_FORMAT_VERSION) throw new Error(`${dir}: tfidf format ${manifest.formatVersion}, this tartan reads ${TFIDF_FORMAT_VERSION}: rebuild the index`);
    this.params = manifest.params as unknown as TfidfParams;
    this.units = UnitStore.open(dir);
    this.buckets = readArray(join(dir, BUCKETS_FILE), (b, o, l) => new Uint32Array(b, o, l), 4);
    this.offsets = readArray(join(dir, POSTING_OFFSETS_FILE), (b, o, l) => new Float64Array(b, o, l), 8);
    this.docs = readArray(join(dir, DOCS_FILE), (b, o, l) => new Uint32Array(b, o, l), 4);
    const tfBytes = Number(manifest.params.tfBytes ?? 2);
    this.tfs = tfBytes === 4 ? readArray(join(dir, TFS_FILE), (b, o, l) => new Uint32Array(b, o, l), 4) : readArray(join(dir, TFS_FILE), (b, o, l) => new Uint16Array(b, o, l), 2);
    const n = manifest.units;
    this.idf = new Float64Array(this.buckets.length);
    for (let j = 0; j < this.buckets.length; j++) {
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

  async search(query: string, k: number): Promise<Hit[]> {
    return this.searchSync(query, k);
  }

  searchSync(query: string, k: number): Hit[] {
    const { slots, weights } = this.queryVector(query);
    const touched: number[] = [];
    const { acc, seen, docs, tfs, offsets, idf } = this;
    for (let q = 0; q < slots.length; q++) {
      const j = slots[q];
      const w = weights[q];
      const id = idf[j];
      for (let i = offsets[j], end = offsets[j + 1]; i < end; i++) {
        const d = docs[i];
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

  async close(): Promise<void> {
    this.units.close();
  }
}

/** Opens the TF-IDF index in `dir`. */
export async function openTfidf(dir: string): Promise<TfidfRetriever> {
  return new TfidfRetriever(dir, readManifest(dir));
}
