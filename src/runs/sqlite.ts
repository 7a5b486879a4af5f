// The embedded runs database: one SQLite file (`runs.sqlite`) in a directory, through better-sqlite3.
// Run metadata is a row of `runs` (JSON columns for the summary, config and files); per-query scores
// are stored column-wise, one little-endian float64 BLOB per run and metric, with the query ids once
// per run, so a 5,600-query run with 40 metrics is about 2 MB and reads back in milliseconds.
// Several processes may write one database at once (parallel `runs add`): each waits for the write lock
// up to RUNS_BUSY_TIMEOUT_MS (writes take it at their start, BEGIN IMMEDIATE, so none fails half-way
// with "database is locked"); every SQLite error names the database file.

import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { checkRunName, type ListFilter, type NewRun, type QueryScores, type RunInfo, type RunsStore } from "./types.js";

/** The runs database's file in its directory. */
export const RUNS_FILE = "runs.sqlite";
const SCHEMA_VERSION = "1";
/** How long a writer waits for another process's write lock before giving up, in ms. */
export const RUNS_BUSY_TIMEOUT_MS = 60_000;

/** `e` as an error naming the database file (SQLite's own messages name none). */
function naming(file: string, e: unknown): Error {
  const message = e instanceof Error ? e.message : String(e);
  if (message.startsWith(file)) return e as Error;
  const hint = /not a database|malformed/.test(message) ? " (damaged, or not a tartan runs database)" : /disk I\/O/i.test(message) ? " (is the disk full?)" : "";
  return new Error(`${file}: ${message}${hint}`);
}

interface RunRow {
  id: number;
  name: string;
  system: string | null;
  dataset: string | null;
  created: string;
  notes: string | null;
  queries: number;
  gold: string;
  guess: string;
  summary: string;
  official: string;
  config: string;
}

function toInfo(r: RunRow): RunInfo {
  return {
    name: r.name,
    ...(r.system ? { system: r.system } : {}),
    dataset: r.dataset,
    created: r.created,
    notes: r.notes,
    queries: r.queries,
    gold: JSON.parse(r.gold),
    guess: JSON.parse(r.guess),
    summary: JSON.parse(r.summary),
    official: JSON.parse(r.official),
    config: JSON.parse(r.config),
  };
}

function toBlob(values: Float64Array): Buffer {
  const b = Buffer.alloc(values.length * 8);
  for (let i = 0; i < values.length; i++) b.writeDoubleLE(values[i], i * 8);
  return b;
}

function fromBlob(b: Buffer): Float64Array {
  const out = new Float64Array(b.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = b.readDoubleLE(i * 8);
  return out;
}

/** The embedded runs database (SQLite in a directory). */
export class SqliteRunsStore implements RunsStore {
  private constructor(
    readonly location: string,
    private readonly db: Database.Database,
  ) {}

  /** Opens (creating when missing) the store in `dir`. */
  static open(dir: string): SqliteRunsStore {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, RUNS_FILE);
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { timeout: RUNS_BUSY_TIMEOUT_MS });
      SqliteRunsStore.prepare(db, file);
    } catch (e) {
      if (db?.open) db.close();
      throw naming(file, e);
    }
    return new SqliteRunsStore(dir, db);
  }

  /** Sets the database up (tables, schema version); several processes may do so at once. */
  private static prepare(db: Database.Database, file: string): void {
    db.pragma("journal_mode = WAL");
    db.pragma("foreign_keys = ON");
    db.transaction(() => {
      db.exec(`
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS runs (
          id INTEGER PRIMARY KEY,
          name TEXT NOT NULL UNIQUE,
          system TEXT,
          dataset TEXT,
          created TEXT NOT NULL,
          notes TEXT,
          queries INTEGER NOT NULL,
          gold TEXT NOT NULL,
          guess TEXT NOT NULL,
          summary TEXT NOT NULL,
          official TEXT NOT NULL,
          config TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS run_ids (run INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE, ids TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS run_scores (
          run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
          metric TEXT NOT NULL,
          position INTEGER NOT NULL,
          scores BLOB NOT NULL,
          PRIMARY KEY (run, metric)
        );
      `);
      // stores made before runs had a system column get it (NULL: the run's name)
      const columns = (db.prepare("PRAGMA table_info(runs)").all() as { name: string }[]).map((c) => c.name);
      if (!columns.includes("system")) db.exec("ALTER TABLE runs ADD COLUMN system TEXT");
      const version = db.prepare("SELECT value FROM meta WHERE key = 'schema'").pluck().get() as string | undefined;
      if (version === undefined) db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?)").run(SCHEMA_VERSION);
      else if (version !== SCHEMA_VERSION) throw new Error(`${file}: runs database schema ${version}, this tartan reads ${SCHEMA_VERSION}`);
    }).immediate();
  }

  /** The database file. */
  private get file(): string {
    return join(this.location, RUNS_FILE);
  }

  async add(run: NewRun, options: { replace?: boolean } = {}): Promise<RunInfo> {
    checkRunName(run.name);
    const { scores, ...info } = run;
    for (const [m, v] of Object.entries(scores.metrics))
      if (v.length !== scores.ids.length) throw new Error(`run ${run.name}: metric ${m} has ${v.length} scores for ${scores.ids.length} queries`);
    const insert = this.db.transaction(() => {
      const existing = this.db.prepare("SELECT id FROM runs WHERE name = ?").pluck().get(run.name) as number | undefined;
      if (existing !== undefined) {
        if (!options.replace) throw new Error(`a run named "${run.name}" is already recorded in ${this.location} (remove it first, or choose another --name)`);
        this.db.prepare("DELETE FROM runs WHERE id = ?").run(existing);
      }
      const id = this.db
        .prepare(
          `INSERT INTO runs (name, system, dataset, created, notes, queries, gold, guess, summary, official, config)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          info.name,
          info.system ?? null,
          info.dataset,
          info.created,
          info.notes,
          info.queries,
          JSON.stringify(info.gold),
          JSON.stringify(info.guess),
          JSON.stringify(info.summary),
          JSON.stringify(info.official),
          JSON.stringify(info.config),
        ).lastInsertRowid;
      this.db.prepare("INSERT INTO run_ids (run, ids) VALUES (?, ?)").run(id, JSON.stringify(scores.ids));
      const put = this.db.prepare("INSERT INTO run_scores (run, metric, position, scores) VALUES (?, ?, ?, ?)");
      Object.entries(scores.metrics).forEach(([m, v], i) => put.run(id, m, i, toBlob(v)));
    });
    try {
      insert.immediate();
    } catch (e) {
      if (e instanceof Error && e.message.startsWith("a run named")) throw e;
      throw naming(this.file, e);
    }
    return info;
  }

  async list(filter: ListFilter = {}): Promise<RunInfo[]> {
    const rows = (
      filter.dataset === undefined
        ? this.db.prepare("SELECT * FROM runs ORDER BY created, id").all()
        : this.db.prepare("SELECT * FROM runs WHERE dataset = ? ORDER BY created, id").all(filter.dataset)
    ) as RunRow[];
    return rows.map(toInfo);
  }

  async get(name: string): Promise<RunInfo | undefined> {
    const row = this.db.prepare("SELECT * FROM runs WHERE name = ?").get(name) as RunRow | undefined;
    return row ? toInfo(row) : undefined;
  }

  async scores(name: string): Promise<QueryScores> {
    const id = this.db.prepare("SELECT id FROM runs WHERE name = ?").pluck().get(name) as number | undefined;
    if (id === undefined) throw new Error(`no run named "${name}" in ${this.location}`);
    const ids = JSON.parse(this.db.prepare("SELECT ids FROM run_ids WHERE run = ?").pluck().get(id) as string) as string[];
    const metrics: Record<string, Float64Array> = {};
    const rows = this.db.prepare("SELECT metric, scores FROM run_scores WHERE run = ? ORDER BY position").all(id) as { metric: string; scores: Buffer }[];
    for (const r of rows) metrics[r.metric] = fromBlob(r.scores);
    return { ids, metrics };
  }

  async remove(name: string): Promise<boolean> {
    return this.db.prepare("DELETE FROM runs WHERE name = ?").run(name).changes > 0;
  }

  /** Closes the database. */
  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
