// The reader interface: a KILT record plus the passages retrieved for it become an answer with the
// provenance that supports it. Every reader (extractive, generative, task-specific) implements it.

import type { KiltRecord, Provenance } from "../records/types.js";
import type { Descriptor } from "../util/registry.js";

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

/** What a reader is opened with (each kind reads what it needs). */
export interface OpenReaderOptions {
  /** extractive and slot-filling: a model file from `tartan reader train`; onnx: a local ONNX QA model directory; generative: the model name. */
  model?: string;
  /** generative: the OpenAI-compatible endpoint (else TARTAN_OPENAI_BASE_URL / OPENAI_BASE_URL). */
  baseUrl?: string;
}

/** An option a reader cannot open without, and what it is (for the error that names it). */
export interface ReaderNeed {
  /** The key in {@link OpenReaderOptions}. */
  readonly option: keyof OpenReaderOptions;
  /** The flag that gives it on the command line ("--model"). */
  readonly flag: string;
  /** What it is ("a model file from tartan reader train"). */
  readonly what: string;
}

/** A reader kind as `tartan run --reader` names it: its name, version, what it needs and how it opens. */
export interface ReaderDescriptor extends Descriptor {
  /** One line on what it answers with. */
  readonly summary: string;
  /** Options it cannot open without; `openReader` refuses naming the first one missing. */
  readonly needs?: readonly ReaderNeed[];
  /** Opens the reader (its needs are checked before). */
  open(options: OpenReaderOptions): Reader | Promise<Reader>;
}

/** The KILT guess record for an answer: one output holding the answer and its provenance. */
export function answerRecord(record: KiltRecord, a: ReaderAnswer): KiltRecord {
  const output: KiltRecord["output"][number] = { answer: a.answer, provenance: a.provenance };
  if (a.meta) output.meta = a.meta;
  return { id: record.id, input: record.input, output: [output] };
}
