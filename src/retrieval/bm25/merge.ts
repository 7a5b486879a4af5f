// Merges a build's segment files (./segment.ts) into the final BM25 files (./format.ts): the units'
// norm bytes and the collection statistics first, then every term in order with its postings from all
// segments merged by unit, re-encoded in blocks with their score bounds. Memory: one read buffer per
// segment, the norms (one byte per unit) and the postings of the largest term.

import { renameSync } from "node:fs";
import { join } from "node:path";
import { OutFile } from "./codec.js";
import { DictionaryWriter } from "./dictionary.js";
import { BuildIdHash, FILES, HEADER_BYTES, fileHeader, patchHeader, type Bm25File } from "./format.js";
import { TermEncoder } from "./postings-writer.js";
import { SegmentReader } from "./segment.js";
import { averageLength, intToByte4, normInverseCache } from "./similarity.js";

export interface MergeResult {
  units: number;
  docCount: number;
  sumTotalTermFreq: number;
  terms: number;
  postings: number;
  buildId: string;
  /** Bytes of the four files. */
  bytes: number;
}

/** Postings of one term gathered from the segments that hold it. */
class Gather {
  docs = new Int32Array(1 << 16);
  tfs = new Int32Array(1 << 16);
  ensure(n: number): void {
    if (n <= this.docs.length) return;
    let size = this.docs.length;
    while (size < n) size *= 2;
    const d = new Int32Array(size);
    d.set(this.docs);
    this.docs = d;
    const t = new Int32Array(size);
    t.set(this.tfs);
    this.tfs = t;
  }
}

/**
 * Merges `segments` (files with their sizes) covering units 0..units-1 into `dir`'s BM25 files, written
 * under temporary names and renamed at the end.
 */
export function mergeSegments(segments: readonly { path: string; size: number }[], units: number, dir: string, k1: number, b: number, onTerm?: (terms: number) => void): MergeResult {
  // Read buffers: 256 MB in all at most, 64 kB to 1 MB each.
  const chunk = Math.max(1 << 16, Math.min(1 << 20, Math.floor((256 << 20) / Math.max(1, segments.length))));
  const readers: SegmentReader[] = [];
  try {
    for (const s of segments) readers.push(new SegmentReader(s.path, s.size, chunk));
    const norms = new Uint8Array(units);
    const seen = new Uint8Array(units);
    let docCount = 0;
    let sumTotalTermFreq = 0;
    for (const r of readers) {
      docCount += r.stats.docCount;
      sumTotalTermFreq += r.stats.sumTotalTermFreq;
      for (let i = 0; i < r.unitIds.length; i++) {
        const u = r.unitIds[i];
        if (u >= units || seen[u]) throw new Error(`${r.path}: unit ${u} ${u >= units ? "out of range" : "in two segments"}`);
        seen[u] = 1;
        norms[u] = intToByte4(r.lengths[i]);
      }
    }
    for (let u = 0; u < units; u++) if (!seen[u]) throw new Error(`${dir}: unit ${u} is in no build segment`);
    const avgdl = averageLength(sumTotalTermFreq, Math.max(1, docCount));
    const normInverse = normInverseCache(k1, b, avgdl);

    const tmp = (f: Bm25File) => join(dir, `${FILES[f]}.partial`);
    // Bodies are hashed as they are written (the headers, written last, carry the hash: the build id).
    const hashes = { postings: new BuildIdHash(), terms: new BuildIdHash() };
    let skip = { postings: HEADER_BYTES, terms: HEADER_BYTES };
    const hashing = (which: "postings" | "terms") => (bytes: Uint8Array) => {
      const s = Math.min(skip[which], bytes.length);
      skip = { ...skip, [which]: skip[which] - s };
      hashes[which].update(bytes.subarray(s));
    };
    const postings = new OutFile(tmp("postings"), hashing("postings"));
    const termsFile = new OutFile(tmp("terms"), hashing("terms"));
    termsFile.sink.bytes(new Uint8Array(HEADER_BYTES));
    const dict = new DictionaryWriter(termsFile);
    const enc = new TermEncoder(normInverse);
    const gather = new Gather();
    let terms = 0;
    let totalPostings = 0;
    try {
      postings.sink.bytes(new Uint8Array(HEADER_BYTES));
      // A heap of readers by current term (ties: segment order).
      const heap: SegmentReader[] = [];
      const less = (a: SegmentReader, c: SegmentReader) => a.term < c.term;
      const push = (r: SegmentReader) => {
        heap.push(r);
        let i = heap.length - 1;
        while (i > 0) {
          const p = (i - 1) >> 1;
          if (!less(heap[i], heap[p])) break;
          [heap[i], heap[p]] = [heap[p], heap[i]];
          i = p;
        }
      };
      const pop = (): SegmentReader => {
        const top = heap[0];
        const last = heap.pop()!;
        if (heap.length > 0) {
          heap[0] = last;
          let i = 0;
          for (;;) {
            const l = 2 * i + 1;
            if (l >= heap.length) break;
            let m = l;
            if (l + 1 < heap.length && less(heap[l + 1], heap[l])) m = l + 1;
            if (!less(heap[m], heap[i])) break;
            [heap[m], heap[i]] = [heap[i], heap[m]];
            i = m;
          }
        }
        return top;
      };
      for (const r of readers) if (r.nextTerm()) push(r);
      const holders: SegmentReader[] = [];
      const bounds: number[] = [];
      let lastTerm: string | null = null;
      while (heap.length > 0) {
        const first = pop();
        const term = first.term;
        const termBytes = first.termBytes;
        if (lastTerm !== null && !(lastTerm < term)) throw new Error(`${first.path}: terms out of order (${JSON.stringify(term)} after ${JSON.stringify(lastTerm)})`);
        lastTerm = term;
        holders.length = 0;
        holders.push(first);
        while (heap.length > 0 && heap[0].term === term) holders.push(pop());
        let total = 0;
        for (const h of holders) total += h.count;
        gather.ensure(total);
        bounds.length = 0;
        let at = 0;
        for (const h of holders) {
          bounds.push(at);
          at = h.readPostings(gather.docs, gather.tfs, at);
        }
        bounds.push(at);
        emitMerged(gather, bounds, enc, norms);
        const before = postings.position;
        const [df, bytes] = enc.finish(postings.sink);
        dict.add(termBytes, df, bytes, before);
        totalPostings += df;
        terms++;
        if ((terms & 0xffff) === 0) onTerm?.(terms);
        postings.maybeFlush();
        for (const h of holders) if (h.nextTerm()) push(h);
      }
    } catch (e) {
      postings.close();
      termsFile.close();
      throw e;
    }
    const postingsEnd = postings.close();
    const termsEnd = termsFile.close();

    // The term index and norms; the build id hashes all four bodies.
    const indexBody = dict.indexBody(termsEnd, postingsEnd);
    const hash = new BuildIdHash();
    hash.update(Buffer.from(hashes.postings.digest(), "hex"));
    hash.update(Buffer.from(hashes.terms.digest(), "hex"));
    hash.update(indexBody);
    hash.update(norms);
    const buildId = hash.digest();
    patchHeader(tmp("postings"), fileHeader("postings", buildId));
    patchHeader(tmp("terms"), fileHeader("terms", buildId));
    let bytes = postingsEnd + termsEnd;
    for (const [which, body] of [
      ["termindex", indexBody],
      ["norms", norms],
    ] as const) {
      const f = new OutFile(tmp(which));
      f.sink.bytes(fileHeader(which, buildId));
      f.sink.bytes(body);
      bytes += f.close();
    }
    for (const f of Object.keys(FILES) as Bm25File[]) renameSync(tmp(f), join(dir, FILES[f]));
    return { units, docCount, sumTotalTermFreq, terms, postings: totalPostings, buildId, bytes };
  } finally {
    for (const r of readers) r.close();
  }
}

/** Feeds the gathered lists (each increasing; together disjoint) to the encoder in unit order. */
function emitMerged(g: Gather, bounds: readonly number[], enc: TermEncoder, norms: Uint8Array): void {
  const { docs, tfs } = g;
  const lists = bounds.length - 1;
  if (lists === 1) {
    for (let p = 0, end = bounds[1]; p < end; p++) enc.add(docs[p], tfs[p], norms[docs[p]]);
    return;
  }
  const pos = bounds.slice(0, lists);
  const end = bounds.slice(1);
  for (;;) {
    // The list with the smallest head, and the smallest head among the others: emit a run up to it.
    let best = -1;
    let second = 0x7fffffff;
    for (let l = 0; l < lists; l++) {
      if (pos[l] >= end[l]) continue;
      const d = docs[pos[l]];
      if (best < 0 || d < docs[pos[best]]) {
        if (best >= 0) second = Math.min(second, docs[pos[best]]);
        best = l;
      } else if (d < second) second = d;
    }
    if (best < 0) return;
    let p = pos[best];
    const e = end[best];
    while (p < e && docs[p] < second) {
      enc.add(docs[p], tfs[p], norms[docs[p]]);
      p++;
    }
    pos[best] = p;
  }
}
