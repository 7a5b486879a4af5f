// The BM25 postings reader: a cursor over one term's postings (./format.ts's header comment), decoding a
// block at a time and skipping blocks by their skip entries and score bounds, over bytes in memory or
// read piecewise from the postings file with positional reads. It decodes and bounds; what a posting
// scores is a TermScorer's (./scorer.ts): a block's stored bound is the largest impact x of its postings
// (BM25: tf × normInverse[norm]), which the scorer turns into a score bound.

import { BLOCK, ByteSource, readFully, unpackGaps, unpackPlusOne } from "./codec.js";
import { SEARCH_SAFETY } from "./format.js";
import type { ScoringModel, TermScorer } from "./scorer.js";

/**
 * One term's postings, decoded a block at a time: `doc` is the current unit (or NO_MORE), `tf` its
 * frequency. A cursor can be moved to another term with {@link reset}, keeping its buffers (a searcher
 * reuses its cursors from query to query).
 */
export class PostingCursor {
  static readonly NO_MORE = 0x7fffffff;
  doc = -1;
  tf = 0;
  /** The term's largest impact x (BM25: tf × normInverse), which bounds its scores (read only). */
  maxX = 0;
  docFreq = 0;
  private src: PostingBytes = bytesOf(EMPTY);
  file = "";
  /** The bytes read so far: `win` holds the term's bytes from `winAt` on. */
  private win: Uint8Array = EMPTY;
  private winAt = 0;
  /** @internal The decoded block: its docs and tfs. */
  readonly docs = new Int32Array(BLOCK);
  readonly tfs = new Int32Array(BLOCK);
  /** @internal Postings decoded in docs/tfs; `i` is the position of the current one. */
  n = 0;
  private i = 0;
  /** Full blocks (the first `fullBlocks` entries): their last docs, byte offsets in buf, and largest x. */
  private blockLast = new Int32Array(0);
  private blockAt = new Int32Array(0);
  /** A copy of the block bounds for {@link kthBlockX}. */
  private floorScratch = new Float32Array(0);
  /** Blocks {@link scoreFloor} picked. */
  private pick = new Int32Array(0);
  /** @internal Largest x per block; entry `fullBlocks` holds the term's (the tail's bound). */
  blockMaxX = new Float32Array(1);
  private fullBlocks = 0;
  private tailAt = 0;
  /** The block decoded next (fullBlocks = the tail). */
  private next = 0;
  /** The block whose bound `blockBound` answered last. */
  private shallow = 0;
  /** Blocks `scoreWindow` passed over undecoded (counted each time, for tests and benchmarks). */
  blocksSkipped = 0;

  /**
   * The buffer reads go into (when the source reads into buffers): passed in to reuse one across
   * queries, replaced by a larger one when a read needs more.
   */
  readBuffer: Uint8Array;

  /** `scoring`: the index's, for the impact x of a rare term's postings (which have no stored bound). */
  constructor(src: PostingBytes | Uint8Array, docFreq: number, scoring: Pick<ScoringModel, "impact">, file: string, readBuffer?: Uint8Array) {
    this.readBuffer = readBuffer ?? EMPTY;
    this.reset(src, docFreq, scoring, file);
  }

  /** Moves the cursor to another term's postings (before its first posting), keeping its buffers. */
  reset(src: PostingBytes | Uint8Array, docFreq: number, scoring: Pick<ScoringModel, "impact">, file: string): this {
    this.src = src instanceof Uint8Array ? bytesOf(src) : src;
    this.file = file;
    this.doc = -1;
    this.tf = 0;
    this.win = EMPTY;
    this.winAt = 0;
    this.n = this.i = this.next = this.shallow = this.blocksSkipped = 0;
    const size = this.src.size;
    this.docFreq = docFreq;
    const full = docFreq >= BLOCK ? Math.floor(docFreq / BLOCK) : 0;
    this.fullBlocks = full;
    if (this.blockMaxX.length < full + 1) {
      const cap = Math.max(full + 1, 2 * this.blockMaxX.length);
      this.blockLast = new Int32Array(cap);
      this.blockAt = new Int32Array(cap);
      this.blockMaxX = new Float32Array(cap);
    }
    try {
      if (full > 0) {
        // The skip entries take at most 14 bytes a block (two varints and a float).
        this.ensure(0, Math.min(size, 4 + 14 * full));
        const win = this.win;
        const end = win.length;
        if (end < 4) throw new RangeError("read past the end");
        this.maxX = f32At(win, 0);
        let p = 4;
        let last = -1;
        const { blockLast, blockAt, blockMaxX } = this;
        // blockAt holds the blocks' sizes until the offsets are known.
        for (let b = 0; b < full; b++) {
          if (p >= end) throw new RangeError("read past the end");
          let v = win[p++];
          if (v >= 0x80) [v, p] = varintAt(win, p - 1, end);
          last += v;
          blockLast[b] = last;
          if (p >= end) throw new RangeError("read past the end");
          v = win[p++];
          if (v >= 0x80) [v, p] = varintAt(win, p - 1, end);
          blockAt[b] = v;
          if (p + 4 > end) throw new RangeError("read past the end");
          blockMaxX[b] = f32At(win, p);
          p += 4;
        }
        let at = p;
        for (let b = 0; b < full; b++) {
          const bytes = blockAt[b];
          blockAt[b] = at;
          at += bytes;
        }
        if (at > size) throw new RangeError("blocks past the end");
        this.tailAt = at;
        blockMaxX[full] = this.maxX;
      } else {
        this.tailAt = 0;
        // A rare term: decode everything now; its bound comes from its postings.
        this.decodeTail(-1);
        let m = 0;
        for (let k = 0; k < this.n; k++) {
          const x = scoring.impact(this.tfs[k], this.docs[k]);
          if (x > m) m = x;
        }
        this.maxX = m;
        this.blockMaxX[0] = m;
        this.next = 1;
      }
    } catch (e) {
      if (e instanceof RangeError) throw new Error(`${file}: corrupt postings (${e.message})`);
      throw e;
    }
    return this;
  }

  private decodeTail(prev: number): void {
    const size = this.src.size;
    this.ensure(this.tailAt, size - this.tailAt);
    const src = new ByteSource(this.win, this.tailAt - this.winAt, size - this.winAt);
    const count = this.docFreq - this.fullBlocks * BLOCK;
    for (let k = 0; k < count; k++) {
      const v = src.varint();
      prev += Math.floor(v / 2) + 1;
      this.docs[k] = prev;
      this.tfs[k] = v & 1 ? 1 : src.varint() + 2;
    }
    if (src.pos !== src.end) throw new RangeError(`${src.end - src.pos} bytes left after the tail`);
    this.n = count;
    this.i = -1;
  }

  /** Decodes block `b` (fullBlocks = the tail) so that the next `nextDoc` returns its first posting. */
  private load(b: number): boolean {
    if (b > this.fullBlocks || (b === this.fullBlocks && this.docFreq % BLOCK === 0)) {
      this.n = 0;
      this.i = 0;
      this.next = this.fullBlocks + 1;
      return false;
    }
    const prev = b === 0 ? -1 : this.blockLast[b - 1];
    try {
      if (b === this.fullBlocks) this.decodeTail(prev);
      else {
        this.decodeFull(b, this.docs, this.tfs, false);
        this.n = BLOCK;
        this.i = -1;
      }
    } catch (e) {
      if (e instanceof RangeError) throw new Error(`${this.file}: corrupt postings (${e.message})`);
      throw e;
    }
    this.next = b + 1;
    return true;
  }

  /** Decodes full block `b` into docs and tfs (RangeError when corrupt); `exact`: read only its bytes. */
  private decodeFull(b: number, docs: Int32Array, tfs: Int32Array, exact: boolean): void {
    const prev = b === 0 ? -1 : this.blockLast[b - 1];
    const at = this.blockAt[b];
    this.ensure(at, (b + 1 < this.fullBlocks ? this.blockAt[b + 1] : this.tailAt) - at, exact);
    const win = this.win;
    let p = at - this.winAt;
    const db = win[p++];
    const tb = win[p++];
    if (db > 32 || tb > 32) throw new RangeError("bad bit width");
    p = unpackGaps(win, p, db, prev, docs);
    unpackPlusOne(win, p, tb, tfs);
    const d = docs[BLOCK - 1];
    if (d !== this.blockLast[b]) throw new RangeError(`block ${b} ends at unit ${d}, its skip entry says ${this.blockLast[b]}`);
  }

  /**
   * @internal A lower bound on the k-th best score of any query holding this term (scored by `scorer`): the
   * k-th best of its own scores in its `blocks` full blocks with the largest bounds (a unit's score is
   * at least its part from one term), or −Infinity when those hold fewer than k postings. The blocks are
   * decoded into `docs`/`tfs`/`scores` (capacity blocks × BLOCK), leaving the cursor where it is.
   */
  scoreFloor(k: number, blocks: number, scorer: TermScorer, docs: Int32Array, tfs: Int32Array, scores: Float64Array): number {
    const full = this.fullBlocks;
    if (blocks * BLOCK < k || full * BLOCK < k) return -Infinity;
    // The `blocks` blocks with the largest bounds (ties: the earlier), by insertion into a short list.
    const pick = this.pick.length >= blocks ? this.pick : (this.pick = new Int32Array(blocks));
    let picked = 0;
    const bx = this.blockMaxX;
    for (let b = 0; b < full; b++) {
      const x = bx[b];
      if (picked === blocks && !(x > bx[pick[picked - 1]])) continue;
      let j = picked < blocks ? picked++ : picked - 1;
      while (j > 0 && bx[pick[j - 1]] < x) {
        pick[j] = pick[j - 1];
        j--;
      }
      pick[j] = b;
    }
    let n = 0;
    try {
      for (let j = 0; j < picked; j++) {
        this.decodeFull(pick[j], docs, tfs, true);
        for (let i = 0; i < BLOCK; i++) scores[n++] = scorer.score(tfs[i], docs[i]);
      }
    } catch (e) {
      if (e instanceof RangeError) throw new Error(`${this.file}: corrupt postings (${e.message})`);
      throw e;
    }
    if (n < k) return -Infinity;
    const sorted = scores.subarray(0, n).sort();
    return sorted[n - k];
  }

  /**
   * @internal The k-th largest block bound x of the full blocks, or −1 when there are fewer than k. Each
   * block's bound is the x of one of its postings (the writer takes the largest), so k units of distinct
   * blocks reach it: the term's score at that x is a lower bound on the k-th best score (a query's score
   * for a unit is at least its part from one term).
   */
  kthBlockX(k: number): number {
    const full = this.fullBlocks;
    if (full < k || k < 1) return -1;
    if (this.floorScratch.length < full) this.floorScratch = new Float32Array(Math.max(full, 2 * this.floorScratch.length));
    const a = this.floorScratch;
    a.set(this.blockMaxX.subarray(0, full));
    // Quickselect for ascending position full − k.
    const want = full - k;
    let lo = 0;
    let hi = full - 1;
    while (lo < hi) {
      const pivot = a[(lo + hi) >>> 1];
      let i = lo;
      let j = hi;
      while (i <= j) {
        while (a[i] < pivot) i++;
        while (a[j] > pivot) j--;
        if (i <= j) {
          const t = a[i];
          a[i] = a[j];
          a[j] = t;
          i++;
          j--;
        }
      }
      if (want <= j) hi = j;
      else if (want >= i) lo = i;
      else break;
    }
    return a[want];
  }

  /** Makes `win` hold the term's bytes [at, at + len), reading ahead (POSTINGS_WINDOW) when it must read, unless `exact`. */
  private ensure(at: number, len: number, exact = false): void {
    if (at >= this.winAt && at + len <= this.winAt + this.win.length) return;
    const size = this.src.size;
    if (at < 0 || len < 0 || at + len > size) throw new RangeError(`bytes ${at}..${at + len} outside the term's ${size}`);
    const end = exact ? at + len : size - at <= 4 * POSTINGS_WINDOW ? size : Math.min(size, at + Math.max(len, POSTINGS_WINDOW));
    const n = end - at;
    if (this.src.readInto) {
      if (this.readBuffer.length < n) this.readBuffer = new Uint8Array(Math.max(n, POSTINGS_WINDOW));
      this.src.readInto(at, n, this.readBuffer);
      this.win = this.readBuffer.subarray(0, n);
    } else this.win = this.src.read(at, n);
    this.winAt = at;
  }

  /** Moves to the next posting; returns its doc (NO_MORE at the end). */
  nextDoc(): number {
    if (this.doc === PostingCursor.NO_MORE) return this.doc;
    if (++this.i >= this.n) {
      if (!this.load(this.next) || ++this.i >= this.n) return (this.doc = PostingCursor.NO_MORE);
    }
    this.tf = this.tfs[this.i];
    return (this.doc = this.docs[this.i]);
  }

  /** The first block that may hold a doc ≥ target (fullBlocks = the tail), from `from` on. */
  private blockFor(target: number, from: number): number {
    let b = from;
    while (b < this.fullBlocks && this.blockLast[b] < target) b++;
    return b;
  }

  /**
   * The largest x of the block that would hold `target` (for full blocks, from the skip data; the tail
   * and rare terms: the term bound), or -1 when no posting ≥ target is left.
   */
  blockBound(target: number): number {
    const b = this.boundBlock(target);
    return b < 0 ? -1 : this.blockMaxX[b];
  }

  /**
   * @internal {@link blockBound} as an index: the block that would hold `target` (fullBlocks = the tail),
   * whose bound is blockMaxX[b], or −1 (an integer result is not boxed when the call is not inlined).
   */
  boundBlock(target: number): number {
    const b = (this.shallow = this.blockFor(target, Math.max(this.shallow, this.next - 1, 0)));
    if (b < this.fullBlocks) return b;
    if (this.docFreq % BLOCK === 0 && this.fullBlocks > 0) return -1;
    return this.fullBlocks;
  }

  /**
   * The largest x of the postings left in units [lo, hi] (lo ≥ the last target): the largest block
   * bound of the full blocks overlapping them, the term bound for the tail; -1 when none can be there.
   */
  maxXIn(lo: number, hi: number): number {
    const d = this.doc;
    if (d === PostingCursor.NO_MORE || (d >= lo && d > hi)) return -1;
    let b = (this.shallow = this.blockFor(lo, Math.max(this.shallow, this.next - 1, 0)));
    const full = this.fullBlocks;
    const bx = this.blockMaxX;
    const last = this.blockLast;
    let m = -1;
    for (;;) {
      if (b >= full) {
        if (this.docFreq % BLOCK !== 0 || full === 0) m = Math.max(m, this.maxX);
        return m;
      }
      if (bx[b] > m) m = bx[b];
      if (last[b] >= hi) return m;
      b++;
    }
  }

  /**
   * The last unit of the block holding the first posting ≥ target (NO_MORE − 1 for the tail), not
   * moving the cursor.
   */
  blockEndFor(target: number): number {
    const b = (this.shallow = this.blockFor(target, Math.max(this.shallow, this.next - 1, 0)));
    return b < this.fullBlocks ? this.blockLast[b] : PostingCursor.NO_MORE - 1;
  }

  /**
   * Term at a time over the window [lo, hi): for each posting there, adds its score to acc[doc − lo] and
   * sets bit doc − lo of `seen`; returns the postings scored. A posting scores `scorer.score(tf, doc)`. A
   * block whose bound plus `rest` (the other terms' bounds) cannot beat `threshold` is neither decoded nor scored: no unit
   * holding the term there can enter the top k, whatever the other terms add. The cursor is left on the
   * first posting ≥ hi, or behind it (before a skipped block that reaches past the window).
   */
  scoreWindow(lo: number, hi: number, acc: Float64Array, seen: Int32Array, scorer: TermScorer, rest: number, threshold: number): number {
    const docs = this.docs;
    const tfs = this.tfs;
    let count = 0;
    let i = this.enter(lo);
    if (i < 0) return 0;
    let n = this.n;
    for (;;) {
      const from = i;
      for (; i < n; i++) {
        const doc = docs[i];
        if (doc >= hi) break;
        const s = scorer.score(tfs[i], doc);
        const o = doc - lo;
        acc[o] += s;
        seen[o >> 5] |= 1 << (o & 31);
      }
      count += i - from;
      if (i < n) {
        this.park(i);
        return count;
      }
      i = this.nextScoringBlock(lo, hi, scorer, rest, threshold);
      if (i < 0) return count;
      n = this.n;
    }
  }

  /**
   * @internal Where a pass over the window from `lo` starts in the decoded block (`docs`/`tfs`): the
   * index of its first posting ≥ lo, `n` when the block holds none (call {@link nextScoringBlock}), or −1
   * when the postings are exhausted.
   */
  enter(lo: number): number {
    if (this.doc === PostingCursor.NO_MORE) return -1;
    const docs = this.docs;
    const n = this.n;
    let i = this.i < 0 ? 0 : this.i;
    if (n > 0 && i < n && docs[n - 1] >= lo) {
      while (docs[i] < lo) i++;
      return i;
    }
    return n;
  }

  /** @internal Leaves the cursor on posting `i` of the decoded block (a pass stopped there). */
  park(i: number): void {
    this.i = i;
    this.tf = this.tfs[i];
    this.doc = this.docs[i];
  }

  /**
   * @internal After the decoded block: decodes the next block that may hold postings in [lo, hi) and
   * whose bound plus `rest` can beat `threshold` (the blocks before it are skipped undecoded), and
   * returns the index of its first posting ≥ lo; −1 when there is none before hi (the cursor is then at
   * NO_MORE, or left behind as {@link scoreWindow} says).
   */
  nextScoringBlock(lo: number, hi: number, scorer: TermScorer, rest: number, threshold: number): number {
    for (let b = this.blockFrom(lo); b >= 0; ) {
      if (this.blockStart(b) >= hi) return -1;
      if ((scorer.bound(this.blockX(b)) + rest) * SEARCH_SAFETY > threshold) return this.decodeFrom(b, lo);
      this.blocksSkipped++;
      if (b === this.fullBlocks || this.blockLast[b] >= hi) return -1;
      b++;
      if (b === this.fullBlocks && this.docFreq % BLOCK === 0) return this.exhaust();
    }
    return -1;
  }

  /** Puts the cursor past its last posting; returns −1. */
  private exhaust(): -1 {
    this.n = this.i = 0;
    this.next = this.fullBlocks + 1;
    this.doc = PostingCursor.NO_MORE;
    return -1;
  }

  /**
   * @internal The first block after the decoded one that may hold postings ≥ lo (fullBlocks = the tail),
   * not decoding it; −1 when none is left (the cursor is then at NO_MORE).
   */
  blockFrom(lo: number): number {
    const full = this.fullBlocks;
    const b = this.blockFor(lo, Math.max(this.next, 0));
    if (b > full || (b === full && full > 0 && this.docFreq % BLOCK === 0)) return this.exhaust();
    return b;
  }

  /** @internal The first unit block `b` may hold. */
  blockStart(b: number): number {
    return b === 0 ? 0 : this.blockLast[b - 1] + 1;
  }

  /** @internal The last unit of block `b` (NO_MORE − 1 for the tail, whose end the skip data does not say). */
  blockEnd(b: number): number {
    return b < this.fullBlocks ? this.blockLast[b] : PostingCursor.NO_MORE - 1;
  }

  /** @internal The largest x of block `b` (the term's for the tail). */
  blockX(b: number): number {
    return b < this.fullBlocks ? this.blockMaxX[b] : this.maxX;
  }

  /** @internal Decodes block `b` (from {@link blockFrom}); returns the index of its first posting ≥ lo. */
  decodeFrom(b: number, lo: number): number {
    this.load(b);
    const docs = this.docs;
    const n = this.n;
    let i = 0;
    while (i < n && docs[i] < lo) i++;
    return i;
  }

  /** Moves to the first posting with doc ≥ target; returns its doc (NO_MORE when none). */
  advance(target: number): number {
    if (this.doc >= target) return this.doc;
    if (this.n > 0 && this.i < this.n && this.docs[this.n - 1] >= target) {
      // In the decoded block.
      let k = Math.max(this.i, 0);
      while (this.docs[k] < target) k++;
      this.i = k;
      this.tf = this.tfs[k];
      return (this.doc = this.docs[k]);
    }
    const b = this.blockFor(target, Math.max(this.next, 0));
    if (!this.load(b)) return (this.doc = PostingCursor.NO_MORE);
    let k = 0;
    while (k < this.n && this.docs[k] < target) k++;
    if (k === this.n) return (this.doc = PostingCursor.NO_MORE);
    this.i = k;
    this.tf = this.tfs[k];
    return (this.doc = this.docs[k]);
  }
}

/** Bytes a posting cursor reads at a time (more when the rest of the term is at most four times this). */
export const POSTINGS_WINDOW = 64 * 1024;

/** A term's postings bytes, read piecewise: a cursor reads its skip entries, then only the blocks it needs. */
export interface PostingBytes {
  readonly size: number;
  /** Bytes [at, at + len) of the term's postings. */
  read(at: number, len: number): Uint8Array;
  /** Reads bytes [at, at + len) into buf[0, len) (sources that copy: no allocation per read). */
  readInto?(at: number, len: number, buf: Uint8Array): void;
}

const EMPTY = new Uint8Array(0);
const F32 = new Float32Array(1);
const F32_BYTES = new Uint8Array(F32.buffer);

/** Where the low byte of F32 is (typed arrays use the machine's byte order). */
const LOW = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 3;

/** The little-endian float at buf[p, p + 4) (the caller checked the bounds). */
function f32At(buf: Uint8Array, p: number): number {
  F32_BYTES[LOW] = buf[p];
  F32_BYTES[LOW ^ 1] = buf[p + 1];
  F32_BYTES[LOW ^ 2] = buf[p + 2];
  F32_BYTES[LOW ^ 3] = buf[p + 3];
  return F32[0];
}

/** The varint at buf[p, end) and the position after it. */
function varintAt(buf: Uint8Array, p: number, end: number): [number, number] {
  const src = new ByteSource(buf, p, end);
  const v = src.varint();
  return [v, src.pos];
}

/** Postings already in memory. */
export function bytesOf(buf: Uint8Array): PostingBytes {
  return { size: buf.length, read: (at, len) => buf.subarray(at, at + len) };
}

/** A term's postings at `offset` (`bytes` long) in the postings file `fd`, read with positional reads. */
export function postingsAt(fd: number, offset: number, bytes: number, file: string): PostingBytes {
  return {
    size: bytes,
    read: (at, len) => {
      const buf = new Uint8Array(len);
      readFully(fd, buf, 0, len, offset + at, file);
      return buf;
    },
    readInto: (at, len, buf) => readFully(fd, buf, 0, len, offset + at, file),
  };
}
