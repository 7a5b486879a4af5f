// Which words of a retrieved text match a query: the query's content words (DrQA tokens, stop words
// left out, entity markers removed), found in the text word by word. `tartan search` marks them on the
// terminal and `tartan serve` returns their character ranges, so both highlight the same words.

import { stripEntityMarkers } from "./markers.js";
import { drqaTokens, isFilteredWord } from "./tfidf/tokenize.js";

const TOKEN = /[\p{L}\p{N}\p{M}_]+|[^\p{Z}\p{C}\s]/gu;

/** A test for one whitespace-separated word of a text: does it hold one of the query's content words? */
export function queryMatcher(query: string): (word: string) => boolean {
  const wanted = new Set(drqaTokens(stripEntityMarkers(query)).filter((t) => !isFilteredWord(t)));
  const seen = new Map<string, boolean>(); // words repeat: each is tokenized once
  return (w: string) => {
    let hit = seen.get(w);
    if (hit === undefined) {
      hit = [...w.normalize("NFD").matchAll(TOKEN)].some((m) => wanted.has(m[0].toLowerCase()));
      if (seen.size < 10_000) seen.set(w, hit);
    }
    return hit;
  };
}

/**
 * The `[start, end)` ranges (UTF-16 offsets, as JavaScript strings index) of the words of `text` that
 * match `query` (or a matcher made once for many texts by {@link queryMatcher}).
 */
export function matchedRanges(text: string, query: string | ((word: string) => boolean)): [number, number][] {
  const hit = typeof query === "string" ? queryMatcher(query) : query;
  const out: [number, number][] = [];
  for (const m of text.matchAll(/\S+/gu)) if (hit(m[0])) out.push([m.index, m.index + m[0].length]);
  return out;
}

/**
 * The part of `text` around the query's content words, those words wrapped in `mark` (about `words`
 * words long, starting a little before the first match).
 */
export function highlight(text: string, query: string, mark: (w: string) => string, words = 60): string {
  const hit = queryMatcher(query);
  const tokens = [...text.matchAll(/\S+/gu)];
  const first = tokens.findIndex((t) => hit(t[0]));
  const start = Math.max(0, first - 10);
  const end = Math.min(tokens.length, start + words);
  const shown = tokens.slice(start, end).map((t) => (hit(t[0]) ? mark(t[0]) : t[0]));
  return `${start > 0 ? "… " : ""}${shown.join(" ")}${end < tokens.length ? " …" : ""}`;
}
