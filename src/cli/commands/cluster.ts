// `tartan cluster start | stop | status`: a local ClickHouse cluster of N shards on 127.0.0.1 for the
// ClickHouse backend (src/cluster: configuration, start, stop by process id).

import type { Command } from "commander";
import { DEFAULT_BASE_PORT } from "../../cluster/config.js";
import { DEFAULT_CLUSTER_DIR, isShardProcess, readCluster, startCluster, stopCluster } from "../../cluster/process.js";
import { positiveInt } from "../options.js";

/** The URL naming every shard's HTTP endpoint (what --ks, --index and --backend take). */
export function clusterUrl(c: { name: string; shards: { host: string; httpPort: number }[] }, database = "tartan"): string {
  const first = c.shards[0];
  return `clickhouse://${first.host}:${first.httpPort}/${database}?cluster=${c.name}&shards=${c.shards.map((s) => `${s.host}:${s.httpPort}`).join(",")}`;
}

export function registerCluster(program: Command): void {
  const cluster = program.command("cluster").description("a local ClickHouse cluster (N clickhouse-server processes on 127.0.0.1) for the ClickHouse backend");
  cluster
    .command("start")
    .description("write the configuration of N shards, start them, wait until each answers, record their pids")
    .requiredOption("--shards <n>", "number of shards (servers)", positiveInt)
    .option("--dir <dir>", "configuration, data, logs and cluster.json", DEFAULT_CLUSTER_DIR)
    .option("--base-port <port>", "shard i listens on base+10i (HTTP), +1 (native), +2 (interserver)", positiveInt, DEFAULT_BASE_PORT)
    .option("--name <name>", "the remote_servers cluster name", "tartan")
    .action(async (o: { shards: number; dir: string; basePort: number; name: string }) => {
      const c = await startCluster({ shards: o.shards, dir: o.dir, basePort: o.basePort, name: o.name });
      for (const s of c.shards) process.stderr.write(`shard ${s.index}: pid ${s.pid}, http ${s.host}:${s.httpPort}, native ${s.tcpPort}\n`);
      process.stdout.write(`${clusterUrl(c)}\n`);
    });
  cluster
    .command("stop")
    .description("stop the servers recorded in DIR/cluster.json, by their process ids")
    .option("--dir <dir>", "the directory given to cluster start", DEFAULT_CLUSTER_DIR)
    .action(async (o: { dir: string }) => {
      const pids = await stopCluster(o.dir);
      process.stderr.write(pids.length === 0 ? "no shard was running\n" : `stopped pid${pids.length === 1 ? "" : "s"} ${pids.join(", ")}\n`);
    });
  cluster
    .command("status")
    .description("the shards recorded in DIR/cluster.json and whether each runs")
    .option("--dir <dir>", "the directory given to cluster start", DEFAULT_CLUSTER_DIR)
    .action((o: { dir: string }) => {
      const c = readCluster(o.dir);
      if (!c) throw new Error(`${o.dir}: no cluster.json (start one with \`tartan cluster start --shards N --dir ${o.dir}\`)`);
      for (const s of c.shards) process.stdout.write(`shard ${s.index}: pid ${s.pid} ${isShardProcess(s.pid, s) ? "running" : "stopped"}, http ${s.host}:${s.httpPort}\n`);
      process.stdout.write(`${clusterUrl(c)}\n`);
    });
}
