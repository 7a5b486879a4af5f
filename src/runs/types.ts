// The runs database's interface: what a recorded run is and what every backend (the embedded SQLite
// store here; others such as ClickHouse plug in through src/runs/open.ts) must do. Callers only ever
// see `RunsStore`, so the CLI, the leaderboard and the HTTP server work with any backend.

import type { QueryScores } from "../compare/scores.js";

/** One input file of a run, as it was when the run was recorded. */
export interface RunFile {
  path: string;
  /** sha256 of the file's bytes, hex. */
  sha256: string;
  bytes: number;
}

/** What made the run: enough to reproduce or at least to tell two runs apart. */
export interface RunConfig {
  /** tartan's version (package.json) when the run was recorded. */
  tartan: string;
  /** `git rev-parse HEAD` of the working directory, when it is a git checkout. */
  gitCommit: string | null;
  /** The evaluator settings the scores come from. */
  eval: { ks: number[]; rankKeys: string[] };
  /** Manifests of the indexes used (index.json of each `--index` directory), as found. */
  indexes: { dir: string; manifest: unknown }[];
  /** Reader / pipeline settings (a PIPELINE.json or reader meta), as given. */
  reader: unknown;
  /** Anything else the caller recorded. */
  extra?: Record<string, unknown>;
}

/** A run without its per-query scores (what lists and leaderboards need). */
export interface RunInfo {
  name: string;
  /** The system the run belongs to (a leaderboard row across datasets); default: the run's name. */
  system?: string;
  /** Catalogue name of the gold file's dataset ("hotpotqa", "squad", …), or null when not known. */
  dataset: string | null;
  /** ISO 8601, UTC. */
  created: string;
  notes: string | null;
  /** Gold records scored. */
  queries: number;
  gold: RunFile;
  guess: RunFile;
  /** Mean of every metric (flattened names, see src/compare/scores.ts), equal to the evaluator's summary. */
  summary: Record<string, number>;
  /** The evaluator's own result sections, as `tartan eval --json` prints them. */
  official: unknown;
  config: RunConfig;
}

export type { QueryScores };

/** A run to record: its info plus its per-query scores. */
export interface NewRun extends RunInfo {
  scores: QueryScores;
}

/** Which runs {@link RunsStore.list} returns. */
export interface ListFilter {
  dataset?: string;
}

/** The runs database behind one interface (embedded SQLite, or a server backend). */
export interface RunsStore {
  /** Where the store lives (a directory, or a URL for server backends). */
  readonly location: string;
  /** Records a run; a run of the same name is an error unless `replace`. */
  add(run: NewRun, options?: { replace?: boolean }): Promise<RunInfo>;
  /** All runs (optionally of one dataset), oldest first. */
  list(filter?: ListFilter): Promise<RunInfo[]>;
  /** One run's info, or undefined. */
  get(name: string): Promise<RunInfo | undefined>;
  /** One run's per-query scores (throws when there is no such run). */
  scores(name: string): Promise<QueryScores>;
  /** Deletes a run; false when there was none of that name. */
  remove(name: string): Promise<boolean>;
  /** Closes the store. */
  close(): Promise<void>;
}

/** A run name: printable, no path separators (it names files on export). */
export function checkRunName(name: string): string {
  if (!/^[\p{L}\p{N}][\p{L}\p{N} ._+@:=()-]{0,199}$/u.test(name))
    throw new Error(`run name "${name}" must start with a letter or digit and hold only letters, digits, spaces and . _ + @ : = ( ) -`);
  return name;
}
