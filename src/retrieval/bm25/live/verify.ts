// `tartan index verify` of a live BM25 index, beyond the top-level files the manifest lists: the commit
// it names (readable, its live statistics those of its segments less their deletion marks), every
// segment (a sealed index directory: each file's size and CRC-32, as ../../manifest.ts verifies a built
// one; the root segment through the top-level manifest) and every deletion file (size and CRC-32, and
// readable).

import { join } from "node:path";
import { fileChecksum, readManifest, verifyIndex } from "../../manifest.js";
import { readDeletions } from "./deletions.js";
import { generationOf, isLive, LIVE_DIR, readCommit, ROOT_SEGMENT, segmentDir } from "./layout.js";

/** The problems of the live index in `dir` (empty when intact; a built index has none to add). */
export function verifyLive(dir: string): string[] {
  const m = readManifest(dir);
  if (!isLive(m)) return [];
  const problems: string[] = [];
  const c = readCommit(dir, generationOf(m), m);
  let units = 0;
  let docCount = 0;
  let sum = 0;
  for (const s of c.segments) {
    const sdir = segmentDir(dir, s.name);
    if (s.name !== ROOT_SEGMENT) {
      const r = verifyIndex(sdir);
      problems.push(...r.problems);
      if (r.manifest.params.buildId !== s.buildId) problems.push(`${sdir}: build id ${String(r.manifest.params.buildId)}, the commit names ${s.buildId}`);
    }
    let deleted = { deleted: 0, docCount: 0, sumTotalTermFreq: 0 };
    if (s.deletions) {
      const path = join(dir, LIVE_DIR, s.deletions.name);
      try {
        const sum = fileChecksum(path);
        if (sum.bytes !== s.deletions.bytes || sum.crc32 !== s.deletions.crc32) problems.push(`${path}: ${sum.bytes} bytes, checksum ${sum.crc32}; the commit says ${s.deletions.bytes} bytes, ${s.deletions.crc32} (corrupt)`);
        else deleted = readDeletions(path, s.units);
      } catch (e) {
        problems.push((e as Error).message);
      }
    }
    units += s.units - deleted.deleted;
    docCount += s.docCount - deleted.docCount;
    sum += s.sumTotalTermFreq - deleted.sumTotalTermFreq;
  }
  if (problems.length === 0 && (units !== c.live.units || docCount !== c.live.docCount || sum !== c.live.sumTotalTermFreq))
    problems.push(`${join(dir, LIVE_DIR)}: commit ${c.generation} says ${c.live.units} live units, ${c.live.docCount} with terms, length ${c.live.sumTotalTermFreq}; its segments and deletions give ${units}, ${docCount}, ${sum}`);
  return problems;
}
