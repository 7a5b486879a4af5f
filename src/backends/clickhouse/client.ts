// The connection to a ClickHouse server or cluster named by a `clickhouse://` URL, over the official
// HTTP client (@clickhouse/client) with what ClickHouse 18.16 understands: JSONEachRow and
// TabSeparated, no query parameters (literals are escaped here), no ON CLUSTER (DDL goes to every
// shard). Every request has a timeout, and every failure becomes a ClickHouseError naming the URL and
// the table, so a server that is down or a shard that is missing is reported, never waited on; on a
// cluster the error also says which shards do not answer /ping.

import { request as httpRequest } from "node:http";
import { Readable } from "node:stream";
import { createClient, ClickHouseLogLevel, type ClickHouseClient } from "@clickhouse/client";

/** What a `clickhouse://host:port/db[/name]?cluster=C&shards=h:p,…&timeout=S` URL says. */
export interface ClickHouseUrl {
  /** The URL as given (for messages). */
  url: string;
  host: string;
  port: number;
  database: string;
  /** The second path segment: the knowledge source's or index's name; null when absent. */
  name: string | null;
  /** The `remote_servers` cluster; null for a single server (local tables only). */
  cluster: string | null;
  /** HTTP endpoints of the shards (`shards=`), or null: the cluster's hosts on the URL's port. */
  shards: { host: string; port: number }[] | null;
  /** Request timeout in milliseconds (`timeout=` seconds; default 60). */
  timeoutMs: number;
}

/** Whether `s` is a `clickhouse://` URL (otherwise a location is a local directory). */
export function isClickHouseUrl(s: string): boolean {
  return /^clickhouse:\/\//i.test(s);
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses a `clickhouse://` URL; errors say which part is wrong. */
export function parseClickHouseUrl(s: string): ClickHouseUrl {
  if (!isClickHouseUrl(s)) throw new Error(`${s}: not a clickhouse:// URL`);
  let u: URL;
  try {
    u = new URL(`http://${s.slice("clickhouse://".length)}`);
  } catch {
    throw new Error(`${s}: not a valid URL (expected clickhouse://host:port/database?cluster=NAME)`);
  }
  const parts = u.pathname.split("/").filter((p) => p.length > 0);
  if (parts.length > 2) throw new Error(`${s}: path must be /database or /database/name`);
  const database = parts[0] ?? "default";
  const name = parts[1] ?? null;
  for (const [what, v] of [["database", database], ["name", name]] as const) {
    if (v !== null && !IDENT.test(v)) throw new Error(`${s}: ${what} ${JSON.stringify(v)} must be letters, digits and _`);
  }
  for (const key of u.searchParams.keys()) {
    if (!["cluster", "shards", "timeout"].includes(key)) throw new Error(`${s}: unknown parameter ${key} (cluster, shards, timeout)`);
  }
  const cluster = u.searchParams.get("cluster");
  if (cluster !== null && !IDENT.test(cluster)) throw new Error(`${s}: cluster ${JSON.stringify(cluster)} must be letters, digits and _`);
  const shardsParam = u.searchParams.get("shards");
  const shards =
    shardsParam === null
      ? null
      : shardsParam.split(",").map((hp) => {
          const m = /^([^:]+):(\d+)$/.exec(hp.trim());
          if (!m) throw new Error(`${s}: shards must be host:port,host:port (HTTP ports), got ${JSON.stringify(hp)}`);
          return { host: m[1], port: Number(m[2]) };
        });
  if (shards !== null && cluster === null) throw new Error(`${s}: shards= needs cluster=`);
  if (shards !== null) {
    const seen = new Set<string>();
    for (const x of shards) {
      const key = `${x.host}:${x.port}`;
      if (seen.has(key)) throw new Error(`${s}: shards= names ${key} twice (each shard's HTTP endpoint once, as \`tartan cluster status\` prints)`);
      seen.add(key);
    }
  }
  const timeout = u.searchParams.get("timeout");
  const timeoutMs = timeout === null ? 60_000 : Number(timeout) * 1000;
  if (!(timeoutMs > 0)) throw new Error(`${s}: timeout must be a positive number of seconds, got ${JSON.stringify(timeout)}`);
  return { url: s, host: u.hostname, port: Number(u.port || 8123), database, name, cluster, shards, timeoutMs };
}

/** A failed request: the message names the URL (and the table when there is one). */
export class ClickHouseError extends Error {
  constructor(
    message: string,
    readonly url: string,
    readonly table?: string,
    /** A server or shard did not answer (down, refused, cut, timed out): the request may succeed later (a server answers 503). */
    readonly unavailable = false,
  ) {
    super(message);
    this.name = "ClickHouseError";
  }
}

/** Whether a failure's explanation says that a server did not answer (rather than that it refused the statement). */
function notAnswering(reason: string): boolean {
  return /^(connection refused|the server closed the connection|no answer in time|all connection tries failed)/.test(reason);
}

/** A string as a ClickHouse single-quoted literal. */
export function quote(s: string): string {
  return `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** A finite number as a literal that parses back to the same double. */
export function num(x: number): string {
  if (!Number.isFinite(x)) throw new Error(`not a finite number: ${x}`);
  return String(x);
}

function explain(e: unknown): string {
  const err = e as { message?: string; code?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code;
  if (code === "ECONNREFUSED") return "connection refused (is the server running?)";
  if (code === "ECONNRESET" || code === "EPIPE") return "the server closed the connection (stopped mid-query?)";
  const msg = String(err.message ?? e);
  if (/timeout/i.test(msg)) return `no answer in time (${msg})`;
  // 18.16's messages: "Code: 60, e.displayText() = DB::Exception: Table x doesn't exist., e.what() = DB::Exception";
  // a shard that cannot be reached: "All connection tries failed. Log: " and one such line per try.
  const inner = [...msg.matchAll(/e\.displayText\(\) = (?:DB::(?:Net)?Exception: )?(.*?), e\.what\(\) = /g)].map((x) => x[1].trim());
  if (/All connection tries failed/.test(msg)) return `all connection tries failed (${[...new Set(inner)].join("; ")})`;
  if (inner.length > 0) return [...new Set(inner)].join("; ");
  return msg.trim();
}

/** One HTTP endpoint (a server) with timeouts and error wrapping. */
export class ClickHouseEndpoint {
  private readonly client: ClickHouseClient;
  readonly url: string;

  constructor(
    readonly host: string,
    readonly port: number,
    readonly database: string,
    readonly timeoutMs: number,
  ) {
    this.url = `clickhouse://${host}:${port}/${database}`;
    this.client = createClient({
      url: `http://${host}:${port}`,
      database: "default",
      request_timeout: timeoutMs,
      max_open_connections: 8,
      compression: { request: false, response: false },
      log: { level: ClickHouseLogLevel.OFF },
      keep_alive: { enabled: true, idle_socket_ttl: 2000 },
    });
  }

  /**
   * Set on the endpoint that queries a cluster's Distributed tables: after a failure it says which
   * shards do not answer (null when all do), so the error names them.
   */
  diagnose: (() => Promise<string | null>) | null = null;

  private async fail(e: unknown, table?: string): Promise<never> {
    const where = table ? `${this.url} (table ${table})` : this.url;
    const down = this.diagnose === null ? null : await this.diagnose().catch(() => null);
    const reason = explain(e);
    throw new ClickHouseError(`${where}: ${down === null ? "" : `${down}; `}${reason}`, this.url, table, down !== null || notAnswering(reason));
  }

  /** Rows of a SELECT as objects (JSONEachRow). */
  async rows<T>(sql: string, table?: string, settings: Record<string, string | number> = {}): Promise<T[]> {
    try {
      const rs = await this.client.query({ query: sql, format: "JSONEachRow", clickhouse_settings: { max_execution_time: Math.ceil(this.timeoutMs / 1000), ...settings } as never });
      return (await rs.json()) as T[];
    } catch (e) {
      return await this.fail(e, table);
    }
  }

  /** The raw TabSeparated text of a SELECT. */
  async text(sql: string, table?: string, settings: Record<string, string | number> = {}): Promise<string> {
    try {
      const rs = await this.client.query({ query: sql, format: "TabSeparated", clickhouse_settings: { max_execution_time: Math.ceil(this.timeoutMs / 1000), ...settings } as never });
      return await rs.text();
    } catch (e) {
      return await this.fail(e, table);
    }
  }

  /**
   * The raw bytes of a SELECT in `format` (RowBinary: fixed-width numbers, fast to read), optionally
   * reading `external` (TabSeparated rows of `structure`, e.g. "term String, unit UInt32") as the
   * temporary table `name`: ClickHouse's external data, sent as a multipart body (a set of many tuples
   * built this way costs far less than the same tuples as SQL literals, which the parser turns into an
   * AST first). Over node:http without keep-alive: a socket the server closed while idle is never
   * reused for a POST.
   */
  async raw(sql: string, table: string, format: string, settings: Record<string, string | number> = {}, external?: { name: string; structure: string; data: string }): Promise<Buffer> {
    const params = new URLSearchParams({ database: "default", max_execution_time: String(Math.ceil(this.timeoutMs / 1000)) });
    for (const [k, v] of Object.entries(settings)) params.set(k, String(v));
    let body: Buffer;
    let type: string;
    if (external) {
      const boundary = `tartan${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
      params.set("query", `${sql} FORMAT ${format}`);
      params.set(`${external.name}_structure`, external.structure);
      type = `multipart/form-data; boundary=${boundary}`;
      body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${external.name}"; filename="${external.name}"\r\n\r\n`),
        Buffer.from(external.data),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
    } else {
      type = "text/plain";
      body = Buffer.from(`${sql} FORMAT ${format}`);
    }
    try {
      return await new Promise<Buffer>((resolve, reject) => {
        const req = httpRequest(
          { host: this.host, port: this.port, method: "POST", path: `/?${params}`, agent: false, timeout: this.timeoutMs, headers: { "Content-Type": type, "Content-Length": body.length } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("error", reject);
            res.on("end", () => {
              const out = Buffer.concat(chunks);
              if (res.statusCode === 200) resolve(out);
              else reject(new Error(out.toString("utf8")));
            });
          },
        );
        req.on("timeout", () => req.destroy(new Error(`timeout after ${this.timeoutMs} ms`)));
        req.on("error", reject);
        req.end(body);
      });
    } catch (e) {
      return await this.fail(e, table);
    }
  }

  /** A statement without result (DDL). */
  async command(sql: string, table?: string): Promise<void> {
    try {
      await this.client.command({ query: sql });
    } catch (e) {
      return await this.fail(e, table);
    }
  }

  /** Inserts rows (JSONEachRow) into `table` (database-qualified); one INSERT, so one block, all or nothing. */
  async insert(table: string, values: readonly Record<string, unknown>[]): Promise<void> {
    if (values.length === 0) return;
    try {
      await this.client.insert({ table, values: values as Record<string, unknown>[], format: "JSONEachRow", clickhouse_settings: { max_insert_block_size: String(Math.max(1_048_576, values.length + 1)) } as never });
    } catch (e) {
      return await this.fail(e, table);
    }
  }

  /** Inserts TabSeparated text (fields escaped with tsvField) into `table`; one INSERT, one block. */
  async insertTsv(table: string, text: string | Buffer): Promise<void> {
    if (text.length === 0) return;
    try {
      const body = Readable.from([typeof text === "string" ? Buffer.from(text) : text], { objectMode: false });
      await this.client.insert({ table, values: body, format: "TabSeparated", clickhouse_settings: { max_insert_block_size: "100000000" } as never });
    } catch (e) {
      return await this.fail(e, table);
    }
  }

  /** Whether the server answers /ping within `timeoutMs` (default: the request timeout). */
  async ping(timeoutMs = this.timeoutMs): Promise<boolean> {
    try {
      const res = await fetch(`http://${this.host}:${this.port}/ping`, { signal: AbortSignal.timeout(timeoutMs) });
      return res.ok && (await res.text()).startsWith("Ok");
    } catch {
      return false;
    }
  }

  /** Closes the HTTP client. */
  async close(): Promise<void> {
    await this.client.close();
  }
}

/**
 * A database on a server or cluster: the endpoint of the URL (it runs queries over Distributed
 * tables) and one endpoint per shard (DDL and direct inserts into local tables).
 */
export class ClickHouseDatabase {
  private constructor(
    readonly u: ClickHouseUrl,
    readonly main: ClickHouseEndpoint,
    readonly shards: ClickHouseEndpoint[],
  ) {}

  get url(): string {
    return this.u.url;
  }
  get database(): string {
    return this.u.database;
  }
  get cluster(): string | null {
    return this.u.cluster;
  }

  /** Connects and finds the shards (from `shards=`, else system.clusters with the URL's HTTP port). */
  static async connect(url: string | ClickHouseUrl): Promise<ClickHouseDatabase> {
    const u = typeof url === "string" ? parseClickHouseUrl(url) : url;
    const main = new ClickHouseEndpoint(u.host, u.port, u.database, u.timeoutMs);
    try {
      let shards: ClickHouseEndpoint[];
      if (u.cluster === null) shards = [main];
      else {
        // the cluster's shards as the server knows them: a URL naming fewer or more is refused (its
        // local-table reads and writes would cover part of the data), and so is one that cannot tell
        // two shards on one host apart
        const rows = await main.rows<{ host_address: string; shard_num: number }>(
          `SELECT shard_num, host_address FROM system.clusters WHERE cluster = ${quote(u.cluster)} AND replica_num = 1 ORDER BY shard_num`,
          "system.clusters",
        );
        if (rows.length === 0) throw new ClickHouseError(`${u.url}: the server has no cluster ${JSON.stringify(u.cluster)} in its remote_servers`, u.url);
        if (u.shards !== null) {
          if (u.shards.length !== rows.length)
            throw new ClickHouseError(`${u.url}: shards= names ${u.shards.length} server${u.shards.length === 1 ? "" : "s"}, cluster ${u.cluster} has ${rows.length} shards (name every shard's HTTP endpoint once, as \`tartan cluster status\` prints)`, u.url);
          shards = u.shards.map((s) => (s.host === u.host && s.port === u.port ? main : new ClickHouseEndpoint(s.host, s.port, u.database, u.timeoutMs)));
        } else {
          const hosts = rows.map((r) => r.host_address);
          const twice = hosts.find((h, i) => hosts.indexOf(h) !== i);
          if (twice !== undefined)
            throw new ClickHouseError(`${u.url}: cluster ${u.cluster} has several shards on ${twice}; name each shard's HTTP endpoint with shards=host:port,… (as \`tartan cluster status\` prints)`, u.url);
          shards = rows.map((r) => (r.host_address === u.host ? main : new ClickHouseEndpoint(r.host_address, u.port, u.database, u.timeoutMs)));
        }
      }
      if (u.cluster !== null) {
        main.diagnose = async () => {
          const answers = await Promise.all(shards.map((s) => s.ping(Math.min(2000, u.timeoutMs))));
          const down = shards.flatMap((s, i) => (answers[i] ? [] : [`shard ${i + 1} of ${shards.length} (${s.host}:${s.port}) does not answer`]));
          return down.length === 0 ? null : down.join(", ");
        };
      }
      return new ClickHouseDatabase(u, main, shards);
    } catch (e) {
      await main.close();
      // (an endpoint's error names the endpoint: named by the URL given instead; an error already naming it is kept)
      if (e instanceof ClickHouseError) throw new ClickHouseError(e.message.startsWith(u.url) ? e.message : e.message.replace(main.url, u.url), u.url, e.table, e.unavailable);
      throw e;
    }
  }

  /**
   * Refuses a store or index written on `recorded` shards when this URL reads another number: fewer
   * (local tables alone, without `cluster=`, or a cluster of fewer shards) would compute over part of the
   * data. `what`: "ingested", "built"; `table`: the meta table named in the error.
   */
  checkShardCount(recorded: number, what: string, table: string): void {
    if (this.u.cluster === null && recorded > 1)
      throw new ClickHouseError(`${this.u.url} (table ${table}): ${what} on ${recorded} shards, and this URL names no cluster= (it would read one server's share alone): add ?cluster=NAME&shards=host:port,… as \`tartan cluster status\` prints`, this.u.url, table);
    if (this.u.cluster !== null && recorded !== this.shards.length)
      throw new ClickHouseError(`${this.u.url} (table ${table}): ${what} on ${recorded} shards, the cluster has ${this.shards.length}`, this.u.url, table);
  }

  /** `db.name` of a table. */
  qualified(table: string): string {
    return `${this.u.database}.${table}`;
  }

  /** The table queries read: the Distributed table over the shards' local tables, or the local table itself. */
  readTable(base: string): string {
    return this.qualified(this.u.cluster === null ? `${base}_local` : base);
  }

  /** Creates the database and, on every shard, `base_local` (columns, engine) plus the Distributed `base`. */
  async createTable(base: string, columns: string, engine: string): Promise<void> {
    const db = this.u.database;
    for (const s of this.shards) {
      await s.command(`CREATE DATABASE IF NOT EXISTS ${db}`);
      await s.command(`CREATE TABLE IF NOT EXISTS ${db}.${base}_local (${columns}) ENGINE = ${engine}`, `${db}.${base}_local`);
      if (this.u.cluster !== null) {
        await s.command(`CREATE TABLE IF NOT EXISTS ${db}.${base} AS ${db}.${base}_local ENGINE = Distributed(${this.u.cluster}, ${db}, ${base}_local)`, `${db}.${base}`);
      }
    }
  }

  /** Drops `base_local` and `base` on every shard. */
  async dropTable(base: string): Promise<void> {
    const db = this.u.database;
    for (const s of this.shards) {
      await s.command(`DROP TABLE IF EXISTS ${db}.${base}`, `${db}.${base}`);
      await s.command(`DROP TABLE IF EXISTS ${db}.${base}_local`, `${db}.${base}_local`);
    }
  }

  /** Whether `table` (unqualified) exists on the URL's server (or on the endpoint given). */
  async exists(table: string, on: ClickHouseEndpoint = this.main): Promise<boolean> {
    const rows = await on.rows<{ n: string }>(
      `SELECT count() AS n FROM system.tables WHERE database = ${quote(this.u.database)} AND name = ${quote(table)}`,
      "system.tables",
    );
    return Number(rows[0]?.n ?? 0) > 0;
  }

  /** Closes the connections to every shard. */
  async close(): Promise<void> {
    const all = new Set([this.main, ...this.shards]);
    await Promise.all([...all].map((e) => e.close()));
  }
}
