// What tartan keeps in ClickHouse besides data: a `<name>_meta_local` table on every shard (kind,
// format version, parameters, statistics, whether the build or ingest completed), how rows are routed
// to shards, and the checks that refuse a table written by another format with a clear message.

import { ClickHouseDatabase, ClickHouseError, quote, type ClickHouseEndpoint } from "./client.js";

/** Bumped when a table layout changes; `open` refuses other versions. */
export const KS_FORMAT = "tartan-ks-ch-1";
export const BM25_FORMAT = "tartan-bm25-ch-2";
export const RUNS_FORMAT = "tartan-runs-ch-1";
export const DENSE_FORMAT = "tartan-dense-ch-1";

const META_COLUMNS = "key String, value String, version UInt64";

/** Creates `<name>_meta_local` on every shard (no Distributed table: each shard holds the same rows). */
export async function createMeta(db: ClickHouseDatabase, name: string): Promise<void> {
  const table = db.qualified(`${name}_meta_local`);
  for (const s of db.shards) {
    await s.command(`CREATE DATABASE IF NOT EXISTS ${db.database}`);
    await s.command(`CREATE TABLE IF NOT EXISTS ${table} (${META_COLUMNS}) ENGINE = MergeTree ORDER BY key`, table);
  }
}

let counter = 0;

/** Sets meta keys on every shard, or on the shards given (later writes win). */
export async function writeMeta(db: ClickHouseDatabase, name: string, values: Record<string, string | number>, shards: readonly ClickHouseEndpoint[] = db.shards): Promise<void> {
  const version = Date.now() * 1000 + (counter++ % 1000);
  const rows = Object.entries(values).map(([key, value]) => ({ key, value: String(value), version }));
  for (const s of shards) await s.insert(db.qualified(`${name}_meta_local`), rows);
}

/** The meta keys of `name` on the URL's server (or on one shard's), or null when there is no meta table. */
export async function readMeta(db: ClickHouseDatabase, name: string, on: ClickHouseEndpoint = db.main): Promise<Record<string, string> | null> {
  const table = db.qualified(`${name}_meta_local`);
  if (!(await db.exists(`${name}_meta_local`, on))) return null;
  const rows = await on.rows<{ key: string; value: string }>(`SELECT key, argMax(value, version) AS value FROM ${table} GROUP BY key`, table);
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

/**
 * The meta of a complete store of `kind` in `format`: errors name the URL and the table when there is
 * none, when another format wrote it, or when its build/ingest did not finish.
 */
export async function requireMeta(db: ClickHouseDatabase, name: string, kind: string, format: string, unfinished: string): Promise<Record<string, string>> {
  const table = db.qualified(`${name}_meta_local`);
  const meta = await readMeta(db, name);
  if (meta === null || meta.kind === undefined) throw new ClickHouseError(`${db.url}: no ${kind} named ${name} here (no table ${table})`, db.url, table);
  if (meta.kind !== kind) throw new ClickHouseError(`${db.url} (table ${table}): holds a ${meta.kind}, not a ${kind}`, db.url, table);
  if (meta.format !== format) {
    throw new ClickHouseError(`${db.url} (table ${table}): format ${JSON.stringify(meta.format)}; this tartan reads ${format} (rebuild it with this version)`, db.url, table);
  }
  if (meta.complete !== "1") throw new ClickHouseError(`${db.url} (table ${table}): ${unfinished}`, db.url, table);
  return meta;
}

/** FNV-1a over UTF-16 code units: the shard of a string key is fnv1a(key) mod shards. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A value as one TabSeparated field (ClickHouse's escaping). */
export function tsvField(s: string): string {
  return s.replace(/[\\\t\n\r\0\b\f']/g, (c) => ({ "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\0": "\\0", "\b": "\\b", "\f": "\\f", "'": "\\'" })[c] as string);
}

const UNESCAPE: Record<string, string> = { t: "\t", n: "\n", r: "\r", "0": "\0", b: "\b", f: "\f" };

/** A TabSeparated field as the string it stands for. */
export function tsvUnescape(s: string): string {
  return s.indexOf("\\") === -1 ? s : s.replace(/\\(.)/g, (_, c: string) => UNESCAPE[c] ?? c);
}

/** TabSeparated output as rows of fields (unescaped). */
export function tsvRows(text: string): string[][] {
  const out: string[][] = [];
  for (const line of text.split("\n")) if (line.length > 0) out.push(line.split("\t").map(tsvUnescape));
  return out;
}

/** Bytes in `table` per shard (to report bytes and balance). */
export async function tableBytes(db: ClickHouseDatabase, prefix: string): Promise<number> {
  let total = 0;
  for (const s of db.shards) {
    const rows = await s.rows<{ b: string }>(
      `SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE active AND database = ${quote(db.database)} AND startsWith(table, ${quote(`${prefix}_`)})`,
      "system.parts",
    );
    total += Number(rows[0]?.b ?? 0);
  }
  return total;
}
