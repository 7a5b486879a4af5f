// Quantized BM25 as impacts (Anserini's "bm25-b8"): every posting of a BM25 index scored as Lucene's
// BM25 scores a query term of weight 1 (idf × tf-saturation, float32, ../bm25/bm25-scorer.ts), quantized
// (./collection.ts: a stated scale, or b bits of the largest score) into an impact index with the BM25
// index's units and analyzer (text queries analyzed as BM25 analyzes them, a repeated term weighing its
// count, as BM25's boost does). Two passes over the postings, term by term (memory: one term's postings
// and a float per term): the largest scores, then the impacts into one build segment merged into the
// index files as the collection build does (./build.ts).

import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Bm25Searcher } from "../bm25/search.js";
import { PostingCursor } from "../bm25/postings-reader.js";
import { idf, termWeight } from "../bm25/similarity.js";
import { mergeSegments } from "../bm25/merge.js";
import { SegmentFileWriter } from "../bm25/segment.js";
import { writeManifest } from "../manifest.js";
import { checkQuantizationSpec, quantize, type Quantization, type QuantizationSpec } from "./collection.js";
import { IMPACT_FORMAT_VERSION, IMPACT_KIND, type ImpactIndexParams } from "./build.js";

/** What {@link impactsFromBm25} wrote. */
export interface FromBm25Stats {
  units: number;
  terms: number;
  postings: number;
  quantization: Quantization;
}

/** Writes into `outDir` the impact index of BM25 index `bm25Dir`'s scores (default 8 bits). */
export async function impactsFromBm25(bm25Dir: string, outDir: string, o: { quantization?: QuantizationSpec; onProgress?: (terms: number) => void } = {}): Promise<FromBm25Stats> {
  const spec = o.quantization ?? { bits: 8 };
  checkQuantizationSpec(spec);
  const s = Bm25Searcher.open(bm25Dir);
  mkdirSync(outDir, { recursive: true });
  for (const f of readdirSync(outDir)) rmSync(join(outDir, f), { recursive: true, force: true });
  try {
    const units = s.units;
    const scorerOf = (docFreq: number) => s.scoring.termScorer(termWeight(1, idf(docFreq, s.docCount)));
    // Pass 1: each term's largest score, and the largest of all.
    const termMax = new Float32Array(s.params.terms);
    let max = 0;
    let t = 0;
    for (const [, info] of s.dictionary.entries()) {
      const sc = scorerOf(info.docFreq);
      const c = s.cursor(info);
      let m = 0;
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) m = Math.max(m, sc.score(c.tf, d));
      termMax[t++] = m;
      if (m > max) max = m;
    }
    const q: Quantization = "scale" in spec ? { mode: "scale", scale: spec.scale } : { mode: "bits", bits: spec.bits, max };
    let kept = 0;
    for (let i = 0; i < t; i++) if (quantize(q, termMax[i]) > 0) kept++;
    // Pass 2: the impacts, one segment holding every unit.
    const segPath = join(outDir, "impact.seg-00000");
    const ids = Uint32Array.from({ length: units }, (_, i) => i);
    // Lengths of 1: the merge's norm cache (k1 = 1, b = 0) is then 1 for every unit (a total length of 0
    // would make its average length 0, and the cache NaN).
    const w = new SegmentFileWriter(segPath, { units, terms: kept, postings: 0, docCount: s.docCount, sumTotalTermFreq: units }, ids, new Uint32Array(units).fill(1));
    let docs = new Int32Array(1 << 16);
    let values = new Int32Array(1 << 16);
    let sum = 0;
    t = 0;
    for (const [term, info] of s.dictionary.entries()) {
      if (quantize(q, termMax[t++]) === 0) continue;
      if (info.docFreq > docs.length) {
        docs = new Int32Array(info.docFreq);
        values = new Int32Array(info.docFreq);
      }
      const sc = scorerOf(info.docFreq);
      const c = s.cursor(info);
      let n = 0;
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) {
        const v = quantize(q, sc.score(c.tf, d));
        if (v === 0) continue;
        docs[n] = d;
        values[n++] = v;
        sum += v;
      }
      w.term(term, docs, values, n);
      if ((t & 0xffff) === 0) o.onProgress?.(t);
    }
    w.close();
    const merged = mergeSegments([{ path: segPath, size: (await import("node:fs")).statSync(segPath).size }], units, outDir, 1, 0);
    rmSync(segPath, { force: true });
    for (const f of readdirSync(bm25Dir)) if (f.startsWith("units.")) copyFileSync(join(bm25Dir, f), join(outDir, f));
    const params: ImpactIndexParams = { quantization: q, queryAnalyzer: s.params.analyzer, buildId: merged.buildId, docCount: merged.docCount, terms: merged.terms, postings: merged.postings, sumImpacts: sum };
    writeManifest(outDir, { kind: IMPACT_KIND, unit: s.manifest.unit, units, params: { ...params, fromBm25: { k1: s.params.k1, b: s.params.b, title: s.params.title, buildId: s.params.buildId } }, source: bm25Dir, formatVersion: IMPACT_FORMAT_VERSION });
    return { units, terms: merged.terms, postings: merged.postings, quantization: q };
  } finally {
    s.close();
  }
}
