// A deterministic rule-based English sentence splitter for passage cutting (docs/knowledge-build.md).
// KILT cuts passages at spaCy `en_core_web_sm` sentence boundaries; tartan has no spaCy, and
// `Intl.Segmenter` is no substitute: it breaks after "Mr.", "Dr.", initials and "U.S.", breaks at every
// newline (SQuAD writes "O\n2" for O₂), and its rules come with the ICU build, so passages could change
// with the Node version. This splitter depends on nothing but the rules below.
//
// A boundary follows a run of `.`, `!`, `?` or `…` (plus closing quotes or brackets and footnote marks
// like "[3]" or "[citation needed]") when whitespace and then an upper-case letter, a digit, an uncased
// letter (CJK etc.) or an opening quote/bracket follow. A single `.` is no boundary after a known
// abbreviation ("Mr.", "Jan.", "No."), a single letter ("J. R. R. Tolkien"; so "Saturn V. Apollo" is
// missed) or a dotted short form ("U.S.", "e.g.", "Ph.D."). Newlines are plain whitespace.

import { isPythonSpace } from "../records/python-str.js";

/** Abbreviations (lower case, without the final period) after which "." followed by a capital is no boundary. */
const ABBREVIATIONS = new Set([
  "mr", "mrs", "ms", "messrs", "mme", "mlle", "dr", "prof", "rev", "hon", "st", "ste", "sr", "jr", "fr",
  "gen", "col", "lt", "maj", "capt", "cmdr", "adm", "sgt", "cpl", "pvt", "gov", "sen", "rep", "pres",
  "vs", "cf", "al", "approx", "ca", "fl", "no", "nos", "vol", "vols", "pp", "ed", "eds", "trans", "fig",
  "figs", "dept", "univ", "est", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
  "nov", "dec", "mt", "ft", "ave", "blvd", "rd", "op", "ch", "sec", "art", "ibid", "viz", "lb", "lbs",
  "oz", "sq", "ps",
]);

const CANDIDATE = /[.!?\u2026]+["'\u201d\u2019)\]]*(?:\[[^\]\n]{1,30}\])*(?=\s)/g;
const NEXT_STARTS_SENTENCE = /[\p{Lu}\p{Lt}\p{Lo}\p{Nd}"'\u201c\u2018(\[\u00bf\u00a1]/u;
const SINGLE_LETTER = /^\p{L}$/u;
const DOTTED_SHORT = /^\p{L}{1,2}(?:\.\p{L}{1,2})+$/u;
const LEADING_OPENERS = /^["'\u201c\u2018(\[]+/;


/** Is the single period ending at `dot` (index of the ".") preceded by an abbreviation or initial? */
function periodIsAbbreviation(text: string, dot: number): boolean {
  let s = dot;
  while (s > 0 && !isPythonSpace(text.charCodeAt(s - 1))) s--;
  const word = text.slice(s, dot).replace(LEADING_OPENERS, "");
  if (word.length === 0) return false;
  if (SINGLE_LETTER.test(word) || DOTTED_SHORT.test(word)) return true;
  return ABBREVIATIONS.has(word.toLowerCase());
}

/** A sentence as a UTF-16 span of the text, without surrounding whitespace. */
export interface SentenceSpan {
  start: number;
  end: number;
}

/** Splits `text` into sentences; their spans cover every non-whitespace character, in order. */
export function splitSentences(text: string): SentenceSpan[] {
  const out: SentenceSpan[] = [];
  const n = text.length;
  let start = 0;
  while (start < n && isPythonSpace(text.charCodeAt(start))) start++;
  if (start === n) return out;
  CANDIDATE.lastIndex = start;
  let m: RegExpExecArray | null;
  while ((m = CANDIDATE.exec(text)) !== null) {
    const end = m.index + m[0].length;
    let next = end;
    while (next < n && isPythonSpace(text.charCodeAt(next))) next++;
    if (next === n) break;
    if (!NEXT_STARTS_SENTENCE.test(text[next])) continue;
    const punct = /^[.!?\u2026]+/.exec(m[0])![0];
    if (punct === "." && periodIsAbbreviation(text, m.index)) continue;
    out.push({ start, end });
    start = next;
    CANDIDATE.lastIndex = next;
  }
  let end = n;
  while (end > start && isPythonSpace(text.charCodeAt(end - 1))) end--;
  out.push({ start, end });
  return out;
}

/** A whitespace-separated word as a UTF-16 span. */
export interface WordSpan {
  start: number;
  end: number;
}

/** The whitespace-separated words of `text[from:to]` (Python `str.split()` tokens), appended to `out`. */
export function wordsIn(text: string, from: number, to: number, out: WordSpan[] = []): WordSpan[] {
  let i = from;
  while (i < to) {
    while (i < to && isPythonSpace(text.charCodeAt(i))) i++;
    if (i >= to) break;
    const s = i;
    while (i < to && !isPythonSpace(text.charCodeAt(i))) i++;
    out.push({ start: s, end: i });
  }
  return out;
}
