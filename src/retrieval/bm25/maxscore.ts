// MaxScore dynamic pruning over windows of units (as Lucene 9's MaxScoreBulkScorer), the BM25 search's
// one algorithm: pruning starts from a floor under the k-th best score read off the block bounds; per
// window, the terms whose bounds there together cannot lift a unit into the top k are only probed for
// the candidates the others find; one driving term is visited posting by posting, several are scored
// term at a time into a buffer of the window's units; blocks whose bound cannot matter are skipped
// undecoded, and a window no unit of which can enter is skipped whole — so results equal exhaustive
// scoring, ties going to the lower unit.
// ./search.ts opens the index and looks the query's terms up; this file ranks them. What a posting scores
// and what a block's stored bound allows is the index's ScoringModel's (./scorer.ts: BM25, or stored
// impacts), so the same search serves any postings whose scores grow with their stored impact.

import type { Hit } from "../types.js";
import type { TermInfo } from "./dictionary.js";
import { BLOCK, SEARCH_SAFETY } from "./format.js";
import { PostingCursor } from "./postings-reader.js";
import type { ScoringModel, TermScorer } from "./scorer.js";
import { TopK } from "./top-k.js";

const f = Math.fround;

/** Units scored term at a time into the buffer at once (a multiple of 32). */
export const WINDOW = 4096;
/**
 * Units a partition window covers at least (more when the first blocks of the terms driving the previous
 * window all reach further); a window ends early when the threshold rises, to partition again. Measured
 * on the 1M-page KILT source (4.2M units), queries per CPU second against 65,536 in one process: 16,384
 * 0.86×, 262,144 1.12×, 1,048,576 1.12×, 16M (the whole index) 0.99× — a partition reads the bounds of
 * every block in its window, so very wide ones cost more than they save.
 */
const MIN_WINDOW = 1 << 18;

/** A query term found in the index: its dictionary entry and weight (BM25: boost × idf; impacts: the query's weight). */
export interface QueryTerm {
  term: string;
  info: TermInfo;
  weight: number;
}

/** Search counters, for benchmarks and tests. */
export interface SearchStats {
  /** Postings scored. */
  scored: number;
  /** Candidate units considered. */
  candidates: number;
  /** Windows skipped whole without decoding or scoring: no unit there can enter the top k. */
  windowsSkipped: number;
  /** Blocks of the terms driving a window passed over without decoding (their bound is too low). */
  blocksSkipped: number;
}

/**
 * Buffers a searcher reuses from query to query: window scores, a bit per unit of a window, and per
 * query term slot a postings cursor (with its read buffer) and a term scorer (with its tables).
 */
export interface MaxScoreScratch {
  readonly acc: Float64Array;
  readonly seen: Int32Array;
  readonly cursors: PostingCursor[];
  readonly scorers: TermScorer[];
  /** The blocks decoded for the score floor: docs, tfs, scores (grown as k needs). */
  floorDocs: Int32Array;
  floorTfs: Int32Array;
  floorScores: Float64Array;
}

/** New buffers for {@link maxScoreSearch}. */
export function maxScoreScratch(): MaxScoreScratch {
  return { acc: new Float64Array(WINDOW), seen: new Int32Array(WINDOW >> 5), cursors: [], scorers: [], floorDocs: new Int32Array(BLOCK), floorTfs: new Int32Array(BLOCK), floorScores: new Float64Array(0) };
}

/** What {@link maxScoreSearch} reads of the index: its scoring, postings cursors, its buffers and counters. */
export interface MaxScoreIndex {
  readonly scoring: ScoringModel;
  readonly stats: SearchStats;
  readonly scratch: MaxScoreScratch;
  cursor(info: TermInfo, reuse?: PostingCursor): PostingCursor;
  /** A byte per unit, non-zero for a deleted one (a live index's segment, ./live/): deleted units never enter the top k. */
  readonly deleted?: Uint8Array | null;
}

/** What {@link complete} reads and updates: the query's terms, the top k and its threshold. */
interface Completion {
  readonly cursors: PostingCursor[];
  readonly scorers: TermScorer[];
  /** Terms by ascending window bound, and the prefix sums of those bounds. */
  readonly order: Int32Array;
  readonly prefix: Float64Array;
  readonly top: TopK;
  threshold: number;
  /**
   * The candidate's score so far, passed in a field: a double passed as an argument to a call that is not
   * inlined is boxed, one allocation per candidate.
   */
  score: number;
  /** Postings scored, candidate units considered. */
  scored: number;
  candidates: number;
  /** The window buffer: scores and a bit per unit. */
  readonly acc: Float64Array;
  readonly seen: Int32Array;
  /** Deleted units (a byte each), or null. */
  readonly deleted: Uint8Array | null;
}

/**
 * The probed terms' (order[0, probed)) bound over units [from, to]: the sum of their block bounds there
 * (cursors move their block pointer to `from`, which must not go back).
 */
function rangeBound(q: Completion, probed: number, from: number, to: number): number {
  const { order, cursors, scorers } = q;
  let r = 0;
  for (let j = 0; j < probed; j++) {
    const i = order[j];
    const bx = cursors[i].maxXIn(from, to);
    if (bx < 0) continue;
    r += scorers[i].bound(bx);
  }
  return r;
}

/**
 * A candidate `doc` whose driving terms score `score`: adds the probed terms (order[0, probed)), largest
 * bound first, while the unit can still enter the top k, and offers it.
 */
function complete(q: Completion, doc: number, probed: number): void {
  const deleted = q.deleted;
  if (deleted !== null && deleted[doc] !== 0) return;
  let score = q.score;
  const { prefix, order, cursors, scorers } = q;
  const threshold = q.threshold;
  const SAFETY = SEARCH_SAFETY;
  for (let j = probed - 1; j >= 0; j--) {
    if ((score + prefix[j + 1]) * SAFETY <= threshold) return;
    const i = order[j];
    const c = cursors[i];
    if (c.doc > doc) continue;
    const b = c.boundBlock(doc);
    if (b < 0) continue;
    const sc = scorers[i];
    if ((score + prefix[j] + sc.bound(c.blockMaxX[b])) * SAFETY <= threshold) return;
    if (c.advance(doc) === doc) {
      score += sc.score(c.tf, doc);
      q.scored++;
    }
  }
  const final = f(score);
  if (final > threshold) {
    const top = q.top;
    top.offer(final, doc);
    if (top.size === top.k) q.threshold = top.threshold;
  }
}

/**
 * Window [lo, windowMax) with one driving term (term `i`): its postings are the candidates, visited in
 * order (no buffer). A block of it is decoded only when its bound plus the probed terms' block bounds
 * over its units can beat the threshold, and a posting is completed only when its score plus those
 * bounds can. Returns where it stopped: windowMax, or earlier once the threshold rose past `partitioned`.
 */
function driveOne(q: Completion, i: number, lo: number, windowMax: number, probed: number, probedBound: number, partitioned: number): number {
  const { cursors, scorers } = q;
  const SAFETY = SEARCH_SAFETY;
  let threshold = q.threshold;
  let scored = 0;
  let candidates = 0;
  const c = cursors[i];
  const docs = c.docs;
  const tfs = c.tfs;
  const sc = scorers[i];
  while (lo < windowMax) {
    const hi = Math.min(windowMax, lo + WINDOW);
    let next = hi;
    let j = c.enter(lo);
    if (j >= 0) {
      let m = c.n;
      let rest = j < m ? rangeBound(q, probed, lo, docs[m - 1]) : 0;
      for (;;) {
        const from = j;
        for (; j < m; j++) {
          const doc = docs[j];
          if (doc >= hi) break;
          const score = sc.score(tfs[j], doc);
          if ((score + rest) * SAFETY <= threshold) continue;
          q.threshold = threshold;
          q.score = score;
          complete(q, doc, probed);
          threshold = q.threshold;
        }
        scored += j - from;
        candidates += j - from;
        if (j < m) {
          c.park(j);
          break;
        }
        // The next block worth decoding in the chunk, if any.
        let b = c.blockFrom(lo);
        let found = false;
        while (b >= 0) {
          const start = c.blockStart(b);
          if (start >= hi) break;
          const sb = sc.bound(c.blockX(b));
          // Alone (nothing probed), the block's bound is exact: a posting scoring the threshold cannot enter.
          if (probed === 0 ? sb > threshold : (sb + probedBound) * SAFETY > threshold) {
            rest = rangeBound(q, probed, Math.max(start, lo), c.blockEnd(b));
            if ((sb + rest) * SAFETY > threshold) {
              found = true;
              break;
            }
          }
          c.blocksSkipped++;
          const end = c.blockEnd(b);
          if (end >= hi - 1) {
            // Skipped to the chunk's end or past it: no candidate before the block's end.
            next = Math.min(windowMax, Math.max(hi, end + 1));
            break;
          }
          b++;
        }
        if (!found) break;
        j = c.decodeFrom(b, lo);
        m = c.n;
      }
    }
    lo = next;
    if (threshold > partitioned) break;
  }
  q.threshold = threshold;
  q.scored += scored;
  q.candidates += candidates;
  return lo;
}

/**
 * Window [lo, windowMax) with several driving terms (drive[0, driving)): scored term at a time into the
 * buffer in chunks of WINDOW units, then each unit hit is completed when its score plus the probed terms'
 * bound can beat the threshold. Returns where it stopped, as {@link driveOne}.
 */
function driveMany(q: Completion, drive: Int32Array, driving: number, lo: number, windowMax: number, probed: number, probedBound: number, all: number, wbound: Float64Array, partitioned: number): number {
  const { cursors, scorers, acc, seen } = q;
  const SAFETY = SEARCH_SAFETY;
  let threshold = q.threshold;
  let scored = 0;
  let candidates = 0;
  while (lo < windowMax) {
    const hi = Math.min(windowMax, lo + WINDOW);
    let any = 0;
    for (let j = 0; j < driving; j++) {
      const i = drive[j];
      any += cursors[i].scoreWindow(lo, hi, acc, seen, scorers[i], all - wbound[i], threshold);
    }
    scored += any;
    if (any > 0) {
      const words = (hi - lo + 31) >> 5;
      for (let wi = 0; wi < words; wi++) {
        let word = seen[wi];
        if (word === 0) continue;
        seen[wi] = 0;
        while (word !== 0) {
          const low = word & -word;
          word ^= low;
          const o = (wi << 5) | (31 - Math.clz32(low));
          const score = acc[o];
          acc[o] = 0;
          candidates++;
          if ((score + probedBound) * SAFETY <= threshold) continue;
          q.threshold = threshold;
          q.score = score;
          complete(q, lo + o, probed);
          threshold = q.threshold;
        }
      }
    }
    lo = hi;
    // A higher threshold may leave more terms to probe only: partition again from here.
    if (threshold > partitioned) break;
  }
  q.threshold = threshold;
  q.scored += scored;
  q.candidates += candidates;
  return lo;
}

/** Top k for query terms already looked up, best first, ties by lower unit (MaxScore; equal to exhaustive scoring). */
export function maxScoreSearch(s: MaxScoreIndex, terms: readonly QueryTerm[], k: number): Hit[] {
  // Pruning from a score floor is exact when the top k fills (k units reach the floor); should it not,
  // which the floor's construction rules out, the search runs again without it.
  return searchFrom(s, terms, k, true) ?? (searchFrom(s, terms, k, false) as Hit[]);
}

/** {@link maxScoreSearch}, pruning from a floor under the k-th best score when `useFloor`; null when the top k did not fill above it. */
function searchFrom(s: MaxScoreIndex, terms: readonly QueryTerm[], k: number, useFloor: boolean): Hit[] | null {
  const scoring = s.scoring;
  const n = terms.length;
  const NO_MORE = PostingCursor.NO_MORE;
  const cursors: PostingCursor[] = new Array(n);
  // Per term: its scorer, and its bound.
  const scorers: TermScorer[] = new Array(n);
  let boundSum = 0;
  for (let i = 0; i < n; i++) {
    const t = terms[i];
    const c = (cursors[i] = s.scratch.cursors[i] = s.cursor(t.info, s.scratch.cursors[i]));
    const sc = (scorers[i] = s.scratch.scorers[i] = scoring.termScorer(t.weight, s.scratch.scorers[i]));
    boundSum += sc.bound(c.maxX);
    c.nextDoc();
  }
  const top = new TopK(k);
  // A floor under the k-th best score before any unit is scored: the best of the terms' own lower bounds
  // on it (a unit scores at least its part from any one term): the score at the k-th largest block bound
  // (each block bound is one posting's), or for a term with fewer than k blocks its own k-th best score
  // in its blocks with the largest bounds. Pruning starts from just below the floor, so that units
  // scoring exactly the floor still enter; once the top k is full its threshold (≥ the floor) takes over.
  let floor = -Infinity;
  if (useFloor) {
    const floorBlocks = Math.ceil(k / BLOCK) + 1;
    const sc = s.scratch;
    for (let i = 0; i < n; i++) {
      const c = cursors[i];
      // (Under bounds that are not one posting's score, search-time k1 and b, only the decoded scores count.)
      const kx = scoring.looseBounds === true ? -1 : c.kthBlockX(k);
      let fl: number;
      if (kx >= 0) fl = scorers[i].bound(kx);
      else {
        if (sc.floorScores.length < floorBlocks * BLOCK) sc.floorScores = new Float64Array(floorBlocks * BLOCK);
        fl = c.scoreFloor(k, floorBlocks, scorers[i], sc.floorDocs, sc.floorTfs, sc.floorScores);
      }
      if (fl > floor) floor = fl;
    }
  }
  let threshold = floor > 0 ? floor * (1 - 2 ** -40) : -Infinity;
  let skipped = 0;
  const SAFETY = SEARCH_SAFETY;
  const { acc, seen } = s.scratch;
  acc.fill(0);
  seen.fill(0);
  // Per window: the terms with postings there, ascending by their bound in the window; the first
  // `probed` of them (whose bounds together cannot beat the threshold) are only probed, the rest
  // (`drive`) are scored term at a time and drive the candidates.
  const order = new Int32Array(n);
  const wbound = new Float64Array(n);
  const prefix = new Float64Array(n + 1);
  const drive = new Int32Array(n);
  let driving = n;
  for (let i = 0; i < n; i++) drive[i] = i;
  let windowMin = 0;
  const q: Completion = { cursors, scorers, order, prefix, top, threshold, score: 0.5, scored: 0, candidates: 0, acc, seen, deleted: s.deleted ?? null };

  for (;;) {
    // The next window starts at the first posting left (cursors behind a skipped window count from its end).
    let d = NO_MORE;
    for (let i = 0; i < n; i++) {
      const di = cursors[i].doc;
      if (di < d) d = di;
    }
    if (d < windowMin) d = windowMin;
    if (d >= NO_MORE) break;
    // Window [d, windowMax): up to where the first block of a driving term ends, at least WINDOW units.
    let windowMax = NO_MORE;
    for (let j = 0; j < driving; j++) {
      const c = cursors[drive[j]];
      if (c.doc === NO_MORE) continue;
      const e = c.blockEndFor(Math.max(c.doc, d)) + 1;
      if (e < windowMax) windowMax = e;
    }
    if (windowMax < d + MIN_WINDOW) windowMax = d + MIN_WINDOW;
    if (windowMax > NO_MORE) windowMax = NO_MORE;
    // Bounds in the window; terms without postings there drop out.
    let live = 0;
    for (let i = 0; i < n; i++) {
      const bx = cursors[i].maxXIn(d, windowMax - 1);
      if (bx < 0) continue;
      const b = scorers[i].bound(bx);
      // Insertion by bound, ascending (ties: lower term index first).
      let j = live++;
      while (j > 0 && wbound[order[j - 1]] > b) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
      wbound[i] = b;
    }
    for (let j = 0; j < live; j++) prefix[j + 1] = prefix[j] + wbound[order[j]];
    let probed = 0;
    while (probed < live && prefix[probed + 1] * SAFETY <= threshold) probed++;
    if (probed === live) {
      // No unit of the window can enter the top k.
      skipped++;
      windowMin = windowMax;
      continue;
    }
    driving = live - probed;
    const probedBound = prefix[probed];
    const all = prefix[live];
    const partitioned = threshold;
    for (let j = 0; j < driving; j++) drive[j] = order[probed + j];
    // Score the window in chunks of WINDOW units.
    q.threshold = threshold;
    windowMin = driving === 1 ? driveOne(q, drive[0], d, windowMax, probed, probedBound, partitioned) : driveMany(q, drive, driving, d, windowMax, probed, probedBound, all, wbound, partitioned);
    threshold = q.threshold;
    if (boundSum * SAFETY <= threshold) break;
  }
  s.stats.scored += q.scored;
  s.stats.candidates += q.candidates;
  s.stats.windowsSkipped += skipped;
  for (let i = 0; i < n; i++) {
    const c = cursors[i];
    s.stats.blocksSkipped += c.blocksSkipped;
    // Keep read buffers of up to 1 MB for the next query.
    if (c.readBuffer.length > 1 << 20) c.readBuffer = new Uint8Array(0);
  }
  if (floor > -Infinity && top.size < k) return null;
  return top.hits();
}
