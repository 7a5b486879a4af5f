// A local 2-shard ClickHouse cluster for a test file: started with tartan's own cluster scripts on
// 127.0.0.1 (ports chosen per process, so test files may run side by side) and stopped by pid.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster, stopCluster, type RunningCluster } from "../../src/cluster/process.js";

/** A failure that other ports may cure: a port taken (checked before starting, or lost in the race after). */
function portTrouble(e: unknown): boolean {
  const m = e instanceof Error ? e.message : String(e);
  return /in use|already in use|already answers|exited while starting|did not answer/iu.test(m);
}

export interface TestCluster {
  cluster: RunningCluster;
  dir: string;
  /** `clickhouse://…/DB?cluster=…&shards=…` for a database of this test file. */
  url(database: string, name?: string): string;
  stop(): Promise<void>;
}

/** Starts `shards` servers under a fresh temporary directory. */
export async function startTestCluster(shards = 2): Promise<TestCluster> {
  let lastError: unknown;
  // Ports are drawn at random from 20000–49990 and checked free before the servers start (startCluster);
  // one taken in between makes that shard exit, and the next attempt draws again.
  for (let attempt = 0; attempt < 8; attempt++) {
    const basePort = 20000 + Math.floor(Math.random() * 3000) * 10;
    const dir = mkdtempSync(join(tmpdir(), "tartan-cluster-"));
    try {
      const cluster = await startCluster({ shards, dir, basePort, timeoutMs: 90_000 });
      const shardList = cluster.shards.map((s) => `${s.host}:${s.httpPort}`).join(",");
      const first = cluster.shards[0];
      return {
        cluster,
        dir,
        url: (database, name) => `clickhouse://${first.host}:${first.httpPort}/${database}${name ? `/${name}` : ""}?cluster=${cluster.name}&shards=${shardList}&timeout=20`,
        stop: async () => {
          await stopCluster(dir);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (e) {
      lastError = e;
      rmSync(dir, { recursive: true, force: true });
      if (!portTrouble(e)) break;
    }
  }
  throw lastError;
}
