// Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET in Lucene 8.7: 33 words), the
// words the "english" analyzer drops after lowercasing and before stemming.

export const ENGLISH_STOP_WORDS: readonly string[] = [
  "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
  "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
];

export const ENGLISH_STOP_SET: ReadonlySet<string> = new Set(ENGLISH_STOP_WORDS);
