// KILT's `match_answer` (kilt_utils.py; kilt-spec.md §8.3): find where a text (an answer or an evidence
// passage) sits in a knowledge-source page. Per paragraph in page order: substring of the normalized or
// original text, then an exact run of normalized tokens; failing both, the best-BLEU token span among
// the top candidate paragraphs (most shared tokens), shorter span on ties. Tokens are whitespace tokens
// (KILT without spaCy) and offsets are real code-point offsets; the deliberate differences from KILT's
// code (word boundaries, end offsets, ties) are listed in docs/mapping.md.

import type { KiltPage } from "../records/types.js";
import { isPythonSpace, pySplit } from "../records/python-str.js";
import { BleuScorer, kiltWeights } from "./bleu.js";
import { cpLength } from "../knowledge/codepoints.js";

/** How a match was found. */
export type MatchMethod =
  /** the text (normalized or as given) occurs in the paragraph, at word boundaries */
  | "substring"
  /** all normalized tokens occur as one run (punctuation and wide characters ignored); for answers with a
   *  repeated token KILT's first pass skips this and its candidate pass finds the run */
  | "token"
  /** the text occurs only inside longer words (KILT's plain `str.find`), used when nothing else matched exactly */
  | "substring-in-word"
  /** best-BLEU span among the candidate paragraphs */
  | "bleu";

/** Where a text was placed in a page: paragraph, code-point span, method and BLEU. */
export interface MatchResult {
  /** Index into `page.text`. */
  paragraph: number;
  /** Code-point offsets in that paragraph. */
  start: number;
  end: number;
  /** 1.0 for exact matches, else the span's BLEU (answer as hypothesis, span as reference). */
  bleu: number;
  method: MatchMethod;
}

/** Options of placing a text in a page. */
export interface MatchOptions {
  /** KILT's MAX_PARAGRAPH_CANDIDATE: paragraphs (by decreasing token overlap) searched by BLEU. Default 3. */
  candidates?: number;
  /** Among several exact occurrences in one paragraph, take the one starting nearest this code point (default: the first). */
  near?: number;
}

const ASCII_PUNCT = /[!-/:-@[-`{-~]/g;

/** KILT's `kilt_utils.normalize_answer` (not the evaluator's): lower case, ASCII punctuation removed. */
export function kiltNormalize(s: string): string {
  return s.toLowerCase().replace(ASCII_PUNCT, "");
}

/** KILT drops every character whose UTF-8 encoding takes 3 bytes or more (code points ≥ U+0800). */
export function dropWideChars(s: string): string {
  // eslint-disable-next-line no-control-regex
  return /[^\u0000-\u07ff]/.test(s) ? s.replace(/[^\u0000-\u07ff]/gu, "") : s;
}

const isAsciiPunct = (c: number) => (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e);

/** The normalized tokens of a paragraph with the code-point range of the characters each one keeps. */
export interface ParagraphTokens {
  tokens: string[];
  starts: number[];
  ends: number[];
}

/**
 * Whitespace tokens of `text` (Python `str.split()`), each normalized as KILT does
 * (`normalize_answer(drop_wide(token))`); a token's range covers its first to last kept character
 * (so "Broncos," spans "Broncos"), or is empty at the token start when nothing is kept.
 */
export function tokenizeParagraph(text: string): ParagraphTokens {
  const tokens: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let cp = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    let c = text.codePointAt(i)!;
    if (isPythonSpace(c)) {
      i += c > 0xffff ? 2 : 1;
      cp++;
      continue;
    }
    const tokStartUnit = i;
    const tokStartCp = cp;
    let keptStart = -1;
    let keptEnd = -1;
    while (i < n) {
      c = text.codePointAt(i)!;
      if (isPythonSpace(c)) break;
      if (c < 0x800 && !isAsciiPunct(c)) {
        if (keptStart < 0) keptStart = cp;
        keptEnd = cp + 1;
      }
      i += c > 0xffff ? 2 : 1;
      cp++;
    }
    tokens.push(kiltNormalize(dropWideChars(text.slice(tokStartUnit, i))));
    starts.push(keptStart < 0 ? tokStartCp : keptStart);
    ends.push(keptStart < 0 ? tokStartCp : keptEnd);
  }
  return { tokens, starts, ends };
}

/** The answer's tokens as KILT makes them: normalize the whole text, split, drop wide characters, lower. */
export function answerTokens(text: string): string[] {
  return pySplit(kiltNormalize(text)).map((t) => dropWideChars(t).toLowerCase());
}

/** A page with its paragraphs tokenized on first use (keep one per page while mapping many texts to it). */
export class PreparedPage {
  private readonly cache: (ParagraphTokens | undefined)[] = [];
  private readonly sets: (Set<string> | undefined)[] = [];
  constructor(readonly page: KiltPage) {}
  /** The tokens of paragraph `i`, tokenised once and kept. */
  paragraph(i: number): ParagraphTokens {
    return (this.cache[i] ??= tokenizeParagraph(this.page.text[i] ?? ""));
  }
  /** The distinct tokens of paragraph i. */
  tokenSet(i: number): Set<string> {
    return (this.sets[i] ??= new Set(this.paragraph(i).tokens));
  }
}

const WORD = /[\p{L}\p{N}_]/u;
function wordAt(s: string, i: number): boolean {
  if (i >= s.length) return false;
  return WORD.test(String.fromCodePoint(s.codePointAt(i)!));
}
function wordBefore(s: string, i: number): boolean {
  if (i <= 0) return false;
  const lo = s.charCodeAt(i - 1);
  const start = lo >= 0xdc00 && lo <= 0xdfff && i >= 2 ? i - 2 : i - 1;
  return WORD.test(String.fromCodePoint(s.codePointAt(start)!));
}

/** UTF-16 index of an occurrence of `needle` in `hay` starting and ending at word boundaries (nearest `nearUnit` if given), or -1. */
export function findAtBoundaries(hay: string, needle: string, nearUnit?: number): number {
  if (needle.length === 0) return -1;
  let best = -1;
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + 1)) {
    const j = i + needle.length;
    const startOk = !wordBefore(hay, i) || !wordAt(hay, i);
    const endOk = !wordAt(hay, j) || !wordBefore(hay, j);
    if (!startOk || !endOk) continue;
    if (nearUnit === undefined) return i;
    if (best < 0 || Math.abs(i - nearUnit) < Math.abs(best - nearUnit)) best = i;
  }
  return best;
}


/** UTF-16 index of code point `cp` in `s`. */
function unitOf(s: string, cp: number): number {
  let u = 0;
  for (let k = 0; k < cp && u < s.length; k++) u += (s.codePointAt(u)! > 0xffff ? 2 : 1);
  return u;
}

function substringMatch(paragraph: string, idx: number, needle: string, near: number | undefined, boundaries: boolean): MatchResult | null {
  let at: number;
  if (boundaries) at = findAtBoundaries(paragraph, needle, near === undefined ? undefined : unitOf(paragraph, near));
  else at = paragraph.indexOf(needle);
  if (at < 0) return null;
  const start = cpLength(paragraph.slice(0, at));
  return { paragraph: idx, start, end: start + cpLength(needle), bleu: 1.0, method: boundaries ? "substring" : "substring-in-word" };
}

/** KILT's first-pass exact token run: tokens w_start..w_end whose non-empty tokens equal the answer's. */
function exactTokenRun(p: readonly string[], a: readonly string[]): [number, number] | null {
  const ne = a.filter((t) => t.length > 0);
  if (ne.length === 0) return null;
  const first = a[0];
  const last = a[a.length - 1];
  for (let ws = 0; ws < p.length; ws++) {
    if (p[ws] !== first) continue;
    // Walk the non-empty tokens from ws against the answer's non-empty tokens.
    let k = 0;
    let q = ws;
    let lastMatched = -1;
    while (q < p.length && k < ne.length) {
      if (p[q].length > 0) {
        if (p[q] !== ne[k]) break;
        k++;
        lastMatched = q;
      }
      q++;
    }
    if (k < ne.length) continue;
    for (let we = lastMatched; we < p.length && (we === lastMatched || p[we].length === 0); we++) {
      if (p[we] === last) return [ws, we];
    }
  }
  return null;
}

/** Code-point range of tokens [from, to] (inclusive), from the first to the last non-empty token. */
function tokenRange(pt: ParagraphTokens, from: number, to: number): [number, number] {
  let a = from;
  while (a < to && pt.tokens[a].length === 0) a++;
  let b = to;
  while (b > a && pt.tokens[b].length === 0) b--;
  return [pt.starts[a], pt.ends[b]];
}

/**
 * The best-BLEU span search over the candidate paragraphs (in order): an exact contiguous run of the
 * answer tokens first, else every token span scored by KILT BLEU; the highest wins, the shorter on ties
 * (then the earlier). Stops at BLEU 1.
 */
export function spanSearch(page: PreparedPage, candidates: readonly number[], answer: readonly string[]): MatchResult {
  // Exact contiguous run of the (unfiltered) answer tokens in a candidate: BLEU 1.
  for (const idx of candidates) {
    const p = page.paragraph(idx).tokens;
    for (let i = 0; i + answer.length <= p.length; i++) {
      let ok = true;
      for (let k = 0; k < answer.length && ok; k++) ok = p[i + k] === answer[k];
      if (ok) {
        const [s, e] = tokenRange(page.paragraph(idx), i, i + answer.length - 1);
        return { paragraph: idx, start: s, end: e, bleu: 1.0, method: "token" };
      }
    }
  }
  const hyp = answer.filter((t) => t.length > 0);
  const c = hyp.length;
  const weights = kiltWeights(c);
  const N = weights.length;
  // Hypothesis n-gram ids and counts.
  const ids: Map<string, number>[] = [];
  const hypCount: number[] = [];
  const totals: number[] = [];
  for (let n = 1; n <= N; n++) {
    const m = new Map<string, number>();
    for (let i = 0; i + n <= c; i++) {
      const key = hyp.slice(i, i + n).join("\u0000");
      let id = m.get(key);
      if (id === undefined) {
        id = hypCount.length;
        hypCount.push(0);
        m.set(key, id);
      }
      hypCount[id]++;
    }
    ids.push(m);
    totals.push(c - n + 1);
  }
  const scorer = new BleuScorer(c, totals, weights);
  const refCount = new Int32Array(hypCount.length);
  const matches = new Float64Array(N);
  let best: { idx: number; init: number; end: number; bleu: number } | null = null;
  for (const idx of candidates) {
    const pt = page.paragraph(idx);
    const P = pt.tokens;
    const L = P.length;
    // Non-empty positions and, for each, the id of the n-gram (over non-empty tokens) ending there.
    const comp: number[] = [];
    const compOf = new Int32Array(L).fill(-1);
    for (let j = 0; j < L; j++) if (P[j].length > 0) {
      compOf[j] = comp.length;
      comp.push(j);
    }
    const gramEnd: Int32Array[] = [];
    for (let n = 1; n <= N; n++) {
      const g = new Int32Array(comp.length).fill(-1);
      for (let k = n - 1; k < comp.length; k++) {
        let key = P[comp[k - n + 1]];
        for (let t = k - n + 2; t <= k; t++) key += `\u0000${P[comp[t]]}`;
        g[k] = ids[n - 1].get(key) ?? -1;
      }
      gramEnd.push(g);
    }
    // No span of this paragraph can hold more n-gram matches than the whole paragraph: skip it when
    // even those counts cannot beat the best so far.
    if (best !== null) {
      const whole = new Int32Array(hypCount.length);
      const m = new Float64Array(N);
      for (let k = 0; k < comp.length; k++)
        for (let n = 1; n <= N && k - n + 1 >= 0; n++) {
          const id = gramEnd[n - 1][k];
          if (id >= 0 && ++whole[id] <= hypCount[id]) m[n - 1]++;
        }
      if (scorer.approxScore(m, Math.min(c, comp.length)) * SLACK < best.bleu) continue; // brevity penalty 1 at r ≤ c
    }
    let kStart = 0;
    for (let init = 0; init < L; init++) {
      while (kStart < comp.length && comp[kStart] < init) kStart++;
      // No span from here on can beat the best: even its longest useful length is bounded below it.
      if (best !== null && scorer.upperBound(Math.min(comp.length - kStart, c)) * SLACK < best.bleu) break;
      refCount.fill(0);
      matches.fill(0);
      let r = 0;
      for (let end = init; end < L; end++) {
        const k = compOf[end];
        if (k >= 0) {
          r++;
          for (let n = 1; n <= N; n++) {
            if (k - n + 1 < kStart) break;
            const id = gramEnd[n - 1][k];
            if (id >= 0 && ++refCount[id] <= hypCount[id]) matches[n - 1]++;
          }
        }
        if (best !== null && scorer.upperBound(r) * SLACK < best.bleu) {
          if (r >= c) break; // longer spans only lower the bound
          continue;
        }
        const bleu = scorer.score(matches, r, best === null ? -Infinity : best.bleu);
        if (best === null || bleu > best.bleu || (bleu === best.bleu && end - init < best.end - best.init)) {
          best = { idx, init, end, bleu };
          if (bleu === 1) break;
        }
      }
      if (best !== null && best.bleu === 1) break;
    }
    if (best !== null && best.bleu === 1) break;
  }
  if (best === null) throw new Error("spanSearch: no candidate span"); // candidates are never all empty
  const [s, e] = tokenRange(page.paragraph(best.idx), best.init, best.end);
  return { paragraph: best.idx, start: s, end: e, bleu: best.bleu, method: "bleu" };
}

/** Bounds (computed with Math.log/exp) are compared with this much room, so rounding never prunes a span that would tie. */
const SLACK = 1 + 1e-9;

/** Why a text could not be matched at all. */
export type NoMatchReason = "empty-text" | "no-tokens" | "empty-page";

/**
 * Finds `text` in `page` (a {@link PreparedPage}, or a page to prepare). Returns the paragraph,
 * code-point offsets, BLEU and method, or the reason there is nothing to search for.
 */
export function matchAnswer(text: string, page: PreparedPage | KiltPage, options: MatchOptions = {}): MatchResult | { reason: NoMatchReason } {
  const prepared = page instanceof PreparedPage ? page : new PreparedPage(page);
  const paragraphs = prepared.page.text;
  const maxCandidates = options.candidates ?? 3;
  const normalized = kiltNormalize(text);
  if (pySplit(normalized).length === 0) return { reason: "empty-text" };
  if (!Array.isArray(paragraphs) || paragraphs.length === 0) return { reason: "empty-page" };
  const answer = answerTokens(text);
  const answerSet = new Set(answer);
  const byIntersection = new Map<number, number[]>();
  for (let idx = 0; idx < paragraphs.length; idx++) {
    const paragraph = paragraphs[idx];
    const hit = substringMatch(paragraph, idx, normalized, options.near, true) ?? substringMatch(paragraph, idx, text, options.near, true);
    if (hit) return hit;
    const pt = prepared.paragraph(idx);
    const pSet = prepared.tokenSet(idx);
    let inter = 0;
    for (const t of answerSet) if (pSet.has(t)) inter++;
    if (inter === answer.length) {
      const run = exactTokenRun(pt.tokens, answer);
      if (run) {
        const [s, e] = tokenRange(pt, run[0], run[1]);
        return { paragraph: idx, start: s, end: e, bleu: 1.0, method: "token" };
      }
    }
    let group = byIntersection.get(inter);
    if (!group) byIntersection.set(inter, (group = []));
    group.push(idx);
  }
  for (let idx = 0; idx < paragraphs.length; idx++) {
    const hit = substringMatch(paragraphs[idx], idx, normalized, undefined, false) ?? substringMatch(paragraphs[idx], idx, text, undefined, false);
    if (hit) return hit;
  }
  if (!answer.some((t) => t.length > 0)) return { reason: "no-tokens" };
  const candidates: number[] = [];
  for (const key of [...byIntersection.keys()].sort((a, b) => b - a)) {
    candidates.push(...byIntersection.get(key)!);
    if (candidates.length >= maxCandidates) break;
  }
  return spanSearch(prepared, candidates, answer);
}

/** True when {@link matchAnswer} returned a match (not a reason). */
export function isMatch(r: MatchResult | { reason: NoMatchReason }): r is MatchResult {
  return "paragraph" in r;
}
