// The runs database on ClickHouse (`--runs clickhouse://host:port/db[/name]?cluster=C`): the RunsStore
// of src/runs, so a team shares one leaderboard. Tables (a run's rows on one shard: FNV-1a of its name):
//   <name>_runs_local   (name, version, deleted, dataset, created, notes, queries, info JSON, system)
//   <name>_scores_local (run, version, ids JSON, metrics JSON, scores: base64 of little-endian float64s)
// Rows are never updated: adding, replacing and removing append a row with a newer version (removal is
// a tombstone), and readers take each name's newest version, so no mutation is needed. Per-query scores
// travel as bytes, so they read back bit for bit. `system` (the leaderboard row; '' when the run has
// none, which means its name) is a column as in the SQLite store, so SQL can group by it; tables made
// before it existed get it on open (their rows keep the system they have in their info JSON).

import type { ListFilter, NewRun, QueryScores, RunInfo, RunsStore } from "../../runs/types.js";
import { checkRunName } from "../../runs/types.js";
import { ClickHouseDatabase, ClickHouseError, quote } from "./client.js";
import { createMeta, fnv1a, readMeta, RUNS_FORMAT, tsvField, tsvRows, writeMeta } from "./schema.js";

export const DEFAULT_RUNS_NAME = "runs";
const RUNS_COLUMNS = "name String, version UInt64, deleted UInt8, dataset String, created String, notes String, queries UInt32, info String, system String";
const SCORES_COLUMNS = "run String, version UInt64, ids String, metrics String, scores String";

let counter = 0;
/** Versions increase within a process and across processes (microseconds since the epoch). */
function nextVersion(): number {
  return Date.now() * 1000 + (counter++ % 1000);
}

function toBase64(values: Float64Array): string {
  const b = Buffer.alloc(values.length * 8);
  for (let i = 0; i < values.length; i++) b.writeDoubleLE(values[i], i * 8);
  return b.toString("base64");
}

function fromBase64(s: string): Float64Array {
  const b = Buffer.from(s, "base64");
  const out = new Float64Array(b.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = b.readDoubleLE(i * 8);
  return out;
}

/** Runs tables made before runs had a system: the column is added (local and Distributed, every shard). */
async function addSystemColumn(db: ClickHouseDatabase, name: string): Promise<void> {
  const tables = db.cluster === null ? [`${name}_runs_local`] : [`${name}_runs_local`, `${name}_runs`];
  for (const s of db.shards) {
    for (const t of tables) {
      const has = await s.rows<{ n: string }>(
        `SELECT count() AS n FROM system.columns WHERE database = ${quote(db.database)} AND table = ${quote(t)} AND name = 'system'`,
        "system.columns",
      );
      if (Number(has[0]?.n ?? 0) === 0) await s.command(`ALTER TABLE ${db.qualified(t)} ADD COLUMN system String`, db.qualified(t));
    }
  }
}

export class ClickHouseRunsStore implements RunsStore {
  private readonly runs: string;
  private readonly scoresTable: string;

  private constructor(
    readonly db: ClickHouseDatabase,
    private readonly name: string,
  ) {
    this.runs = db.readTable(`${name}_runs`);
    this.scoresTable = db.readTable(`${name}_scores`);
  }

  get location(): string {
    return this.db.url;
  }

  /** Opens (creating the tables when missing) the runs store of `url`. */
  static async open(url: string): Promise<ClickHouseRunsStore> {
    const db = await ClickHouseDatabase.connect(url);
    try {
      const name = db.u.name ?? DEFAULT_RUNS_NAME;
      const meta = await readMeta(db, name);
      const table = db.qualified(`${name}_meta_local`);
      if (meta === null || meta.kind === undefined) {
        await createMeta(db, name);
        await writeMeta(db, name, { kind: "runs", format: RUNS_FORMAT, complete: 1 });
      } else if (meta.kind !== "runs") {
        throw new ClickHouseError(`${url} (table ${table}): holds a ${meta.kind}, not runs; give runs another name (clickhouse://…/db/NAME)`, url, table);
      } else if (meta.format !== RUNS_FORMAT) {
        throw new ClickHouseError(`${url} (table ${table}): runs format ${JSON.stringify(meta.format)}; this tartan reads ${RUNS_FORMAT}`, url, table);
      }
      await db.createTable(`${name}_runs`, RUNS_COLUMNS, "MergeTree ORDER BY (name, version)");
      await addSystemColumn(db, name);
      await db.createTable(`${name}_scores`, SCORES_COLUMNS, "MergeTree ORDER BY (run, version)");
      return new ClickHouseRunsStore(db, name);
    } catch (e) {
      await db.close();
      throw e;
    }
  }

  /** The newest row of each run name (tombstones included), optionally of one name. */
  private async latest(where = ""): Promise<{ name: string; version: number; deleted: boolean; info: RunInfo }[]> {
    const sql = `SELECT name, argMax(version, version) AS v, argMax(deleted, version) AS d, argMax(info, version) AS i, argMax(system, version) AS s FROM ${this.runs} ${where} GROUP BY name`;
    return tsvRows(await this.db.main.text(sql, this.runs)).map(([name, v, d, i, system]) => {
      // rows from before the column have it '' and the system (if any) in their info only
      const info = JSON.parse(i) as RunInfo;
      if (system !== "") info.system = system;
      return { name, version: Number(v), deleted: d === "1", info };
    });
  }

  private async current(name: string): Promise<{ version: number; info: RunInfo } | undefined> {
    const rows = await this.latest(`WHERE name = ${quote(name)}`);
    const r = rows[0];
    return r === undefined || r.deleted ? undefined : r;
  }

  private shardOf(name: string) {
    return this.db.shards[fnv1a(name) % this.db.shards.length];
  }

  async add(run: NewRun, options: { replace?: boolean } = {}): Promise<RunInfo> {
    checkRunName(run.name);
    const { scores, ...info } = run;
    for (const [m, v] of Object.entries(scores.metrics))
      if (v.length !== scores.ids.length) throw new Error(`run ${run.name}: metric ${m} has ${v.length} scores for ${scores.ids.length} queries`);
    if (!options.replace && (await this.current(run.name)) !== undefined) {
      throw new Error(`a run named "${run.name}" is already recorded in ${this.location} (remove it first, or choose another --name)`);
    }
    const version = nextVersion();
    const shard = this.shardOf(run.name);
    const metrics = Object.keys(scores.metrics);
    const packed = metrics.map((m) => toBase64(scores.metrics[m])).join(",");
    // Scores first, then the run row that makes them visible: a reader never sees a run without scores.
    await shard.insertTsv(this.db.qualified(`${this.name}_scores_local`), `${tsvField(run.name)}\t${version}\t${tsvField(JSON.stringify(scores.ids))}\t${tsvField(JSON.stringify(metrics))}\t${packed}\n`);
    const row = [run.name, String(version), "0", info.dataset ?? "", info.created, info.notes ?? "", String(info.queries), JSON.stringify(info), info.system ?? ""].map(tsvField).join("\t");
    await shard.insertTsv(this.db.qualified(`${this.name}_runs_local`), `${row}\n`);
    return info;
  }

  async list(filter: ListFilter = {}): Promise<RunInfo[]> {
    // Oldest first; runs created at the same time in the order they were recorded (as the SQLite store).
    const rows = (await this.latest()).filter((r) => !r.deleted && (filter.dataset === undefined || r.info.dataset === filter.dataset));
    rows.sort((a, b) => (a.info.created < b.info.created ? -1 : a.info.created > b.info.created ? 1 : a.version - b.version));
    return rows.map((r) => r.info);
  }

  async get(name: string): Promise<RunInfo | undefined> {
    return (await this.current(name))?.info;
  }

  async scores(name: string): Promise<QueryScores> {
    const cur = await this.current(name);
    if (cur === undefined) throw new Error(`no run named "${name}" in ${this.location}`);
    const rows = tsvRows(await this.db.main.text(`SELECT ids, metrics, scores FROM ${this.scoresTable} WHERE run = ${quote(name)} AND version = ${cur.version}`, this.scoresTable));
    if (rows.length !== 1) throw new ClickHouseError(`${this.location} (table ${this.scoresTable}): run "${name}" has ${rows.length} score rows for its version ${cur.version}`, this.location, this.scoresTable);
    const [ids, metricNames, packed] = rows[0];
    const names = JSON.parse(metricNames) as string[];
    const parts = packed.length === 0 ? [] : packed.split(",");
    const metrics: Record<string, Float64Array> = {};
    names.forEach((m, i) => (metrics[m] = fromBase64(parts[i] ?? "")));
    return { ids: JSON.parse(ids) as string[], metrics };
  }

  async remove(name: string): Promise<boolean> {
    const cur = await this.current(name);
    if (cur === undefined) return false;
    const row = [name, String(nextVersion()), "1", "", "", "", "0", JSON.stringify(cur.info), ""].map(tsvField).join("\t");
    await this.shardOf(name).insertTsv(this.db.qualified(`${this.name}_runs_local`), `${row}\n`);
    return true;
  }

  /** Closes the connections to the cluster. */
  async close(): Promise<void> {
    await this.db.close();
  }
}
