// Deletion marks of one segment of a live BM25 index (./layout.ts): a bit per unit, and what the deleted
// units took from the collection statistics — how many had a term, their total length and, per term, how
// many of them held it — so that BM25's N, average length and document frequencies are the live units'
// exactly (Lucene counts deleted documents until a merge). The per-term counts come from analysing the
// deleted units' texts again, as the build analysed them (a SegmentCollector, ../segment.ts); a
// re-analysed length whose norm byte is not the segment's is refused (the unit's text changed since).

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { readJsonFile } from "../../../util/json-file.js";
import type { UnitSource } from "../../units/unit.js";
import { bm25IndexedText, type Bm25Params } from "../build.js";
import { SegmentCollector, SegmentReader } from "../segment.js";
import { intToByte4 } from "../similarity.js";
import { LIVE_DIR, writeDurable } from "./layout.js";

/** A segment's deletions in memory. */
export interface Deletions {
  /** A byte per unit of the segment: 1 for a deleted unit. */
  bits: Uint8Array;
  deleted: number;
  /** Deleted units with at least one term, and their total length. */
  docCount: number;
  sumTotalTermFreq: number;
  /** Per term: deleted units holding it. */
  df: Map<string, number>;
}

/** No deletions in a segment of `units` units. */
export function noDeletions(units: number): Deletions {
  return { bits: new Uint8Array(units), deleted: 0, docCount: 0, sumTotalTermFreq: 0, df: new Map() };
}

interface DeletionsFile {
  segment: string;
  units: number;
  deleted: number;
  docCount: number;
  sumTotalTermFreq: number;
  /** The bits, a bit per unit (little-endian within a byte), base64. */
  bits: string;
  /** [term, deleted units holding it], terms in order. */
  df: [string, number][];
}

/** Reads deletion file `path` of a segment of `units` units. */
export function readDeletions(path: string, units: number): Deletions {
  const f = readJsonFile(path, "a segment's deletion marks") as DeletionsFile;
  if (f === null || typeof f !== "object" || f.units !== units || typeof f.bits !== "string" || !Array.isArray(f.df)) throw new Error(`${path}: not the deletion marks of a segment of ${units} units (units, bits, df)`);
  const packed = Buffer.from(f.bits, "base64");
  if (packed.length !== (units + 7) >> 3) throw new Error(`${path}: bits: ${packed.length} bytes for ${units} units`);
  const bits = new Uint8Array(units);
  let deleted = 0;
  for (let u = 0; u < units; u++) if ((packed[u >> 3] >> (u & 7)) & 1) (bits[u] = 1), deleted++;
  if (deleted !== f.deleted) throw new Error(`${path}: deleted: ${f.deleted}, the bits mark ${deleted}`);
  return { bits, deleted, docCount: f.docCount, sumTotalTermFreq: f.sumTotalTermFreq, df: new Map(f.df) };
}

/** Writes `d` as segment `segment`'s deletion file `name` under live/ (flushed); returns its size. */
export function writeDeletions(dir: string, name: string, segment: string, d: Deletions): number {
  const packed = Buffer.alloc((d.bits.length + 7) >> 3);
  for (let u = 0; u < d.bits.length; u++) if (d.bits[u]) packed[u >> 3] |= 1 << (u & 7);
  const df = [...d.df].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const body: DeletionsFile = { segment, units: d.bits.length, deleted: d.deleted, docCount: d.docCount, sumTotalTermFreq: d.sumTotalTermFreq, bits: packed.toString("base64"), df };
  const path = join(dir, LIVE_DIR, name);
  writeDurable(path, `${JSON.stringify(body)}\n`);
  return statSync(path).size;
}

/**
 * Marks units `newly` (segment-local numbers, increasing, not yet deleted) of a segment deleted: a new
 * record from `d` with their statistics, from their texts (in `units`) analysed as the build did.
 * `norms` are the segment's norm bytes; `scratch` a folder for the analysis's temporary file.
 */
export function deleteUnits(d: Deletions, newly: readonly number[], units: UnitSource, norms: Uint8Array, params: Bm25Params, scratch: string, where: string): Deletions {
  const out: Deletions = { bits: d.bits.slice(), deleted: d.deleted, docCount: d.docCount, sumTotalTermFreq: d.sumTotalTermFreq, df: new Map(d.df) };
  if (newly.length === 0) return out;
  const c = new SegmentCollector(params.analyzer);
  for (let i = 0; i < newly.length; i++) {
    const u = newly[i];
    if (out.bits[u]) throw new Error(`${where}: unit ${u} deleted twice`);
    out.bits[u] = 1;
    c.add(i, bm25IndexedText(units.get(u), params));
  }
  out.deleted += newly.length;
  const tmp = mkdtempSync(join(scratch, ".deleted-"));
  try {
    const path = join(tmp, "seg");
    c.flush(path);
    const r = new SegmentReader(path, statSync(path).size);
    try {
      for (let i = 0; i < newly.length; i++) {
        const len = r.lengths[i];
        if (intToByte4(len) !== norms[newly[i]]) throw new Error(`${where}: unit ${newly[i]}'s text is not the one indexed (length ${len} now; the store it reads its text from changed?)`);
        out.sumTotalTermFreq += len;
        if (len > 0) out.docCount++;
      }
      let docs = new Int32Array(newly.length);
      let tfs = new Int32Array(newly.length);
      while (r.nextTerm()) {
        if (r.count > docs.length) (docs = new Int32Array(r.count)), (tfs = new Int32Array(r.count));
        r.readPostings(docs, tfs, 0);
        out.df.set(r.term, (out.df.get(r.term) ?? 0) + r.count);
      }
    } finally {
      r.close();
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return out;
}
