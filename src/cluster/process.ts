// Starts and stops a local ClickHouse cluster: writes each shard's configuration (./config.ts), starts
// one `clickhouse-server` per shard in the background, waits until each answers its HTTP /ping, and
// records the cluster and the process ids in DIR/cluster.json; stopping signals exactly those process
// ids (after checking each still runs that shard's configuration), never a process found by name.

import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
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
  /** A URL for the whole cluster (first shard, `?cluster=NAME`), without database. */
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

/** Reads DIR/cluster.json, or null when there is none. */
export function readCluster(dir: string = DEFAULT_CLUSTER_DIR): RunningCluster | null {
  const file = `${resolve(dir)}/${CLUSTER_FILE}`;
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, "utf8")) as RunningCluster;
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
    if (await ping(s, 1000)) return;
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

function recordCluster(cluster: RunningCluster): void {
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
  } catch (e) {
    await stopShards(started);
    throw e;
  }
  const cluster: RunningCluster = { name: spec.name, dir, shards, url: `clickhouse://${shards[0].host}:${shards[0].httpPort}/?cluster=${spec.name}` };
  recordCluster(cluster);
  return cluster;
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
  const cluster = readCluster(dir);
  if (!cluster) throw new Error(`${resolve(dir)}: no ${CLUSTER_FILE} here (no cluster started with --dir ${dir})`);
  return stopShards(cluster.shards);
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
