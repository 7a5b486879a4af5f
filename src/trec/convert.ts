// KILT ↔ TREC. Gold records become qrels: one line `qid 0 docid 1` per distinct provenance unit of
// the record's outputs (docid = the unit's rank keys joined by "+", as `tartan retrieve --format trec`
// writes them; qid = the record id with whitespace as "_"). KILT scores a record's retrieval by its
// evidence sets (all units of one output's provenance); qrels are flat, so trec_eval's measures see the
// union of the sets as the relevant units. TREC runs become KILT guesses: one output per query whose
// provenance is the ranking in trec_eval's order (score descending, ties by docno descending), so
// runs from Pyserini, Anserini or ranx are scored with KILT's metrics.

import { readJsonl } from "../records/jsonl.js";
import type { KiltRecord, Provenance } from "../records/types.js";
import { trecId } from "../retrieval/pool.js";
import { rankEntries, type TrecRun } from "./files.js";

/** A TREC query id for a KILT id (whitespace is not allowed inside TREC fields). */
export function trecQid(id: unknown): string {
  return String(id).trim().replace(/\s+/gu, "_");
}

/** What converting KILT gold to qrels counted. */
export interface QrelsStats {
  records: number;
  /** Records with at least one relevant unit. */
  judged: number;
  lines: number;
  /** Provenance entries without every rank key (left out). */
  incomplete: number;
}

/** Qrels lines for a KILT gold file (see the module comment). */
export async function qrelsFromGold(gold: string, rankKeys: readonly string[]): Promise<{ lines: string[]; stats: QrelsStats }> {
  const lines: string[] = [];
  const stats: QrelsStats = { records: 0, judged: 0, lines: 0, incomplete: 0 };
  const seenQids = new Map<string, number>();
  for await (const { value, line } of readJsonl<KiltRecord>(gold)) {
    stats.records++;
    if (value.id === undefined || value.id === null) throw new Error(`${gold}:${line}: record without id`);
    const qid = trecQid(value.id);
    if (seenQids.has(qid)) throw new Error(`${gold}:${line}: id ${qid} again (first on line ${seenQids.get(qid)}): qrels need unique query ids`);
    seenQids.set(qid, line);
    const units = new Set<string>();
    for (const output of Array.isArray(value.output) ? value.output : [])
      for (const p of Array.isArray(output?.provenance) ? output.provenance : []) {
        const doc = trecId(p as unknown as Record<string, unknown>, rankKeys);
        if (doc === null) stats.incomplete++;
        else units.add(doc);
      }
    if (units.size > 0) stats.judged++;
    for (const doc of units) lines.push(`${qid} 0 ${doc} 1`);
  }
  stats.lines = lines.length;
  return { lines, stats };
}

const INTEGER_KEYS = new Set(["start_paragraph_id", "end_paragraph_id", "start_character", "end_character"]);

/** Provenance from a docid made of these keys (integer fields as numbers, wikipedia_id as a string). */
export function provenanceOf(docno: string, keys: readonly string[]): Provenance {
  const parts = docno.split("+");
  if (parts.length !== keys.length) throw new Error(`document id "${docno}" has ${parts.length} part(s) for ${keys.length} key(s) (${keys.join("+")})`);
  const p: Record<string, unknown> = {};
  keys.forEach((k, i) => {
    const v = parts[i];
    p[k] = INTEGER_KEYS.has(k) && /^-?\d+$/u.test(v) ? Number(v) : v;
  });
  return p as Provenance;
}

/** Options of converting a TREC run to KILT guesses. */
export interface RunToKiltOptions {
  /** Rank keys the docids are made of; default wikipedia_id. */
  keys?: string[];
  /** Keep at most this many documents per query. */
  topK?: number;
  /** Gold/task records: guesses come in their order with their ids (and an empty ranking where the run has none). */
  gold?: string;
}

/** KILT guesses for a TREC run (see the module comment). */
export async function runToKilt(run: TrecRun, options: RunToKiltOptions = {}): Promise<KiltRecord[]> {
  const keys = options.keys ?? ["wikipedia_id"];
  const guess = (id: unknown, qid: string): KiltRecord => {
    const entries = rankEntries(run.queries.get(qid) ?? []);
    const kept = options.topK ? entries.slice(0, options.topK) : entries;
    const provenance = kept.map((e) => {
      try {
        return { ...provenanceOf(e.docno, keys), score: e.score };
      } catch (err) {
        throw new Error(`query ${qid}: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
    return { id: id as KiltRecord["id"], output: [{ provenance }] } as KiltRecord;
  };
  if (!options.gold) return [...run.queries.keys()].map((qid) => guess(qid, qid));
  const out: KiltRecord[] = [];
  for await (const { value } of readJsonl<KiltRecord>(options.gold)) out.push(guess(value.id, trecQid(value.id)));
  return out;
}
