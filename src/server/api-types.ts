// The JSON shapes the run browser's endpoints answer with, shared by the server and the web explorer:
// the explorer (web/, its own tsc project) imports these types from the built declarations
// (dist/src/server/api-types.d.ts, web/tsconfig.json "paths"), so both ends use one definition.

import type { Provenance } from "../records/types.js";

/** The record filters of `GET /api/runs/:name/records`. */
export const FILTERS = ["all", "right", "wrong", "no-evidence"] as const;
/** One of {@link FILTERS}: every record, right or wrong answers, or records without gold evidence retrieved. */
export type RecordFilter = (typeof FILTERS)[number];

/** A provenance item as shown: gold evidence marked, text from the store when the run has none. */
export interface Passage extends Provenance {
  gold?: boolean;
}

/** One record of a run as `GET /api/runs/:name/records` gives it. */
export interface RunRecordView {
  index: number;
  id: string;
  input: string;
  gold: { answers: string[]; provenance: Passage[] };
  prediction: { answer: string | null; provenance: Passage[] };
  scores: Record<string, number>;
  /** The answer's exact match (em, else accuracy) is 1; null when the run has no answer scores. */
  right: boolean | null;
  /** R-precision > 0: some gold evidence is among the top R retrieved; null without retrieval scores. */
  evidence: boolean | null;
}
