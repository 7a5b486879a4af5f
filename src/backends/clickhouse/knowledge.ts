// The knowledge source on ClickHouse: the ingest of kilt_knowledgesource.json into sharded tables, and
// the KnowledgeSourceReader over them. Tables (sharded by FNV-1a of wikipedia_id; a page and its keys
// on the same shard, so lookups join locally):
//   <name>_pages_local (seq, wikipedia_id, title, data)  ORDER BY seq: the input line and the line as read
//   <name>_keys_local  (kind, key, seq)                  ORDER BY (kind, key, seq): kind 0 = wikipedia_id,
//                                                        kind 1 = lower-cased title (the title index)
// tartan routes rows itself and inserts into each shard's local table synchronously (one INSERT = one
// part, all or nothing), then moves the checkpoint (line, byte, counts) in the meta of every shard.
// A resumed ingest re-reads from the checkpoint and skips the rows of the interrupted batch that did
// get in (same seq), so every page is stored exactly once whenever the ingest was killed.

import { realpathSync, statSync } from "node:fs";
import { byteLineBatches, LineError, parseJsonObject } from "../../records/jsonl.js";
import { pyStr } from "../../records/python-str.js";
import type { KiltId, KiltPage } from "../../records/types.js";
import { lowerTitle } from "../../knowledge/format.js";
import { NO_PAGE_LINES, noPages, type IngestResult } from "../../knowledge/ingest.js";
import { checkPage } from "../../knowledge/prepare.js";
import type { KnowledgeSourceReader } from "../../knowledge/source.js";
import { titlesFromUrl } from "../../knowledge/url.js";
import { progressDrawer, type OnProgress } from "../../util/progress.js";
import { ClickHouseDatabase, quote } from "./client.js";
import { createMeta, fnv1a, KS_FORMAT, readMeta, requireMeta, tableBytes, tsvField, tsvRows, writeMeta } from "./schema.js";

export const DEFAULT_KS_NAME = "ks";
const PAGES_COLUMNS = "seq UInt64, wikipedia_id String, title String, data String";
const KEYS_COLUMNS = "kind UInt8, key String, seq UInt64";

function ksName(db: ClickHouseDatabase): string {
  return db.u.name ?? DEFAULT_KS_NAME;
}

/** Options of an ingest into ClickHouse. */
export interface ClickHouseIngestOptions {
  strict?: boolean;
  force?: boolean;
  /** Called for each malformed or skipped line. */
  onProblem?: (problem: LineError) => void;
  /** Commit (insert and move the checkpoint) after this many input bytes; default 8 MiB. */
  commitBytes?: number;
  /** Called after each commit (tests kill the process here). */
  onCommit?: (line: number) => void;
  /** Where the ingest reports its progress (a count line labelled "ingest": pages, bytes of the input). */
  onProgress?: OnProgress;
  /** Without `onProgress`: draw the progress line on stderr (when it is a terminal, or when `enabled`); absent too: nothing is drawn, as with every other job. */
  progress?: { enabled?: boolean };
}

/** What the embedded ingest reports (totals over all runs, this run's time), for a ClickHouse URL and its shards. */
export interface ClickHouseIngestResult extends Pick<IngestResult, "file" | "pages" | "badLines" | "duplicates" | "inputBytes" | "storeBytes" | "seconds" | "alreadyComplete"> {
  url: string;
  resumedAt: { line: number } | null;
  shards: number;
}

interface Pending {
  pages: string[][];
  keys: string[][];
}

/** Ingests `file` (JSONL, plain or .gz) into the knowledge source of `url`; resumable, exactly once. */
export async function ingestClickHouse(file: string, url: string, o: ClickHouseIngestOptions = {}): Promise<ClickHouseIngestResult> {
  const t0 = performance.now();
  const st = statSync(file);
  const input = realpathSync(file);
  const db = await ClickHouseDatabase.connect(url);
  try {
    const name = ksName(db);
    const S = db.shards.length;
    const pagesLocal = db.qualified(`${name}_pages_local`);
    const keysLocal = db.qualified(`${name}_keys_local`);
    let meta = await readMeta(db, name);
    if (meta && o.force) {
      await db.dropTable(`${name}_pages`);
      await db.dropTable(`${name}_keys`);
      for (const s of db.shards) await s.command(`DROP TABLE IF EXISTS ${db.qualified(`${name}_meta_local`)}`);
      meta = null;
    }
    if (meta && meta.kind !== undefined) {
      if (meta.kind !== "ks" || meta.format !== KS_FORMAT) {
        throw new Error(`${url} (table ${db.qualified(`${name}_meta_local`)}): holds ${meta.kind} format ${meta.format}, not ${KS_FORMAT}; use --force to replace it`);
      }
      // (resumed over another number of shards, pages would land on the wrong ones and duplicates go unseen)
      db.checkShardCount(Number(meta.shards), "ingested", db.qualified(`${name}_meta_local`));
      if (meta.input_path !== input || Number(meta.input_size) !== st.size) {
        throw new Error(`${url}: holds the ingest of ${meta.input_path} (${meta.input_size} bytes), not ${input} (${st.size} bytes); use --force to replace it, or another name (clickhouse://…/db/NAME)`);
      }
      if (meta.complete === "1") {
        return { file, url, pages: Number(meta.pages), badLines: Number(meta.bad_lines), duplicates: Number(meta.duplicates), inputBytes: st.size, storeBytes: await tableBytes(db, name), seconds: 0, resumedAt: null, alreadyComplete: true, shards: S };
      }
    } else {
      await createMeta(db, name);
      await writeMeta(db, name, { kind: "ks", format: KS_FORMAT, input_path: input, input_size: st.size, checkpoint_line: 0, checkpoint_byte: 0, pages: 0, bad_lines: 0, duplicates: 0, complete: 0, shards: S });
      meta = await readMeta(db, name);
    }
    await db.createTable(`${name}_pages`, PAGES_COLUMNS, "MergeTree ORDER BY seq SETTINGS index_granularity = 1024");
    await db.createTable(`${name}_keys`, KEYS_COLUMNS, "MergeTree ORDER BY (kind, key, seq) SETTINGS index_granularity = 1024");
    const m = meta as Record<string, string>;
    let line = Number(m.checkpoint_line);
    let byte = Number(m.checkpoint_byte);
    let pages = Number(m.pages);
    let badLines = Number(m.bad_lines);
    let duplicates = Number(m.duplicates);
    const resumedAt = line > 0 ? { line } : null;

    // Rows of the interrupted batch that got in before the kill (seq > checkpoint): not inserted again.
    const presentPages = new Set<number>();
    const presentKeys = new Set<number>();
    if (resumedAt) {
      for (const s of db.shards) {
        for (const [seq] of tsvRows(await s.text(`SELECT seq FROM ${pagesLocal} WHERE seq > ${line}`, pagesLocal))) presentPages.add(Number(seq));
        for (const [seq] of tsvRows(await s.text(`SELECT seq FROM ${keysLocal} WHERE kind = 0 AND seq > ${line}`, keysLocal))) presentKeys.add(Number(seq));
      }
    }

    const commitBytes = o.commitBytes ?? 8 << 20;
    const gz = file.endsWith(".gz");
    const report = o.onProgress ?? (o.progress !== undefined ? progressDrawer({ enabled: o.progress.enabled }) : () => {});
    const bar = { label: "ingest", unit: "pages", totalBytes: st.size, startBytes: gz ? 0 : byte };
    let pending: { seq: number; id: string; title: string; lower: string; data: string }[] = [];
    let pendingBytes = 0;
    let lastLine = line;
    let lastByte = byte;
    let firstReason: string | undefined;

    const commit = async () => {
      // Duplicates: ids already stored (by an earlier line) or earlier in this batch; the first wins.
      const ids = [...new Set(pending.map((p) => p.id))];
      const stored = new Map<string, number>();
      if (ids.length > 0) {
        const keysRead = db.readTable(`${name}_keys`);
        for (let i = 0; i < ids.length; i += 5000) {
          const chunk = ids.slice(i, i + 5000);
          const text = await db.main.text(`SELECT key, min(seq) FROM ${keysRead} WHERE kind = 0 AND key IN (${chunk.map(quote).join(",")}) GROUP BY key`, keysRead);
          for (const [key, seq] of tsvRows(text)) stored.set(key, Number(seq));
        }
      }
      const out: Pending = { pages: db.shards.map(() => []), keys: db.shards.map(() => []) };
      const seen = new Set<string>();
      for (const p of pending) {
        const first = stored.get(p.id);
        if ((first !== undefined && first !== p.seq) || seen.has(p.id)) {
          duplicates++;
          o.onProblem?.(new LineError(file, p.seq, `duplicate wikipedia_id ${JSON.stringify(p.id)} (first seen on line ${first ?? "earlier in this batch"}): skipped`));
          if (o.strict) throw new LineError(file, p.seq, `duplicate wikipedia_id ${JSON.stringify(p.id)} (--strict)`);
          continue;
        }
        seen.add(p.id);
        pages++;
        const shard = fnv1a(p.id) % S;
        if (!presentPages.has(p.seq)) out.pages[shard].push(`${p.seq}\t${tsvField(p.id)}\t${tsvField(p.title)}\t${tsvField(p.data)}\n`);
        if (!presentKeys.has(p.seq)) out.keys[shard].push(`0\t${tsvField(p.id)}\t${p.seq}\n1\t${tsvField(p.lower)}\t${p.seq}\n`);
      }
      await Promise.all(
        db.shards.map(async (s, i) => {
          await s.insertTsv(pagesLocal, out.pages[i].join(""));
          await s.insertTsv(keysLocal, out.keys[i].join(""));
        }),
      );
      await writeMeta(db, name, { checkpoint_line: lastLine, checkpoint_byte: lastByte, pages, bad_lines: badLines, duplicates });
      pending = [];
      pendingBytes = 0;
      o.onCommit?.(lastLine);
    };

    for await (const batch of byteLineBatches(file, gz ? {} : { startByte: byte, startLine: line })) {
      for (const b of batch) {
        if (b.line <= line) continue; // .gz: re-read up to the checkpoint
        const text = b.buf.toString("utf8", b.start, b.end);
        const parsed = parseJsonObject(text);
        const checked = "reason" in parsed ? parsed : checkPage(parsed.value);
        if ("reason" in checked) {
          badLines++;
          firstReason ??= checked.reason;
          // (as the embedded ingest: a file whose first lines hold no page is not a knowledge source)
          if (pages + pending.length === 0 && badLines >= NO_PAGE_LINES) throw noPages(file, badLines, firstReason);
          const err = new LineError(file, b.line, checked.reason);
          o.onProblem?.(err);
          if (o.strict) {
            await commit();
            throw err;
          }
        } else {
          pending.push({ seq: b.line, id: checked.id, title: checked.title, lower: lowerTitle(checked.title), data: text });
          pendingBytes += b.end - b.start;
        }
        lastLine = b.line;
        lastByte = b.endByte;
        if (pendingBytes >= commitBytes) await commit();
        report({ ...bar, items: pages + pending.length, bytes: b.endByte });
      }
    }
    if (pages + pending.length === 0 && badLines > 0) throw noPages(file, badLines, firstReason ?? "malformed");
    await commit();
    report({ ...bar, items: 0, done: true });
    await writeMeta(db, name, { complete: 1 });
    return {
      file,
      url,
      pages,
      badLines,
      duplicates,
      inputBytes: st.size,
      storeBytes: await tableBytes(db, name),
      seconds: (performance.now() - t0) / 1000,
      resumedAt,
      alreadyComplete: false,
      shards: S,
    };
  } finally {
    await db.close();
  }
}

/** What `ks stats` shows for a ClickHouse knowledge source. */
export interface ClickHouseKsInfo {
  url: string;
  shards: number;
  meta: Record<string, string>;
  bytes: number;
}

/** A knowledge source in ClickHouse: its shards, stored metadata (ingest checkpoint, counts) and bytes on disk. */
export async function clickHouseKsInfo(url: string): Promise<ClickHouseKsInfo> {
  const db = await ClickHouseDatabase.connect(url);
  try {
    const name = ksName(db);
    const meta = await readMeta(db, name);
    if (meta === null || meta.kind === undefined) throw new Error(`${url}: no knowledge source named ${name} here (no table ${db.qualified(`${name}_meta_local`)}); build one with \`tartan ks ingest FILE --ks ${url}\``);
    return { url, shards: db.shards.length, meta, bytes: await tableBytes(db, name) };
  } finally {
    await db.close();
  }
}

/** A knowledge source in ClickHouse, read through the Distributed tables. */
export class ClickHouseKnowledgeSource implements KnowledgeSourceReader {
  private readonly pagesTable: string;
  private readonly keysLocal: string;

  private constructor(
    readonly db: ClickHouseDatabase,
    readonly meta: Record<string, string>,
  ) {
    const name = ksName(db);
    this.pagesTable = db.readTable(`${name}_pages`);
    this.keysLocal = db.qualified(`${name}_keys_local`);
  }

  get location(): string {
    return this.db.url;
  }

  /** Opens the knowledge source of `url`; refuses an incomplete ingest or another format. */
  static async open(url: string): Promise<ClickHouseKnowledgeSource> {
    const db = await ClickHouseDatabase.connect(url);
    try {
      const meta = await requireMeta(db, ksName(db), "ks", KS_FORMAT, "its ingest is not complete; re-run `tartan ks ingest` to resume it");
      db.checkShardCount(Number(meta.shards), "ingested", db.qualified(`${ksName(db)}_meta_local`));
      return new ClickHouseKnowledgeSource(db, meta);
    } catch (e) {
      await db.close();
      throw e;
    }
  }

  /** Pages whose key of `kind` is one of `keys`: [title, seq, page], in input order (each shard joins its own keys). */
  private async byKeys(kind: 0 | 1, keys: readonly string[]): Promise<{ title: string; seq: number; data: string }[]> {
    if (keys.length === 0) return [];
    const sql = `SELECT title, seq, data FROM ${this.pagesTable} WHERE seq IN (SELECT seq FROM ${this.keysLocal} WHERE kind = ${kind} AND key IN (${keys.map(quote).join(",")})) ORDER BY seq`;
    return tsvRows(await this.db.main.text(sql, this.pagesTable)).map(([title, seq, data]) => ({ title, seq: Number(seq), data }));
  }

  async getPageById(id: KiltId): Promise<KiltPage | null> {
    const rows = await this.byKeys(0, [typeof id === "string" ? id : pyStr(id)]);
    return rows.length === 0 ? null : (JSON.parse(rows[0].data) as KiltPage);
  }

  /** Candidate titles in order: the first matching exactly, else the first matching ignoring case. */
  private async byTitles(titles: readonly string[]): Promise<KiltPage | null> {
    const rows = await this.byKeys(1, [...new Set(titles.map(lowerTitle))]);
    for (const t of titles) {
      const r = rows.find((x) => x.title === t);
      if (r) return JSON.parse(r.data) as KiltPage;
    }
    for (const t of titles) {
      const lower = lowerTitle(t);
      const r = rows.find((x) => lowerTitle(x.title) === lower);
      if (r) return JSON.parse(r.data) as KiltPage;
    }
    return null;
  }

  getPageByTitle(title: string): Promise<KiltPage | null> {
    return this.byTitles([title]);
  }

  getPageFromUrl(url: string): Promise<KiltPage | null> {
    return this.byTitles(titlesFromUrl(url));
  }

  count(): number {
    return Number(this.meta.pages);
  }

  async *pages(batchSize = 1000): AsyncGenerator<KiltPage> {
    let last = 0;
    for (;;) {
      const rows = tsvRows(await this.db.main.text(`SELECT seq, data FROM ${this.pagesTable} WHERE seq > ${last} ORDER BY seq LIMIT ${batchSize}`, this.pagesTable));
      for (const [, data] of rows) yield JSON.parse(data) as KiltPage;
      if (rows.length < batchSize) return;
      last = Number(rows[rows.length - 1][0]);
    }
  }

  /** Every page, shard by shard. */
  [Symbol.asyncIterator](): AsyncIterator<KiltPage> {
    return this.pages();
  }

  /** Closes the connections to the cluster. */
  async close(): Promise<void> {
    await this.db.close();
  }
}
