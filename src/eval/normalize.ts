// SQuAD-style answer normalization exactly as KILT's `eval_downstream.normalize_answer` computes it
// in Python: lower-case, drop ASCII punctuation, replace the articles a/an/the (Unicode word
// boundaries) by a space, and collapse Python's whitespace set (kilt-spec.md §3.3).

import { PYTHON_SPACE_CLASS } from "../records/python-str.js";
import { CLASS, LOWER, NON_ASCII, PUNCT, SPACE, WORD, WORD_LOWER } from "./ascii-classes.js";
import { decode, textOf, type TextRef } from "./json-scanner.js";
import { kernelFor, LineMemory, type TextKernels } from "./string-kernel.js";

/** Python's `string.punctuation`: ASCII only. */
const PUNCT_RE = /[!-/:-@[-`{-~]/g;
/** `\b(a|an|the)\b` for pure-ASCII text, where JavaScript's `\b` equals Python's. */
const ARTICLES_ASCII_RE = /\b(?:a|an|the)\b/g;
/** Python's Unicode `\b`: a word character is a letter, a number or `_`. */
const ARTICLES_UNICODE_RE = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;
const NON_ASCII_RE = /[^\x00-\x7f]/;
const SPACE_RUN_RE = new RegExp(`${PYTHON_SPACE_CLASS}+`, "gu");
const SPACE_RUN_ASCII_RE = /[\t\n\x0b\x0c\r\x1c-\x20]+/g;

/** The regular-expression route: any text, including non-ASCII (also the reference for the fast route). */
export function normalizeAnswerRegex(s: string): string {
  let t = s.toLowerCase();
  t = t.replace(PUNCT_RE, "");
  const ascii = !NON_ASCII_RE.test(t);
  t = ascii ? t.replace(ARTICLES_ASCII_RE, " ") : t.replace(ARTICLES_UNICODE_RE, " ");
  t = t.replace(ascii ? SPACE_RUN_ASCII_RE : SPACE_RUN_RE, " ");
  // Strip one leading and one trailing space left by the collapse.
  let a = 0;
  let b = t.length;
  if (b > 0 && t.charCodeAt(0) === 0x20) a = 1;
  if (b > a && t.charCodeAt(b - 1) === 0x20) b--;
  return a === 0 && b === t.length ? t : t.slice(a, b);
}

/**
 * The single-pass route: normalizes ASCII bytes `src[start, end)` into `out` from offset `at` and
 * returns the end of the output, or -1 when it meets a non-ASCII byte. `out` must hold at least
 * `end - start` bytes after `at`. A word run (letters and digits; punctuation inside it is dropped, as
 * Python drops punctuation before it looks at words) is copied in an inner loop, then dropped if it is
 * an article; whitespace runs become one pending space.
 */
export function normalizeAsciiBytes(src: Uint8Array, start: number, end: number, out: Uint8Array, at = 0): number {
  let o = at;
  let pendingSpace = false;
  let i = start;
  while (i < end) {
    let c = src[i];
    let k = CLASS[c];
    if (k === WORD) {
      if (pendingSpace && o > at) out[o++] = 0x20;
      pendingSpace = false;
      const runStart = o;
      out[o++] = LOWER[c];
      for (i++; i < end; i++) {
        c = src[i];
        const w = WORD_LOWER[c];
        if (w !== 0) out[o++] = w;
        else if (CLASS[c] !== PUNCT) break;
      }
      const len = o - runStart;
      if (
        len <= 3 &&
        ((len === 1 && out[runStart] === 0x61) ||
          (len === 2 && out[runStart] === 0x61 && out[runStart + 1] === 0x6e) ||
          (len === 3 && out[runStart] === 0x74 && out[runStart + 1] === 0x68 && out[runStart + 2] === 0x65))
      ) {
        // An article becomes a space (Python replaces it by " "), merged with the space before it.
        o = runStart;
        if (o > at && out[o - 1] === 0x20) o--;
        pendingSpace = true;
      }
      continue;
    }
    i++;
    if (k === PUNCT) continue;
    if (k === SPACE) {
      pendingSpace = true;
      continue;
    }
    if (k === NON_ASCII) return -1;
    if (pendingSpace && o > at) out[o++] = 0x20;
    pendingSpace = false;
    out[o++] = c;
  }
  return o;
}

let scratchOut = Buffer.allocUnsafe(1 << 16);

/**
 * `normalize_answer(s)` of KILT's evaluator. Pure-ASCII text (nearly all of it) takes one pass over
 * its bytes (the WebAssembly kernel's, where there is one); anything else takes the regular-expression
 * route. Both give Python's result. The string's code units are copied into the scratch bytes in the
 * loop that looks for a non-ASCII one (no regular expression, no call into Buffer's C++ per answer), and
 * the result is decoded with `decode`.
 */
export function normalizeAnswer(s: string): string {
  const n = s.length;
  const src = scratchFor(n);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return normalizeAnswerRegex(s);
    src[i] = c;
  }
  const k = answerKernels;
  if (k !== undefined) return decode(k.out, true, 0, k.normalize(src.byteOffset, src.byteOffset + n, k.outAt) - k.outAt);
  if (scratchOut.length < n) scratchOut = Buffer.allocUnsafe(Math.max(n, scratchOut.length * 2));
  return decode(scratchOut, true, 0, normalizeAsciiBytes(src, 0, n, scratchOut));
}

/**
 * `normalize_answer(s)` of an ASCII string as bytes into `out` from `at` (room: `s.length` bytes);
 * returns the end, or -1 (writing nothing) when `s` is not ASCII.
 */
export function normalizeAsciiInto(s: string, out: Uint8Array, at: number): number {
  const n = s.length;
  const src = scratchFor(n);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return -1;
    src[i] = c;
  }
  const k = answerKernels;
  if (k === undefined) return normalizeAsciiBytes(src, 0, n, out, at);
  // The kernel's output area, then its bytes copied (a loop: the texts are short).
  const len = k.normalize(src.byteOffset, src.byteOffset + n, k.outAt) - k.outAt;
  const from = k.out;
  for (let i = 0; i < len; i++) out[at + i] = from[i];
  return at + len;
}

/** The scratch bytes `normalizeAnswer` copies a string's code units to, at least `n` of them. */
function scratchFor(n: number): Buffer {
  if (answerMemory === undefined) {
    answerMemory = new LineMemory(1 << 16);
    answerKernels = kernelFor(answerMemory.buf);
  }
  if (answerMemory.buf.length < n) {
    answerMemory.grow(Math.max(n, 2 * answerMemory.buf.length), 0);
    answerKernels = kernelFor(answerMemory.buf);
  }
  return answerMemory.buf;
}

/** `normalizeAnswer`'s bytes: in a kernel memory, normalized there by the WebAssembly kernel (./string-kernel.ts). */
let answerMemory: LineMemory | undefined;
/** Its kernels (looked up once, and again when it grows). */
let answerKernels: TextKernels | undefined;

/** `normalize_answer(s).split()`: the tokens the F1 score compares. */
export function normalizedTokens(normalized: string): string[] {
  return normalized.length === 0 ? [] : normalized.split(" ");
}

/** `normalize_answer` of a passage text still in its line's bytes (ASCII texts never become strings first). */
export function normalizeText(t: TextRef): string {
  if (!t.ascii || t.escaped) return normalizeAnswer(textOf(t));
  const n = t.end - t.start;
  if (scratchOut.length < n) scratchOut = Buffer.allocUnsafe(Math.max(n, scratchOut.length * 2));
  const len = normalizeAsciiBytes(t.buf, t.start, t.end, scratchOut);
  return decode(scratchOut, true, 0, len);
}

const LONE_SURROGATE_RE = /\p{Cs}/u;

/**
 * `normalize_answer` of a passage text written as UTF-8 into `out` from offset `at` (which must hold
 * 3 bytes per byte of the text's JSON contents): returns the end of the output, or -1 when the
 * normalized text holds a lone surrogate (it has no UTF-8 form; the caller compares strings instead).
 */
export function normalizeTextInto(t: TextRef, out: Buffer, at: number): number {
  if (t.ascii && !t.escaped) return normalizeAsciiBytes(t.buf, t.start, t.end, out, at);
  const s = normalizeAnswer(textOf(t));
  if (LONE_SURROGATE_RE.test(s)) return -1;
  return at + out.write(s, at, "utf8");
}
