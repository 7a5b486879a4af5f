// The defaults of a dense index built from precomputed vectors, chosen for the collection at hand and
// said at build time. Below EXACT_BELOW (rows × dimensions) an exact scan costs about what a compressed
// index spends probing lists and rescoring its candidates, so the default there is exact search. Above
// it, a compressed index starts from a probe count and candidate depth read from its lists and size, then
// measures recall@100 against exact search on a sample of the collection's own vectors used as queries
// (each query's own row left out of both rankings), and, unless the user set them, deepens the search
// until that recall reaches the target. What it chose and measured is logged and kept in the manifest.

import type { IndexManifest } from "../types.js";
import { ExactIndex } from "./exact.js";
import { IvfIndex } from "./ivf-search.js";
import type { VectorSource } from "./vector-files.js";

/** Rows × dimensions up to which the default is exact search (20,000 × 768 vectors: docs/decisions.md). */
export const EXACT_BELOW = 20_000 * 768;
/** The recall@100 against exact search that a default build aims at, on its own vectors as queries. */
export const TARGET_RECALL = 0.95;
/** Vectors measured as queries. */
export const SAMPLE_QUERIES = 100;
/** Above this many rows the exact reference is not computed at build time (it would cost minutes). */
export const MEASURE_UP_TO = 2_000_000;

/** The default quantization for `rows` vectors of `dim` dimensions: exact below {@link EXACT_BELOW}, else PQ. */
export function defaultQuantize(rows: number, dim: number): "none" | "pq" {
  return rows * dim <= EXACT_BELOW ? "none" : "pq";
}

/**
 * The search depth a compressed index starts from: lists probed so that they hold about 8% of the vectors
 * (at least 8 lists, 1/32 of them at the least), and a candidate depth of 1% of the vectors within
 * 4,000 … 20,000, never more than the probed lists hold. Measured: docs/benchmarks.md (issue 34).
 */
export function startingDepth(lists: number, rows: number): { nprobe: number; refine: number } {
  const nprobe = Math.min(lists, Math.max(8, Math.round(lists / 32), Math.ceil(lists * 0.08)));
  const refine = Math.min(rows, Math.max(4000, Math.min(20_000, Math.round(rows * 0.01))));
  return { nprobe, refine };
}

/** What {@link tuneDepth} chose and measured. */
export interface DepthReport {
  nprobe: number;
  refine: number;
  /** Recall@100 against exact search on the sample, or null when not measured (too many rows). */
  recall: number | null;
  queries: number;
  /** Whether the depth was deepened to reach the target. */
  tuned: boolean;
}

/** Rows spread evenly over the collection (deterministic). */
function sampleRows(n: number, count: number): number[] {
  return Array.from({ length: count }, (_, j) => Math.min(n - 1, Math.floor(((j + 0.5) * n) / count)));
}

/** Each sample row's exact top-`k` rows (`qs`: the rows' vectors), its own row left out (a scan of the file, chunk by chunk). */
async function exactTop(src: VectorSource, rows: readonly number[], qs: Float32Array, k: number): Promise<Set<number>[]> {
  const dim = src.dim;
  const best: { unit: number; score: number }[][] = rows.map(() => []);
  const CHUNK = 65_536;
  for (let start = 0; start < src.count; start += CHUNK) {
    const len = Math.min(CHUNK, src.count - start);
    const index = new ExactIndex(src.read(start, len), dim, { threads: 0 });
    const hits = await index.search(qs, k + 1);
    await index.close();
    hits.forEach((h, i) => {
      const merged = best[i].concat(h.map((x) => ({ unit: x.unit + start, score: x.score })));
      merged.sort((a, b) => b.score - a.score || a.unit - b.unit);
      best[i] = merged.slice(0, k + 1);
    });
  }
  return best.map((b, i) => new Set(b.filter((x) => x.unit !== rows[i]).slice(0, k).map((x) => x.unit)));
}

/**
 * Measures the default depth of the compressed index in `dir` on the collection's own vectors and, with
 * `tune`, deepens it (probes × 1.5, candidates × 1.25, at most 8 steps) until recall@100 reaches
 * {@link TARGET_RECALL}. Returns what it found; the caller records it in the manifest.
 */
export async function tuneDepth(src: VectorSource, dir: string, manifest: IndexManifest, start: { nprobe: number; refine: number }, tune: boolean): Promise<DepthReport> {
  const n = src.count;
  const k = Math.min(100, n - 1);
  const count = Math.min(SAMPLE_QUERIES, n);
  if (n > MEASURE_UP_TO || k < 1) return { ...start, recall: null, queries: 0, tuned: false };
  const rows = sampleRows(n, count);
  const dim = src.dim;
  const qs = new Float32Array(rows.length * dim);
  rows.forEach((r, i) => qs.set(src.read(r, 1), i * dim));
  const truth = await exactTop(src, rows, qs, k);
  const lists = (manifest.params as { lists: number }).lists;
  const index = IvfIndex.open(dir, manifest, { threads: 1 });
  try {
    const recallAt = (nprobe: number, refine: number): number => {
      const hits = index.search(qs, k + 1, { nprobe, refine: Math.max(refine, k + 1) });
      let found = 0;
      hits.forEach((h, i) => {
        for (const x of h.filter((y) => y.unit !== rows[i]).slice(0, k)) if (truth[i].has(x.unit)) found++;
      });
      return found / (count * k);
    };
    let { nprobe, refine } = start;
    let recall = recallAt(nprobe, refine);
    let tuned = false;
    for (let step = 0; tune && recall < TARGET_RECALL && step < 8 && (nprobe < lists || refine < n); step++) {
      nprobe = Math.min(lists, Math.ceil(nprobe * 1.5));
      refine = Math.min(n, Math.ceil(refine * 1.25));
      recall = recallAt(nprobe, refine);
      tuned = true;
    }
    return { nprobe, refine, recall, queries: count, tuned };
  } finally {
    await index.close();
  }
}

/** The build's line on what the default depth trades (`lists`: the index's list count). */
export function depthLine(r: DepthReport, lists: number): string {
  const depth = `probes ${r.nprobe.toLocaleString("en-US")} of ${lists.toLocaleString("en-US")} lists and rescores ${r.refine.toLocaleString("en-US")} candidates`;
  if (r.recall === null) return `dense: the default search ${depth} (recall not measured above ${MEASURE_UP_TO.toLocaleString("en-US")} vectors: npm run bench:dense-scale measures it; retrieve --nprobe --refine go deeper)`;
  return (
    `dense: the default search ${depth}${r.tuned ? " (deepened to reach the target)" : ""}: recall@100 ${r.recall.toFixed(3)} of exact search on ${r.queries} of the collection's own vectors as queries` +
    `${r.recall < TARGET_RECALL ? ` (below ${TARGET_RECALL}: retrieve --nprobe --refine go deeper)` : ""}; real queries, further from their passages, may see less`
  );
}
