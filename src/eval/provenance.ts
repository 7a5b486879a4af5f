// Provenance metrics of KILT's `eval_retrieval` (kilt-spec.md §4.1–4.4): id lists by rank keys,
// R-precision, the evidence-set rank behind precision/recall/success@k, and the text-based
// answer/entity-in-context metrics. Each function reproduces one official function, quirks included,
// with hash lookups where the official code scans lists (no quadratic cost on long provenance lists).
// Gold provenance is kept compact ({@link GoldProvenance}): each record's distinct key strings numbered
// locally and its ids in one shared Int32Array; the sets the metrics need are built when the record is
// scored (each gold record is scored once), in scratch arrays indexed by those numbers. The text-based
// context metrics are ./context-match.ts (re-exported here).

import { pyStrip } from "../records/python-str.js";
import type { OutputView, ProvEntry } from "./scan.js";

export { ContextMatcher } from "./context-match.js";

/** `"+".join(str(prov[k]).strip() for k in rank_keys)`, or null when a key is missing (`_get_ids_list` skips it). */
export function fullKey(p: ProvEntry, keyIdx: readonly number[]): string | null {
  if (keyIdx.length === 1) {
    const v = p.vals[keyIdx[0]];
    return v === undefined ? null : pyStrip(v.str);
  }
  let s = "";
  for (let i = 0; i < keyIdx.length; i++) {
    const v = p.vals[keyIdx[i]];
    if (v === undefined) return null;
    s += i === 0 ? pyStrip(v.str) : `+${pyStrip(v.str)}`;
  }
  return s;
}

/** `get_rank`'s evidence-set key: missing keys are dropped from the join instead (a documented quirk). */
function partialKey(p: ProvEntry, keyIdx: readonly number[]): string {
  if (keyIdx.length === 1) {
    const v = p.vals[keyIdx[0]];
    return v === undefined ? "" : pyStrip(v.str);
  }
  const parts: string[] = [];
  for (const i of keyIdx) {
    const v = p.vals[i];
    if (v !== undefined) parts.push(pyStrip(v.str));
  }
  return parts.join("+");
}

/**
 * The value of a key written as a plain decimal number ("0", or 1 to 9 digits without a leading zero),
 * else -1: two such keys are equal strings exactly when their values are equal.
 */
function decimalKey(s: string): number {
  const n = s.length;
  if (n === 0 || n > 9 || (n > 1 && s.charCodeAt(0) === 0x30)) return -1;
  let v = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i) - 0x30;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** A growable list of int32 (scratch storage). */
class IntList {
  a = new Int32Array(64);
  length = 0;
  push(x: number): void {
    if (this.length === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = x;
  }
}

/** Sorts `a[from, to)` ascending in place (insertion sort: evidence sets are small; a typed-array sort when not). */
function sortRange(a: Int32Array, from: number, to: number): void {
  if (to - from > 32) {
    a.subarray(from, to).sort();
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const x = a[i];
    let j = i - 1;
    while (j >= from && a[j] > x) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = x;
  }
}

/** Rank entries: TRUE (a completed evidence set), FALSE (a non-evidence id), or a placeholder >= 0 (set index). */
export const RANK_TRUE = -1;
export const RANK_FALSE = -2;
const RANK_REMOVED = -3;

/**
 * The gold provenance of every record, compact: a record's distinct key strings (full keys of
 * `_get_ids_list`, partial keys of `get_rank`) get local numbers 0..L-1, kept in one shared string
 * list from `base`, and its outputs are encoded in one Int32Array as `[outputs, base, L, then per
 * output: count (-1 without a provenance key), then per entry: full id (-1 when a rank key is
 * missing), partial id]`. {@link add} returns the offset of a record's encoding; the scoring methods
 * take it with the guess ids of {@link guessIds}. No set or map is kept per record: what scoring needs
 * is built in scratch arrays indexed by local number when the record is scored (each is scored once).
 */
export class GoldProvenance {
  private data = new Int32Array(1 << 16);
  private length = 0;
  /** Every record's distinct key strings, record after record. */
  private readonly strings: string[] = [];
  /** Each of those strings' `decimalKey` (compared instead of the strings where a guess key has one). */
  private readonly stringNums = new IntList();
  /** While adding a record with many distinct keys: its strings' local numbers. */
  private byKey: Map<string, number> | undefined;
  /** The most distinct keys of one record (sizes the scratch arrays). */
  private maxLocal = 0;
  // Scoring scratch, indexed by local number.
  private mark = new Int32Array(0);
  private stamp = 0;
  private headStamp = new Int32Array(0);
  private head = new Int32Array(0);
  private readonly linkSet = new IntList();
  private readonly linkNext = new IntList();
  private readonly members = new IntList();
  private readonly starts = new IntList();
  private sizes = new Int32Array(16);
  private setCount = 0;
  private rank = new Int32Array(64);
  private rankLength = 0;
  private remaining = new Int32Array(16);
  private placeholderAt = new Int32Array(16);
  /** Guess ids of the last {@link guessIds} call: local numbers of the gold record, -1 for keys it does not have. */
  guess = new Int32Array(64);
  guessLength = 0;
  /** `guessIds` scratch: a hash set of the decimal page ids seen that the gold record does not have (valid where stamped). */
  private numSlots = new Int32Array(64);
  private numStamps = new Int32Array(64);
  private numStamp = 0;
  /** `guessIds` scratch: the other keys seen that the gold record does not have. */
  private readonly unknown: string[] = [];

  /** The local number of `s` in the record whose strings start at `base` (added when new). */
  private localId(s: string, base: number): number {
    const strings = this.strings;
    const n = strings.length;
    if (this.byKey !== undefined) {
      const v = this.byKey.get(s);
      if (v !== undefined) return v;
      this.byKey.set(s, n - base);
    } else {
      for (let j = base; j < n; j++) if (strings[j] === s) return j - base;
      if (n - base >= 16) {
        this.byKey = new Map();
        for (let j = base; j < n; j++) this.byKey.set(strings[j], j - base);
        this.byKey.set(s, n - base);
      }
    }
    strings.push(s);
    this.stringNums.push(decimalKey(s));
    return n - base;
  }

  private put(x: number): void {
    if (this.length === this.data.length) {
      const b = new Int32Array(this.data.length * 2);
      b.set(this.data);
      this.data = b;
    }
    this.data[this.length++] = x;
  }

  /** Encodes a gold record's outputs (every provenance item an object) by the given keys; returns its offset. */
  add(outputs: readonly OutputView[], keyIdx: readonly number[]): number {
    const at = this.length;
    const base = this.strings.length;
    this.byKey = undefined;
    this.put(outputs.length);
    this.put(base);
    this.put(0);
    for (const o of outputs) {
      if (!o.hasProvenance) {
        this.put(-1);
        continue;
      }
      this.put(o.provenance.length);
      for (const p of o.provenance) {
        const f = fullKey(p, keyIdx);
        const fid = f === null ? -1 : this.localId(f, base);
        const part = partialKey(p, keyIdx);
        this.put(fid);
        this.put(part === f ? fid : this.localId(part, base));
      }
    }
    this.byKey = undefined;
    const count = this.strings.length - base;
    this.data[at + 2] = count;
    if (count > this.maxLocal) this.maxLocal = count;
    return at;
  }

  private nextStamp(): number {
    if (this.mark.length < this.maxLocal || this.stamp === 0x7fffffff) {
      this.mark = new Int32Array(this.maxLocal);
      this.headStamp = new Int32Array(this.maxLocal);
      this.head = new Int32Array(this.maxLocal);
      this.stamp = 0;
    }
    return ++this.stamp;
  }

  /**
   * `_get_ids_list` of one guess output into {@link guess}: keys of provenance items having every rank
   * key, de-duplicated in order, as local numbers of the gold record at `at` (-1 for a key that record
   * does not have). Returns the count. Keys are compared with the record's own few keys (as int32
   * values where written as decimal numbers; a map only when it has many); keys it does not have are
   * de-duplicated among themselves (decimal ones in a stamped hash set, others linearly while few).
   */
  guessIds(output: OutputView, keyIdx: readonly number[], at: number): number {
    if (!output.hasProvenance) return (this.guessLength = 0);
    const base = this.data[at + 1];
    const count = this.data[at + 2];
    const strings = this.strings;
    const nums = this.stringNums.a;
    let byKey: Map<string, number> | undefined;
    if (count > 8) {
      byKey = new Map();
      for (let j = 0; j < count; j++) byKey.set(strings[base + j], j);
    }
    const stamp = this.nextStamp();
    const mark = this.mark;
    const prov = output.provenance;
    // Distinct guess keys the gold record does not have: page ids written as plain decimal numbers (most
    // of them) in a hash set of int32 values, the others compared linearly while few.
    const slots = this.numSlotsFor(prov.length);
    const mask = slots.length - 1;
    const numStamps = this.numStamps;
    const numStamp = this.numStamp;
    const unknown = this.unknown;
    if (unknown.length !== 0) unknown.length = 0;
    let unknownSet: Set<string> | undefined;
    if (this.guess.length < prov.length) this.guess = new Int32Array(prov.length);
    const out = this.guess;
    let n = 0;
    for (let e = 0; e < prov.length; e++) {
      const p = prov[e];
      if (!p.object) continue;
      const key = fullKey(p, keyIdx);
      if (key === null) continue;
      const num = decimalKey(key);
      let id = -1;
      if (byKey !== undefined) id = byKey.get(key) ?? -1;
      else if (num >= 0) {
        // Two decimal keys are equal strings exactly when their values are equal.
        for (let j = 0; j < count; j++)
          if (nums[base + j] === num) {
            id = j;
            break;
          }
      } else
        for (let j = 0; j < count; j++)
          if (strings[base + j] === key) {
            id = j;
            break;
          }
      if (id >= 0) {
        if (mark[id] === stamp) continue;
        mark[id] = stamp;
      } else if (num >= 0) {
        const h = Math.imul(num, 0x9e3779b1);
        let i = (h ^ (h >>> 15)) & mask;
        while (numStamps[i] === numStamp && slots[i] !== num) i = (i + 1) & mask;
        if (numStamps[i] === numStamp) continue;
        numStamps[i] = numStamp;
        slots[i] = num;
      } else if (unknownSet !== undefined) {
        if (unknownSet.has(key)) continue;
        unknownSet.add(key);
      } else {
        let dup = false;
        for (let j = 0; j < unknown.length; j++)
          if (unknown[j] === key) {
            dup = true;
            break;
          }
        if (dup) continue;
        unknown.push(key);
        if (unknown.length > 32) unknownSet = new Set(unknown);
      }
      out[n++] = id;
    }
    return (this.guessLength = n);
  }

  /** The decimal-key hash set, emptied (a new stamp), with room for `keys` keys at most half full. */
  private numSlotsFor(keys: number): Int32Array {
    if (this.numSlots.length < 2 * keys || this.numStamp === 0x7fffffff) {
      let size = this.numSlots.length;
      while (size < 2 * keys) size *= 2;
      this.numSlots = new Int32Array(size);
      this.numStamps = new Int32Array(size);
      this.numStamp = 0;
    }
    this.numStamp++;
    return this.numSlots;
  }

  /** `rprecision` of the last {@link guessIds} against the record at `at`: max over gold outputs; NaN without outputs. */
  rprecision(at: number): number {
    const d = this.data;
    const outputs = d[at];
    if (outputs === 0) return Number.NaN;
    const g = this.guess;
    const glen = this.guessLength;
    let best = -Infinity;
    let p = at + 3;
    for (let o = 0; o < outputs; o++) {
      const m = d[p++];
      let v = 0;
      if (m > 0) {
        const stamp = this.nextStamp();
        const mark = this.mark;
        let r = 0;
        for (let j = 0; j < m; j++) {
          const f = d[p + 2 * j];
          if (f >= 0 && mark[f] !== stamp) {
            mark[f] = stamp;
            r++;
          }
        }
        if (r > 0) {
          const top = glen < r ? glen : r;
          let num = 0;
          for (let i = 0; i < top; i++) {
            const id = g[i];
            if (id >= 0 && mark[id] === stamp) num++;
          }
          v = num / r;
        }
        p += 2 * m;
      }
      if (v > best) best = v;
    }
    return best;
  }

  /**
   * `get_rank`'s distinct evidence sets of the record at `at` (outputs with a `provenance` key, distinct
   * by set equality), indexed for {@link evidenceRank}. Returns their number.
   */
  evidenceSets(at: number): number {
    const d = this.data;
    const outputs = d[at];
    const members = this.members;
    members.length = 0;
    // Sets are told apart by their sorted ids: compared directly while few, by a canonical string when many.
    let canon: Set<string> | undefined;
    let sets = 0;
    let p = at + 3;
    const starts = this.starts;
    starts.length = 0;
    for (let o = 0; o < outputs; o++) {
      const m = d[p++];
      if (m < 0) continue;
      const stamp = this.nextStamp();
      const mark = this.mark;
      const from = members.length;
      for (let j = 0; j < m; j++) {
        const id = d[p + 2 * j + 1];
        if (mark[id] !== stamp) {
          mark[id] = stamp;
          members.push(id);
        }
      }
      p += 2 * m;
      const to = members.length;
      const a = members.a;
      sortRange(a, from, to);
      if (canon === undefined && sets === 16) {
        canon = new Set();
        for (let k = 0; k < sets; k++) canon.add(a.slice(starts.a[k], starts.a[k + 1]).join(","));
      }
      let seen = false;
      if (canon !== undefined) {
        const key = a.slice(from, to).join(",");
        if (canon.has(key)) seen = true;
        else canon.add(key);
      } else
        for (let k = 0; k < sets && !seen; k++) {
          const ks = starts.a[k];
          if (starts.a[k + 1] - ks !== to - from) continue;
          let j = 0;
          while (j < to - from && a[ks + j] === a[from + j]) j++;
          seen = j === to - from;
        }
      if (seen) {
        members.length = from;
        continue;
      }
      // starts holds each kept set's start and, after it, the end of the last one.
      starts.length = sets;
      starts.push(from);
      starts.push(to);
      sets++;
    }
    starts.length = sets;
    starts.push(members.length);
    if (this.sizes.length < sets) {
      this.sizes = new Int32Array(sets * 2);
      this.remaining = new Int32Array(sets * 2);
      this.placeholderAt = new Int32Array(sets * 2);
    }
    // For each id, the sets holding it in set order: a linked list built back to front.
    const stamp = this.nextStamp();
    const headStamp = this.headStamp;
    const head = this.head;
    const linkSet = this.linkSet;
    const linkNext = this.linkNext;
    linkSet.length = 0;
    linkNext.length = 0;
    for (let s = sets - 1; s >= 0; s--) {
      this.sizes[s] = starts.a[s + 1] - starts.a[s];
      for (let j = starts.a[s]; j < starts.a[s + 1]; j++) {
        const id = members.a[j];
        linkSet.push(s);
        linkNext.push(headStamp[id] === stamp ? head[id] : -1);
        headStamp[id] = stamp;
        head[id] = linkSet.length - 1;
      }
    }
    this.setCount = sets;
    this.setStamp = stamp;
    return sets;
  }
  private setStamp = 0;

  /**
   * `get_rank` of the last {@link guessIds} against the sets of the last {@link evidenceSets}: walk the
   * guess ids, completing evidence sets. An id found in several sets adds several entries, so the rank
   * can be longer than the guess list (kilt-spec.md §4.3). A set's placeholder is removed when the set
   * gets a new entry (marked removed here, skipped by {@link trueInTop}), so each guess id costs the
   * number of sets holding it, not the length of the rank.
   */
  evidenceRank(): void {
    const g = this.guess;
    const glen = this.guessLength;
    const sets = this.setCount;
    const remaining = this.remaining;
    const placeholderAt = this.placeholderAt;
    remaining.set(this.sizes.subarray(0, sets));
    placeholderAt.fill(-1, 0, sets);
    const headStamp = this.headStamp;
    const head = this.head;
    const linkSet = this.linkSet.a;
    const linkNext = this.linkNext.a;
    const stamp = this.setStamp;
    let rank = this.rank;
    let n = 0;
    for (let i = 0; i < glen; i++) {
      const id = g[i];
      if (id < 0 || headStamp[id] !== stamp) {
        if (n === rank.length) rank = this.growRank(n + 1);
        rank[n++] = RANK_FALSE;
        continue;
      }
      // Guess ids are distinct, so each (id, set) pair is met once: the set still holds the id.
      for (let l = head[id]; l >= 0; l = linkNext[l]) {
        const idx = linkSet[l];
        if (n === rank.length) rank = this.growRank(n + 1);
        const at = placeholderAt[idx];
        if (at >= 0) rank[at] = RANK_REMOVED;
        remaining[idx]--;
        if (remaining[idx] === 0) {
          placeholderAt[idx] = -1;
          rank[n++] = RANK_TRUE;
        } else {
          placeholderAt[idx] = n;
          rank[n++] = idx;
        }
      }
    }
    this.rankLength = n;
  }

  private growRank(need: number): Int32Array<ArrayBuffer> {
    const bigger = new Int32Array(Math.max(this.rank.length * 2, need));
    bigger.set(this.rank);
    this.rank = bigger;
    return bigger;
  }

  /** Number of TRUE entries among the first k of the last {@link evidenceRank} (removed placeholders do not count as places). */
  trueInTop(k: number): number {
    const rank = this.rank;
    const len = this.rankLength;
    let hits = 0;
    let places = 0;
    for (let i = 0; i < len && places < k; i++) {
      const r = rank[i];
      if (r === RANK_REMOVED) continue;
      places++;
      if (r === RANK_TRUE) hits++;
    }
    return hits;
  }
}
