// Resumable, verified downloads: one file from an http(s):// URL, a file:// URL or a local path into
// DEST, through DEST.part. An interrupted download (a killed process, a cut connection) keeps its
// .part file and a record beside it (DEST.part.json: the URL and the version the server named), and
// the next call continues from its end with an HTTP Range request asking for that version only
// (If-Range), or a read from that offset; a file that changed, a server that answers a ranged request
// with the whole file, or a .part from another URL starts again from zero, never spliced. The file is
// renamed into place only when it is complete, no longer than declared, matches its sha256 (or its size
// where no checksum is known) and looks like its format (never an HTML page served with 200).
// Redirects are followed to http(s) only, at most 10. Never writes through a planted link (symbolic
// or hard) at DEST or DEST.part. Errors name the URL and the file.

import { constants, closeSync, createReadStream, fstatSync, lstatSync, openSync, renameSync, statSync, unlinkSync, write } from "node:fs";
import { createHash, type Hash } from "node:crypto";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { dirname, resolve } from "node:path";
import { Writable, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { assertWritablePart, changedSince, formatProblem, ifRangeValue, isHtmlType, readPartRecord, removePartRecord, writePartRecord, type DownloadFormat, type PartRecord } from "./download-checks.js";

export type { DownloadFormat } from "./download-checks.js";

/** Redirects followed by default. */
export const MAX_REDIRECTS = 10;

/** Options of {@link downloadFile}. */
export interface DownloadOptions {
  /** Expected sha256 (hex); the file is renamed into place only when it matches. */
  sha256?: string;
  /** Expected size in bytes (checked when no sha256 is given, and before the checksum otherwise). */
  bytes?: number;
  /** What the file must look like when no sha256 is given (an HTML page served with 200 is refused). */
  format?: DownloadFormat;
  /** Network failures retried (each resuming from what arrived); default 3. */
  retries?: number;
  /** Milliseconds before a retry; default 1000. */
  retryDelayMs?: number;
  /** Milliseconds without data before a connection counts as failed; default 60,000. */
  idleTimeoutMs?: number;
  /** Redirects followed (to http(s) only); default {@link MAX_REDIRECTS}. */
  maxRedirects?: number;
  /** Called as bytes arrive: bytes in DEST.part, total when known, bytes there before this call. */
  onProgress?: (done: number, total: number | undefined, startBytes: number) => void;
  /** Lines saying what happens (resumes, restarts, redirects, retries); default: silent. */
  log?: (line: string) => void;
}

/** What {@link downloadFile} did. */
export interface DownloadResult {
  file: string;
  bytes: number;
  sha256: string;
  /** Bytes already in DEST.part when this call started and kept (0: a fresh download). */
  resumedFrom: number;
  /** True when DEST was already there and matched: nothing downloaded. */
  present: boolean;
  /** How the file was checked: the given sha256, the given size, only the size the source reported, or not at all (already present, nothing known to check it against). */
  verified: "sha256" | "size" | "server-size" | "none";
  /** The URL the file finally came from, when redirects led elsewhere. */
  redirectedTo?: string;
}

/** A download that failed: `url` and `file` say which. */
export class DownloadError extends Error {
  constructor(
    readonly url: string,
    readonly file: string,
    message: string,
  ) {
    super(`${url} → ${file}: ${message}`);
    this.name = "DownloadError";
  }
}

/** A failure worth retrying (the connection, not the file). */
class TransientError extends Error {}

/** The local path of a file:// URL or a plain path; null for http(s). */
export function localSource(source: string): string | null {
  if (/^https?:\/\//iu.test(source)) return null;
  if (/^file:\/\//iu.test(source)) return fileURLToPath(source);
  if (/^[a-z][a-z0-9+.-]*:\/\//iu.test(source)) throw new Error(`${source}: unsupported URL scheme (http, https, file or a path)`);
  return source;
}

/** True when `path` exists as a symbolic link (never followed). */
function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function sizeOf(path: string): number | null {
  try {
    return lstatSync(path).size;
  } catch {
    return null;
  }
}

/** sha256 of a file (hex), streamed; `into` continues an existing hash instead. */
export async function sha256File(path: string, into?: Hash): Promise<string> {
  const h = into ?? createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return into ? "" : h.digest("hex");
}

interface Opened {
  body: Readable;
  /** Offset the body starts at (0 when the server ignored the range). */
  start: number;
  /** Total size of the file when the source says it. */
  total: number | undefined;
  /** The version the source names (ETag, Last-Modified; a local file's size and mtime). */
  etag?: string;
  lastModified?: string;
  /** Where the body came from after redirects. */
  url: string;
}

function header(res: IncomingMessage, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Opens `source` from byte `offset`: an HTTP(S) GET with a Range header (If-Range: `ifRange`) or a file read. */
async function open(source: string, offset: number, idleMs: number, ifRange: string | undefined, maxRedirects: number): Promise<Opened> {
  const local = localSource(source);
  if (local === null) return openHttp(new URL(source), offset, idleMs, ifRange, maxRedirects, 0);
  let st;
  try {
    st = statSync(local);
  } catch (e) {
    throw new Error(`cannot read ${local} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const etag = `${st.size}-${st.mtimeMs}`;
  const start = offset > st.size ? 0 : offset;
  return { body: createReadStream(local, { start }), start, total: st.size, etag, url: source };
}

async function openHttp(url: URL, offset: number, idleMs: number, ifRange: string | undefined, maxRedirects: number, redirects: number): Promise<Opened> {
  const headers: Record<string, string> = { "User-Agent": "tartan", "Accept-Encoding": "identity" };
  if (offset > 0) {
    headers.Range = `bytes=${offset}-`;
    if (ifRange !== undefined) headers["If-Range"] = ifRange;
  }
  const req = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, { method: "GET", headers });
  const res = await new Promise<IncomingMessage>((ok, fail) => {
    req.on("response", ok);
    req.on("error", (e) => fail(new TransientError(e.message)));
    req.setTimeout(idleMs, () => req.destroy(new Error(`no answer for ${idleMs / 1000} s`)));
    req.end();
  });
  const status = res.statusCode ?? 0;
  const location = header(res, "location");
  if (status >= 300 && status < 400 && location) {
    res.resume();
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new Error(`HTTP ${status} redirect to ${JSON.stringify(location)}, not a URL`);
    }
    if (next.protocol !== "http:" && next.protocol !== "https:") throw new Error(`${url.href} redirected to ${next.href.slice(0, 200)}: refused (only http and https redirects are followed)`);
    if (redirects >= maxRedirects) throw new Error(`more than ${maxRedirects} redirects (the last from ${url.href} to ${next.href})`);
    return openHttp(next, offset, idleMs, ifRange, maxRedirects, redirects + 1);
  }
  const version = { etag: header(res, "etag"), lastModified: header(res, "last-modified"), url: url.href };
  if ((status === 200 || status === 206) && isHtmlType(header(res, "content-type"))) {
    res.resume();
    throw new Error(`${url.href} answered HTTP ${status} with an HTML page (Content-Type: ${header(res, "content-type")}), not the file: an error or login page? Nothing written`);
  }
  if (status === 416) {
    res.resume();
    const total = /\/(\d+)$/u.exec(header(res, "content-range") ?? "")?.[1];
    return { body: emptyBody(), start: offset, total: total === undefined ? undefined : Number(total), ...version };
  }
  if (status === 206) {
    const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/u.exec(header(res, "content-range") ?? "");
    if (!m) {
      res.resume();
      throw new Error(`HTTP 206 without a valid Content-Range (${String(header(res, "content-range"))})`);
    }
    if (Number(m[1]) !== offset) {
      res.resume();
      throw new Error(`asked for bytes from ${offset}, the server sent from ${m[1]}`);
    }
    return { body: res, start: offset, total: m[3] === "*" ? undefined : Number(m[3]), ...version };
  }
  if (status === 200) {
    const len = header(res, "content-length");
    return { body: res, start: 0, total: len === undefined ? undefined : Number(len), ...version };
  }
  res.resume();
  const err = `HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ""}`;
  if (status >= 500) throw new TransientError(err);
  throw new Error(err);
}

function emptyBody(): Readable {
  return createReadStream("/dev/null");
}

/** Opens DEST.part for appending without following a link (nor writing through a hard link); returns the descriptor. */
function openPart(part: string, truncate = false): number {
  assertWritablePart(part);
  let fd: number;
  try {
    fd = openSync(part, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | (truncate ? constants.O_TRUNC : 0), 0o644);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new Error(`${part} is a symbolic link: refusing to write through it`);
    if (code === "ENOENT") throw new Error(`directory ${dirname(resolve(part))} does not exist`);
    throw e;
  }
  const st = fstatSync(fd);
  if (!st.isFile() || st.nlink > 1) {
    // planted between the check and the open: nothing has been written yet
    closeSync(fd);
    assertWritablePart(part);
    throw new Error(`${part} changed while being opened: refusing to write to it`);
  }
  return fd;
}

/** Writes all of `buf` at the end of `fd`. */
async function writeFull(fd: number, buf: Buffer): Promise<void> {
  let at = 0;
  while (at < buf.length) {
    const n = await new Promise<number>((ok, fail) => write(fd, buf, at, buf.length - at, null, (err, written) => (err ? fail(err) : ok(written))));
    at += n;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The body was longer than the size declared for it. */
class TooLongError extends Error {}

/**
 * Downloads `source` (http(s) URL, file:// URL or path) to `dest` through `dest.part`, resuming what a
 * previous call left there; see the module comment. Throws a {@link DownloadError} naming the URL and
 * the file on a network failure (after the retries; DEST.part is kept for the next call) or a
 * mismatch (DEST.part is removed: its bytes are wrong).
 */
export async function downloadFile(source: string, dest: string, options: DownloadOptions = {}): Promise<DownloadResult> {
  const log = options.log ?? (() => {});
  const expectSha = options.sha256?.toLowerCase();
  const fail = (message: string) => new DownloadError(source, dest, message);
  if (expectSha !== undefined && !/^[0-9a-f]{64}$/u.test(expectSha)) throw fail(`expected sha256 ${JSON.stringify(options.sha256)} is not 64 hex digits`);
  if (isLink(dest)) throw fail(`${dest} is a symbolic link: refusing to replace or follow it`);
  const existing = sizeOf(dest);
  if (existing !== null) {
    // only read, never written: a hard link's other names keep their bytes whatever happens
    if (!lstatSync(dest).isFile()) throw fail(`${dest} exists and is not a regular file`);
    if (expectSha !== undefined || options.bytes !== undefined) {
      if (options.bytes !== undefined && existing !== options.bytes) throw fail(`${dest} already exists with ${existing} bytes, expected ${options.bytes}: remove it to download it again`);
      const have = await sha256File(dest);
      if (expectSha !== undefined && have !== expectSha) throw fail(`${dest} already exists with sha256 ${have}, expected ${expectSha}: remove it to download it again`);
      return { file: dest, bytes: existing, sha256: have, resumedFrom: 0, present: true, verified: expectSha !== undefined ? "sha256" : "size" };
    }
    const bad = options.format ? formatProblem(dest, options.format) : null;
    if (bad !== null) throw fail(`${dest} already exists but does not look right (${bad}): remove it to download it again`);
    // nothing to check it against (no checksum, no size known): taken as it is, and said so
    return { file: dest, bytes: existing, sha256: await sha256File(dest), resumedFrom: 0, present: true, verified: "none" };
  }
  const part = `${dest}.part`;
  let fd: number;
  try {
    fd = openPart(part);
  } catch (e) {
    throw fail((e as Error).message);
  }
  let record: PartRecord | null = readPartRecord(part);
  let hash = createHash("sha256");
  let offset = fstatSync(fd).size;
  const restart = (why: string) => {
    log(`${dest}: ${why}: downloading from the start`);
    closeSync(fd);
    fd = -1;
    try {
      fd = openPart(part, true);
    } catch (e) {
      throw fail((e as Error).message);
    }
    hash = createHash("sha256");
    offset = 0;
    resumedFrom = 0;
    record = null;
    removePartRecord(part);
  };
  let resumedFrom = offset;
  if (offset === 0 && record !== null) {
    record = null; // nothing kept: a record left from before names no bytes here
    removePartRecord(part);
  }
  if (offset > 0 && record === null && expectSha === undefined) restart(`${part} has ${offset.toLocaleString("en-US")} bytes but no record of where they came from (${part}.json) and no checksum to hold them to`);
  else if (offset > 0 && record !== null && record.url !== source) restart(`${part} was started from ${record.url}, not ${source}`);
  resumedFrom = offset;
  if (offset > 0) {
    log(`${dest}: resuming after ${offset.toLocaleString("en-US")} bytes (${part})`);
    await sha256File(part, hash);
  }
  let total: number | undefined;
  let redirectedTo: string | undefined;
  let changes = 0;
  const retries = options.retries ?? 3;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        const ifRange = offset > 0 ? ifRangeValue(record) : undefined;
        const opened = await open(source, offset, options.idleTimeoutMs ?? 60_000, ifRange, options.maxRedirects ?? MAX_REDIRECTS).catch((e: Error) => {
          throw e instanceof TransientError ? e : fail(e.message);
        });
        if (opened.url !== source && opened.url !== redirectedTo) log(`${dest}: ${source} redirected to ${opened.url}`);
        redirectedTo = opened.url !== source ? opened.url : undefined;
        const changed = offset > 0 && opened.start === offset ? changedSince(record, opened) : null;
        if (changed !== null) {
          // a resumed body from another version of the file: never spliced on; asked for again from 0
          opened.body.destroy();
          if (++changes > 3) throw fail(`the file keeps changing on the server (${changed})`);
          restart(`the file changed since ${part} was started (${changed})`);
          attempt--;
          continue;
        }
        if (opened.start !== offset) {
          restart(
            ifRange !== undefined
              ? `the server sent the whole file for a resume of version ${ifRange} (it changed, or it does not resume)`
              : "the source does not resume (it answered a ranged request with the whole file)",
          );
        }
        total = opened.start === 0 ? opened.total : (opened.total ?? total); // from zero: what an earlier answer said no longer counts
        if (offset === 0 && record === null) {
          record = { url: source, etag: opened.etag, lastModified: opened.lastModified, total: opened.total };
          writePartRecord(part, record);
        }
        const startBytes = resumedFrom;
        const h = hash;
        const out = fd;
        // no more bytes than declared (by the source or the catalogue): an endless body never fills the disk
        const declared = [total, options.bytes].filter((n): n is number => n !== undefined);
        const limit = declared.length > 0 ? Math.max(...declared) : Infinity;
        // each chunk is hashed once it is written, so the hash always covers exactly the bytes on disk
        let inflight: Promise<unknown> = Promise.resolve();
        const sink = new Writable({
          write(chunk: Buffer, _enc, done) {
            if (offset + chunk.length > limit) {
              done(new TooLongError(`more bytes than the ${limit.toLocaleString("en-US")} declared`));
              return;
            }
            inflight = writeFull(out, chunk)
              .then(() => {
                h.update(chunk);
                offset += chunk.length;
                options.onProgress?.(offset, total, startBytes);
                done();
              })
              .catch(done);
          },
        });
        if ("setTimeout" in opened.body) (opened.body as IncomingMessage).setTimeout(options.idleTimeoutMs ?? 60_000, () => opened.body.destroy(new Error("no data for a while")));
        try {
          await pipeline(opened.body, sink);
        } catch (e) {
          await inflight.catch(() => {}); // a write still under way ends before the file is measured
          if (e instanceof TooLongError) throw e;
          const code = (e as NodeJS.ErrnoException).code;
          if (code === "ENOSPC" || code === "EIO" || code === "EDQUOT") throw fail(`cannot write ${part}: ${(e as Error).message}`);
          const n = fstatSync(fd).size.toLocaleString("en-US");
          throw new TransientError(total !== undefined ? `the connection closed after ${n} of ${total.toLocaleString("en-US")} bytes` : `the transfer failed after ${n} bytes (${(e as Error).message})`);
        }
        offset = fstatSync(fd).size;
        if (total !== undefined && offset < total) throw new TransientError(`the connection closed after ${offset.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} bytes`);
        break;
      } catch (e) {
        if (!(e instanceof TransientError)) throw e;
        offset = fstatSync(fd).size;
        if (attempt >= retries) throw fail(`${e.message}; ${offset.toLocaleString("en-US")} bytes kept in ${part}: run again to resume`);
        log(`${dest}: ${e.message}; retrying from byte ${offset.toLocaleString("en-US")} (${attempt + 1}/${retries})`);
        await sleep(options.retryDelayMs ?? 1000);
      }
    }
  } catch (e) {
    if (e instanceof TooLongError) {
      closeSync(fd);
      fd = -1;
      removePart(part);
      throw fail(`${e.message}${redirectedTo ? ` (from ${redirectedTo})` : ""}: refused; ${part} removed`);
    }
    // refused before a byte arrived (an HTML page, a redirect elsewhere, HTTP 404): no empty .part is left
    if (fd !== -1 && fstatSync(fd).size === 0) removePart(part);
    throw e;
  } finally {
    if (fd !== -1) closeSync(fd);
  }
  const got = hash.digest("hex");
  const reject = (why: string): never => {
    removePart(part);
    throw fail(`${why}${redirectedTo ? ` (from ${redirectedTo})` : ""}; ${part} removed`);
  };
  if (options.bytes !== undefined && offset !== options.bytes) reject(`${offset.toLocaleString("en-US")} bytes, the catalogue says ${options.bytes.toLocaleString("en-US")}`);
  if (total !== undefined && offset !== total) reject(`${offset.toLocaleString("en-US")} bytes, the source says ${total.toLocaleString("en-US")}`);
  if (expectSha !== undefined && got !== expectSha) reject(`sha256 ${got}, expected ${expectSha} (a corrupt or different file)`);
  const bad = expectSha === undefined && options.format ? formatProblem(part, options.format) : null;
  if (bad !== null) reject(`${bad}: refused, not installed`);
  if (isLink(dest)) throw fail(`${dest} became a symbolic link during the download: refusing to replace it`);
  renameSync(part, dest);
  removePartRecord(part);
  return { file: dest, bytes: offset, sha256: got, resumedFrom, present: false, verified: expectSha !== undefined ? "sha256" : options.bytes !== undefined ? "size" : "server-size", ...(redirectedTo ? { redirectedTo } : {}) };
}

/** Removes DEST.part and its record; never throws. */
function removePart(part: string): void {
  try {
    unlinkSync(part);
  } catch {
    /* already gone */
  }
  removePartRecord(part);
}
