// The two BM25 analyzers, reproducing Lucene 8.7 term for term: "english" = EnglishAnalyzer
// (StandardTokenizer, EnglishPossessiveFilter, LowerCaseFilter, English stop words, PorterStemFilter)
// and "lowercase" = WhitespaceTokenizer + LowerCaseFilter. Differences: docs/retrieval.md ("BM25").

import { stemmer } from "stemmer";
import { JAVA_LOWERCASE_EXCEPTIONS } from "./lucene-tables.js";
import { ENGLISH_STOP_SET } from "./stopwords.js";
import { standardTokens, type TokenSink } from "./word-break.js";

/** The analyzers a BM25 index can be built with: `"english"` (Lucene's EnglishAnalyzer) or `"lowercase"` (whitespace + lowercase). */
export type AnalyzerName = "english" | "lowercase";

export const ANALYZER_NAMES: readonly AnalyzerName[] = ["english", "lowercase"];

/** A text analyzer: splits text into tokens and turns each into its index term, as the Lucene analyzer it reproduces. */
export interface Analyzer {
  /** The name it is selected by (`Bm25Params.analyzer`, `--analyzer`). */
  readonly name: AnalyzerName;
  /** The tokenizer alone: `sink(start, end)` for each token of `text` (UTF-16 offsets). */
  tokenize(text: string, sink: TokenSink): void;
  /** A token's index term after the filters, or null when a filter drops it (stop word). */
  normalize(token: string): string | null;
  /** The terms of `text` in order (tokenize + normalize). */
  analyze(text: string): string[];
}

let lowerExceptions: Map<number, number> | undefined;

/** Java's Character.toLowerCase applied to each code point (what Lucene's LowerCaseFilter does). */
export function javaLowerCase(s: string): string {
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return s.toLowerCase();
  // Code point by code point: JavaScript lowercases final sigma by context, Java never does; the few
  // other differences (İ, characters newer than Java's Unicode) come from a generated table.
  lowerExceptions ??= new Map(JAVA_LOWERCASE_EXCEPTIONS.map(([cp, lower]) => [cp, lower]));
  let out = "";
  for (const ch of s) {
    const mapped = lowerExceptions.get(ch.codePointAt(0)!);
    out += mapped !== undefined ? String.fromCodePoint(mapped) : ch.toLowerCase();
  }
  return out;
}

/** EnglishPossessiveFilter: drops a final 's (apostrophe U+0027, U+2019 or U+FF07; s or S). */
export function stripPossessive(token: string): string {
  const n = token.length;
  if (n >= 2) {
    const s = token.charCodeAt(n - 1);
    const q = token.charCodeAt(n - 2);
    if ((s === 0x73 || s === 0x53) && (q === 0x27 || q === 0x2019 || q === 0xff07)) return token.slice(0, n - 2);
  }
  return token;
}

function analyzeWith(a: Analyzer, text: string): string[] {
  const out: string[] = [];
  a.tokenize(text, (start, end) => {
    const term = a.normalize(text.slice(start, end));
    if (term !== null) out.push(term);
  });
  return out;
}

/** Lucene's EnglishAnalyzer with its default stop set and no stem exclusions. */
export const englishAnalyzer: Analyzer = {
  name: "english",
  tokenize: standardTokens,
  normalize(token: string): string | null {
    const lower = javaLowerCase(stripPossessive(token));
    if (ENGLISH_STOP_SET.has(lower)) return null;
    return lower.length > 2 ? stemmer(lower) : lower;
  },
  analyze(text: string): string[] {
    return analyzeWith(englishAnalyzer, text);
  },
};

/** Java's Character.isWhitespace (UTF-16 code unit; none of the whitespace characters is astral). */
export function isJavaWhitespace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x1680) return false;
  return c === 0x1680 || (c >= 0x2000 && c <= 0x2006) || (c >= 0x2008 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x205f || c === 0x3000;
}

/** Lucene's CharTokenizer limit: tokens are cut after 255 code units (256 when a surrogate pair straddles it). */
const MAX_WHITESPACE_TOKEN = 255;

/** WhitespaceTokenizer: maximal runs of non-whitespace. */
export function whitespaceTokens(text: string, sink: TokenSink): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    while (i < n && isJavaWhitespace(text.charCodeAt(i))) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && !isJavaWhitespace(text.charCodeAt(i))) {
      i++;
      if (i - start >= MAX_WHITESPACE_TOKEN) {
        const c = text.charCodeAt(i - 1);
        if (c >= 0xd800 && c <= 0xdbff && i < n) i++;
        break;
      }
    }
    sink(start, i);
  }
}

/** WhitespaceTokenizer + LowerCaseFilter. */
export const lowercaseAnalyzer: Analyzer = {
  name: "lowercase",
  tokenize: whitespaceTokens,
  normalize: javaLowerCase,
  analyze(text: string): string[] {
    return analyzeWith(lowercaseAnalyzer, text);
  },
};

/** The analyzer of that name; throws for an unknown name (e.g. one read from an old or foreign manifest). */
export function getAnalyzer(name: AnalyzerName): Analyzer {
  if (name === "english") return englishAnalyzer;
  if (name === "lowercase") return lowercaseAnalyzer;
  throw new Error(`unknown analyzer ${JSON.stringify(name)} (expected ${ANALYZER_NAMES.join(" or ")})`);
}
