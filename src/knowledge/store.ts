// The knowledge source as a library: KILT's `KnowledgeSource` API (kilt-spec.md §1.4) over a store
// built by `tartan ks ingest`. Lookups by id and by title go through indexes (never a scan); titles
// match exactly first, then case-insensitively; URLs follow KILT's rules minus the network step.

import Database from "better-sqlite3";
import { existsSync, statSync } from "node:fs";
import type { KiltId, KiltPage } from "../records/types.js";
import { pyStr } from "../records/python-str.js";
import { COMPRESSION, decodePage, decodePageText, type PageText } from "./codec.js";
import { FORMAT, lowerTitle, namingStoreFile, readMeta, storeFile, type StoreMeta } from "./format.js";
import type { KnowledgeSourceReader } from "./source.js";
import { titlesFromUrl } from "./url.js";

/** A store that cannot be opened: missing, incomplete, in use, or written by another format. */
export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreError";
  }
}

/** What `stats` shows: the meta table plus the store's size. */
export interface StoreInfo extends StoreMeta {
  dir: string;
  storeBytes: number;
}

/** Reads a store's meta table, complete or not (for `ks stats` and for checks). */
export function readStoreInfo(dir: string): StoreInfo {
  const path = storeFile(dir);
  if (!existsSync(path)) throw new StoreError(`${dir}: no knowledge-source store here (no ${path}); build one with \`tartan ks ingest\``);
  let db: Database.Database | undefined;
  try {
    // Read-write so that what a killed ingest left uncommitted is rolled back before reading.
    db = new Database(path, { fileMustExist: true, timeout: 0 });
    const meta = readMeta(db);
    if (meta === null) {
      const empty = db.prepare("SELECT count(*) FROM sqlite_schema").pluck().get() === 0;
      throw new StoreError(
        empty
          ? `${dir}: an ingest started here but stopped before committing anything; re-run \`tartan ks ingest\``
          : `${path}: not a tartan knowledge-source store`,
      );
    }
    return { ...meta, dir, storeBytes: statSync(path).size };
  } catch (e) {
    if ((e as { code?: string }).code === "SQLITE_BUSY") throw new StoreError(`${dir}: in use by another process (an ingest still running?)`);
    throw namingStoreFile(path, e);
  } finally {
    db?.close();
  }
}

/** A page of {@link KnowledgeSource.pageTextsBetween}: its rowid, its id and text decoded on demand. */
export interface PageTextRow {
  /** The page's rowid in the store. */
  rowid: number;
  /** Decodes the page's id and text. */
  text(): PageText;
}

/** The embedded store: one SQLite file, no server (the `KnowledgeSourceReader` of a directory). */
export class KnowledgeSource implements KnowledgeSourceReader {
  private readonly byId: Database.Statement<[string], Buffer>;
  private readonly byTitle: Database.Statement<[string], Buffer>;
  private readonly byTitleLower: Database.Statement<[string], Buffer>;
  private readonly byRow: Database.Statement<[number], Buffer>;
  private readonly after: Database.Statement<[number, number], { rowid: number; data: Buffer }>;
  private readonly pageCount: number;
  private rowIds: Database.Statement<[number, number], number> | null = null;
  private between: Database.Statement<[number, number], { rowid: number; data: Buffer }> | null = null;

  private constructor(
    readonly dir: string,
    private readonly db: Database.Database,
    readonly meta: StoreMeta,
  ) {
    this.byId = db.prepare<[string], Buffer>("SELECT data FROM pages WHERE wikipedia_id = ?").pluck();
    this.byTitle = db.prepare<[string], Buffer>("SELECT data FROM pages WHERE title = ? ORDER BY rowid LIMIT 1").pluck();
    this.byTitleLower = db.prepare<[string], Buffer>("SELECT data FROM pages WHERE title_lower = ? ORDER BY rowid LIMIT 1").pluck();
    this.byRow = db.prepare<[number], Buffer>("SELECT data FROM pages WHERE rowid = ?").pluck();
    this.after = db.prepare<[number, number], { rowid: number; data: Buffer }>(
      "SELECT rowid, data FROM pages WHERE rowid > ? ORDER BY rowid LIMIT ?",
    );
    this.pageCount = meta.pages;
  }

  get location(): string {
    return this.dir;
  }

  /** Opens the store in `dir` read-only. Refuses an incomplete store (an ingest to finish or resume). */
  static open(dir: string): KnowledgeSource {
    const info = readStoreInfo(dir);
    if (info.format !== FORMAT) throw new StoreError(`${dir}: store format ${String(info.format)}; this tartan reads ${FORMAT}`);
    if (info.compression !== undefined && info.compression !== COMPRESSION) {
      throw new StoreError(`${dir}: pages compressed as ${String(info.compression)}; this tartan reads ${COMPRESSION}`);
    }
    if (info.complete !== 1) {
      throw new StoreError(
        `${dir}: the ingest of ${info.input_path} is not complete (stopped after line ${info.checkpoint_line}); re-run \`tartan ks ingest\` to resume it`,
      );
    }
    try {
      const db = new Database(storeFile(dir), { readonly: true, fileMustExist: true });
      return new KnowledgeSource(dir, db, info);
    } catch (e) {
      throw namingStoreFile(storeFile(dir), e);
    }
  }

  /** KILT `get_page_by_id`: the page whose wikipedia_id is `str(id)`, or null. */
  getPageById(id: KiltId): KiltPage | null {
    const key = typeof id === "string" ? id : pyStr(id);
    const blob = this.guard(() => this.byId.get(key));
    return blob === undefined ? null : this.decode(blob, `with wikipedia_id ${JSON.stringify(key)}`);
  }

  /** The page titled `title` exactly, else the first (in input order) whose title matches ignoring case, or null. */
  getPageByTitle(title: string): KiltPage | null {
    const blob = this.guard(() => this.byTitle.get(title) ?? this.byTitleLower.get(lowerTitle(title)));
    return blob === undefined ? null : this.decode(blob, `titled ${JSON.stringify(title)}`);
  }

  /** The page stored at `rowid` (rows() gives each page's rowid), or null. */
  getPageByRow(rowid: number): KiltPage | null {
    const blob = this.guard(() => this.byRow.get(rowid));
    return blob === undefined ? null : this.decode(blob, `at row ${rowid}`);
  }

  /** The id and text alone of the page stored at `rowid` (as getPageByRow gives them, other fields not decoded), or null. */
  getPageTextByRow(rowid: number): PageText | null {
    const blob = this.guard(() => this.byRow.get(rowid));
    return blob === undefined ? null : this.decodeText(blob, `at row ${rowid}`);
  }

  /**
   * KILT `get_page_from_url` without its network step: the candidate titles of `titlesFromUrl(url)`,
   * each looked up exactly, then each case-insensitively. Null when none matches.
   */
  getPageFromUrl(url: string): KiltPage | null {
    const titles = titlesFromUrl(url);
    for (const t of titles) {
      const blob = this.guard(() => this.byTitle.get(t));
      if (blob !== undefined) return this.decode(blob, `titled ${JSON.stringify(t)}`);
    }
    for (const t of titles) {
      const blob = this.guard(() => this.byTitleLower.get(lowerTitle(t)));
      if (blob !== undefined) return this.decode(blob, `titled ${JSON.stringify(t)}`);
    }
    return null;
  }

  /** A stored page; a damaged one (its compressed data or JSON) is an error naming the store and the page. */
  private decode(blob: Uint8Array, which: string): KiltPage {
    try {
      return decodePage(blob);
    } catch (e) {
      throw new Error(`${storeFile(this.dir)}: the page ${which} is damaged (${(e as Error).message}); ingest the store again (tartan ks ingest --force)`);
    }
  }

  /** A stored page's id and text; damage found is an error naming the store and the page, as decode's. */
  private decodeText(blob: Uint8Array, which: string): PageText {
    try {
      return decodePageText(blob);
    } catch (e) {
      throw new Error(`${storeFile(this.dir)}: the page ${which} is damaged (${(e as Error).message}); ingest the store again (tartan ks ingest --force)`);
    }
  }

  /** Runs a query; a SQLite error names the store file. */
  private guard<T>(query: () => T): T {
    try {
      return query();
    } catch (e) {
      throw namingStoreFile(storeFile(this.dir), e);
    }
  }

  /** KILT `get_num_pages`: the number of pages stored. */
  count(): number {
    return this.pageCount;
  }

  /**
   * KILT `get_all_pages_cursor`: every page in input order. Reads `batchSize` rows at a time, so
   * lookups may be interleaved with the iteration.
   */
  *pages(batchSize = 256): Generator<KiltPage> {
    for (const r of this.rows(batchSize)) yield r.page;
  }

  /** Every page in input order with its rowid (what getPageByRow takes). */
  *rows(batchSize = 256): Generator<{ rowid: number; page: KiltPage }> {
    let last = 0;
    for (;;) {
      const rows = this.guard(() => this.after.all(last, batchSize));
      for (const r of rows) yield { rowid: r.rowid, page: this.decode(r.data, `at row ${r.rowid}`) };
      if (rows.length < batchSize) return;
      last = rows[rows.length - 1].rowid;
    }
  }

  /** Up to `limit` rowids after `after`, in order (no page is read): how work over the store is split. */
  rowIdsAfter(after: number, limit: number): number[] {
    this.rowIds ??= this.db.prepare<[number, number], number>("SELECT rowid FROM pages WHERE rowid > ? ORDER BY rowid LIMIT ?").pluck();
    const stmt = this.rowIds;
    return this.guard(() => stmt.all(after, limit));
  }

  /** The pages at rowids `first`..`last` (inclusive), in order, with their rowids. */
  rowsBetween(first: number, last: number): { rowid: number; page: KiltPage }[] {
    return this.blobsBetween(first, last).map((r) => ({ rowid: r.rowid, page: this.decode(r.data, `at row ${r.rowid}`) }));
  }

  /**
   * The pages at rowids `first`..`last` (inclusive), in order, read in one query; each page's id and text
   * (as getPageTextByRow gives them) are decoded when its `text()` is called.
   */
  pageTextsBetween(first: number, last: number): PageTextRow[] {
    return this.blobsBetween(first, last).map((r) => ({ rowid: r.rowid, text: () => this.decodeText(r.data, `at row ${r.rowid}`) }));
  }

  /** The stored bytes of the pages at rowids `first`..`last` (inclusive), in order, in one query. */
  private blobsBetween(first: number, last: number): { rowid: number; data: Buffer }[] {
    this.between ??= this.db.prepare<[number, number], { rowid: number; data: Buffer }>("SELECT rowid, data FROM pages WHERE rowid BETWEEN ? AND ? ORDER BY rowid");
    const stmt = this.between;
    return this.guard(() => stmt.all(first, last));
  }

  /** Every page, in input order. */
  [Symbol.iterator](): Iterator<KiltPage> {
    return this.pages();
  }

  /** SQLite's plan for a lookup: shows which index it uses (the tests check that none is a scan). */
  explain(kind: "id" | "title" | "title_lower"): string[] {
    const sql = { id: "wikipedia_id = ?", title: "title = ? ORDER BY rowid LIMIT 1", title_lower: "title_lower = ? ORDER BY rowid LIMIT 1" }[kind];
    const rows = this.db.prepare(`EXPLAIN QUERY PLAN SELECT data FROM pages WHERE ${sql}`).all("x") as { detail: string }[];
    return rows.map((r) => r.detail);
  }

  /** Closes the store's database. */
  close(): void {
    this.db.close();
  }
}
