// Merging adjacent segments of a live BM25 index into one, dropping deleted units: each source's live
// postings are written as a build segment file (../segment.ts: units renumbered in order, deleted ones
// left out, lengths as their norm bytes stand for and the sources' exact live statistics in the header),
// and those files are merged into the BM25 files by the build's own merge (../merge.ts), so a merged
// segment is the format a build writes (../format.ts) with block bounds under its own statistics. The
// units are copied in the same order. The result is a sealed index directory renamed into place.

import { renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { sealIndex, writeManifest } from "../../manifest.js";
import { TableUnitStore } from "../../units/table.js";
import { UnitWriter } from "../../units/store.js";
import type { UnitKind } from "../../types.js";
import type { Bm25Params } from "../build.js";
import { FORMAT_VERSION } from "../format.js";
import { mergeSegments } from "../merge.js";
import { PostingCursor } from "../postings-reader.js";
import { SegmentFileWriter } from "../segment.js";
import { byte4ToInt } from "../similarity.js";
import type { CommitSegment } from "./layout.js";
import { makeDirs } from "../../../util/safe-output.js";
import type { LiveSegment } from "./segment.js";

/** What a merge wrote: the new segment, or null when no unit of the sources is live. */
export interface MergedSegment {
  segment: CommitSegment | null;
  /** Bytes of the new segment's files (write amplification). */
  bytes: number;
}

/** Merges `sources` (adjacent, in order) into segment `name` under `liveDir`. */
export async function mergeLiveSegments(liveDir: string, name: string, sources: readonly LiveSegment[], params: Bm25Params, unit: UnitKind, words: number, hook: (point: string) => void): Promise<MergedSegment> {
  const total = sources.reduce((n, s) => n + s.live, 0);
  if (total === 0) return { segment: null, bytes: 0 };
  const building = join(liveDir, `${name}.building`);
  rmSync(building, { recursive: true, force: true });
  makeDirs(building);
  const files: { path: string; size: number }[] = [];
  let docCount = 0;
  let sumTotalTermFreq = 0;
  let base = 0;
  for (let i = 0; i < sources.length; i++) {
    const s = sources[i];
    const del = s.deletions;
    const norms = s.searcher.norms;
    const n = s.live;
    if (n === 0) continue;
    const ids = new Uint32Array(n);
    const lengths = new Uint32Array(n);
    const remap = new Int32Array(s.info.units).fill(-1);
    for (let u = 0, j = 0; u < s.info.units; u++) {
      if (del.bits[u]) continue;
      remap[u] = base + j;
      ids[j] = base + j;
      lengths[j] = byte4ToInt(norms[u]);
      j++;
    }
    // Terms with a live posting, and the postings left: known from the document frequencies.
    let terms = 0;
    let postings = 0;
    for (const [term, info] of s.searcher.dictionary.entries()) {
      const left = info.docFreq - (del.df.get(term) ?? 0);
      if (left > 0) {
        terms++;
        postings += left;
      }
    }
    const stats = { units: n, terms, postings, docCount: s.info.docCount - del.docCount, sumTotalTermFreq: s.info.sumTotalTermFreq - del.sumTotalTermFreq };
    docCount += stats.docCount;
    sumTotalTermFreq += stats.sumTotalTermFreq;
    const path = join(building, `bm25.seg-${String(i).padStart(5, "0")}`);
    const w = new SegmentFileWriter(path, stats, ids, lengths);
    let docs = new Int32Array(1 << 12);
    let tfs = new Int32Array(1 << 12);
    for (const [term, info] of s.searcher.dictionary.entries()) {
      const left = info.docFreq - (del.df.get(term) ?? 0);
      if (left <= 0) continue;
      if (info.docFreq > docs.length) {
        docs = new Int32Array(info.docFreq);
        tfs = new Int32Array(info.docFreq);
      }
      const c = s.searcher.cursor(info);
      let m = 0;
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) {
        if (del.bits[d]) continue;
        docs[m] = remap[d];
        tfs[m++] = c.tf;
      }
      if (m !== left) throw new Error(`${s.dir}: term ${JSON.stringify(term)} has ${m} live postings, its deletion marks leave ${left}`);
      w.term(term, docs, tfs, m);
    }
    w.close();
    files.push({ path, size: statSync(path).size });
    base += n;
  }
  const merged = mergeSegments(files, total, building, params.k1, params.b);
  for (const f of files) rmSync(f.path, { force: true });
  if (merged.docCount !== docCount || merged.sumTotalTermFreq !== sumTotalTermFreq) throw new Error(`${building}: merged statistics differ from the sources'`);
  // The units, in the same order.
  const writer = new UnitWriter(building, { unit, words });
  for (const s of sources) {
    const del = s.deletions.bits;
    if (s.units instanceof TableUnitStore) {
      let u = 0;
      for (const x of s.units.scan(0, s.info.units, false)) if (!del[u++]) await writer.add(x);
    } else for (let u = 0; u < s.info.units; u++) if (!del[u]) await writer.add(s.units.get(u));
  }
  await writer.close();
  writeManifest(building, {
    kind: "bm25",
    unit,
    units: total,
    params: { ...params, buildId: merged.buildId, docCount: merged.docCount, sumTotalTermFreq: merged.sumTotalTermFreq, terms: merged.terms, postings: merged.postings },
    source: `merge of ${sources.map((s) => s.info.name).join(", ")}`,
    formatVersion: FORMAT_VERSION,
  });
  const m = sealIndex(building);
  hook("merge-built");
  renameSync(building, join(liveDir, name));
  const bytes = (m.files ?? []).reduce((n, f) => n + f.bytes, 0);
  return { segment: { name, units: total, docCount: merged.docCount, sumTotalTermFreq: merged.sumTotalTermFreq, buildId: merged.buildId, deletions: null }, bytes };
}
