// Configuration files for a local ClickHouse cluster: one config.xml and users.xml per shard (distinct
// HTTP, native and interserver ports on 127.0.0.1, data under the cluster directory) and a
// `remote_servers` entry naming every shard, so each server can host the Distributed tables.

/** One shard of a local cluster. */
export interface ShardSpec {
  /** 0-based shard number. */
  index: number;
  host: string;
  httpPort: number;
  tcpPort: number;
  interserverPort: number;
  /** This shard's directory (config, data, logs, pid). */
  dir: string;
}

/** What `cluster.json` records about a cluster. */
export interface ClusterSpec {
  /** The `remote_servers` entry name. */
  name: string;
  shards: ShardSpec[];
}

export const DEFAULT_CLUSTER_NAME = "tartan";
export const DEFAULT_BASE_PORT = 18123;
/** Ports per shard: http, tcp, interserver (the next shard starts PORT_STRIDE above). */
export const PORT_STRIDE = 10;

function xmlEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The shards of an `n`-shard cluster on loopback: shard i uses ports base + 10i, +1, +2. */
export function planCluster(n: number, dir: string, basePort = DEFAULT_BASE_PORT, name = DEFAULT_CLUSTER_NAME): ClusterSpec {
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error(`--shards must be an integer from 1 to 64, got ${n}`);
  if (!Number.isInteger(basePort) || basePort < 1024 || basePort + PORT_STRIDE * n > 65535) {
    throw new Error(`--base-port must leave room for ${n} shards below 65536 (and be ≥ 1024), got ${basePort}`);
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`cluster name must be an identifier, got ${JSON.stringify(name)}`);
  const shards: ShardSpec[] = [];
  for (let i = 0; i < n; i++) {
    const p = basePort + PORT_STRIDE * i;
    shards.push({ index: i, host: "127.0.0.1", httpPort: p, tcpPort: p + 1, interserverPort: p + 2, dir: `${dir}/shard${i}` });
  }
  return { name, shards };
}

/** The `<remote_servers>` element for a cluster: one shard per server, one replica each. */
export function remoteServersXml(name: string, shards: readonly Pick<ShardSpec, "host" | "tcpPort">[]): string {
  const body = shards
    .map((s) => `      <shard>\n        <replica>\n          <host>${xmlEscape(s.host)}</host>\n          <port>${s.tcpPort}</port>\n        </replica>\n      </shard>`)
    .join("\n");
  return `  <remote_servers>\n    <${name}>\n${body}\n    </${name}>\n  </remote_servers>`;
}

/** config.xml of one shard (ClickHouse 18.16's `<yandex>` root). */
export function serverConfigXml(shard: ShardSpec, cluster: ClusterSpec): string {
  const d = xmlEscape(shard.dir);
  return `<?xml version="1.0"?>
<!-- Written by \`tartan cluster start\`: shard ${shard.index} of cluster ${cluster.name}. -->
<yandex>
  <logger>
    <level>warning</level>
    <log>${d}/log/server.log</log>
    <errorlog>${d}/log/server.err.log</errorlog>
    <size>10M</size>
    <count>2</count>
  </logger>
  <listen_host>${xmlEscape(shard.host)}</listen_host>
  <http_port>${shard.httpPort}</http_port>
  <tcp_port>${shard.tcpPort}</tcp_port>
  <interserver_http_port>${shard.interserverPort}</interserver_http_port>
  <interserver_http_host>${xmlEscape(shard.host)}</interserver_http_host>
  <max_connections>256</max_connections>
  <keep_alive_timeout>3</keep_alive_timeout>
  <max_concurrent_queries>64</max_concurrent_queries>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <mark_cache_size>268435456</mark_cache_size>
  <path>${d}/data/</path>
  <tmp_path>${d}/tmp/</tmp_path>
  <user_files_path>${d}/user_files/</user_files_path>
  <format_schema_path>${d}/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mlock_executable>false</mlock_executable>
  <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
  <max_session_timeout>3600</max_session_timeout>
  <default_session_timeout>60</default_session_timeout>
${remoteServersXml(cluster.name, cluster.shards)}
</yandex>
`;
}

/** users.xml: the `default` user without password, reachable from loopback only. */
export function usersXml(): string {
  return `<?xml version="1.0"?>
<!-- Written by \`tartan cluster start\`: loopback only. -->
<yandex>
  <profiles>
    <default>
      <max_memory_usage>2000000000</max_memory_usage>
      <use_uncompressed_cache>0</use_uncompressed_cache>
      <load_balancing>in_order</load_balancing>
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks>
        <ip>127.0.0.1</ip>
        <ip>::1</ip>
      </networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default>
      <interval>
        <duration>3600</duration>
        <queries>0</queries>
        <errors>0</errors>
        <result_rows>0</result_rows>
        <read_rows>0</read_rows>
        <execution_time>0</execution_time>
      </interval>
    </default>
  </quotas>
</yandex>
`;
}
