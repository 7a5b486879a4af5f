// Answer normalization for the nine Mintaka languages (en ar de es fr hi it ja pt): Unicode-aware
// throughout (NFKC, Unicode case, Unicode punctuation and digits, combining marks kept), with
// per-language articles (MLQA's lists where MLQA has the language), Arabic diacritics and alef
// forms, and Japanese compared without spaces. Rules and their reasons: docs/mintaka.md.

/** Languages with their own rules; any other code gets only the language-independent steps. */
export type NormLanguage = "en" | "ar" | "de" | "es" | "fr" | "hi" | "it" | "ja" | "pt";

/** Articles dropped as whole words (after punctuation is removed). */
const ARTICLES: Partial<Record<string, ReadonlySet<string>>> = {
  en: new Set(["a", "an", "the"]),
  // MLQA's German and Spanish lists.
  de: new Set(["ein", "eine", "einen", "einem", "eines", "einer", "der", "die", "das", "den", "dem", "des"]),
  es: new Set(["un", "una", "unos", "unas", "el", "la", "los", "las"]),
  fr: new Set(["le", "la", "les", "un", "une", "des"]),
  it: new Set(["il", "lo", "la", "i", "gli", "le", "un", "uno", "una"]),
  pt: new Set(["o", "a", "os", "as", "um", "uma", "uns", "umas"]),
};

/** French and Italian elided articles (l’, un’) at the start of a word, before punctuation removal. */
const ELISION_RE: Partial<Record<string, RegExp>> = {
  fr: /(?<![\p{L}\p{M}\p{N}])l['’](?=\p{L})/gu,
  it: /(?<![\p{L}\p{M}\p{N}])(?:l|un)['’](?=\p{L})/gu,
};

/** Arabic short vowels, tanwin, shadda, sukun, dagger alef and the other harakat (U+064B–U+065F, U+0670), and tatweel. */
const ARABIC_MARKS_RE = /[\u064b-\u065f\u0670\u0640]/g;
/** Alef with hamza above/below, with madda, and alef wasla → bare alef. */
const ARABIC_ALEF_RE = /[\u0622\u0623\u0625\u0671]/g;
/** The Arabic definite article ال at the start of a word of at least two more letters. */
const ARABIC_ARTICLE_RE = /^\u0627\u0644(?=\p{L}\p{M}*\p{L})/u;

const PUNCT_SYMBOL_RE = /[\p{P}\p{S}]/gu;
const SPACE_RE = /[\s\p{Z}\p{Cc}\p{Cf}]+/gu;
const DIGIT_RE = /\p{Nd}/gu;
const NUMBER_RE = /^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$/;

/** The value of a decimal digit of any script: Unicode keeps each script's 0–9 contiguous and in order. */
function digitValue(ch: string): number {
  let cp = ch.codePointAt(0)!;
  let steps = 0;
  // Walk back to the script's zero; runs of ten, so the distance modulo 10 is the value.
  while (steps < 10 && /\p{Nd}/u.test(String.fromCodePoint(cp - 1))) {
    cp--;
    steps++;
  }
  return steps % 10;
}

const digitCache = new Map<string, string>();
function asciiDigits(s: string): string {
  return s.replace(DIGIT_RE, (d) => {
    if (d >= "0" && d <= "9") return d;
    let v = digitCache.get(d);
    if (v === undefined) {
      v = String(digitValue(d));
      digitCache.set(d, v);
    }
    return v;
  });
}

/**
 * Normalizes an answer for comparison in `lang`:
 * 1. NFKC (full-width and compatibility forms, Hindi nukta forms), lower case (Unicode), ß → ss;
 * 2. decimal digits of every script → ASCII; a string that is then a plain number (1,234.50) becomes its canonical value (1234.5);
 * 3. Arabic: harakat and tatweel dropped, alef forms unified; French/Italian: elided l’/un’ dropped;
 * 4. Unicode punctuation and symbols removed (combining marks kept: Hindi and Arabic need them);
 * 5. whole-word articles dropped (en de es fr it pt; Arabic: the ال prefix);
 * 6. whitespace collapsed to one space; Japanese: all whitespace removed.
 */
export function normalizeMultilingual(s: string, lang: NormLanguage | string = "en"): string {
  let t = s.normalize("NFKC").toLowerCase().replace(/ß/g, "ss");
  t = asciiDigits(t);
  const trimmed = t.trim();
  if (NUMBER_RE.test(trimmed)) return String(Number(trimmed.replace(/,/g, "")));
  if (lang === "ar") t = t.replace(ARABIC_MARKS_RE, "").replace(ARABIC_ALEF_RE, "\u0627");
  const elision = ELISION_RE[lang];
  if (elision) t = t.replace(elision, " ");
  t = t.replace(PUNCT_SYMBOL_RE, "");
  let words = t.split(SPACE_RE).filter((w) => w.length > 0);
  const articles = ARTICLES[lang];
  if (articles) words = words.filter((w) => !articles.has(w));
  if (lang === "ar") words = words.map((w) => w.replace(ARABIC_ARTICLE_RE, ""));
  return words.join(lang === "ja" ? "" : " ");
}
