// The reader interface: a KILT record plus the passages retrieved for it become an answer with the
// provenance that supports it. Every reader (extractive, generative, task-specific) implements it.

import type { KiltRecord, Provenance } from "../records/types.js";

/** A retrieved passage handed to a reader: its text, its KILT provenance, its retrieval rank and score. */
export interface ReaderPassage {
  text: string;
  provenance: Provenance;
  /** Retrieval score (higher is better); absent for closed-book or gold passages. */
  score?: number;
}

/** A reader's answer. `provenance` lists the passages (or spans) it used, best first; empty when closed-book. */
export interface ReaderAnswer {
  answer: string;
  provenance: Provenance[];
  /** The reader's confidence (higher is better), comparable within one reader. */
  score?: number;
  /** Reader-specific details (span offsets, cited passage numbers, raw model output…). */
  meta?: Record<string, unknown>;
}

/** A reader: answers a record from its passages, with provenance. */
export interface Reader {
  readonly name: string;
  /** Answers one record from its passages (none for a closed-book reader). */
  read(record: KiltRecord, passages: readonly ReaderPassage[]): Promise<ReaderAnswer>;
  /** Many records at once; readers may batch or run concurrently. Default: one by one. */
  readBatch?(items: readonly { record: KiltRecord; passages: readonly ReaderPassage[] }[]): Promise<ReaderAnswer[]>;
  /** Releases what the reader holds (models, connections). */
  close?(): Promise<void>;
}

/** The KILT guess record for an answer: one output holding the answer and its provenance. */
export function answerRecord(record: KiltRecord, a: ReaderAnswer): KiltRecord {
  const output: KiltRecord["output"][number] = { answer: a.answer, provenance: a.provenance };
  if (a.meta) output.meta = a.meta;
  return { id: record.id, input: record.input, output: [output] };
}
