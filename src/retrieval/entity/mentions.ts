// Mention keys and mention finding for the entity retriever. A key is the DrQA tokens of a string
// (lowercased, diacritics removed) joined by spaces, with a final plural "s" folded off the last token
// ("Huguenots" and "Huguenot" share a key). Mentions in an input are found greedily left to right,
// longest alias first; n-grams made only of stop words and punctuation are never mentions.

import { drqaTokens, isFilteredWord } from "../tfidf/tokenize.js";
import { ENT_END, ENT_START } from "../markers.js";

const MARKS = /\p{M}+/gu;

/** Tokens for alias matching: DrQA tokens without combining marks (NFD already applied). */
export function mentionTokens(text: string): string[] {
  const out: string[] = [];
  for (const t of drqaTokens(text)) {
    const bare = t.replace(MARKS, "");
    if (bare.length > 0) out.push(bare);
  }
  return out;
}

function foldPlural(token: string): string {
  return token.length > 3 && token.endsWith("s") && !token.endsWith("ss") ? token.slice(0, -1) : token;
}

/** The key of a token sequence (null when every token is a stop word or punctuation). */
export function keyOfTokens(tokens: readonly string[]): string | null {
  if (tokens.length === 0 || tokens.every(isFilteredWord)) return null;
  const last = tokens.length - 1;
  let key = "";
  for (let i = 0; i < tokens.length; i++) key += (i ? " " : "") + (i === last ? foldPlural(tokens[i]) : tokens[i]);
  return key;
}

/** The key of an alias or mention string. */
export function mentionKey(text: string): string | null {
  return keyOfTokens(mentionTokens(text));
}

/** A mention found in a query: its alias key and token span. */
export interface FoundMention {
  key: string;
  /** Token span in the searched tokens. */
  start: number;
  end: number;
  /** Tokens in the mention that are not stop words or punctuation. */
  weight: number;
}

/**
 * Greedy longest-match mentions of `tokens` whose keys `has` accepts, at most `maxTokens` tokens long.
 * `mayStartLonger(token)`, when given, is false only if no accepted key of two tokens or more starts
 * with `token` (a key's first token is never folded): the longer spans at that token are then skipped.
 */
export function findMentions(tokens: readonly string[], has: (key: string) => boolean, maxTokens: number, mayStartLonger?: (token: string) => boolean): FoundMention[] {
  const out: FoundMention[] = [];
  let i = 0;
  while (i < tokens.length) {
    let found: FoundMention | null = null;
    const longest = mayStartLonger === undefined || mayStartLonger(tokens[i]) ? Math.min(maxTokens, tokens.length - i) : 1;
    for (let len = longest; len >= 1; len--) {
      const span = tokens.slice(i, i + len);
      const key = keyOfTokens(span);
      if (key !== null && has(key)) {
        found = { key, start: i, end: i + len, weight: span.filter((t) => !isFilteredWord(t)).length };
        break;
      }
    }
    if (found) {
      out.push(found);
      i = found.end;
    } else i++;
  }
  return out;
}

/** The text between the first `[START_ENT]` and the next `[END_ENT]`, or null when the input is not marked. */
export function markedMention(input: string): string | null {
  const s = input.indexOf(ENT_START);
  if (s < 0) return null;
  const e = input.indexOf(ENT_END, s + ENT_START.length);
  if (e < 0) return null;
  return input.slice(s + ENT_START.length, e);
}
