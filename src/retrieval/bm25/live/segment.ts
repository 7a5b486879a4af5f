// One segment of a live BM25 index opened: its searcher (a built index's, ../search.ts), its units and
// its deletion marks as of the commit that names it. Readers and the writer open segments alike.

import { join } from "node:path";
import type { IndexManifest } from "../../types.js";
import { checkIndexFiles, readManifest } from "../../manifest.js";
import { UnitStore } from "../../units/store.js";
import { Bm25Searcher } from "../search.js";
import { noDeletions, readDeletions, type Deletions } from "./deletions.js";
import { LIVE_DIR, ROOT_SEGMENT, segmentDir, type CommitSegment } from "./layout.js";

/** A segment opened: searcher, units, deletions. */
export class LiveSegment {
  readonly searcher: Bm25Searcher;
  readonly units: UnitStore;
  readonly manifest: IndexManifest;

  private constructor(
    readonly dir: string,
    readonly info: CommitSegment,
    readonly deletions: Deletions,
    manifest: IndexManifest,
  ) {
    this.manifest = manifest;
    this.searcher = new Bm25Searcher(dir, manifest);
    try {
      this.units = UnitStore.open(dir);
    } catch (e) {
      this.searcher.close();
      throw e;
    }
    if (this.units.count !== info.units || this.searcher.units !== info.units) {
      this.close();
      throw new Error(`${dir}: ${this.units.count} units stored, the commit says ${info.units}`);
    }
  }

  /** Opens segment `info` of the index in `dir`; `root` is the root segment's manifest. */
  static open(dir: string, info: CommitSegment, root: IndexManifest): LiveSegment {
    const sdir = segmentDir(dir, info.name);
    const m = info.name === ROOT_SEGMENT ? root : readManifest(sdir);
    checkIndexFiles(sdir, m);
    if (m.params.buildId !== info.buildId) throw new Error(`${sdir}: build id ${String(m.params.buildId)}, the commit names ${info.buildId}`);
    const d = info.deletions ? readDeletions(join(dir, LIVE_DIR, info.deletions.name), info.units) : noDeletions(info.units);
    return new LiveSegment(sdir, info, d, m);
  }

  /** Units not deleted. */
  get live(): number {
    return this.info.units - this.deletions.deleted;
  }

  close(): void {
    this.searcher.close();
    this.units.close();
  }
}

/** Opens the segments of a commit, closing those opened when one fails. */
export function openSegments(dir: string, segments: readonly CommitSegment[], root: IndexManifest): LiveSegment[] {
  const out: LiveSegment[] = [];
  try {
    for (const s of segments) out.push(LiveSegment.open(dir, s, root));
  } catch (e) {
    for (const s of out) s.close();
    throw e;
  }
  return out;
}
