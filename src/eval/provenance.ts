// Provenance metrics of KILT's `eval_retrieval` (kilt-spec.md §4.1–4.4): id lists by rank keys,
// R-precision, the evidence-set rank behind precision/recall/success@k, and the text-based
// answer/entity-in-context metrics. Each function reproduces one official function, quirks included,
// with hash lookups where the official code scans lists (no quadratic cost on long provenance lists).
// Gold provenance is kept compact ({@link GoldProvenance}): key strings interned to integers and each
// record's ids in one shared Int32Array; the sets the metrics need are built when the record is scored
// (each gold record is scored once), in scratch arrays indexed by the interned ids.

import { pyStrip } from "../records/python-str.js";
import type { OutputView, ProvEntry } from "./scan.js";

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

/** Rank entries: TRUE (a completed evidence set), FALSE (a non-evidence id), or a placeholder >= 0 (set index). */
export const RANK_TRUE = -1;
export const RANK_FALSE = -2;
const RANK_REMOVED = -3;

/**
 * The gold provenance of every record, compact: each distinct key string (full keys of `_get_ids_list`,
 * partial keys of `get_rank`) gets an integer, and a record's outputs are encoded in one Int32Array as
 * `[outputs, then per output: count (-1 without a provenance key), then per entry: full id (-1 when a
 * rank key is missing), partial id]`. {@link add} returns the offset of a record's encoding; the
 * scoring methods take it with the guess ids of {@link guessIds}.
 */
export class GoldProvenance {
  private readonly ids = new Map<string, number>();
  private data = new Int32Array(1 << 16);
  private length = 0;
  // Scoring scratch, indexed by interned id; sized on the first score (after all gold is added).
  private mark = new Int32Array(0);
  private stamp = 0;
  private headStamp = new Int32Array(0);
  private head = new Int32Array(0);
  private readonly linkSet = new IntList();
  private readonly linkNext = new IntList();
  private readonly members = new IntList();
  private sizes = new Int32Array(16);
  private setCount = 0;
  private readonly canon = new Set<string>();
  private readonly unknown = new Set<string>();
  private rank = new Int32Array(64);
  private rankLength = 0;
  private remaining = new Int32Array(16);
  private placeholderAt = new Int32Array(16);
  /** Guess ids of the last {@link guessIds} call: interned ids, -1 for ids no gold record has. */
  guess = new Int32Array(64);
  guessLength = 0;

  private intern(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(s, id);
    }
    return id;
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
    this.put(outputs.length);
    for (const o of outputs) {
      if (!o.hasProvenance) {
        this.put(-1);
        continue;
      }
      this.put(o.provenance.length);
      for (const p of o.provenance) {
        const f = fullKey(p, keyIdx);
        this.put(f === null ? -1 : this.intern(f));
        this.put(this.intern(partialKey(p, keyIdx)));
      }
    }
    return at;
  }

  private nextStamp(): number {
    if (this.mark.length < this.ids.size || this.stamp === 0x7fffffff) {
      this.mark = new Int32Array(this.ids.size);
      this.headStamp = new Int32Array(this.ids.size);
      this.head = new Int32Array(this.ids.size);
      this.stamp = 0;
    }
    return ++this.stamp;
  }

  /**
   * `_get_ids_list` of one guess output into {@link guess}: keys of provenance items having every rank
   * key, de-duplicated in order, as interned ids (-1 for a key no gold record has). Returns the count.
   */
  guessIds(output: OutputView, keyIdx: readonly number[]): number {
    let n = 0;
    if (!output.hasProvenance) return (this.guessLength = 0);
    const stamp = this.nextStamp();
    const mark = this.mark;
    const unknown = this.unknown;
    unknown.clear();
    if (this.guess.length < output.provenance.length) this.guess = new Int32Array(output.provenance.length);
    const out = this.guess;
    for (const p of output.provenance) {
      if (!p.object) continue;
      const key = fullKey(p, keyIdx);
      if (key === null) continue;
      const id = this.ids.get(key);
      if (id === undefined) {
        if (unknown.has(key)) continue;
        unknown.add(key);
        out[n++] = -1;
      } else {
        if (mark[id] === stamp) continue;
        mark[id] = stamp;
        out[n++] = id;
      }
    }
    return (this.guessLength = n);
  }

  /** `rprecision` of the last {@link guessIds} against the record at `at`: max over gold outputs; NaN without outputs. */
  rprecision(at: number): number {
    const d = this.data;
    const outputs = d[at];
    if (outputs === 0) return Number.NaN;
    const g = this.guess;
    const glen = this.guessLength;
    let best = -Infinity;
    let p = at + 1;
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
    const canon = this.canon;
    canon.clear();
    let sets = 0;
    let p = at + 1;
    const starts: number[] = [];
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
      const key = members.a.slice(from, members.length).sort().join(",");
      if (canon.has(key)) {
        members.length = from;
        continue;
      }
      canon.add(key);
      starts.push(from);
      sets++;
    }
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
      this.sizes[s] = starts[s + 1] - starts[s];
      for (let j = starts[s]; j < starts[s + 1]; j++) {
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

/**
 * Per-passage flags for the context metrics: whether some normalized gold answer / gold title is a
 * substring of the normalized passage text, for the first `maxK` entries. `normalizedTextOf` gives an
 * entry's normalized text, or undefined when the entry has no `text` (it then gets neither flag).
 */
export function contextFlags(
  provenance: readonly ProvEntry[],
  maxK: number,
  normalizedAnswers: readonly string[],
  normalizedTitles: readonly string[],
  normalizedTextOf: (p: ProvEntry) => string | undefined,
): { answer: Uint8Array; title: Uint8Array; length: number } {
  const n = provenance.length < maxK ? provenance.length : maxK;
  const answer = new Uint8Array(n);
  const title = new Uint8Array(n);
  if (normalizedAnswers.length === 0 && normalizedTitles.length === 0) return { answer, title, length: n };
  for (let i = 0; i < n; i++) {
    const p = provenance[i];
    if (!p.object || !p.hasText) continue;
    const text = normalizedTextOf(p);
    if (text === undefined) continue;
    for (const a of normalizedAnswers) {
      if (text.includes(a)) {
        answer[i] = 1;
        break;
      }
    }
    for (const t of normalizedTitles) {
      if (text.includes(t)) {
        title[i] = 1;
        break;
      }
    }
  }
  return { answer, title, length: n };
}
