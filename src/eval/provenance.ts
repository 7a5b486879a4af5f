// Provenance metrics of KILT's `eval_retrieval` (kilt-spec.md §4.1–4.4): id lists by rank keys,
// R-precision, the evidence-set rank behind precision/recall/success@k, and the text-based
// answer/entity-in-context metrics. Each function reproduces one official function, quirks included.

import { pyStr, pyStrip } from "../records/python-str.js";
import type { Output, Provenance } from "../records/types.js";

/** `"+".join(str(prov[k]).strip() for k in rank_keys)`, or null when a key is missing (`_get_ids_list` skips it). */
function fullKey(prov: Provenance, rankKeys: readonly string[]): string | null {
  if (rankKeys.length === 1) {
    const k = rankKeys[0];
    if (!(k in prov)) return null;
    return pyStrip(pyStr(prov[k]));
  }
  const parts: string[] = [];
  for (const k of rankKeys) {
    if (!(k in prov)) return null;
    parts.push(pyStrip(pyStr(prov[k])));
  }
  return parts.join("+");
}

/** `get_rank`'s evidence-set key: missing keys are dropped from the join instead (a documented quirk). */
function partialKey(prov: Provenance, rankKeys: readonly string[]): string {
  const parts: string[] = [];
  for (const k of rankKeys) if (k in prov) parts.push(pyStrip(pyStr(prov[k])));
  return parts.join("+");
}

/** `_get_ids_list` for one output: keys of provenance having every rank key, de-duplicated in order. */
export function outputIds(output: Output, rankKeys: readonly string[]): string[] {
  const prov = output.provenance;
  if (!Array.isArray(prov)) return [];
  const ids: string[] = [];
  const seen = new Set<string>();
  for (const p of prov) {
    if (p === null || typeof p !== "object") continue;
    const key = fullKey(p, rankKeys);
    if (key === null || seen.has(key)) continue;
    seen.add(key);
    ids.push(key);
  }
  return ids;
}

/** `_get_ids_list` over all outputs (one list per output). */
export function idsPerOutput(outputs: readonly Output[], rankKeys: readonly string[]): string[][] {
  return outputs.map((o) => outputIds(o, rankKeys));
}

/** `_computeRprec(guess_ids, gold_ids)`. */
export function rprecisionOne(guessIds: readonly string[], goldIds: readonly string[]): number {
  const r = goldIds.length;
  if (r === 0) return 0;
  let num = 0;
  const top = guessIds.length < r ? guessIds.length : r;
  for (let i = 0; i < top; i++) if (goldIds.includes(guessIds[i])) num++;
  return num / r;
}

/** `rprecision`: max over gold outputs; NaN stands for Python's `max([])` (a gold record without outputs). */
export function rprecision(guessIds: readonly string[], goldIdLists: readonly string[][]): number {
  if (goldIdLists.length === 0) return Number.NaN;
  let best = -Infinity;
  for (const g of goldIdLists) {
    const v = rprecisionOne(guessIds, g);
    if (v > best) best = v;
  }
  return best;
}

/** The distinct gold evidence sets of `get_rank` (outputs with a `provenance` key, set equality). */
export function evidenceSets(outputs: readonly Output[], rankKeys: readonly string[]): string[][] {
  const sets: string[][] = [];
  const seen = new Set<string>();
  for (const o of outputs) {
    if (!o || typeof o !== "object" || !("provenance" in o)) continue;
    const members = new Set<string>();
    const prov = Array.isArray(o.provenance) ? o.provenance : [];
    for (const p of prov) if (p !== null && typeof p === "object") members.add(partialKey(p, rankKeys));
    const list = [...members];
    const canon = [...list].sort().join("\u0000");
    if (seen.has(canon)) continue;
    seen.add(canon);
    sets.push(list);
  }
  return sets;
}

/** Rank entries: TRUE (a completed evidence set), FALSE (a non-evidence id), or a placeholder >= 0 (set index). */
export const RANK_TRUE = -1;
export const RANK_FALSE = -2;

/**
 * `get_rank`: walk the guess ids, completing evidence sets. An id found in several sets adds several
 * entries, so the rank can be longer than the guess list (kilt-spec.md §4.3).
 */
export function evidenceRank(guessIds: readonly string[], sets: readonly string[][]): number[] {
  if (guessIds.length === 0) return [];
  const remaining = sets.map((s) => new Set(s));
  const rank: number[] = [];
  for (const id of guessIds) {
    let found = false;
    for (let idx = 0; idx < remaining.length; idx++) {
      const set = remaining[idx];
      if (!set.has(id)) continue;
      found = true;
      const at = rank.indexOf(idx);
      if (at !== -1) rank.splice(at, 1);
      set.delete(id);
      rank.push(set.size === 0 ? RANK_TRUE : idx);
    }
    if (!found) rank.push(RANK_FALSE);
  }
  return rank;
}

/** Number of TRUE entries among the first k of a rank. */
export function trueInTop(rank: readonly number[], k: number): number {
  let n = 0;
  const top = rank.length < k ? rank.length : k;
  for (let i = 0; i < top; i++) if (rank[i] === RANK_TRUE) n++;
  return n;
}

/**
 * Per-passage flags for the context metrics: whether some normalized gold answer / gold title is a
 * substring of the normalized passage text, for the first `maxK` entries. `normalizedTextOf` gives an
 * entry's normalized text, or undefined when the entry has no `text` (it then gets neither flag).
 */
export function contextFlags(
  provenance: readonly Provenance[],
  maxK: number,
  normalizedAnswers: readonly string[],
  normalizedTitles: readonly string[],
  normalizedTextOf: (p: Provenance) => string | undefined,
): { answer: Uint8Array; title: Uint8Array; length: number } {
  const n = provenance.length < maxK ? provenance.length : maxK;
  const answer = new Uint8Array(n);
  const title = new Uint8Array(n);
  if (normalizedAnswers.length === 0 && normalizedTitles.length === 0) return { answer, title, length: n };
  for (let i = 0; i < n; i++) {
    const p = provenance[i];
    if (p === null || typeof p !== "object") continue;
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
