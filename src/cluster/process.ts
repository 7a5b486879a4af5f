// Starts and stops a local ClickHouse cluster: writes each shard's configuration (./config.ts), starts
// one `clickhouse-server` per shard in the background, waits until each answers its HTTP /ping, and
// records the cluster and the process ids in DIR/cluster.json; stopping signals exactly those process
// ids (after checking each still runs that shard's configuration), never a process found by name.
// `start` and `stop` hold the directory's lock (src/util/lock.ts) for their whole run, so two starts on one
// directory never both succeed, and `cluster.json` records only processes seen running their shard's
// configuration after it answered. A damaged or wrongly shaped `cluster.json` is refused naming the file
// and the field.

import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { readJsonFile } from "../util/json-file.js";
import { lockOutput } from "../util/lock.js";
import { planCluster, serverConfigXml, usersXml, type ClusterSpec, type ShardSpec } from "./config.js";

export const CLUSTER_FILE = "cluster.json";
export const DEFAULT_CLUSTER_DIR = ".tartan/cluster";

/** A started shard: its spec and process id. */
export interface RunningShard extends ShardSpec {
  pid: number;
  /** `clickhouse://127.0.0.1:PORT/` for this shard alone. */
  url: string;
}

/** A local ClickHouse cluster started by {@link startCluster}. */
export interface RunningCluster {
  name: string;
  dir: string;
  shards: RunningShard[];
  /** A URL for the whole cluster (first shard, `?cluster=NAME`), without database or `shards=` (give those as `tartan cluster status` prints: `clusterUrl`). */
  url: string;
}

/** A shard's port is taken by another program (the caller may retry on other ports). */
export class PortInUseError extends Error {}

/** Options of {@link startCluster}. */
export interface StartOptions {
  shards: number;
  dir?: string;
  basePort?: number;
  name?: string;
  /** The server binary; default $TARTAN_CLICKHOUSE_SERVER, else Debian's /usr/sbin/clickhouse-server, else `clickhouse-server` on PATH. */
  server?: string;
  /** How long to wait for every shard to answer; default 60 s. */
  timeoutMs?: number;
}

function configPath(s: ShardSpec): string {
  return `${s.dir}/config.xml`;
}

/** Whether `pid` is alive and runs the configuration of shard `s` (so a reused pid is never signalled). */
export function isShardProcess(pid: number, s: ShardSpec): boolean {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return cmd.split("\0").some((arg) => arg === `--config-file=${configPath(s)}`);
  } catch {
    return false;
  }
}

/** Checks what `cluster.json` holds field by field; errors name the file and the field. */
function checkClusterRecord(v: unknown, file: string): RunningCluster {
  const bad = (field: string, want: string, got: unknown): never => {
    throw new Error(`${file}: ${field} must be ${want}, got ${got === undefined ? "nothing" : JSON.stringify(got)} (a damaged cluster.json: stop the servers it names by hand, or start the cluster again in a new --dir)`);
  };
  const obj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object" && !Array.isArray(x);
  const str = (o: Record<string, unknown>, key: string, at: string): string => (typeof o[key] === "string" && o[key] !== "" ? (o[key] as string) : bad(`${at}${key}`, "a non-empty string", o[key]));
  const int = (o: Record<string, unknown>, key: string, at: string, min: number, max: number): number => {
    const x = o[key];
    return typeof x === "number" && Number.isInteger(x) && x >= min && x <= max ? x : bad(`${at}${key}`, `an integer from ${min} to ${max}`, x);
  };
  if (!obj(v)) return bad("the file", "a JSON object", v);
  const name = str(v, "name", "");
  const dir = str(v, "dir", "");
  const url = str(v, "url", "");
  if (!Array.isArray(v.shards) || v.shards.length === 0) return bad("shards", "a non-empty array", v.shards);
  const shards = v.shards.map((x: unknown, i: number): RunningShard => {
    const at = `shards[${i}].`;
    if (!obj(x)) return bad(`shards[${i}]`, "an object", x);
    const index = int(x, "index", at, 0, 63);
    if (index !== i) bad(`${at}index`, `${i}`, index);
    return {
      index,
      host: str(x, "host", at),
      httpPort: int(x, "httpPort", at, 1, 65535),
      tcpPort: int(x, "tcpPort", at, 1, 65535),
      interserverPort: int(x, "interserverPort", at, 1, 65535),
      dir: str(x, "dir", at),
      pid: int(x, "pid", at, 1, 2 ** 31 - 1),
      url: str(x, "url", at),
    };
  });
  return { name, dir, url, shards };
}

/** Reads DIR/cluster.json, or null when there is none; a damaged or wrongly shaped one is refused naming the file and the field. */
export function readCluster(dir: string = DEFAULT_CLUSTER_DIR): RunningCluster | null {
  const file = `${resolve(dir)}/${CLUSTER_FILE}`;
  if (!existsSync(file)) return null;
  return checkClusterRecord(readJsonFile(file, "the cluster record"), file);
}

async function ping(s: ShardSpec, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(`http://${s.host}:${s.httpPort}/ping`, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok && (await res.text()).startsWith("Ok");
  } catch {
    return false;
  }
}

/** Whether nothing listens on `host:port` (a listener opened and closed there at once). */
function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once("error", () => done(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => done(true)));
  });
}

/** The first port of the shards' HTTP, native and interserver ports that is already in use, or null. */
export async function portInUse(shards: readonly ShardSpec[]): Promise<{ host: string; port: number } | null> {
  for (const s of shards) for (const port of [s.httpPort, s.tcpPort, s.interserverPort]) if (!(await portFree(s.host, port))) return { host: s.host, port };
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function lastLines(file: string, n: number): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-n).join("\n");
  } catch {
    return "";
  }
}

/** Starts one server on the shard's configuration (detached, output to its log); returns its pid. */
async function spawnServer(server: string, s: ShardSpec): Promise<number> {
  const out = openSync(`${s.dir}/log/stdout.log`, "a");
  const child = spawn(server, [`--config-file=${configPath(s)}`], { cwd: s.dir, detached: true, stdio: ["ignore", out, out] });
  closeSync(out);
  const failed = new Promise<never>((_, reject) => child.once("error", (e) => reject(new Error(`cannot start ${server}: ${e.message} (install clickhouse-server: apt-get install clickhouse-server)`))));
  failed.catch(() => undefined);
  if (child.pid === undefined) await failed;
  child.unref();
  return child.pid as number;
}

/** Waits until the started shard answers /ping; errors when it exits or the deadline passes. */
async function waitUntilAnswers(s: RunningShard, deadline: number, timeoutMs: number): Promise<void> {
  for (;;) {
    // an answer counts only while the process started runs (another server on the port is not ours)
    if ((await ping(s, 1000)) && isShardProcess(s.pid, s)) return;
    if (!isShardProcess(s.pid, s)) {
      throw new Error(`shard ${s.index} (pid ${s.pid}) exited while starting:\n${lastLines(`${s.dir}/log/server.err.log`, 5) || lastLines(`${s.dir}/log/stdout.log`, 5)}`);
    }
    if (Date.now() > deadline) throw new Error(`shard ${s.index} did not answer on http://${s.host}:${s.httpPort}/ping within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

function serverBinary(o: Pick<StartOptions, "server">): string {
  return o.server ?? process.env.TARTAN_CLICKHOUSE_SERVER ?? (existsSync("/usr/sbin/clickhouse-server") ? "/usr/sbin/clickhouse-server" : "clickhouse-server");
}

/** Writes DIR/cluster.json (via a rename), after checking every pid runs its shard's configuration. */
function recordCluster(cluster: RunningCluster): void {
  const gone = cluster.shards.filter((s) => !isShardProcess(s.pid, s));
  if (gone.length > 0) throw new Error(`${cluster.dir}: ${gone.map((s) => `shard ${s.index} (pid ${s.pid})`).join(", ")} no longer runs its configuration; ${CLUSTER_FILE} not written`);
  const tmp = `${cluster.dir}/${CLUSTER_FILE}.partial`;
  writeFileSync(tmp, `${JSON.stringify(cluster, null, 2)}\n`);
  renameSync(tmp, `${cluster.dir}/${CLUSTER_FILE}`);
}

/**
 * Writes the configuration of an n-shard cluster under `dir`, starts the servers and waits until each
 * answers. Refuses when a cluster recorded in `dir` still runs. Stops what it started if one fails.
 */
export async function startCluster(o: StartOptions): Promise<RunningCluster> {
  const dir = resolve(o.dir ?? DEFAULT_CLUSTER_DIR);
  const lock = lockOutput(dir);
  try {
    return await startLocked(o, dir);
  } finally {
    lock.release();
  }
}

async function startLocked(o: StartOptions, dir: string): Promise<RunningCluster> {
  const previous = readCluster(dir);
  if (previous && previous.shards.some((s) => isShardProcess(s.pid, s))) {
    throw new Error(`${dir}: a cluster is already running there (pids ${previous.shards.map((s) => s.pid).join(", ")}); stop it with \`tartan cluster stop --dir ${o.dir ?? DEFAULT_CLUSTER_DIR}\``);
  }
  const spec: ClusterSpec = planCluster(o.shards, dir, o.basePort, o.name);
  const server = serverBinary(o);
  for (const s of spec.shards) {
    if (await ping(s, 500)) throw new Error(`port ${s.httpPort} on ${s.host} already answers as a ClickHouse server; choose another --base-port`);
  }
  // A port another program holds would make that shard exit (or, for HTTP, answer as someone else's server).
  const busy = await portInUse(spec.shards);
  if (busy) throw new PortInUseError(`port ${busy.port} on ${busy.host} is in use; choose another --base-port`);
  const shards: RunningShard[] = [];
  const started: RunningShard[] = [];
  try {
    for (const s of spec.shards) {
      for (const sub of ["data", "tmp", "log", "user_files", "format_schemas"]) mkdirSync(`${s.dir}/${sub}`, { recursive: true });
      writeFileSync(configPath(s), serverConfigXml(s, spec));
      writeFileSync(`${s.dir}/users.xml`, usersXml());
      const shard: RunningShard = { ...s, pid: await spawnServer(server, s), url: `clickhouse://${s.host}:${s.httpPort}/` };
      started.push(shard);
      shards.push(shard);
    }
    const deadline = Date.now() + (o.timeoutMs ?? 60_000);
    for (const s of shards) await waitUntilAnswers(s, deadline, o.timeoutMs ?? 60_000);
    const cluster: RunningCluster = { name: spec.name, dir, shards, url: `clickhouse://${shards[0].host}:${shards[0].httpPort}/?cluster=${spec.name}` };
    recordCluster(cluster);
    return cluster;
  } catch (e) {
    await stopShards(started);
    throw e;
  }
}

async function stopShards(shards: readonly RunningShard[], timeoutMs = 30_000): Promise<number[]> {
  const stopped: number[] = [];
  for (const s of shards) {
    if (!isShardProcess(s.pid, s)) continue;
    try {
      process.kill(s.pid, "SIGTERM");
      stopped.push(s.pid);
    } catch {
      /* already gone */
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (const s of shards) {
    while (isShardProcess(s.pid, s)) {
      if (Date.now() > deadline) {
        try {
          process.kill(s.pid, "SIGKILL");
        } catch {
          /* gone */
        }
        break;
      }
      await sleep(50);
    }
  }
  return stopped;
}

/** Stops the cluster recorded in `dir` by its process ids; returns the pids signalled. */
export async function stopCluster(dir: string = DEFAULT_CLUSTER_DIR): Promise<number[]> {
  const lock = lockOutput(resolve(dir));
  try {
    const cluster = readCluster(dir);
    if (!cluster) throw new Error(`${resolve(dir)}: no ${CLUSTER_FILE} here (no cluster started with --dir ${dir})`);
    return await stopShards(cluster.shards);
  } finally {
    lock.release();
  }
}

/** Stops one shard of a running cluster by its pid (tests: a shard missing). */
export async function stopShard(cluster: RunningCluster, index: number): Promise<void> {
  const s = cluster.shards[index];
  if (!s) throw new Error(`no shard ${index}`);
  await stopShards([s]);
}

/**
 * Starts again a shard of the cluster that is not running (after a crash or stopShard), on its
 * configuration and data; waits until it answers and records its new pid in DIR/cluster.json.
 */
export async function restartShard(cluster: RunningCluster, index: number, o: Pick<StartOptions, "server" | "timeoutMs"> = {}): Promise<RunningShard> {
  const s = cluster.shards[index];
  if (!s) throw new Error(`no shard ${index}`);
  if (isShardProcess(s.pid, s)) throw new Error(`shard ${index} is running (pid ${s.pid})`);
  if (await ping(s, 500)) throw new Error(`port ${s.httpPort} on ${s.host} already answers as a ClickHouse server`);
  s.pid = await spawnServer(serverBinary(o), s);
  await waitUntilAnswers(s, Date.now() + (o.timeoutMs ?? 60_000), o.timeoutMs ?? 60_000);
  recordCluster(cluster);
  return s;
}
