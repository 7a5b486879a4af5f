// The answer/entity-in-context metrics of KILT's `eval_retrieval` (kilt-spec.md §4.4): for one guess,
// the first passage among its provenance whose normalized text holds a gold answer, a gold title, or
// both, searched as UTF-8 bytes (see ContextMatcher). Split from ./provenance.ts, which re-exports it.

import { NeedleStore, type Needles } from "./needles.js";
import { normalizeText, normalizeTextInto } from "./normalize.js";
import type { ProvEntry } from "./scan.js";
import { kernelFor, type TextKernels } from "./string-kernel.js";

/** Separates passages in the matcher's buffer: 0xFF is never part of UTF-8, so no match spans two passages. */
const SEPARATOR = 0xff;

/**
 * The context metrics of one guess: among the first `maxK` provenance entries, the first passage whose
 * normalized text holds some normalized gold answer (Python's `in`), the first holding some normalized
 * gold title, and the first holding both; an entry without `text` holds neither. `answer_in_context@k`
 * is then `firstAnswer < k`, and so on. The normalized passages are written as UTF-8 bytes into one
 * buffer (in the line's kernel memory, normalized by the WebAssembly kernel where ASCII: ./string-kernel.ts),
 * separated by a byte UTF-8 never uses, followed by the needles' bytes (./needles.ts), and searched
 * (UTF-8 is self-synchronising: a byte match is a code-point match); each answer is searched only
 * before the first passage found so far. Texts or needles holding a lone surrogate (no UTF-8 form) are
 * compared as strings instead.
 */
export class ContextMatcher {
  private hay: Buffer = Buffer.allocUnsafe(1 << 16);
  private starts = new Int32Array(32);
  private ends = new Int32Array(32);
  private title = new Uint8Array(32);
  /** The needles of the string form of {@link match}. */
  private readonly scratch = new NeedleStore();
  private readonly scratchNeedles: Needles = { store: this.scratch, first: 0, titles: 0, answers: 0 };
  /** Entries looked at by the last match (min of the provenance length and maxK). */
  length = 0;
  /** Index of the first passage holding an answer / a title / both; `length` when there is none. */
  firstAnswer = 0;
  firstTitle = 0;
  firstBoth = 0;

  /** {@link matchNeedles} with the needles given as normalized strings. */
  match(provenance: readonly ProvEntry[], maxK: number, normalizedAnswers: readonly string[], normalizedTitles: readonly string[]): void {
    const store = this.scratch;
    store.truncate(0);
    let utf8 = true;
    for (let j = 0; j < normalizedTitles.length && utf8; j++) utf8 = store.add(normalizedTitles[j], true);
    for (let j = 0; j < normalizedAnswers.length && utf8; j++) utf8 = store.add(normalizedAnswers[j], true);
    if (utf8) {
      this.scratchNeedles.titles = normalizedTitles.length;
      this.scratchNeedles.answers = normalizedAnswers.length;
      return this.matchNeedles(provenance, maxK, this.scratchNeedles);
    }
    this.begin(provenance, maxK);
    this.matchStrings(provenance, normalizedAnswers, normalizedTitles);
  }

  /** Sizes the per-passage arrays and sets the first passages to "none". */
  private begin(provenance: readonly ProvEntry[], maxK: number): number {
    const n = provenance.length < maxK ? provenance.length : maxK;
    if (this.starts.length < n) {
      this.starts = new Int32Array(n);
      this.ends = new Int32Array(n);
      this.title = new Uint8Array(n);
    }
    this.length = n;
    this.firstAnswer = this.firstTitle = this.firstBoth = n;
    return n;
  }

  /** Finds the first passages holding a needle (see the class). */
  matchNeedles(provenance: readonly ProvEntry[], maxK: number, needles: Needles): void {
    const n = this.begin(provenance, maxK);
    const titles = needles.titles;
    const answers = needles.answers;
    if (titles + answers === 0) return;
    const { bytes, at } = needles.store;
    const first = needles.first;
    const needleFrom = at[first];
    const needleBytes = at[first + titles + answers] - needleFrom;
    const starts = this.starts;
    const ends = this.ends;
    // The normalized passages go to the output area of the kernel memory holding the line, where the
    // kernel normalizes the ASCII ones (the others take the JavaScript route there), or to this
    // matcher's own buffer when the line is elsewhere or that area has no room left. Room: an ASCII
    // text never grows, another at most triples (UTF-8 of its JSON contents), plus the separator, and
    // the needles after the last passage.
    let kernels: TextKernels | undefined;
    let line: Buffer | undefined;
    let lineAt = 0;
    let out: Buffer = this.hay;
    let len = 0;
    let texts = 0;
    for (let i = 0; i < n; i++) {
      const p = provenance[i];
      starts[i] = -1;
      const t = p.text;
      if (!p.object || !p.hasText || t === undefined) continue;
      const plain = t.ascii && !t.escaped;
      if (texts === 0) {
        kernels = kernelFor(t.buf);
        if (kernels !== undefined) {
          out = kernels.out;
          line = t.buf;
          lineAt = t.buf.byteOffset;
        }
      }
      const room = len + (plain ? 1 : 3) * (t.end - t.start) + 1 + needleBytes;
      if (room > out.length) out = this.spill(out, len, room), kernels = undefined;
      let e = -1;
      if (plain && t.buf === line && kernels !== undefined) {
        const end = kernels.normalize(lineAt + t.start, lineAt + t.end, kernels.outAt + len);
        if (end >= 0) e = end - kernels.outAt;
      }
      if (e < 0) e = normalizeTextInto(t, out, len);
      if (e < 0) return this.matchStrings(provenance, this.strings(needles, titles, answers), this.strings(needles, 0, titles));
      starts[i] = len;
      ends[i] = e;
      out[e] = SEPARATOR;
      len = e + 1;
      texts++;
    }
    if (texts === 0) return;
    this.out = out;
    this.kernels = kernels;
    // The needles after the passages: needle j at [at[first + j] + shift, at[first + j + 1] + shift).
    const shift = len - needleFrom;
    for (let k = 0; k < needleBytes; k++) out[len + k] = bytes[needleFrom + k];
    this.needleAt = at;
    this.shift = shift;
    // Titles: every passage holding one (the first is entity_in_context; "both" needs them all).
    const title = this.title;
    title.fill(0, 0, n);
    let titled = 0;
    for (let j = first; j < first + titles; j++) {
      const from = at[j] + shift;
      const to = at[j + 1] + shift;
      if (from === to) {
        // Python: "" is in every string.
        for (let i = 0; i < n; i++) if (starts[i] >= 0) title[i] = 1;
        titled = texts;
        break;
      }
      let pos = 0;
      let i = 0;
      while (pos < len) {
        const found = this.find(pos, len, from, to);
        if (found < 0) break;
        while (starts[i] < 0 || ends[i] < found) i++;
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
    const answersFrom = first + titles;
    const answersTo = answersFrom + answers;
    let firstAnswer = n;
    let limit = len;
    for (let j = answersFrom; j < answersTo && limit > 0; j++) {
      const from = at[j] + shift;
      const to = at[j + 1] + shift;
      const found = from === to ? 0 : this.find(0, limit, from, to);
      if (found < 0) continue;
      let i = 0;
      while (starts[i] < 0 || ends[i] < found) i++;
      firstAnswer = i;
      limit = starts[i];
    }
    this.firstAnswer = firstAnswer;
    // Both: the first titled passage, from the first answer on, that holds an answer.
    for (let i = firstAnswer; i < n; i++) {
      if (!title[i]) continue;
      if (i === firstAnswer || this.holdsAnswer(starts[i], ends[i], answersFrom, answersTo)) {
        this.firstBoth = i;
        break;
      }
    }
  }

  /** Moves the `len` bytes written to `out` to this matcher's own buffer, grown to `room` bytes; returns it. */
  private spill(out: Buffer, len: number, room: number): Buffer {
    if (this.hay.length < room) {
      const bigger = Buffer.allocUnsafe(Math.max(room, 2 * this.hay.length));
      out.copy(bigger, 0, 0, len);
      this.hay = bigger;
    } else if (out !== this.hay) out.copy(this.hay, 0, 0, len);
    return this.hay;
  }

  /** `count` needles from the `from`-th of `needles`, as strings. */
  private strings(needles: Needles, from: number, count: number): string[] {
    const r: string[] = [];
    for (let j = 0; j < count; j++) r.push(needles.store.string(needles.first + from + j));
    return r;
  }

  /** Whether the passage at `[from, to)` of the buffer holds one of the needles `[a, b)` (answers). */
  private holdsAnswer(from: number, to: number, a: number, b: number): boolean {
    const at = this.needleAt;
    const shift = this.shift;
    for (let j = a; j < b; j++) if (at[j] === at[j + 1] || this.find(from, to, at[j] + shift, at[j + 1] + shift) >= 0) return true;
    return false;
  }

  // The buffer of the last match (and its kernels, when in a kernel memory) and where its needles' bytes are.
  private out: Buffer = this.hay;
  private kernels: TextKernels | undefined;
  private needleAt = new Int32Array(0);
  private shift = 0;

  /** The first place in `[from, to)` of the buffer's bytes `[at, end)` (`Buffer.indexOf`), or -1. */
  private find(from: number, to: number, at: number, end: number): number {
    const k = this.kernels;
    if (k === undefined) return this.out.subarray(0, to).indexOf(this.out.subarray(at, end), from);
    const r = k.find(k.outAt + from, k.outAt + to, k.outAt + at, end - at);
    return r < 0 ? -1 : r - k.outAt;
  }

  /** The string route (lone surrogates): `needle in text` on normalized strings. */
  private matchStrings(provenance: readonly ProvEntry[], normalizedAnswers: readonly string[], normalizedTitles: readonly string[]): void {
    const n = this.length;
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
