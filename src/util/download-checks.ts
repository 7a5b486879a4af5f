// What the downloader (src/util/download.ts) checks beside the bytes themselves: that a `.part` file is
// a plain file with one name (never a symbolic or hard link it would write through); the record kept
// beside a `.part` (`DEST.part.json`: the URL it came from and the version the server named, ETag,
// Last-Modified and size) so a resume asks for that version only (If-Range) and a changed or different
// file starts again instead of being spliced on; and that a finished file looks like what it should
// be (JSONL, TSV, gzip, tar), so an HTML error or login page served with 200 is never installed.

import { closeSync, lstatSync, openSync, readFileSync, readSync, unlinkSync } from "node:fs";
import { writeFileSafe } from "./safe-output.js";

/** Formats a finished download can be checked against. */
export type DownloadFormat = "jsonl" | "tsv" | "gzip" | "tar";

/** The record beside `DEST.part`: where its bytes came from and which version of the file they are. */
export interface PartRecord {
  /** The URL (or path) asked for, before any redirect. */
  url: string;
  /** The server's ETag (for a local source: its size and modification time). */
  etag?: string;
  lastModified?: string;
  /** The whole file's size as the source declared it. */
  total?: number;
}

/** Where the record of `part` is kept. */
export function partRecordPath(part: string): string {
  return `${part}.json`;
}

/** The record of `part`; null when there is none or it cannot be read (then nothing is known of the bytes). */
export function readPartRecord(part: string): PartRecord | null {
  const path = partRecordPath(part);
  try {
    if (!lstatSync(path).isFile()) return null;
    const r = JSON.parse(readFileSync(path, "utf8")) as PartRecord;
    return r !== null && typeof r === "object" && typeof r.url === "string" ? r : null;
  } catch {
    return null;
  }
}

/** Writes the record of `part` (through a temporary file and a rename: a planted link is replaced, never followed). */
export function writePartRecord(part: string, record: PartRecord): void {
  writeFileSafe(partRecordPath(part), `${JSON.stringify(record)}\n`);
}

/** Removes the record of `part`; never throws. */
export function removePartRecord(part: string): void {
  try {
    unlinkSync(partRecordPath(part));
  } catch {
    /* already gone */
  }
}

/** The value for If-Range: a strong ETag, else Last-Modified; undefined when the record names no version. */
export function ifRangeValue(r: PartRecord | null): string | undefined {
  if (r?.etag !== undefined && !r.etag.startsWith("W/")) return r.etag;
  return r?.lastModified;
}

/** Why the version a source answers with is not the one `r` recorded; null when nothing says it changed. */
export function changedSince(r: PartRecord | null, now: { etag?: string; lastModified?: string; total?: number }): string | null {
  if (r === null) return null;
  if (r.etag !== undefined && now.etag !== undefined && r.etag !== now.etag) return `its ETag is ${now.etag}, was ${r.etag}`;
  if (r.lastModified !== undefined && now.lastModified !== undefined && r.lastModified !== now.lastModified) return `it was modified ${now.lastModified}, was ${r.lastModified}`;
  if (r.total !== undefined && now.total !== undefined && r.total !== now.total) return `it is ${now.total.toLocaleString("en-US")} bytes, was ${r.total.toLocaleString("en-US")}`;
  return null;
}

/**
 * Throws unless `path` is absent or a regular file with one name: a symbolic link, a hard link (more
 * than one name: writing would change the other one too) or anything else is refused, never written.
 */
export function assertWritablePart(path: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (st.isSymbolicLink()) throw new Error(`${path} is a symbolic link: refusing to write through it`);
  if (!st.isFile()) throw new Error(`${path} exists and is not a regular file: refusing to write to it`);
  if (st.nlink > 1) throw new Error(`${path} is a hard link (${st.nlink} names for one file): refusing to write through it; remove it to download again`);
}

/** True for a Content-Type that is a web page (an error or login page, never a data file). */
export function isHtmlType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*(text\/html|application\/xhtml\+xml)\b/iu.test(contentType);
}

const HEAD = 16 << 20;

/** The first bytes of `path` (up to `n`). */
function head(path: string, n: number): Buffer {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(n);
    let got = 0;
    for (;;) {
      const k = readSync(fd, buf, got, n - got, got);
      if (k === 0 || got + k >= n) return buf.subarray(0, got + k);
      got += k;
    }
  } finally {
    closeSync(fd);
  }
}

/** A short quotation of the first bytes, for messages. */
function quote(b: Buffer): string {
  return JSON.stringify(b.subarray(0, 60).toString("latin1"));
}

/**
 * Why the file at `path` is not `format` (null when it looks right): JSONL's first line parses as JSON
 * (a first line over 16 MiB: it starts with `{` or `[`), TSV's first line has a tab, gzip starts with
 * its magic bytes 1f 8b, tar has "ustar" at byte 257.
 */
export function formatProblem(path: string, format: DownloadFormat): string | null {
  const b = head(path, format === "jsonl" || format === "tsv" ? HEAD : 512);
  const looksHtml = /^\s*</u.test(b.subarray(0, 64).toString("latin1")) ? " (it looks like an HTML page: an error or login page?)" : "";
  if (b.length === 0) return `the file is empty, not ${format === "jsonl" ? "JSONL" : format}`;
  if (format === "gzip") return b[0] === 0x1f && b[1] === 0x8b ? null : `not gzip: it does not start with the bytes 1f 8b but with ${quote(b)}${looksHtml}`;
  if (format === "tar") return b.length >= 262 && b.toString("latin1", 257, 262) === "ustar" ? null : `not a tar archive: no "ustar" at byte 257; it starts with ${quote(b)}${looksHtml}`;
  const nl = b.indexOf(0x0a);
  const line = b.subarray(0, nl === -1 ? b.length : nl).toString("utf8").replace(/^\uFEFF/u, "");
  if (format === "tsv") return line.includes("\t") ? null : `not TSV: its first line has no tab: ${quote(b)}${looksHtml}`;
  if (nl === -1 && b.length === HEAD) return /^\s*[[{]/u.test(line) ? null : `not JSONL: its first line starts with ${quote(b)}${looksHtml}`;
  try {
    JSON.parse(line);
    return null;
  } catch {
    return `not JSONL: its first line does not parse as JSON: ${quote(b)}${looksHtml}`;
  }
}
