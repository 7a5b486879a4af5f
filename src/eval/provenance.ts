// Provenance metrics of KILT's `eval_retrieval` (kilt-spec.md §4.1–4.4): id lists by rank keys,
// R-precision, the evidence-set rank behind precision/recall/success@k, and the text-based
// answer/entity-in-context metrics. Each function reproduces one official function, quirks included,
// with hash lookups where the official code scans lists (no quadratic cost on long provenance lists).

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
  const parts: string[] = [];
  for (const i of keyIdx) {
    const v = p.vals[i];
    if (v !== undefined) parts.push(pyStrip(v.str));
  }
  return parts.join("+");
}

/** `_get_ids_list` for one output: keys of provenance having every rank key, de-duplicated in order. */
export function outputIds(output: OutputView, keyIdx: readonly number[]): string[] {
  const ids: string[] = [];
  if (!output.hasProvenance) return ids;
  const seen = new Set<string>();
  for (const p of output.provenance) {
    if (!p.object) continue;
    const key = fullKey(p, keyIdx);
    if (key === null || seen.has(key)) continue;
    seen.add(key);
    ids.push(key);
  }
  return ids;
}

/** A gold output's id list with a set for membership (`_computeRprec` tests `in gold_ids`). */
export interface GoldIds {
  list: string[];
  set: Set<string>;
}

/** `_get_ids_list` over all gold outputs (one list per output). */
export function goldIdsPerOutput(outputs: readonly OutputView[], keyIdx: readonly number[]): GoldIds[] {
  return outputs.map((o) => {
    const list = outputIds(o, keyIdx);
    return { list, set: new Set(list) };
  });
}

/** `_computeRprec(guess_ids, gold_ids)`. */
export function rprecisionOne(guessIds: readonly string[], gold: GoldIds): number {
  const r = gold.list.length;
  if (r === 0) return 0;
  let num = 0;
  const top = guessIds.length < r ? guessIds.length : r;
  for (let i = 0; i < top; i++) if (gold.set.has(guessIds[i])) num++;
  return num / r;
}

/** `rprecision`: max over gold outputs; NaN stands for Python's `max([])` (a gold record without outputs). */
export function rprecision(guessIds: readonly string[], gold: readonly GoldIds[]): number {
  if (gold.length === 0) return Number.NaN;
  let best = -Infinity;
  for (const g of gold) {
    const v = rprecisionOne(guessIds, g);
    if (v > best) best = v;
  }
  return best;
}

/** The distinct gold evidence sets of `get_rank`, indexed for the rank walk. */
export interface EvidenceSets {
  /** Number of distinct sets (`num_distinct_evidence_sets`). */
  count: number;
  /** Size of each set. */
  sizes: Int32Array;
  /** For each id, the sets holding it, in set order. */
  setsOf: Map<string, number[]>;
}

/** `get_rank`'s evidence sets (outputs with a `provenance` key, distinct by set equality). */
export function evidenceSets(outputs: readonly OutputView[], keyIdx: readonly number[]): EvidenceSets {
  const lists: string[][] = [];
  const seen = new Set<string>();
  for (const o of outputs) {
    if (!o.object || !o.hasProvenance) continue;
    const members = new Set<string>();
    for (const p of o.provenance) if (p.object) members.add(partialKey(p, keyIdx));
    const list = [...members];
    const canon = JSON.stringify([...list].sort());
    if (seen.has(canon)) continue;
    seen.add(canon);
    lists.push(list);
  }
  const setsOf = new Map<string, number[]>();
  lists.forEach((list, idx) => {
    for (const id of list) {
      const at = setsOf.get(id);
      if (at) at.push(idx);
      else setsOf.set(id, [idx]);
    }
  });
  return { count: lists.length, sizes: Int32Array.from(lists, (l) => l.length), setsOf };
}

/** Rank entries: TRUE (a completed evidence set), FALSE (a non-evidence id), or a placeholder >= 0 (set index). */
export const RANK_TRUE = -1;
export const RANK_FALSE = -2;
const RANK_REMOVED = -3;

/**
 * `get_rank`: walk the guess ids, completing evidence sets. An id found in several sets adds several
 * entries, so the rank can be longer than the guess list (kilt-spec.md §4.3). A set's placeholder is
 * removed when the set gets a new entry (marked removed here, skipped by `trueInTop`), so each guess id
 * costs the number of sets holding it, not the length of the rank.
 */
export function evidenceRank(guessIds: readonly string[], ev: EvidenceSets): Int32Array {
  if (guessIds.length === 0) return new Int32Array(0);
  let rank = new Int32Array(guessIds.length + 8);
  let n = 0;
  const remaining = ev.sizes.slice();
  const placeholderAt = new Int32Array(ev.count).fill(-1);
  for (const id of guessIds) {
    const sets = ev.setsOf.get(id);
    const need = sets ? sets.length : 1;
    if (n + need > rank.length) {
      const bigger = new Int32Array(Math.max(rank.length * 2, n + need));
      bigger.set(rank.subarray(0, n));
      rank = bigger;
    }
    if (!sets) {
      rank[n++] = RANK_FALSE;
      continue;
    }
    // Guess ids are distinct, so each (id, set) pair is met once: the set still holds the id.
    for (const idx of sets) {
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
  return rank.subarray(0, n);
}

/** Number of TRUE entries among the first k (removed placeholders do not count as places). */
export function trueInTop(rank: Int32Array, k: number): number {
  let hits = 0;
  let places = 0;
  for (let i = 0; i < rank.length && places < k; i++) {
    const r = rank[i];
    if (r === RANK_REMOVED) continue;
    places++;
    if (r === RANK_TRUE) hits++;
  }
  return hits;
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
