// The answer/entity-in-context metrics of KILT's `eval_retrieval` (kilt-spec.md §4.4): for one guess,
// the first passage among its provenance whose normalized text holds a gold answer, a gold title, or
// both, searched as UTF-8 bytes (see ContextMatcher). Split from ./provenance.ts, which re-exports it.

import { normalizeText, normalizeTextInto } from "./normalize.js";
import type { ProvEntry } from "./scan.js";
import { kernelFor, type TextKernels } from "./string-kernel.js";

const NON_ASCII_RE = /[^\x00-\x7f]/;
const LONE_SURROGATE_RE = /\p{Cs}/u;
/** Separates passages in the matcher's buffer: 0xFF is never part of UTF-8, so no match spans two passages. */
const SEPARATOR = 0xff;

/**
 * The context metrics of one guess: among the first `maxK` provenance entries, the first passage whose
 * normalized text holds some normalized gold answer (Python's `in`), the first holding some normalized
 * gold title, and the first holding both; an entry without `text` holds neither. `answer_in_context@k`
 * is then `firstAnswer < k`, and so on. The normalized passages are written as UTF-8 bytes into one
 * buffer (in the line's kernel memory, normalized by the WebAssembly kernel where ASCII: ./string-kernel.ts),
 * separated by a byte UTF-8 never uses, and searched with `Buffer.indexOf` (UTF-8 is
 * self-synchronising: a byte match is a code-point match); each answer is searched only before the
 * first passage found so far. Texts or answers holding a lone surrogate (no UTF-8 form) are compared
 * as strings instead.
 */
export class ContextMatcher {
  private hay = Buffer.allocUnsafe(1 << 16);
  private starts = new Int32Array(32);
  private ends = new Int32Array(32);
  private title = new Uint8Array(32);
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
    }
    this.length = n;
    this.firstAnswer = this.firstTitle = this.firstBoth = n;
    if (normalizedAnswers.length === 0 && normalizedTitles.length === 0) return;
    for (const s of normalizedAnswers) if (NON_ASCII_RE.test(s) && LONE_SURROGATE_RE.test(s)) return this.matchStrings(provenance, n, normalizedAnswers, normalizedTitles);
    for (const s of normalizedTitles) if (NON_ASCII_RE.test(s) && LONE_SURROGATE_RE.test(s)) return this.matchStrings(provenance, n, normalizedAnswers, normalizedTitles);
    const starts = this.starts;
    const ends = this.ends;
    // The normalized passages go to the output area of the kernel memory holding the line, where the
    // kernel normalizes the ASCII ones (the others take the JavaScript route there); texts elsewhere,
    // or too long for that area, go to this matcher's own buffer. Room: an ASCII text never grows,
    // another at most triples (UTF-8 of its JSON contents), plus the separator.
    let kernels: TextKernels | undefined;
    let need = 0;
    for (let i = 0; i < n; i++) {
      const t = provenance[i].text;
      if (!provenance[i].object || !provenance[i].hasText || !t) continue;
      kernels ??= kernelFor(t.buf);
      need += (t.ascii && !t.escaped ? 1 : 3) * (t.end - t.start) + 1;
    }
    // The needles' UTF-8 bytes go after the passages (at most 3 bytes a UTF-16 unit).
    for (const s of normalizedTitles) need += 3 * s.length;
    for (const s of normalizedAnswers) need += 3 * s.length;
    if (kernels !== undefined && need > kernels.out.length) kernels = undefined;
    if (kernels === undefined && this.hay.length < need) this.hay = Buffer.allocUnsafe(Math.max(need, this.hay.length * 2));
    const out = kernels !== undefined ? kernels.out : this.hay;
    let len = 0;
    let texts = 0;
    for (let i = 0; i < n; i++) {
      const p = provenance[i];
      starts[i] = -1;
      const t = p.text;
      if (!p.object || !p.hasText || !t) continue;
      let e = -1;
      if (kernels !== undefined && t.ascii && !t.escaped && t.buf.buffer === out.buffer) {
        const at = t.buf.byteOffset;
        const end = kernels.normalize(at + t.start, at + t.end, kernels.outAt + len);
        if (end >= 0) e = end - kernels.outAt;
      }
      if (e < 0) e = normalizeTextInto(t, out, len);
      if (e < 0) return this.matchStrings(provenance, n, normalizedAnswers, normalizedTitles);
      starts[i] = len;
      ends[i] = e;
      out[e] = SEPARATOR;
      len = e + 1;
      texts++;
    }
    if (texts === 0) return;
    this.out = out;
    this.kernels = kernels;
    const titleAt = this.placeNeedles(normalizedTitles, len);
    this.answerAt = this.placeNeedles(normalizedAnswers, titleAt.at(-1)!);
    // Titles: every passage holding one (the first is entity_in_context; "both" needs them all).
    const title = this.title;
    title.fill(0, 0, n);
    let titled = 0;
    for (let j = 0; j < normalizedTitles.length; j++) {
      if (normalizedTitles[j].length === 0) {
        // Python: "" is in every string.
        for (let i = 0; i < n; i++) if (starts[i] >= 0) title[i] = 1;
        titled = texts;
        break;
      }
      let pos = 0;
      let i = 0;
      while (pos < len) {
        const at = this.find(pos, len, titleAt[j], titleAt[j + 1]);
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
    const answerAt = this.answerAt;
    for (let j = 0; j < normalizedAnswers.length; j++) {
      if (limit === 0) break;
      let at: number;
      if (normalizedAnswers[j].length === 0) at = 0;
      else {
        at = this.find(0, limit, answerAt[j], answerAt[j + 1]);
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
      if (i === first || this.holdsAnswer(starts[i], ends[i], normalizedAnswers.length)) {
        this.firstBoth = i;
        break;
      }
    }
  }

  /** Whether the passage at `[from, to)` of the buffer holds one of the `answers` needles placed there. */
  private holdsAnswer(from: number, to: number, answers: number): boolean {
    const at = this.answerAt;
    for (let j = 0; j < answers; j++) if (at[j] === at[j + 1] || this.find(from, to, at[j], at[j + 1]) >= 0) return true;
    return false;
  }

  // The buffer of the last `match` (and its kernels, when in a kernel memory) and where its answers' bytes are.
  private out: Buffer = this.hay;
  private kernels: TextKernels | undefined;
  private answerAt: Int32Array = new Int32Array(0);

  /** Writes the needles' UTF-8 bytes into the buffer from `at`: needle j is `[r[j], r[j + 1])` of the result. */
  private placeNeedles(needles: readonly string[], at: number): Int32Array {
    const r = new Int32Array(needles.length + 1);
    r[0] = at;
    const out = this.out;
    for (let j = 0; j < needles.length; j++) {
      // ASCII code units copied here (no call into C++ for most needles); the rest written as UTF-8.
      const s = needles[j];
      let o = r[j];
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        out[o++] = c;
      }
      r[j + 1] = i === s.length ? o : r[j] + out.write(s, r[j], "utf8");
    }
    return r;
  }

  /** The first place in `[from, to)` of the buffer's bytes `[at, end)` (`Buffer.indexOf`), or -1. */
  private find(from: number, to: number, at: number, end: number): number {
    const k = this.kernels;
    if (k === undefined) return this.out.subarray(0, to).indexOf(this.out.subarray(at, end), from);
    const r = k.find(k.outAt + from, k.outAt + to, k.outAt + at, end - at);
    return r < 0 ? -1 : r - k.outAt;
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
