// The on-disk format of a knowledge-source store: one SQLite file `DIR/ks.sqlite` with a `pages`
// table (one row per page: id, title, lower-cased title, source line, compressed JSON) and a `meta`
// table (input identity, resume checkpoint, counts). Shared by the ingest (writer) and the store (reader).

import type Database from "better-sqlite3";
import { join } from "node:path";

/** The store's file inside its directory. */
export const STORE_FILE = "ks.sqlite";
/** Written to meta `format`; a reader refuses other values. */
export const FORMAT = "tartan-ks/1";

/** The store's SQLite file in the knowledge-source directory `dir`. */
export function storeFile(dir: string): string {
  return join(dir, STORE_FILE);
}

/**
 * Tables. `data` holds the page's JSONL line exactly as read, brotli-compressed (see codec.ts);
 * `line` is its 1-based line number in the input. wikipedia_id is UNIQUE: the first page with an id wins.
 */
export const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE pages (
  rowid INTEGER PRIMARY KEY,
  wikipedia_id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  title_lower TEXT NOT NULL,
  line INTEGER NOT NULL,
  data BLOB NOT NULL
);
`;

/** Title indexes, built once after the bulk load (idempotent, so a resumed ingest can re-run it). */
export const TITLE_INDEXES = `
CREATE INDEX IF NOT EXISTS pages_title ON pages (title);
CREATE INDEX IF NOT EXISTS pages_title_lower ON pages (title_lower);
`;

/** What the meta table records. Counts and the checkpoint are updated in the same transaction as the pages. */
export interface StoreMeta {
  format: string;
  /** How `data` is compressed (codec.ts). */
  compression: string;
  /** Absolute path, size and mtime of the input: a resume must see the same file. */
  input_path: string;
  input_size: number;
  input_mtime_ms: number;
  /** SHA-256 of the input (whole up to 256 MiB, else sampled; src/util/input-identity.ts); absent in stores made before it was recorded. */
  input_sample?: string;
  /** Byte offset (uncompressed) just past the last line whose effects are committed, and that line's number. */
  checkpoint_byte: number;
  checkpoint_line: number;
  /** Pages stored, malformed lines skipped, pages skipped because their wikipedia_id came earlier. */
  pages: number;
  bad_lines: number;
  duplicates: number;
  /** 1 once every line is in and the indexes are built. */
  complete: number;
  /** Seconds spent ingesting, summed over runs. */
  ingest_seconds: number;
  /** Number of runs that contributed (1 + resumes). */
  runs: number;
}

/** The lower-cased form titles are matched on case-insensitively (Unicode default case mapping, locale-independent). */
export function lowerTitle(title: string): string {
  return title.toLowerCase();
}

/** The meta table as an object, or null when the database has none (not a store, or nothing committed yet). */
export function readMeta(db: Database.Database): StoreMeta | null {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'").get();
  if (!hasMeta) return null;
  const rows = db.prepare("SELECT key, value FROM meta").all() as { key: string; value: unknown }[];
  return Object.fromEntries(rows.map((r) => [r.key, r.value])) as unknown as StoreMeta;
}

/**
 * A SQLite error of the store file `path` with the file named ("database disk image is malformed",
 * "database or disk is full" do not say which file); other errors are returned as they are.
 */
export function namingStoreFile(path: string, e: unknown): unknown {
  const code = (e as { code?: unknown }).code;
  if (!(e instanceof Error) || typeof code !== "string" || !code.startsWith("SQLITE_") || e.message.includes(path)) return e;
  const hint = code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB" ? " (corrupt: rebuild it with tartan ks ingest --force)" : code.startsWith("SQLITE_FULL") ? " (free some space, then re-run: the ingest resumes)" : "";
  const wrapped = new Error(`${path}: ${e.message}${hint}`);
  (wrapped as Error & { code?: string }).code = code;
  return wrapped;
}
