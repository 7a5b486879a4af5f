// Text analysis for the readers: tokens with character offsets, sentences, part-of-speech tags,
// Porter2 stems and numeric/date entity types, all from wink-nlp with its npm-shipped English model
// (wink-eng-lite-web-model). One shared pipeline; analyses of passage texts are memoized because the
// same paragraph is read for many questions.

import winkNLP from "wink-nlp";
import model from "wink-eng-lite-web-model";

/** One token; `start`/`end` are UTF-16 offsets into the analysed text (end exclusive). */
export interface Token {
  text: string;
  lower: string;
  stem: string;
  /** Universal POS tag (NOUN, PROPN, NUM, VERB, ADJ, DET, ADP, PUNCT, …). */
  pos: string;
  /** wink entity type covering this token (DATE, CARDINAL, ORDINAL, MONEY, PERCENT, TIME, DURATION, …) or "". */
  ent: string;
  /** Index of the entity covering this token within the analysis, or -1. */
  entId: number;
  start: number;
  end: number;
  stop: boolean;
  punct: boolean;
  /** First character is an upper-case letter. */
  cap: boolean;
  /** Contains a digit. */
  digit: boolean;
}

/** A text analysed once: tokens, sentences and entities. */
export interface Analysis {
  text: string;
  tokens: Token[];
  /** Sentences as token ranges [first, last] inclusive. */
  sentences: [number, number][];
  /** Entities as token ranges with their type. */
  entities: { first: number; last: number; type: string }[];
}

const nlp = winkNLP(model);
const its = nlp.its;
/** The model's Porter2 stemmer (what `its.stem` uses), for tokens split here. */
const stemWord = (model as unknown as { addons: { stem: (w: string) => string } }).addons.stem;

/** Words that carry no content for overlap (wink's stop-word flag plus question words). */
const EXTRA_STOP = new Set(["what", "which", "who", "whom", "whose", "when", "where", "why", "how", "did", "does", "do", "'s", "s"]);

/** A word token ending in a possessive 's (group 1: the word). */
const POSSESSIVE = /^(.*[\p{L}\p{N}])['’][sS]$/u;

/** A token with no letter or digit (punctuation, symbols, dashes). */
function isPunct(text: string): boolean {
  return !/[\p{L}\p{N}]/u.test(text);
}

/** Strings already shown to wink by {@link learnCanonically}. */
const learnt = new Set<string>();

/**
 * wink's lexicon learns every new word it reads, and keeps the features (token type, POS guess) of the
 * context it first saw it in: "750" first read inside "c.750" is tagged PROPN ever after, and a word
 * whose lowercase form was read before gets another POS guess. So an analysis would depend on what was
 * analysed before (a resumed or sharded run would answer differently). Every word is therefore shown
 * to wink first on its own, in a fixed order (lowercase form, then the form itself, letters, digits and
 * single symbols before the whitespace-delimited chunk holding them): whatever the history, each
 * lexeme is learnt the same way.
 */
function learnCanonically(text: string): void {
  const show = (s: string) => {
    if (learnt.has(s)) return;
    learnt.add(s);
    nlp.readDoc(s);
  };
  for (const m of text.matchAll(/\S+/gu)) {
    const chunk = m[0];
    if (learnt.has(chunk)) continue;
    for (const piece of chunk.match(/\p{L}+|\p{N}+|[^\p{L}\p{N}]/gu) ?? []) {
      show(piece.toLowerCase());
      show(piece);
    }
    show(chunk.toLowerCase());
    show(chunk);
  }
}

/** Analyses a text (not memoized; see {@link analyzeCached}). */
export function analyze(text: string): Analysis {
  learnCanonically(text);
  const doc = nlp.readDoc(text);
  const values = doc.tokens().out() as string[];
  const pos = doc.tokens().out(its.pos) as string[];
  // wink types `its.stem` as needing model add-ons; the lite model ships its stemmer.
  const stems = doc.tokens().out(its.stem as unknown as typeof its.value) as string[];
  const stopFlags = doc.tokens().out(its.stopWordFlag) as unknown as boolean[];
  const tokens: Token[] = [];
  // wink's tokenizer remembers words it has seen: "CBS's" is split into "CBS" + "'s" in a fresh
  // process but kept whole once the vocabulary has learnt it. Possessives are always split here, so
  // an analysis never depends on what was analysed before. `span[i]` = new token range of wink token i.
  const span: [number, number][] = [];
  let cursor = 0;
  const push = (v: string, at: number, p: string, stem: string, stop: boolean) => {
    const lower = v.toLowerCase();
    const punct = isPunct(v);
    tokens.push({
      text: v,
      lower,
      stem: punct ? lower : stem.toLowerCase(),
      pos: p,
      ent: "",
      entId: -1,
      start: at,
      end: at + v.length,
      stop: stop || EXTRA_STOP.has(lower),
      punct,
      cap: /^\p{Lu}/u.test(v),
      digit: /\p{N}/u.test(v),
    });
  };
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    let at = text.indexOf(v, cursor);
    if (at < 0) at = cursor; // wink keeps the original text; guard anyway
    const first = tokens.length;
    const possessive = POSSESSIVE.exec(v);
    if (possessive) {
      const base = possessive[1];
      push(base, at, pos[i], stemWord(base.toLowerCase()), stopFlags[i] === true);
      push(v.slice(base.length), at + base.length, "PART", "'s", true);
    } else {
      push(v, at, pos[i], stems[i], stopFlags[i] === true);
    }
    span.push([first, tokens.length - 1]);
    cursor = at + v.length;
  }
  const entities: Analysis["entities"] = [];
  doc.entities().each((e: { out: (f: unknown) => unknown }) => {
    const s = e.out(its.span) as unknown as [number, number];
    const type = e.out(its.type) as string;
    const id = entities.length;
    const first = span[s[0]][0];
    const last = span[s[1]][1];
    entities.push({ first, last, type });
    for (let t = first; t <= last; t++) {
      tokens[t].ent = type;
      tokens[t].entId = id;
    }
  });
  const sentences: [number, number][] = [];
  doc.sentences().each((s: { out: (f: unknown) => unknown }) => {
    const sp = s.out(its.span) as unknown as [number, number];
    if (span[sp[0]] === undefined || span[sp[1]] === undefined || sp[1] < sp[0]) return; // empty text
    sentences.push([span[sp[0]][0], span[sp[1]][1]]);
  });
  return { text, tokens, sentences, entities };
}

const cache = new Map<string, Analysis>();
const CACHE_LIMIT = 20_000;

/** {@link analyze}, memoized by text (bounded; cleared when full). */
export function analyzeCached(text: string): Analysis {
  let a = cache.get(text);
  if (a === undefined) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    a = analyze(text);
    cache.set(text, a);
  }
  return a;
}

/** Distinct content stems of a text (no stop words, no punctuation). */
export function stemSet(text: string): Set<string> {
  const s = new Set<string>();
  for (const t of analyzeCached(text).tokens) if (!t.stop && !t.punct) s.add(t.stem);
  return s;
}

/**
 * IDF of each query stem over a collection of stem sets, ln((N + 1) / (df + 0.5)), and their sum (in
 * query order): the weighting every overlap score of the readers uses.
 */
export function idfWeights(query: Iterable<string>, sets: readonly Set<string>[]): { idf: Map<string, number>; total: number } {
  const idf = new Map<string, number>();
  let total = 0;
  for (const s of query) {
    if (idf.has(s)) continue;
    let df = 0;
    for (const set of sets) if (set.has(s)) df++;
    const w = Math.log((sets.length + 1) / (df + 0.5));
    idf.set(s, w);
    total += w;
  }
  return { idf, total };
}
