// Lucene 8.7's StandardTokenizer in TypeScript: the Unicode word-break rules (UAX #29) as its JFlex
// grammar applies them — words of letters and digits joined by mid-word punctuation ("don't", "u.s.a",
// "1,000.5", "a:b", "a_b"), one token per Han or Hiragana character, runs of South-East Asian script,
// emoji sequences, and nothing for punctuation, symbols and spaces. The class of each code point comes
// from a table derived from Lucene's own tokenizer (./lucene-tables.ts), so Unicode versions agree.

import { WORD_BREAK_RUNS } from "./lucene-tables.js";

/** Word-break classes (UAX #29 Word_Break values, as Lucene's grammar groups them). */
export const enum WB {
  Other = 0,
  /** ALetter (not Hebrew). */
  Letter = 1,
  Hebrew = 2,
  Numeric = 3,
  Katakana = 4,
  ExtendNumLet = 5,
  MidLetter = 6,
  MidNum = 7,
  MidNumLet = 8,
  SingleQuote = 9,
  DoubleQuote = 10,
  /** Extend, Format and ZWJ: attach to the character before them (WB4). */
  Extend = 11,
  /** Han and Hiragana: one token per character. */
  Ideographic = 12,
  /** Line_Break = Complex_Context (Thai, Lao, Myanmar, Khmer, …): runs are tokens. */
  SouthEastAsian = 13,
  /** South-East Asian marks: start or continue a run, and attach like Extend after anything else. */
  SouthEastAsianExtend = 14,
  RegionalIndicator = 15,
  /** Starts an emoji token (pictographs, ©, ®, …). */
  Emoji = 16,
  /** Skin tones: an emoji alone, and part of the emoji before them. */
  EmojiModifier = 17,
  /** # and *: a token only as a keycap sequence (#, optional U+FE0F, U+20E3). */
  KeycapBase = 18,
}

/** Lucene's StandardTokenizer default maximum token length (UTF-16 code units); longer tokens are cut. */
export const MAX_TOKEN_LENGTH = 255;

let table: Uint8Array | undefined;

/** The class of every code point (1.1 MB), expanded from the runs on first use. */
function classTable(): Uint8Array {
  if (table === undefined) {
    const t = new Uint8Array(0x110000);
    const re = /([0-9a-z]+)([A-Z])/g;
    let start = 0;
    let cls = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(WORD_BREAK_RUNS)) !== null) {
      const next = start + parseInt(m[1], 36);
      t.fill(cls, start, next);
      start = next;
      cls = m[2].charCodeAt(0) - 65;
    }
    t.fill(cls, start);
    table = t;
  }
  return table;
}

/** The word-break class of one code point. */
export function classify(cp: number): WB {
  return classTable()[cp] as WB;
}

const ASCII_SKIP = 0;
const ASCII_ALNUM = 1;
const ASCII_OTHER = 2;
/** ASCII characters: letters and digits, characters that cannot start a token (skip), and the rest. */
const ASCII_KIND = new Uint8Array(128).map((_, c) =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ? ASCII_ALNUM : c === 0x5f || c === 0x23 || c === 0x2a ? ASCII_OTHER : ASCII_SKIP,
);
/** ASCII mid-word punctuation (. , ; :), which may join the characters around it. */
const MID = new Uint8Array(128).map((_, c) => (c === 0x2e || c === 0x2c || c === 0x3b || c === 0x3a ? 1 : 0));

/**
 * Called with each token's [start, end) UTF-16 offsets in the text, and for some tokens (plain ASCII
 * words, the most common) the token's FNV-1a hash as ./token-table.ts's `TokenTable.hash` gives it,
 * computed while scanning so a builder need not read the token again to hash it.
 */
export type TokenSink = (start: number, end: number, hash?: number) => void;

/** FNV-1a's offset basis and prime (the token hash; ./token-table.ts's `TokenTable.hash` uses the same). */
export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;

/**
 * Splits `text` into StandardTokenizer tokens, calling `sink(start, end)` for each in order. Tokens
 * longer than {@link MAX_TOKEN_LENGTH} code units are cut there and scanning restarts after the cut,
 * as Lucene's scanner buffer does.
 */
export function standardTokens(text: string, sink: TokenSink): void {
  const table = classTable();
  const n = text.length;
  // Class and width of the code point at `i`, through these two variables (no allocation).
  let cls = 0;
  let width = 1;
  const at = (i: number): void => {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        cls = table[((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000];
        width = 2;
        return;
      }
    }
    cls = table[c];
    width = 1;
  };
  // Index after any Extend/Format/ZWJ characters starting at `i` (WB4).
  const skipExtend = (i: number): number => {
    while (i < n) {
      at(i);
      if (cls !== WB.Extend && cls !== WB.SouthEastAsianExtend) break;
      i += width;
    }
    return i;
  };

  let i = 0;
  while (i < n) {
    const c0 = text.charCodeAt(i);
    if (c0 < 0x80) {
      // Fast path for ASCII: a run of letters and digits followed by a character that certainly ends
      // a word is a token as it stands; characters that cannot start a token are skipped.
      const kind = ASCII_KIND[c0];
      if (kind === ASCII_SKIP) {
        i++;
        continue;
      }
      if (kind === ASCII_ALNUM) {
        let j = i + 1;
        let c = 0;
        let h = Math.imul(FNV_OFFSET ^ c0, FNV_PRIME);
        // Scan at most MAX_TOKEN_LENGTH + 1 characters: longer runs are cut by scanWord (a longer scan
        // here would make a long run quadratic).
        const lim = Math.min(n, i + MAX_TOKEN_LENGTH + 1);
        while (j < lim && (c = text.charCodeAt(j)) < 0x80 && ASCII_KIND[c] === ASCII_ALNUM) {
          h = Math.imul(h ^ c, FNV_PRIME);
          j++;
        }
        if ((j === n || (c < 0x80 && ASCII_KIND[c] === ASCII_SKIP && c !== 0x22 && c !== 0x27 && MID[c] === 0)) && j - i <= MAX_TOKEN_LENGTH) {
          sink(i, j, h >>> 0);
          i = j;
          continue;
        }
      }
    }
    at(i);
    const first = cls;
    const start = i;
    if (first === WB.Letter || first === WB.Hebrew || first === WB.Numeric || first === WB.Katakana || first === WB.ExtendNumLet) {
      const end = scanWord(start);
      if (end < 0) {
        // ExtendNumLet run with no letter, digit or katakana after it: not a token.
        i = -end;
        continue;
      }
      sink(start, end);
      i = end;
    } else if (first === WB.Ideographic) {
      const end = skipExtend(i + width);
      sink(start, end);
      i = end;
    } else if (first === WB.SouthEastAsian || first === WB.SouthEastAsianExtend) {
      let j = skipExtend(i + width);
      while (j < n && j - start <= MAX_TOKEN_LENGTH) {
        at(j);
        if (cls !== WB.SouthEastAsian) break;
        j = skipExtend(j + width);
      }
      if (j - start > MAX_TOKEN_LENGTH) j = start + MAX_TOKEN_LENGTH;
      sink(start, j);
      i = j;
    } else if (first === WB.Emoji || first === WB.EmojiModifier) {
      let j = emojiTail(i + width, first);
      // ZWJ sequences: the ZWJ was taken as Extend; a pictograph right after it continues the token.
      while (j < n && text.charCodeAt(j - 1) === 0x200d) {
        at(j);
        if (cls !== WB.Emoji && cls !== WB.EmojiModifier) break;
        j = emojiTail(j + width, cls);
      }
      sink(start, j);
      i = j;
    } else if (first === WB.RegionalIndicator) {
      const j = skipExtend(i + width);
      if (j < n) {
        at(j);
        if (cls === WB.RegionalIndicator) {
          const end = skipExtend(j + width);
          sink(start, end);
          i = end;
          continue;
        }
      }
      i = j;
    } else if (first === WB.KeycapBase) {
      let j = i + 1;
      if (text.charCodeAt(j) === 0xfe0f) j++;
      if (text.charCodeAt(j) === 0x20e3) {
        sink(start, j + 1);
        i = j + 1;
      } else {
        i++;
      }
    } else {
      i += width;
    }
  }

  // Index after what follows an emoji character of class `base` in its token: one skin-tone modifier
  // (after a pictograph, not after a modifier), then Extend characters.
  function emojiTail(j: number, base: number): number {
    j = skipExtend(j);
    if (base === WB.Emoji && j < n) {
      at(j);
      if (cls === WB.EmojiModifier) j = skipExtend(j + width);
    }
    return j;
  }

  // The end of the word starting at `start` (a Letter, Hebrew, Numeric, Katakana or ExtendNumLet
  // character), or minus the index to resume at when it is only ExtendNumLet characters. Like Lucene's
  // scanner, it sees at most MAX_TOKEN_LENGTH code units: the longest word within them.
  function scanWord(start: number): number {
    const lim = Math.min(n, start + MAX_TOKEN_LENGTH);
    const skip = (k: number): number => Math.min(skipExtend(k), lim);
    // `last`: the class of the last character taken; HEBREW_QUOTE: a Hebrew letter then a single quote.
    let last: number = WB.Other;
    let seenAtom = false;
    let j = start;
    let end = start;
    while (j < lim) {
      at(j);
      const c = cls;
      const w = width;
      if (c === WB.Letter || c === WB.Hebrew || c === WB.Numeric) {
        if (last === WB.Katakana) break;
      } else if (c === WB.Katakana) {
        if (seenAtom && last !== WB.Katakana && last !== WB.ExtendNumLet) break;
      } else if (c >= WB.MidLetter && c <= WB.DoubleQuote) {
        if (last === WB.Hebrew && c === WB.SingleQuote) {
          // WB7a: Hebrew_Letter × Single_Quote, even at the end of the word.
          j = skip(j + w);
          end = j;
          last = HEBREW_QUOTE;
          continue;
        }
        const k = skip(j + w);
        if (k >= lim) break;
        at(k);
        const next = cls;
        if (
          ((last === WB.Letter || last === WB.Hebrew) && (next === WB.Letter || next === WB.Hebrew) && (c === WB.MidLetter || c === WB.MidNumLet || c === WB.SingleQuote)) ||
          (last === WB.Numeric && next === WB.Numeric && (c === WB.MidNum || c === WB.MidNumLet || c === WB.SingleQuote)) ||
          (last === WB.Hebrew && c === WB.DoubleQuote && next === WB.Hebrew)
        ) {
          j = k;
          continue;
        }
        break;
      } else if (c !== WB.ExtendNumLet) {
        break;
      }
      last = c;
      if (c !== WB.ExtendNumLet) seenAtom = true;
      j = skip(j + w);
      if (seenAtom) end = j;
    }
    return seenAtom ? end : -j;
  }
}

const HEBREW_QUOTE = 100;
