// The answer/entity-in-context metrics of KILT's `eval_retrieval` (kilt-spec.md §4.4): for one guess,
// the first passage among its provenance whose normalized text holds a gold answer, a gold title, or
// both, searched as UTF-8 bytes (see ContextMatcher). Split from ./provenance.ts, which re-exports it.

import { normalizeText, normalizeTextInto } from "./normalize.js";
import type { ProvEntry } from "./scan.js";

const NON_ASCII_RE = /[^\x00-\x7f]/;
const LONE_SURROGATE_RE = /\p{Cs}/u;
/** Separates passages in the matcher's buffer: 0xFF is never part of UTF-8, so no match spans two passages. */
const SEPARATOR = 0xff;

/**
 * The context metrics of one guess: among the first `maxK` provenance entries, the first passage whose
 * normalized text holds some normalized gold answer (Python's `in`), the first holding some normalized
 * gold title, and the first holding both; an entry without `text` holds neither. `answer_in_context@k`
 * is then `firstAnswer < k`, and so on. The normalized passages are written as UTF-8 bytes into one
 * buffer, separated by a byte UTF-8 never uses, and searched with `Buffer.indexOf` (UTF-8 is
 * self-synchronising: a byte match is a code-point match); each answer is searched only before the
 * first passage found so far. Texts or answers holding a lone surrogate (no UTF-8 form) are compared
 * as strings instead.
 */
export class ContextMatcher {
  private hay = Buffer.allocUnsafe(1 << 16);
  private starts = new Int32Array(32);
  private ends = new Int32Array(32);
  private title = new Uint8Array(32);
  private answer = new Uint8Array(32);
  /** Entries looked at by the last {@link match} (min of the provenance length and maxK). */
  length = 0;
  /** Index of the first passage holding an answer / a title / both; `length` when there is none. */
  firstAnswer = 0;
  firstTitle = 0;
  firstBoth = 0;

  match(provenance: readonly ProvEntry[], maxK: number, normalizedAnswers: readonly string[], normalizedTitles: readonly string[]): void {
    const n = provenance.length < maxK ? provenance.length : maxK;
    if (this.starts.length < n) {
      this.starts = new Int32Array(n);
      this.ends = new Int32Array(n);
      this.title = new Uint8Array(n);
      this.answer = new Uint8Array(n);
    }
    this.length = n;
    this.firstAnswer = this.firstTitle = this.firstBoth = n;
    if (normalizedAnswers.length === 0 && normalizedTitles.length === 0) return;
    for (const s of normalizedAnswers) if (NON_ASCII_RE.test(s) && LONE_SURROGATE_RE.test(s)) return this.matchStrings(provenance, n, normalizedAnswers, normalizedTitles);
    for (const s of normalizedTitles) if (NON_ASCII_RE.test(s) && LONE_SURROGATE_RE.test(s)) return this.matchStrings(provenance, n, normalizedAnswers, normalizedTitles);
    const starts = this.starts;
    const ends = this.ends;
    let len = 0;
    let texts = 0;
    for (let i = 0; i < n; i++) {
      const p = provenance[i];
      starts[i] = -1;
      if (!p.object || !p.hasText || !p.text) continue;
      const need = len + 3 * (p.text.end - p.text.start) + 1;
      if (this.hay.length < need) {
        const bigger = Buffer.allocUnsafe(Math.max(need, this.hay.length * 2));
        this.hay.copy(bigger, 0, 0, len);
        this.hay = bigger;
      }
      const e = normalizeTextInto(p.text, this.hay, len);
      if (e < 0) return this.matchStrings(provenance, n, normalizedAnswers, normalizedTitles);
      starts[i] = len;
      ends[i] = e;
      this.hay[e] = SEPARATOR;
      len = e + 1;
      texts++;
    }
    if (texts === 0) return;
    const hay = this.hay.subarray(0, len);
    // Titles: every passage holding one (the first is entity_in_context; "both" needs them all).
    const title = this.title;
    title.fill(0, 0, n);
    let titled = 0;
    for (const needle of normalizedTitles) {
      if (needle.length === 0) {
        // Python: "" is in every string.
        for (let i = 0; i < n; i++) if (starts[i] >= 0) title[i] = 1;
        titled = texts;
        break;
      }
      const enc = NON_ASCII_RE.test(needle) ? "utf8" : "latin1";
      let pos = 0;
      let i = 0;
      while (pos < len) {
        const at = hay.indexOf(needle, pos, enc);
        if (at < 0) break;
        while (starts[i] < 0 || ends[i] < at) i++;
        if (title[i] === 0) {
          title[i] = 1;
          titled++;
        }
        pos = ends[i] + 1;
        i++;
      }
      if (titled === texts) break;
    }
    for (let i = 0; i < n; i++)
      if (title[i]) {
        this.firstTitle = i;
        break;
      }
    // Answers: the first passage holding one, each answer searched only before the best so far.
    let first = n;
    let limit = len;
    for (const needle of normalizedAnswers) {
      if (limit === 0) break;
      let at: number;
      if (needle.length === 0) at = 0;
      else {
        const view = limit === len ? hay : hay.subarray(0, limit);
        at = view.indexOf(needle, 0, NON_ASCII_RE.test(needle) ? "utf8" : "latin1");
        if (at < 0) continue;
      }
      let i = 0;
      while (starts[i] < 0 || ends[i] < at) i++;
      first = i;
      limit = starts[i];
    }
    this.firstAnswer = first;
    // Both: the first titled passage, from the first answer on, that holds an answer.
    for (let i = first; i < n; i++) {
      if (!title[i]) continue;
      if (i === first || this.holdsAnswer(hay.subarray(starts[i], ends[i]), normalizedAnswers)) {
        this.firstBoth = i;
        break;
      }
    }
  }

  private holdsAnswer(passage: Buffer, needles: readonly string[]): boolean {
    for (const needle of needles) if (needle.length === 0 || passage.indexOf(needle, 0, NON_ASCII_RE.test(needle) ? "utf8" : "latin1") >= 0) return true;
    return false;
  }

  /** The string route (lone surrogates): `needle in text` on normalized strings. */
  private matchStrings(provenance: readonly ProvEntry[], n: number, normalizedAnswers: readonly string[], normalizedTitles: readonly string[]): void {
    for (let i = 0; i < n; i++) {
      const p = provenance[i];
      if (!p.object || !p.hasText || !p.text) continue;
      const text = normalizeText(p.text);
      const answer = normalizedAnswers.some((a) => text.includes(a));
      const title = normalizedTitles.some((t) => text.includes(t));
      if (answer && this.firstAnswer === n) this.firstAnswer = i;
      if (title && this.firstTitle === n) this.firstTitle = i;
      if (answer && title && this.firstBoth === n) this.firstBoth = i;
    }
  }
}
