// `kilt_knowledgesource.json` (JSONL, plain or .gz) into a store directory, streaming with bounded
// memory (batches of lines parsed and compressed by worker threads, applied in input order) and resumable after a kill at any moment: pages and the checkpoint (byte offset and line of
// the last line whose effects are in) are committed in the same SQLite transaction, so a re-run starts
// exactly after the last commit and every page ends up stored once. Malformed lines are reported as
// `file:line: reason`, counted and skipped (or stop the ingest with `strict`); a page whose
// wikipedia_id came earlier is a duplicate: the first one wins, the later one is reported and counted.

import { fileIdentity } from "../util/input-identity.js";
import Database from "better-sqlite3";
import { realpathSync, rmSync, statSync } from "node:fs";
import { makeDirs } from "../util/safe-output.js";
import { byteLineBatches, LineError, type ByteLine } from "../records/jsonl.js";
import { progressDrawer, type OnProgress, type ProgressOptions } from "../util/progress.js";
import { COMPRESSION } from "./codec.js";
import { FORMAT, namingStoreFile, readMeta, SCHEMA, storeFile, TITLE_INDEXES, type StoreMeta } from "./format.js";
import { createPreparer, defaultWorkers, type Preparer } from "./pool.js";
import { INVALID_UTF8_IN_LINE, packLines, type PreparedBatch } from "./prepare.js";

/** Options of {@link ingest}. */
export interface IngestOptions {
  /** Store directory (created if needed). */
  out: string;
  /** Stop at the first malformed line or duplicate id (after committing the lines before it). */
  strict?: boolean;
  /** Discard whatever is in `out` and start over. */
  force?: boolean;
  /** Worker threads that parse and compress; default one per core up to 4, 0 = in-process. */
  workers?: number;
  /** Called for each malformed line and each duplicate id. */
  onProblem?: (problem: LineError) => void;
  /** Where the ingest reports its progress (a count line labelled "ingest": pages, bytes of the input); absent: nothing is reported. */
  onProgress?: OnProgress;
  /** Without `onProgress`: draw the progress line (on `stream`, default stderr, only if it is a TTY unless `enabled`). */
  progress?: Pick<ProgressOptions, "stream" | "enabled">;
  /** Commit (and move the checkpoint) after this many input bytes; default 32 MiB. */
  commitBytes?: number;
  /** Read size, and so the batch size handed to a worker; default 4 MiB. */
  chunkSize?: number;
}

/** What {@link ingest} did (totals over every run of a resumed ingest). */
export interface IngestResult {
  file: string;
  out: string;
  /** Totals over all runs of this ingest. */
  pages: number;
  badLines: number;
  duplicates: number;
  /** Input size in bytes. */
  inputBytes: number;
  storeBytes: number;
  /** Wall time of this run, and bytes of the file it read (less than inputBytes when it resumed; compressed bytes for .gz). */
  seconds: number;
  bytesThisRun: number;
  /** Where this run started, when it resumed an interrupted ingest. */
  resumedAt: { line: number; byte: number } | null;
  /** The store was already complete for this input: nothing was done. */
  alreadyComplete: boolean;
  workers: number;
}

/** An ingest that cannot start or go on (wrong input for this store, store in use, --strict stop). */
export class IngestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IngestError";
  }
}

type Db = Database.Database;

function writeMeta(db: Db, values: Partial<StoreMeta> & Record<string, unknown>): void {
  const put = db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
  for (const [k, v] of Object.entries(values)) put.run(k, v as string | number);
}

function openForIngest(path: string, out: string): Db {
  let db: Db | undefined;
  try {
    db = new Database(path, { timeout: 0 });
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = TRUNCATE");
    db.pragma("synchronous = NORMAL");
    db.pragma("cache_size = -262144");
    // Takes the exclusive lock now (and rolls back what a killed run left uncommitted).
    db.exec("BEGIN IMMEDIATE; COMMIT");
    return db;
  } catch (e) {
    db?.close();
    const code = (e as { code?: string }).code;
    if (code === "SQLITE_BUSY") throw new IngestError(`${out}: another process is using this store (an ingest still running?)`);
    if (code === "SQLITE_NOTADB") throw new IngestError(`${path}: not a SQLite file; pass --force to replace it`);
    throw namingStoreFile(path, e);
  }
}

/** Creates the store directory; the error names it (and a missing or read-only parent). */
function makeStoreDir(out: string): void {
  try {
    makeDirs(out);
  } catch (e) {
    throw new IngestError((e as Error).message.replace("cannot create the directory", "cannot create the store directory"));
  }
}

/**
 * `--force`: empties the store under its exclusive lock, so a store another ingest holds is refused
 * (never deleted under it). A file that is not SQLite at all is removed and a new store created.
 */
function openForcedIngest(path: string, out: string): Db {
  let db: Db;
  try {
    db = openForIngest(path, out);
  } catch (e) {
    if (!(e instanceof IngestError) || !e.message.includes("not a SQLite file")) throw e;
    for (const suffix of ["", "-journal", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
    return openForIngest(path, out);
  }
  try {
    const objects = db.prepare("SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'").all() as { type: string; name: string }[];
    db.transaction(() => {
      for (const o of objects) if (o.type === "table") db.exec(`DROP TABLE IF EXISTS "${o.name.replace(/"/g, '""')}"`);
    })();
    db.exec("VACUUM");
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

function describeInput(m: Pick<StoreMeta, "input_path" | "input_size" | "input_mtime_ms">): string {
  return `${m.input_path} (${m.input_size} bytes, modified ${new Date(m.input_mtime_ms).toISOString()})`;
}

/** Ingests `file` into `options.out`, resuming an interrupted ingest of the same file. */
export async function ingest(file: string, options: IngestOptions): Promise<IngestResult> {
  const started = performance.now();
  let inputPath: string;
  // "-" reads standard input (e.g. a generator piped in): it cannot be resumed, and its identity is
  // the moment the ingest began, so a store from another run of the same pipe is never mistaken for it.
  const stdin = file === "-";
  let st: { size: number; mtimeMs: number };
  if (stdin) {
    inputPath = "-";
    st = { size: 0, mtimeMs: Date.now() };
  } else {
    try {
      inputPath = realpathSync(file);
    } catch {
      throw new IngestError(`${file}: no such file`);
    }
    const fst = statSync(inputPath);
    if (!fst.isFile()) throw new IngestError(`${file}: not a file`);
    st = fst;
  }
  const input = { input_path: inputPath, input_size: st.size, input_mtime_ms: st.mtimeMs, ...(stdin ? {} : { input_sample: fileIdentity(inputPath).sample }) };
  const gz = inputPath.endsWith(".gz");

  makeStoreDir(options.out);
  const path = storeFile(options.out);
  const db = options.force ? openForcedIngest(path, options.out) : openForIngest(path, options.out);
  let preparer: Preparer | null = null;
  try {
    let meta = readMeta(db);
    if (meta === null) {
      const tables = db.prepare("SELECT count(*) FROM sqlite_schema").pluck().get() as number;
      if (tables > 0) throw new IngestError(`${path}: not a tartan knowledge-source store; pass --force to replace it`);
      db.transaction(() => {
        db.exec(SCHEMA);
        writeMeta(db, {
          format: FORMAT,
          compression: COMPRESSION,
          ...input,
          checkpoint_byte: 0,
          checkpoint_line: 0,
          pages: 0,
          bad_lines: 0,
          duplicates: 0,
          complete: 0,
          ingest_seconds: 0,
          runs: 0,
        });
      })();
      meta = readMeta(db) as StoreMeta;
    } else if (meta.format !== FORMAT) {
      throw new IngestError(`${path}: store format ${String(meta.format)}, this tartan writes ${FORMAT}; pass --force to rebuild`);
    } else if (stdin) {
      throw new IngestError(`${options.out} already holds ${meta.complete === 1 ? "an ingest" : "part of an ingest"} of ${meta.input_path}; an ingest from standard input cannot resume or add to it: pass --force to start over`);
    } else if (meta.input_path !== input.input_path) {
      throw new IngestError(
        `${options.out} holds an ingest of ${describeInput(meta)}; refusing to continue it with ${describeInput(input)}: pass --force to start over`,
      );
    } else if (meta.input_size !== input.input_size || meta.input_mtime_ms !== input.input_mtime_ms) {
      throw new IngestError(
        `${inputPath} changed since the ingest in ${options.out} began (was ${meta.input_size} bytes modified ${new Date(meta.input_mtime_ms).toISOString()}, now ${describeInput(input)}): pass --force to start over`,
      );
    } else if (meta.input_sample !== undefined && meta.input_sample !== input.input_sample) {
      throw new IngestError(`${inputPath} changed since the ingest in ${options.out} began (same size and modification time, other content): pass --force to start over`);
    }

    const result: IngestResult = {
      file,
      out: options.out,
      pages: meta.pages,
      badLines: meta.bad_lines,
      duplicates: meta.duplicates,
      inputBytes: st.size,
      storeBytes: 0,
      seconds: 0,
      bytesThisRun: 0,
      resumedAt: meta.checkpoint_line > 0 ? { line: meta.checkpoint_line, byte: meta.checkpoint_byte } : null,
      alreadyComplete: meta.complete === 1,
      workers: 0,
    };
    if (!result.alreadyComplete) {
      writeMeta(db, { runs: meta.runs + 1 });
      preparer = createPreparer(options.workers ?? defaultWorkers());
      result.workers = preparer.workers;
      const report = options.onProgress ?? (options.progress ? progressDrawer(options.progress) : null);
      const line = { label: "ingest", unit: "pages", totalBytes: st.size, startBytes: gz ? 0 : meta.checkpoint_byte };
      const progress: IngestProgress | null = report
        ? {
            update: (items, bytes) => report({ ...line, items, bytes }),
            clear: () => report({ ...line, items: 0, clear: true }),
            done: () => report({ ...line, items: 0, done: true }),
          }
        : null;
      await load({ db, file, inputPath, gz, meta, result, preparer, options, progress, started });
      db.exec(TITLE_INDEXES);
      if (stdin) {
        // Standard input's size is known only now.
        result.inputBytes = result.bytesThisRun;
        writeMeta(db, { input_size: result.bytesThisRun });
      }
      writeMeta(db, { complete: 1 });
      progress?.done();
    }
    result.seconds = (performance.now() - started) / 1000;
    db.close();
    result.storeBytes = statSync(path).size;
    return result;
  } catch (e) {
    throw namingStoreFile(path, e);
  } finally {
    if (db.open) db.close(); // an open transaction is rolled back: the store keeps its last checkpoint
    await preparer?.close();
  }
}

/** Malformed lines read, with no page among them, after which an ingest stops (the file holds no pages). */
export const NO_PAGE_LINES = 1000;

/** The error of an ingest whose first `bad` lines held no page (also the ClickHouse ingest's). */
export function noPages(file: string, bad: number, reason: string): IngestError {
  return new IngestError(
    `${file}: no knowledge-source page in the first ${bad} non-blank ${bad === 1 ? "line" : "lines"} (first problem: ${reason}); ` +
      "pages have wikipedia_id, wikipedia_title and text (a list of paragraphs): is this a KILT task file? Nothing was stored",
  );
}

/** The ingest's count line: where it is, erased under a problem's message, ended. */
interface IngestProgress {
  update(items: number, bytes: number): void;
  clear(): void;
  done(): void;
}

interface LoadContext {
  db: Db;
  file: string;
  inputPath: string;
  gz: boolean;
  meta: StoreMeta;
  result: IngestResult;
  preparer: Preparer;
  options: IngestOptions;
  progress: IngestProgress | null;
  started: number;
}

/** The streaming part: batches go to the preparer, results are applied in order inside big transactions. */
async function load(ctx: LoadContext): Promise<void> {
  const { db, file, inputPath, gz, meta, result, preparer, options, progress } = ctx;
  const insert = db.prepare("INSERT OR IGNORE INTO pages (wikipedia_id, title, title_lower, line, data) VALUES (?, ?, ?, ?, ?)");
  const firstLine = db.prepare("SELECT line FROM pages WHERE wikipedia_id = ?").pluck();
  const commitBytes = options.commitBytes ?? 32 << 20;
  // A .gz input cannot be entered at a byte offset: it is read from the start and the lines up to the checkpoint skipped.
  const startByte = gz ? 0 : meta.checkpoint_byte;
  const skipThrough = gz ? meta.checkpoint_line : 0;
  const state = { byte: meta.checkpoint_byte, line: meta.checkpoint_line, pages: meta.pages, bad: meta.bad_lines, dups: meta.duplicates };
  let secondsBase = meta.ingest_seconds;
  let clock = ctx.started;
  let uncommitted = 0;
  let bytesRead = 0;

  const commit = () => {
    const now = performance.now();
    secondsBase += (now - clock) / 1000;
    clock = now;
    writeMeta(db, {
      checkpoint_byte: state.byte,
      checkpoint_line: state.line,
      pages: state.pages,
      bad_lines: state.bad,
      duplicates: state.dups,
      ingest_seconds: secondsBase,
    });
    db.exec("COMMIT");
    uncommitted = 0;
  };
  const problem = (line: number, reason: string) => {
    const err = new LineError(file, line, reason);
    if (options.strict) {
      commit();
      throw new IngestError(`${err.message} (--strict: stopped; the ${state.pages} pages before it are stored)`);
    }
    progress?.clear();
    options.onProblem?.(err);
  };
  /** Applies a batch's prepared lines in input order. */
  let firstReason: string | undefined;
  const apply = (lines: ByteLine[], batch: PreparedBatch) => {
    const before = state.byte;
    const blob = Buffer.from(batch.blob.buffer, batch.blob.byteOffset, batch.blob.byteLength);
    const { ids, titles, lowers, reasons, offsets } = batch;
    firstReason ??= reasons.find((r) => r) ?? undefined;
    for (let i = 0; i < lines.length; i++) {
      const { line, endByte } = lines[i];
      const id = ids[i];
      if (id === null) {
        const reason = reasons[i] ?? "malformed";
        const utf8 = reason.startsWith(INVALID_UTF8_IN_LINE) ? Number(reason.slice(INVALID_UTF8_IN_LINE.length)) : -1;
        problem(line, utf8 >= 0 ? `invalid UTF-8 at byte ${lines[i].startByte + utf8} of the file (byte ${utf8} of the line)` : reason);
        state.bad++;
      } else {
        const r = insert.run(id, titles[i], lowers[i], line, blob.subarray(offsets[i], offsets[i + 1]));
        if (r.changes === 1) state.pages++;
        else {
          problem(line, `duplicate wikipedia_id ${JSON.stringify(id)} (first at line ${String(firstLine.get(id))}); skipped`);
          state.dups++;
        }
      }
      state.byte = endByte;
      state.line = line;
      if (state.pages === 0 && state.bad >= NO_PAGE_LINES) throw noPages(file, state.bad, reasons.find((r) => r) ?? "malformed");
    }
    uncommitted += state.byte - before;
    if (uncommitted >= commitBytes) {
      commit();
      db.exec("BEGIN");
    }
    progress?.update(state.pages, startByte + bytesRead);
  };

  // Each worker holds one batch and has one queued: the workers never wait, memory stays bounded.
  const inflight = Math.max(2, 2 * preparer.workers);
  const queue: { lines: ByteLine[]; batch: Promise<PreparedBatch> }[] = [];
  db.exec("BEGIN");
  const reader = byteLineBatches(inputPath, {
    startByte,
    startLine: gz ? 0 : meta.checkpoint_line,
    chunkSize: options.chunkSize ?? 4 << 20,
    // Standard input is read ahead on a thread: a generator or decompressor piped in keeps writing while
    // this thread applies a batch (measured: the two took turns, ~1.1 of 2 cores, at full size).
    readAheadBytes: 32 << 20,
    onProgress: (b) => (bytesRead = b),
  });
  for await (let lines of reader) {
    if (skipThrough > 0 && lines[0].line <= skipThrough) {
      lines = lines.filter((l) => l.line > skipThrough);
      if (lines.length === 0) continue;
    }
    const batch = preparer.prepare(packLines(lines));
    batch.catch(() => undefined); // awaited below; this only keeps a batch left behind by an error from being "unhandled"
    queue.push({ lines, batch });
    if (queue.length >= inflight) {
      const next = queue.shift()!;
      apply(next.lines, await next.batch);
    }
  }
  for (const next of queue) apply(next.lines, await next.batch);
  if (state.pages === 0 && state.bad > 0) throw noPages(file, state.bad, firstReason ?? "malformed");
  result.bytesThisRun = bytesRead;
  commit();
  Object.assign(result, { pages: state.pages, badLines: state.bad, duplicates: state.dups });
}
