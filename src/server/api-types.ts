// The JSON shapes the server's endpoints answer with, shared by the route handlers and the web
// explorer: each handler builds its answer `satisfies` one of these types (so a changed answer fails
// type-checking), and the explorer (web/, its own tsc project) imports them from the built declarations
// (dist/src/server/api-types.d.ts, web/tsconfig.json "paths"), so both ends use one definition.
// scripts/api-schemas.mjs generates the OpenAPI document's JSON Schemas from these types
// (src/server/api-schemas.ts): change a type here, then run `npm run api-schemas`.

import type { CompareResult, Comparison } from "../compare/compare.js";
import type { Interval } from "../compare/resampling.js";
import type { EvalResult, PerQueryRow } from "../eval/evaluate.js";
import type { Problem } from "../eval/problems.js";
import type { Anchor, Provenance } from "../records/types.js";
import type { RunConfig } from "../runs/types.js";
import type { ErrorBody } from "./errors.js";

export type { Anchor, Comparison, CompareResult, ErrorBody, Interval, Provenance };

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

/** One loaded index as `GET /api/health` lists it. */
export interface IndexInfo {
  name: string;
  kind: string;
  unit: string;
  units: number;
  /** Whether the index answers text queries (false: a dense index built from vectors with no encoder; give query vectors). */
  text: boolean;
}

/** `GET /api/health`: what the server has loaded. */
export interface HealthAnswer {
  status: "ok";
  version: string;
  /** The knowledge source's page count, or null without one. */
  ks: { pages: number } | null;
  indexes: IndexInfo[];
  /** Whether a data directory (dataset gold files for `POST /api/eval`) is loaded. */
  data: boolean;
  /** Recorded runs, or null without a runs database. */
  runs: number | null;
  /** The named rerankers a search may choose (`reranker`), in the order the server was started with them. */
  rerankers: string[];
}

/** A knowledge-source page as `GET /api/pages/:id` and `GET /api/pages?title=` give it. */
export interface PageView {
  wikipedia_id: string;
  wikipedia_title: string;
  /** Paragraphs; text[0] is the title line. */
  text: string[];
  anchors: Anchor[];
  /** Comma-separated category names, or null. */
  categories: string | null;
  url: string | null;
}

/** `GET /api/provenance`: the text of a provenance span. */
export interface ProvenanceTextAnswer {
  wikipedia_id: string;
  wikipedia_title: string;
  start_paragraph_id: number;
  end_paragraph_id: number | undefined;
  start_character: number | undefined;
  end_character: number | undefined;
  text: string;
}

/** One search hit: its KILT provenance, text and the matched query words. */
export interface SearchHit {
  rank: number;
  score: number;
  provenance: Provenance;
  text: string;
  /** `[start, end)` UTF-16 offsets of the matched query words in `text`. */
  highlights: [number, number][];
}

/** `GET /api/search`: one query's hits. */
export interface SearchAnswer {
  query: string;
  index: string;
  kind: string;
  unit: string;
  k: number;
  /** The reranker the request chose (`reranker`: one of the server's names, or none); absent when it chose none. */
  reranker?: string;
  hits: SearchHit[];
}

/** `POST /api/search`: each query's hits, in the order asked. */
export interface BatchSearchAnswer {
  index: string;
  kind: string;
  unit: string;
  k: number;
  /** The reranker the request chose (`reranker`: one of the server's names, or none); absent when it chose none. */
  reranker?: string;
  results: { query: string; hits: SearchHit[] }[];
}

/** `POST /api/eval`: the official JSON, the counts and options, the problems and per-query scores. */
export interface EvalAnswer {
  result: Record<string, unknown>;
  counts: EvalResult["counts"];
  options: EvalResult["options"];
  /** Problems, files named by part (`gold`, `predictions`) or dataset and split. */
  problems: Problem[];
  /** Null when the request asked `per_query=false`. */
  per_query: PerQueryRow[] | null;
}

/** `POST /api/eval` answering 422 because nothing was scored (malformed, swapped or empty inputs): the reason and every problem. */
export interface EvalRefusal extends ErrorBody {
  status: 422;
  problems: Problem[];
}

/** A recorded run as the API lists it: no local file paths, the metrics the explorer shows. */
export interface RunView {
  name: string;
  dataset: string | null;
  /** ISO 8601, UTC. */
  created: string;
  notes: string | null;
  queries: number;
  summary: Record<string, number>;
  metrics: string[];
  official: unknown;
  /** The recorded settings without local paths. */
  config: Pick<RunConfig, "tartan" | "gitCommit" | "eval">;
}

/** `GET /api/runs`. */
export interface RunsAnswer {
  runs: RunView[];
}

/** `GET /api/runs/:name`. */
export interface RunAnswer {
  run: RunView;
}

/** `GET /api/runs/:name/records`: one page of a run's records under a filter and a search, and each filter's count. */
export interface RecordsAnswer {
  run: string;
  filter: RecordFilter;
  /** The search within the run (`q`: input, id or answers holding it, ignoring case), or null. */
  q: string | null;
  offset: number;
  limit: number;
  /** Records under the filter (and the search). */
  total: number;
  /** Each filter's records (under the search). */
  counts: Record<RecordFilter, number>;
  warnings: string[];
  records: RunRecordView[];
}

/** A record the two runs of `GET /api/compare` score differently. */
export interface Disagreement {
  id: string;
  input: string;
  a: { answer: string | null; score: number };
  b: { answer: string | null; score: number };
}

/** `GET /api/compare`: two runs' statistics, per-query differences and the records they disagree on. */
export interface CompareAnswer {
  metric: string;
  /** The metrics both runs have. */
  metrics: string[];
  comparison: CompareResult;
  /** Per-query differences (b − a) of `metric`, in the baseline's query order. */
  differences: number[];
  disagreements: { total: number; records: Disagreement[] };
}

/** One system's row of a leaderboard dataset: its latest run and each metric's mean and interval. */
export interface LeaderboardRow {
  system: string;
  /** The run's name. */
  name: string;
  queries: number | null;
  created: string | null;
  values: Record<string, number | null>;
  intervals: Record<string, Interval | null>;
}

/** `GET /api/leaderboard`: per dataset, each system's row, best first. */
export interface LeaderboardAnswer {
  settings: { samples: number; seed: number; level: number };
  datasets: { dataset: string; metrics: string[]; runs: LeaderboardRow[] }[];
}
