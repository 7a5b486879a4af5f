// Fast parsing of prediction lines. Passage texts are most of a retrieval guess file's bytes, and the
// evaluator reads them only to normalize them for the context metrics, so they are lifted out of the
// line's bytes before JSON.parse (which then builds a small object) and later normalized straight
// from those bytes. The rewrite is exact for valid JSON: a `"text"` key is only taken where a key can
// start (after `{` or `,`), its string value is delimited with JSON's escape rules, and a line whose
// rewrite does not parse is parsed whole, so errors are the plain parser's.

import { parseJsonObject } from "../records/jsonl.js";
import { normalizeAnswer, normalizeAsciiBytes } from "./normalize.js";

/** The key that replaces `"text"` (a NUL written as an escape: no valid line holds it literally, and lines holding the escape are parsed whole). */
export const LIFTED_TEXT_KEY = "\u0000t";

const TEXT_KEY = Buffer.from('"text"');
const LIFTED_ESCAPE = Buffer.from("\\u0000t");

/** A passage text left in the line's bytes: the inside of a JSON string literal. */
export interface TextSpan {
  buf: Buffer;
  start: number;
  end: number;
}

export interface ParsedGuess {
  value?: Record<string, unknown>;
  /** Lifted texts, indexed by the number stored under {@link LIFTED_TEXT_KEY}. */
  texts: TextSpan[];
  reason?: string;
}

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** Index of the quote closing the string whose contents start at `from`, or -1. */
function closingQuote(buf: Buffer, from: number, end: number): number {
  let q = buf.indexOf(0x22, from);
  while (q !== -1 && q < end) {
    let b = q - 1;
    while (b >= from && buf[b] === 0x5c) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    q = buf.indexOf(0x22, q + 1);
  }
  return -1;
}

/**
 * Parses the guess line `buf[start, end)`. With `keepTexts` false (downstream-only evaluation) the
 * texts are dropped instead of kept as spans.
 */
export function parseGuessBytes(buf: Buffer, start: number, end: number, keepTexts: boolean): ParsedGuess {
  const texts: TextSpan[] = [];
  const view = buf.subarray(start, end);
  let k = view.indexOf(TEXT_KEY);
  if (k !== -1 && view.indexOf(LIFTED_ESCAPE) === -1) {
    let json = "";
    let copied = 0;
    while (k !== -1) {
      let b = k - 1;
      while (b >= 0 && isJsonSpace(view[b])) b--;
      let p = k + TEXT_KEY.length;
      if (b >= 0 && (view[b] === 0x7b || view[b] === 0x2c)) {
        while (p < view.length && isJsonSpace(view[p])) p++;
        if (view[p] === 0x3a) {
          p++;
          while (p < view.length && isJsonSpace(view[p])) p++;
          if (view[p] === 0x22) {
            const q = closingQuote(view, p + 1, view.length);
            if (q !== -1) {
              json += view.toString("utf8", copied, k);
              json += `"\\u0000t":${keepTexts ? texts.length : 0}`;
              if (keepTexts) texts.push({ buf: view, start: p + 1, end: q });
              copied = q + 1;
              p = q + 1;
            }
          }
        }
      }
      k = view.indexOf(TEXT_KEY, p);
    }
    json += view.toString("utf8", copied, view.length);
    try {
      const value: unknown = JSON.parse(json);
      if (value !== null && typeof value === "object" && !Array.isArray(value))
        return { value: value as Record<string, unknown>, texts };
    } catch {
      // fall through: the whole line gives the error
    }
    texts.length = 0;
  }
  const r = parseJsonObject(view.toString("utf8"));
  if ("reason" in r) return { texts, reason: r.reason };
  return { value: r.value, texts };
}

let scratch = Buffer.allocUnsafe(1 << 16);

/** `normalize_answer` of a lifted text, from its bytes when they are plain ASCII. */
export function normalizeSpan(span: TextSpan): string {
  const n = span.end - span.start;
  if (scratch.length < n) scratch = Buffer.allocUnsafe(Math.max(n, scratch.length * 2));
  const len = normalizeAsciiBytes(span.buf, span.start, span.end, scratch, true);
  if (len >= 0) return scratch.toString("latin1", 0, len);
  const text = JSON.parse(`"${span.buf.toString("utf8", span.start, span.end)}"`) as string;
  return normalizeAnswer(text);
}
