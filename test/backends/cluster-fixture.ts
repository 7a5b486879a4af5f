// A local 2-shard ClickHouse cluster for a test file: started with tartan's own cluster scripts on
// 127.0.0.1 (ports chosen per process, so test files may run side by side) and stopped by pid.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster, stopCluster, type RunningCluster } from "../../src/cluster/process.js";

export interface TestCluster {
  cluster: RunningCluster;
  dir: string;
  /** `clickhouse://…/DB?cluster=…&shards=…` for a database of this test file. */
  url(database: string, name?: string): string;
  stop(): Promise<void>;
}

/** Starts `shards` servers under a fresh temporary directory. */
export async function startTestCluster(shards = 2): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), "tartan-cluster-"));
  let lastError: unknown;
  for (let attempt = 0; attempt < 4; attempt++) {
    const basePort = 20000 + ((process.pid * 7 + attempt * 131 + Math.floor(Math.random() * 1000)) % 3000) * 10;
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
    }
  }
  throw lastError;
}
