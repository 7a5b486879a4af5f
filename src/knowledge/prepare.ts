// The CPU-heavy part of an ingest, run in worker threads (or in-process): parse each line of a batch,
// check it is a knowledge-source page, and compress it. Lines travel as undecoded bytes packed into one
// buffer, and the compressed pages come back in one buffer: both are moved between threads, not copied,
// and the main thread never decodes a line (measured: decoding there and cloning the strings to the
// workers made the main thread the bottleneck; docs/decisions.md).

import { invalidUtf8At, parseJsonObject, type ByteLine } from "../records/jsonl.js";

/** The reason of a line with invalid UTF-8, followed by the offset in the line (ingest.ts completes it). */
export const INVALID_UTF8_IN_LINE = "invalid UTF-8 at line byte ";
import { compressPage } from "./codec.js";
import { lowerTitle } from "./format.js";

/** A batch of lines as bytes: line i is bytes[starts[i], starts[i + 1]). */
export interface PackedLines {
  bytes: Uint8Array;
  starts: Uint32Array;
}

/** Copies the lines of a `byteLineBatches` batch into one buffer of its own, which can be moved to a worker. */
export function packLines(batch: readonly ByteLine[]): PackedLines {
  const starts = new Uint32Array(batch.length + 1);
  let size = 0;
  for (let i = 0; i < batch.length; i++) starts[i + 1] = size += batch[i].end - batch[i].start;
  const bytes = Buffer.allocUnsafeSlow(size);
  for (let i = 0; i < batch.length; i++) batch[i].buf.copy(bytes, starts[i], batch[i].start, batch[i].end);
  return { bytes, starts };
}

/** The prepared lines of one batch, index-aligned with it. */
export interface PreparedBatch {
  /** wikipedia_id of each line, or null for a malformed line. */
  ids: (string | null)[];
  titles: (string | null)[];
  lowers: (string | null)[];
  /** Why a line is malformed (null for a good line). */
  reasons: (string | null)[];
  /** Compressed pages back to back; line i is blob[offsets[i], offsets[i + 1]) (empty for malformed lines). */
  blob: Uint8Array;
  offsets: Uint32Array;
}

function kind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  return typeof v === "object" ? "an object" : typeof v;
}

/** The page's id and title, or why it is not a knowledge-source page (naming the field). */
export function checkPage(page: Record<string, unknown>): { id: string; title: string } | { reason: string } {
  const rawId = page.wikipedia_id;
  let id: string;
  if (rawId === undefined) return { reason: 'missing field "wikipedia_id"' };
  if (typeof rawId === "string") id = rawId;
  else if (typeof rawId === "number" && Number.isSafeInteger(rawId)) id = String(rawId);
  else return { reason: `field "wikipedia_id" must be a string or an integer, found ${kind(rawId)}` };
  if (id.length === 0) return { reason: 'field "wikipedia_id" is empty' };
  if (page._id !== undefined && String(page._id) !== id) {
    return { reason: `field "_id" (${JSON.stringify(page._id)}) differs from "wikipedia_id" (${JSON.stringify(id)})` };
  }
  const title = page.wikipedia_title;
  if (title === undefined) return { reason: 'missing field "wikipedia_title"' };
  if (typeof title !== "string") return { reason: `field "wikipedia_title" must be a string, found ${kind(title)}` };
  const text = page.text;
  if (text === undefined) return { reason: 'missing field "text"' };
  if (!Array.isArray(text)) return { reason: `field "text" must be a list of strings, found ${kind(text)}` };
  for (let i = 0; i < text.length; i++) {
    if (typeof text[i] !== "string") return { reason: `field "text[${i}]" must be a string, found ${kind(text[i])}` };
  }
  return { id, title };
}

/** Parses, checks and compresses a packed batch of lines. */
export function preparePacked(packed: PackedLines): PreparedBatch {
  const { starts } = packed;
  const n = starts.length - 1;
  const bytes = Buffer.from(packed.bytes.buffer, packed.bytes.byteOffset, packed.bytes.byteLength);
  const ids: (string | null)[] = new Array(n);
  const titles: (string | null)[] = new Array(n);
  const lowers: (string | null)[] = new Array(n);
  const reasons: (string | null)[] = new Array(n);
  const parts: Buffer[] = [];
  const offsets = new Uint32Array(n + 1);
  let size = 0;
  for (let i = 0; i < n; i++) {
    // Invalid UTF-8 is a malformed line (never decoded with U+FFFD: a changed id would be stored, and
    // the valid page with that id dropped as a duplicate); ingest.ts adds the byte offset in the file.
    const bad = invalidUtf8At(bytes, starts[i], starts[i + 1]);
    const parsed = bad >= 0 ? { reason: `${INVALID_UTF8_IN_LINE}${bad}` } : parseJsonObject(bytes.toString("utf8", starts[i], starts[i + 1]));
    const checked = "reason" in parsed ? parsed : checkPage(parsed.value);
    if ("reason" in checked) {
      ids[i] = titles[i] = lowers[i] = null;
      reasons[i] = checked.reason;
    } else {
      ids[i] = checked.id;
      titles[i] = checked.title;
      lowers[i] = lowerTitle(checked.title);
      reasons[i] = null;
      const c = compressPage(bytes.subarray(starts[i], starts[i + 1]));
      parts.push(c);
      size += c.length;
    }
    offsets[i + 1] = size;
  }
  // A buffer of its own (never a slice of Node's shared pool), so it can be transferred.
  const blob = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const p of parts) at += p.copy(blob, at);
  return { ids, titles, lowers, reasons, blob, offsets };
}
