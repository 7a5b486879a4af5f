// A live BM25 index on disk: segments, deletion marks and generation-numbered commit points (Lucene's
// segments_N), beside a built index's files so that a plain built index is a live index of one segment.
//
//   DIR/manifest.json            the published commit: kind bm25, `params.live.generation` N, the live
//                                statistics, and (`files`) the root segment's files while a kept commit
//                                uses them. Renaming it into place is the one atomic step of a commit.
//   DIR/bm25.*, DIR/units.*      the root segment "." (the index as `tartan index build` wrote it)
//   DIR/live/root.manifest.json  the root segment's own manifest (copied at the first update; immutable)
//   DIR/live/seg-NNNNNN/         a segment: a whole built BM25 index directory (format v2, ../format.ts,
//                                its units and its sealed manifest), never changed once renamed into place
//   DIR/live/SEG.del-gNNNNNN.json  the deletion marks of segment SEG as of generation N: a bit per unit,
//                                the deleted units' statistics and per-term document frequencies
//   DIR/live/commit-NNNNNN.json  commit point N: the segments in order, their deletion files, the live
//                                statistics (written, flushed and renamed before the manifest names it)
//
// A commit file newer than the manifest's generation is an unfinished commit: debris the next writer
// removes with every file no kept commit names. The writer keeps the newest KEEP_COMMITS commits' files.

import { closeSync, existsSync, fsyncSync, openSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { IndexFile, IndexManifest, UnitKind } from "../../types.js";
import { fileChecksum, MANIFEST_FILE, readManifest, writeManifest } from "../../manifest.js";
import { readJsonFile } from "../../../util/json-file.js";
import { writeFileSafe } from "../../../util/safe-output.js";
import { FORMAT_VERSION } from "../format.js";
import type { Bm25Params } from "../build.js";

/** The folder of a live index's segments, deletion marks and commits. */
export const LIVE_DIR = "live";
/** The root segment's name (the index's own top-level files). */
export const ROOT_SEGMENT = ".";
/** The root segment's manifest, copied at the first update. */
export const ROOT_MANIFEST = "root.manifest.json";
/** Commits whose files the writer keeps: the newest and the two before it (readers opening meanwhile). */
export const KEEP_COMMITS = 3;

/** One segment of a commit. */
export interface CommitSegment {
  /** "." (the root) or `seg-NNNNNN` under live/. */
  name: string;
  /** Units in the segment (deleted ones included). */
  units: number;
  /** Units with at least one term, and their total length (as built: deleted units included). */
  docCount: number;
  sumTotalTermFreq: number;
  /** The segment's build id (its manifest's params.buildId). */
  buildId: string;
  /** Its deletion file under live/ with size and CRC-32, or null when none of its units is deleted. */
  deletions: (IndexFile & { deleted: number }) | null;
}

/** A commit point (live/commit-N.json). */
export interface Commit {
  generation: number;
  /** What the index's units are and how added pages are cut. */
  unit: UnitKind;
  words: number;
  params: Bm25Params;
  /** The number the next new segment gets. */
  nextSegment: number;
  segments: CommitSegment[];
  /** Statistics of the live units: what BM25 scores with. */
  live: { units: number; docCount: number; sumTotalTermFreq: number };
  created: string;
}

/** What a live index's manifest records in params.live. */
export interface LiveManifestParams {
  generation: number;
  segments: number;
  /** Units not deleted. */
  units: number;
}

export const commitFile = (generation: number): string => `commit-${String(generation).padStart(6, "0")}.json`;
export const segmentName = (n: number): string => `seg-${String(n).padStart(6, "0")}`;
export const deletionFile = (segment: string, generation: number): string => `${segment === ROOT_SEGMENT ? "root" : segment}.del-g${String(generation).padStart(6, "0")}.json`;

/** The directory of segment `name` of the index in `dir`. */
export function segmentDir(dir: string, name: string): string {
  return name === ROOT_SEGMENT ? dir : join(dir, LIVE_DIR, name);
}

/** The generation a manifest names (0: a plain built index, a live index of one segment). */
export function generationOf(m: IndexManifest): number {
  const live = m.params.live as LiveManifestParams | undefined;
  return live === undefined ? 0 : live.generation;
}

/** Whether the manifest is a live index's (updated at least once). */
export function isLive(m: IndexManifest): boolean {
  return m.params.live !== undefined;
}

/** The root segment's own manifest (the manifest itself for a plain built index). */
export function rootManifest(dir: string, m: IndexManifest): IndexManifest {
  return isLive(m) ? readManifestAt(join(dir, LIVE_DIR, ROOT_MANIFEST)) : m;
}

function readManifestAt(path: string): IndexManifest {
  return readJsonFile(path, "the root segment's manifest") as IndexManifest;
}

/** Generation 0 of a plain built BM25 index: its one segment. */
export function commitZero(m: IndexManifest, words: number): Commit {
  const p = m.params as unknown as Bm25Params & { buildId: string; docCount: number; sumTotalTermFreq: number };
  return {
    generation: 0,
    unit: m.unit,
    words,
    params: { k1: p.k1, b: p.b, analyzer: p.analyzer, title: p.title },
    nextSegment: 1,
    segments: [{ name: ROOT_SEGMENT, units: m.units, docCount: p.docCount, sumTotalTermFreq: p.sumTotalTermFreq, buildId: p.buildId, deletions: null }],
    live: { units: m.units, docCount: p.docCount, sumTotalTermFreq: p.sumTotalTermFreq },
    created: m.created,
  };
}

/** Reads commit `generation` of the index in `dir` (generation 0 of a never-updated index: its manifest). */
export function readCommit(dir: string, generation: number, m?: IndexManifest): Commit {
  if (generation === 0) {
    const root = rootManifest(dir, m ?? readManifest(dir));
    if (root.kind !== "bm25") throw new Error(`${dir}: a ${root.kind} index, not a BM25 one (live updates are for BM25 indexes)`);
    return commitZero(root, 100);
  }
  const path = join(dir, LIVE_DIR, commitFile(generation));
  if (!existsSync(path)) throw new CommitGoneError(path);
  const c = readJsonFile(path, "the commit point") as Commit;
  if (c === null || typeof c !== "object" || c.generation !== generation || !Array.isArray(c.segments)) throw new Error(`${path}: not commit point ${generation} (generation, segments)`);
  return c;
}

/** A commit file no longer there (a writer removed it after newer commits): the reader opens the newest. */
export class CommitGoneError extends Error {
  constructor(readonly path: string) {
    super(`${path}: missing (a newer commit replaced it; open the index again)`);
    this.name = "CommitGoneError";
  }
}

/** Writes `bytes` to `path` through a temporary, flushed to the disk before the rename. */
export function writeDurable(path: string, data: string): void {
  writeFileSafe(path, data);
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Flushes directory `dir`'s entries (renames into it) to the disk. */
export function syncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Publishes `commit`: its file under live/, then the manifest naming its generation (the atomic step).
 * `root` is the root segment's manifest (its files are listed while a kept commit names the root).
 */
export function publishCommit(dir: string, commit: Commit, root: IndexManifest, source: string, hook: (point: string) => void): IndexManifest {
  const live = join(dir, LIVE_DIR);
  writeDurable(join(live, commitFile(commit.generation)), `${JSON.stringify(commit, null, 1)}\n`);
  syncDir(live);
  hook("commit-written");
  const { rootKept } = keptFiles(dir, commit.generation);
  const units = commit.segments.reduce((n, s) => n + s.units, 0);
  const params: Record<string, unknown> = {
    ...commit.params,
    docCount: commit.live.docCount,
    sumTotalTermFreq: commit.live.sumTotalTermFreq,
    live: { generation: commit.generation, segments: commit.segments.length, units: commit.live.units } satisfies LiveManifestParams,
  };
  const m = writeManifest(dir, { kind: "bm25", unit: commit.unit, units, params, source, formatVersion: FORMAT_VERSION, files: rootKept ? (root.files ?? []) : [] });
  syncDir(dir);
  return m;
}

/** Files a commit names under live/ (segment folders and deletion files). */
export function liveFilesOf(c: Commit): string[] {
  const out: string[] = [];
  for (const s of c.segments) {
    if (s.name !== ROOT_SEGMENT) out.push(s.name);
    if (s.deletions) out.push(s.deletions.name);
  }
  return out;
}

/**
 * What the newest KEEP_COMMITS commits up to `generation` name under live/ (with their commit files), and
 * whether one of them names the root segment (generation 0, the built index, counts while in reach).
 */
export function keptFiles(dir: string, generation: number): { kept: Set<string>; rootKept: boolean } {
  const live = join(dir, LIVE_DIR);
  const kept = new Set<string>([ROOT_MANIFEST]);
  const commits: number[] = [];
  if (existsSync(live))
    for (const f of readdirSync(live)) {
      const m = /^commit-(\d{6,})\.json$/.exec(f);
      if (m) commits.push(Number(m[1]));
    }
  const gens = [...commits.filter((g) => g <= generation && g > 0), 0].sort((a, b) => b - a).slice(0, KEEP_COMMITS);
  if (generation > 0 && !gens.includes(generation)) throw new Error(`${join(live, commitFile(generation))}: missing, though manifest.json names it`);
  let rootKept = false;
  for (const g of gens) {
    if (g === 0) {
      rootKept = true;
      continue;
    }
    const c = readCommit(dir, g);
    kept.add(commitFile(g));
    for (const f of liveFilesOf(c)) kept.add(f);
    if (c.segments.some((s) => s.name === ROOT_SEGMENT)) rootKept = true;
  }
  return { kept, rootKept };
}

/**
 * Removes what no kept commit names: unfinished commits (newer than `generation`), commits older than the
 * kept ones, segment folders and deletion files of neither, temporaries; and the root segment's files
 * when no kept commit names the root. Returns what it removed.
 */
export function removeUnreferenced(dir: string, generation: number, root: IndexManifest): string[] {
  const live = join(dir, LIVE_DIR);
  const removed: string[] = [];
  const { kept, rootKept } = keptFiles(dir, generation);
  if (existsSync(live))
    for (const f of readdirSync(live)) {
      if (kept.has(f)) continue;
      rmSync(join(live, f), { recursive: true, force: true });
      removed.push(join(live, f));
    }
  if (!rootKept)
    for (const f of root.files ?? []) {
      const p = join(dir, f.name);
      if (existsSync(p)) {
        rmSync(p, { force: true });
        removed.push(p);
      }
    }
  return removed;
}

/** Copies the root's manifest under live/ at the first update (the top-level manifest becomes the commit's). */
export function saveRootManifest(dir: string, m: IndexManifest): void {
  const path = join(dir, LIVE_DIR, ROOT_MANIFEST);
  if (!existsSync(path)) writeDurable(path, `${JSON.stringify(m, null, 2)}\n`);
}

/** CRC-32 and size of a file under live/ as a manifest entry. */
export function liveFileEntry(dir: string, name: string): IndexFile {
  return { name, ...fileChecksum(join(dir, LIVE_DIR, name)) };
}

/** Whether `path` is a directory. */
export function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export { MANIFEST_FILE };
