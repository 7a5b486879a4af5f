// DrQA's text handling for its TF-IDF document retriever, as KILT's `DrQA_tfidf` connector uses it:
// NFD normalization, the SimpleTokenizer regexp (runs of letters/digits/marks/underscore, or any single
// other visible character), lowercasing, and n-grams up to `n` with DrQA's `filter_ngram` (mode "any":
// an n-gram is dropped when any of its tokens is a stop word or punctuation only).

/** DrQA's `retriever/utils.py` STOPWORDS (NLTK's English list plus contractions and quote tokens). */
export const STOPWORDS: ReadonlySet<string> = new Set([
  "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your",
  "yours", "yourself", "yourselves", "he", "him", "his", "himself", "she",
  "her", "hers", "herself", "it", "its", "itself", "they", "them", "their",
  "theirs", "themselves", "what", "which", "who", "whom", "this", "that",
  "these", "those", "am", "is", "are", "was", "were", "be", "been", "being",
  "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an",
  "the", "and", "but", "if", "or", "because", "as", "until", "while", "of",
  "at", "by", "for", "with", "about", "against", "between", "into", "through",
  "during", "before", "after", "above", "below", "to", "from", "up", "down",
  "in", "out", "on", "off", "over", "under", "again", "further", "then",
  "once", "here", "there", "when", "where", "why", "how", "all", "any",
  "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor",
  "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can",
  "will", "just", "don", "should", "now", "d", "ll", "m", "o", "re", "ve",
  "y", "ain", "aren", "couldn", "didn", "doesn", "hadn", "hasn", "haven",
  "isn", "ma", "mightn", "mustn", "needn", "shan", "shouldn", "wasn", "weren",
  "won", "wouldn", "'ll", "'re", "'ve", "n't", "'s", "'d", "'m", "''", "``",
]);

/** SimpleTokenizer: `([\p{L}\p{N}\p{M}_]+)|([^\p{Z}\p{C}])`. */
const TOKEN = /[\p{L}\p{N}\p{M}_]+|[^\p{Z}\p{C}]/gu;
const PUNCT_ONLY = /^\p{P}+$/u;

/** Lowercased tokens of `text` after NFD normalization (DrQA: `tokenize(normalize(text)).words(uncased=True)`). */
export function drqaTokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.normalize("NFD").matchAll(TOKEN)) out.push(m[0].toLowerCase());
  return out;
}

/** DrQA's `filter_word`: punctuation-only tokens and stop words. */
export function isFilteredWord(word: string): boolean {
  return PUNCT_ONLY.test(word) || STOPWORDS.has(word);
}

/**
 * DrQA's `Tokens.ngrams(n, uncased=True, filter_fn=filter_ngram)`: all n-grams of 1..n tokens in DrQA's
 * order (by start, then length), dropping any that contains a filtered word, joined with spaces.
 */
export function drqaNgrams(words: readonly string[], n: number): string[] {
  const filtered = words.map(isFilteredWord);
  const out: string[] = [];
  for (let s = 0; s < words.length; s++) {
    let gram = "";
    for (let e = s; e < Math.min(s + n, words.length); e++) {
      if (filtered[e]) break; // this and every longer n-gram from s contain a filtered word
      gram = e === s ? words[s] : `${gram} ${words[e]}`;
      out.push(gram);
    }
  }
  return out;
}
