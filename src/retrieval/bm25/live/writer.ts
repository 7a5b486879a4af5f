// The writer of a live BM25 index (./layout.ts): `updateLiveIndex` adds, replaces and deletes pages and
// `mergeLiveIndex` merges segments, each under the index's lock (src/util/lock.ts, the one a build takes),
// each ending in one new commit point published atomically. An update deletes the replaced and deleted
// pages' units by writing new deletion marks for the segments that hold them (./deletions.ts), writes the
// added and replacing pages' units as one new segment (a BM25 build, ../build.ts), lets the merge policy
// merge segments (./policy.ts, ./merge.ts), then publishes. A writer starts by removing what a killed
// writer left (files no kept commit names); a full disk removes what the update wrote and leaves the
// last commit as it was.

import { cpus } from "node:os";
import { renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { lockOutput } from "../../../util/lock.js";
import { diskError, diskErrorCode } from "../../../util/disk-errors.js";
import { makeDirs } from "../../../util/safe-output.js";
import { readManifest, sealIndex } from "../../manifest.js";
import type { IndexManifest } from "../../types.js";
import type { Unit } from "../../units/unit.js";
import { buildBm25Index } from "../build.js";
import { deleteUnits, writeDeletions } from "./deletions.js";
import { readIds, readPages, type PageInput } from "./inputs.js";
import {
  deletionFile,
  generationOf,
  liveFileEntry,
  LIVE_DIR,
  publishCommit,
  readCommit,
  removeUnreferenced,
  rootManifest,
  saveRootManifest,
  segmentName,
  type Commit,
  type CommitSegment,
} from "./layout.js";
import { mergeLiveSegments } from "./merge.js";
import { DEFAULT_MERGE_POLICY, planMerges, planForceMerge, type MergePolicy } from "./policy.js";
import { openSegments, type LiveSegment } from "./segment.js";

/** The files of an update: pages to add, pages to replace, page ids to delete (any of them). */
export interface LiveUpdateFiles {
  /** Pages (KILT pages JSONL, or a unit table directory) not in the index yet. */
  add?: string;
  /** Pages in the index, whose units are replaced by these. */
  replace?: string;
  /** A text file of page ids (wikipedia_id), one a line, whose units are deleted. */
  delete?: string;
}

/** How a writer runs. */
export interface LiveWriteOptions {
  /** Passage size in words for pages cut into passages (the index's when it recorded one; default 100). */
  words?: number;
  /** The automatic merge policy (./policy.ts); `false`: no automatic merges. */
  mergePolicy?: Partial<MergePolicy> | false;
  /** Analysis threads of a new segment's build; default 1, or every core from 20,000 units. */
  threads?: number;
  /** Hears what was cleaned up; default standard error. */
  log?: (line: string) => void;
  /** @internal Called at named points of a commit (crash tests kill the process there). */
  hook?: (point: string) => void;
}

/** What a commit did. */
export interface LiveCommitReport {
  dir: string;
  /** The published generation (the previous one when nothing changed). */
  generation: number;
  /** Segments of the published commit. */
  segments: number;
  /** Live units after it. */
  units: number;
  pagesAdded: number;
  pagesReplaced: number;
  pagesDeleted: number;
  unitsAdded: number;
  unitsDeleted: number;
  /** Segments merged away, and the segments they became. */
  merged: number;
  mergedInto: number;
  /** Bytes of the segment files written (the new segment and merged ones; deletion marks apart). */
  bytesWritten: number;
  /** Bytes of the deletion files written. */
  deletionBytes: number;
  seconds: number;
}

/** Hook points: `TARTAN_LIVE_KILL=POINT` kills the writer there (SIGKILL), for crash tests of the CLI. */
function hookFrom(o: LiveWriteOptions): (point: string) => void {
  const own = o.hook;
  const kill = process.env.TARTAN_LIVE_KILL;
  return (point) => {
    own?.(point);
    if (kill !== undefined && kill === point) process.kill(process.pid, "SIGKILL");
  };
}

/** A writer's view of the index: the last commit, its segments opened. */
interface Session {
  dir: string;
  manifest: IndexManifest;
  root: IndexManifest;
  commit: Commit;
  segments: LiveSegment[];
}

async function withWriter<T>(dir: string, o: LiveWriteOptions, run: (s: Session, hook: (point: string) => void) => Promise<T>): Promise<T> {
  const log = o.log ?? ((l) => process.stderr.write(`${l}\n`));
  const lock = lockOutput(dir, log);
  let segments: LiveSegment[] = [];
  try {
    const manifest = readManifest(dir);
    if (manifest.kind !== "bm25") throw new Error(`${dir}: a ${manifest.kind} index; live updates are for BM25 indexes (rebuild the others)`);
    const generation = generationOf(manifest);
    const root = rootManifest(dir, manifest);
    makeDirs(join(dir, LIVE_DIR));
    const removed = removeUnreferenced(dir, generation, root);
    if (removed.length > 0) log(`tartan: ${dir}: removed ${removed.length} file${removed.length === 1 ? "" : "s"} no commit names (an unfinished or superseded commit's)`);
    const commit = readCommit(dir, generation, manifest);
    if (generation === 0) commit.words = o.words ?? 100;
    else if (o.words !== undefined && o.words !== commit.words) throw new Error(`${dir}: its passages are ${commit.words} words; --words ${o.words} would cut added pages otherwise`);
    segments = openSegments(dir, commit.segments, root);
    const hook = hookFrom(o);
    const session: Session = { dir, manifest, root, commit, segments };
    segments = [];
    try {
      return await run(session, hook);
    } catch (e) {
      for (const s of session.segments) s.close();
      session.segments = [];
      // Whatever this writer left that no commit names goes now (the published commit is untouched).
      const now = generationOf(readManifest(dir));
      try {
        removeUnreferenced(dir, now, root);
      } catch {
        /* the next writer removes it */
      }
      if (diskErrorCode(e) !== undefined) throw diskError(dir, e, { cleanup: `removed this update's files; commit ${now} of ${dir} is untouched` });
      throw e;
    } finally {
      for (const s of session.segments) s.close();
    }
  } finally {
    for (const s of segments) s.close();
    lock.release();
  }
}

/** Live statistics of a list of segments with their deletions. */
function liveStats(segments: readonly { info: CommitSegment; deleted: number; docCount: number; sumTotalTermFreq: number }[]): Commit["live"] {
  let units = 0;
  let docCount = 0;
  let sumTotalTermFreq = 0;
  for (const s of segments) {
    units += s.info.units - s.deleted;
    docCount += s.info.docCount - s.docCount;
    sumTotalTermFreq += s.info.sumTotalTermFreq - s.sumTotalTermFreq;
  }
  return { units, docCount, sumTotalTermFreq };
}

/** Adds, replaces and deletes pages of the BM25 index in `dir` (built or live), publishing one new commit. */
export async function updateLiveIndex(dir: string, files: LiveUpdateFiles, o: LiveWriteOptions = {}): Promise<LiveCommitReport> {
  const t0 = performance.now();
  if (files.add === undefined && files.replace === undefined && files.delete === undefined) throw new Error("give pages to --add or --replace, or ids to --delete");
  return withWriter(dir, o, async (s, hook) => {
    const { commit } = s;
    // Where each page's live units are: segment → local units.
    const where = new Map<string, { seg: number; units: number[] }[]>();
    for (let i = 0; i < s.segments.length; i++) {
      const seg = s.segments[i];
      const bits = seg.deletions.bits;
      for (let u = 0; u < seg.info.units; u++) {
        if (bits[u]) continue;
        const id = seg.units.info(u).wikipedia_id;
        let list = where.get(id);
        if (list === undefined) where.set(id, (list = []));
        const last = list[list.length - 1];
        if (last !== undefined && last.seg === i) last.units.push(u);
        else list.push({ seg: i, units: [u] });
      }
    }
    const adds = files.add !== undefined ? await readPages(files.add, commit.unit, commit.words) : [];
    const replaces = files.replace !== undefined ? await readPages(files.replace, commit.unit, commit.words) : [];
    const deletes = files.delete !== undefined ? readIds(files.delete) : [];
    const problems: string[] = [];
    const given = new Map<string, string>();
    const once = (id: string, at: string) => {
      const other = given.get(id);
      if (other !== undefined) problems.push(`${at}: page ${id} is also given at ${other} (one change per page in an update)`);
      else given.set(id, at);
    };
    for (const p of adds) {
      once(p.id, p.where);
      if (where.has(p.id)) problems.push(`${p.where}: page ${p.id} is already in the index (use --replace to replace it)`);
    }
    for (const p of replaces) {
      once(p.id, p.where);
      if (!where.has(p.id)) problems.push(`${p.where}: page ${p.id} is not in the index (use --add to add it)`);
    }
    for (const d of deletes) {
      once(d.id, d.where);
      if (!where.has(d.id)) problems.push(`${d.where}: page ${d.id} is not in the index`);
    }
    if (problems.length > 0) throw new Error(problems.length > 20 ? `${problems.slice(0, 20).join("\n")}\n… and ${problems.length - 20} more` : problems.join("\n"));

    const generation = commit.generation + 1;
    const liveDir = join(dir, LIVE_DIR);
    const next: Commit = { ...commit, generation, segments: commit.segments.map((x) => ({ ...x })), created: new Date().toISOString() };
    // Deletions: the replaced and deleted pages' units.
    const newly = new Map<number, number[]>();
    for (const id of [...replaces.map((p) => p.id), ...deletes.map((d) => d.id)])
      for (const at of where.get(id)!) {
        let list = newly.get(at.seg);
        if (list === undefined) newly.set(at.seg, (list = []));
        list.push(...at.units);
      }
    let unitsDeleted = 0;
    let deletionBytes = 0;
    const dels = s.segments.map((seg) => seg.deletions);
    for (const [i, units] of [...newly].sort((a, b) => a[0] - b[0])) {
      units.sort((a, b) => a - b);
      const seg = s.segments[i];
      const d = deleteUnits(seg.deletions, units, seg.units, seg.searcher.norms, commit.params, liveDir, seg.dir);
      const name = deletionFile(seg.info.name, generation);
      deletionBytes += writeDeletions(dir, name, seg.info.name, d);
      next.segments[i].deletions = { ...liveFileEntry(dir, name), deleted: d.deleted };
      dels[i] = d;
      unitsDeleted += units.length;
    }
    hook("deletions-written");
    // The new segment: added pages, then replacing pages, each in file order.
    const added: Unit[] = [];
    for (const p of [...adds, ...replaces]) added.push(...p.units);
    let bytesWritten = 0;
    const stats = next.segments.map((info, i) => ({ info, deleted: dels[i].deleted, docCount: dels[i].docCount, sumTotalTermFreq: dels[i].sumTotalTermFreq }));
    if (added.length > 0) {
      const name = segmentName(next.nextSegment++);
      const seg = await buildSegment(liveDir, name, added, commit, o.threads, [files.add, files.replace].filter((x) => x !== undefined).join(", "));
      hook("segment-built");
      bytesWritten += seg.bytes;
      next.segments.push(seg.segment);
      stats.push({ info: seg.segment, deleted: 0, docCount: 0, sumTotalTermFreq: 0 });
    }
    next.live = liveStats(stats);
    const merged = o.mergePolicy === false ? { merged: 0, into: 0, bytes: 0 } : await applyMerges(s, next, planMerges(next.segments, { ...DEFAULT_MERGE_POLICY, ...o.mergePolicy }), hook);
    bytesWritten += merged.bytes;
    publish(s, next, hook);
    return {
      dir,
      generation,
      segments: next.segments.length,
      units: next.live.units,
      pagesAdded: adds.length,
      pagesReplaced: replaces.length,
      pagesDeleted: deletes.length,
      unitsAdded: added.length,
      unitsDeleted,
      merged: merged.merged,
      mergedInto: merged.into,
      bytesWritten,
      deletionBytes,
      seconds: (performance.now() - t0) / 1000,
    };
  });
}

/** Merges segments of the BM25 index in `dir` down to `maxSegments` (default 1), dropping deleted units; publishes one new commit. */
export async function mergeLiveIndex(dir: string, options: LiveWriteOptions & { maxSegments?: number } = {}): Promise<LiveCommitReport> {
  const t0 = performance.now();
  const maxSegments = options.maxSegments ?? 1;
  if (!Number.isInteger(maxSegments) || maxSegments < 1) throw new Error(`--max-segments must be a whole number ≥ 1, got ${maxSegments}`);
  return withWriter(dir, options, async (s, hook) => {
    const { commit } = s;
    const plan = planForceMerge(commit.segments, s.segments.map((x) => x.deletions.deleted), maxSegments);
    const report = { dir, generation: commit.generation, segments: commit.segments.length, units: commit.live.units, pagesAdded: 0, pagesReplaced: 0, pagesDeleted: 0, unitsAdded: 0, unitsDeleted: 0, merged: 0, mergedInto: 0, bytesWritten: 0, deletionBytes: 0, seconds: 0 };
    if (plan.length === 0) return { ...report, seconds: (performance.now() - t0) / 1000 };
    const next: Commit = { ...commit, generation: commit.generation + 1, segments: commit.segments.map((x) => ({ ...x })), created: new Date().toISOString() };
    const merged = await applyMerges(s, next, plan, hook);
    publish(s, next, hook);
    return { ...report, generation: next.generation, segments: next.segments.length, merged: merged.merged, mergedInto: merged.into, bytesWritten: merged.bytes, seconds: (performance.now() - t0) / 1000 };
  });
}

/** Builds `units` into segment `name` under `liveDir` (a sealed built index, renamed into place). */
async function buildSegment(liveDir: string, name: string, units: Unit[], commit: Commit, threads: number | undefined, source: string): Promise<{ segment: CommitSegment; bytes: number }> {
  const building = join(liveDir, `${name}.building`);
  rmSync(building, { recursive: true, force: true });
  makeDirs(building);
  const t = threads ?? (units.length >= 20_000 ? cpus().length : 1);
  const r = await buildBm25Index(units, building, { ...commit.params, unit: commit.unit, source }, undefined, { threads: t, ownDir: true, resume: false });
  const m = sealIndex(building);
  renameSync(building, join(liveDir, name));
  const p = m.params as { buildId: string; docCount: number; sumTotalTermFreq: number };
  return { segment: { name, units: r.units, docCount: p.docCount, sumTotalTermFreq: p.sumTotalTermFreq, buildId: p.buildId, deletions: null }, bytes: (m.files ?? []).reduce((n, f) => n + f.bytes, 0) };
}

/** Runs the merges `plan` names (runs [from, to) of next.segments, adjacent), in place in `next`. */
async function applyMerges(s: Session, next: Commit, plan: readonly [number, number][], hook: (point: string) => void): Promise<{ merged: number; into: number; bytes: number }> {
  if (plan.length === 0) return { merged: 0, into: 0, bytes: 0 };
  const liveDir = join(s.dir, LIVE_DIR);
  let merged = 0;
  let into = 0;
  let bytes = 0;
  // Right to left, so that earlier runs keep their positions.
  const runs = [...plan].sort((a, b) => b[0] - a[0]);
  for (const [from, to] of runs) {
    const sources = openSegments(s.dir, next.segments.slice(from, to), s.root);
    try {
      const name = segmentName(next.nextSegment++);
      const r = await mergeLiveSegments(liveDir, name, sources, next.params, next.unit, next.words, hook);
      next.segments.splice(from, to - from, ...(r.segment ? [r.segment] : []));
      merged += to - from;
      into += r.segment ? 1 : 0;
      bytes += r.bytes;
    } finally {
      for (const x of sources) x.close();
    }
  }
  return { merged, into, bytes };
}

/** Publishes `next` and removes what no kept commit names any more. */
function publish(s: Session, next: Commit, hook: (point: string) => void): void {
  if (s.commit.generation === 0) saveRootManifest(s.dir, s.root);
  publishCommit(s.dir, next, s.root, s.manifest.source, hook);
  hook("published");
  for (const x of s.segments) x.close();
  s.segments = [];
  removeUnreferenced(s.dir, next.generation, s.root);
}

export type { PageInput };
