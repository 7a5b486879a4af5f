// Cuts KILT pages into retrieval passages the way KILT's `scripts/create_kilt_data_paragraphs.py` does
// (kilt-spec.md §9), counting whitespace-separated words instead of spaCy tokens and splitting sentences
// with tartan's rule-based splitter (./sentences.ts). Every passage carries its page, section and the
// paragraph/character span it came from, so a retrieved passage is KILT provenance as it stands.
// Offsets count Unicode code points, as KILT's do (./codepoints.ts). Rules: docs/knowledge-build.md.

import type { KiltPage, Provenance } from "../records/types.js";
import { pyStrip } from "../records/python-str.js";
import { cpLength, OffsetMap } from "./codepoints.js";
import { splitSentences, wordsIn, type WordSpan } from "./sentences.js";

/** How to cut: `chunk` = KILT's sentence-buffered chunks of about `words` words; `paragraph` = one passage per paragraph. */
export type PassageUnit = "chunk" | "paragraph";

/** How pages are cut into passages. */
export interface PassageOptions {
  /** Chunk size in whitespace-separated words (KILT: 100 spaCy tokens). Default 100. */
  words?: number;
  /** Default "chunk". */
  unit?: PassageUnit;
}

/** The section a passage belongs to before the first `Section::::` header: KILT gold provenance's value, with its final period (as `datasets convert squad` and the mapping write it). */
export const ABSTRACT_SECTION = "Section::::Abstract.";

/** One piece of a passage: a span of one page paragraph, in code points (end exclusive). */
export interface PassageSource {
  paragraph_id: number;
  start: number;
  end: number;
}

/** A page anchor that lies inside a passage; `start`/`end` are code-point offsets into the passage text. */
export interface PassageAnchor {
  text: string;
  href: string;
  /** The page paragraph the anchor is in. */
  paragraph_id: number;
  start: number;
  end: number;
  wikipedia_title?: string;
  wikipedia_id?: string;
}

/** A KILT-style passage cut from a page, with where it is in the page. */
export interface Passage {
  /** `<wikipedia_id>#<n>`, n counting the page's passages from 0 (stable for the same page text and options). */
  id: string;
  wikipedia_id: string;
  wikipedia_title: string;
  /** The last `Section::::` header before the passage, stripped (e.g. "Section::::History.:Early years."), or {@link ABSTRACT_SECTION}. */
  section: string;
  start_paragraph_id: number;
  start_character: number;
  end_paragraph_id: number;
  end_character: number;
  /** The pieces' texts joined with single spaces (pieces are `page.text[p]` code-point slices). */
  text: string;
  /** Whitespace-separated words in `text`. */
  words: number;
  /** One piece per paragraph: several when a short paragraph tail was merged into the previous chunk. */
  sources: PassageSource[];
  anchors: PassageAnchor[];
}

/** A problem with an input page (which page, which field). */
export class PageError extends Error {
  constructor(
    readonly pageId: string,
    readonly field: string,
    reason: string,
  ) {
    super(`page ${pageId}: ${field}: ${reason}`);
    this.name = "PageError";
  }
}

interface Draft extends Passage {
  /** KILT's `tmp_len`: words, plus one per merge (the merge rule compares this, not `words`). */
  mergeLength: number;
}

function anchorsByParagraph(page: KiltPage, pageId: string): Map<number, NonNullable<KiltPage["anchors"]>> {
  const byParagraph = new Map<number, NonNullable<KiltPage["anchors"]>>();
  const anchors = page.anchors;
  if (anchors === undefined || anchors === null) return byParagraph;
  if (!Array.isArray(anchors)) throw new PageError(pageId, "anchors", "expected an array");
  for (const a of anchors) {
    const p = Number(a.paragraph_id);
    let list = byParagraph.get(p);
    if (!list) byParagraph.set(p, (list = []));
    list.push(a);
  }
  return byParagraph;
}

function anchorsInside(
  list: NonNullable<KiltPage["anchors"]> | undefined,
  paragraphId: number,
  start: number,
  end: number,
  shift: number,
): PassageAnchor[] {
  if (!list) return [];
  const out: PassageAnchor[] = [];
  for (const a of list) {
    if (a.start >= start && a.end <= end) {
      const pa: PassageAnchor = {
        text: a.text,
        href: a.href,
        paragraph_id: paragraphId,
        start: a.start - start + shift,
        end: a.end - start + shift,
      };
      if (a.wikipedia_title !== undefined) pa.wikipedia_title = a.wikipedia_title;
      if (a.wikipedia_id !== undefined) pa.wikipedia_id = a.wikipedia_id;
      out.push(pa);
    }
  }
  return out;
}

/** Where a passage is: its page, section and paragraph/character span (a KILT provenance's location fields). */
export type PassageLocation = Pick<Passage, "wikipedia_id" | "wikipedia_title" | "section" | "start_paragraph_id" | "start_character" | "end_paragraph_id" | "end_character">;

/** The passage's location fields, in provenance order (what units and unit tables keep of a passage). */
export function passageLocation(p: Passage): PassageLocation {
  return {
    wikipedia_id: p.wikipedia_id,
    wikipedia_title: p.wikipedia_title,
    section: p.section,
    start_paragraph_id: p.start_paragraph_id,
    start_character: p.start_character,
    end_paragraph_id: p.end_paragraph_id,
    end_character: p.end_character,
  };
}

/** Cuts one page into passages (kilt-spec.md §9 with words for tokens; see docs/knowledge-build.md). */
export function cutPassages(page: KiltPage, options: PassageOptions = {}): Passage[] {
  const size = options.words ?? 100;
  const unit = options.unit ?? "chunk";
  if (!Number.isInteger(size) || size < 1) throw new Error(`passage size must be a positive integer, got ${size}`);
  if (unit !== "chunk" && unit !== "paragraph") throw new Error(`passage unit must be "chunk" or "paragraph", got ${String(unit)}`);
  const pageId = page.wikipedia_id === undefined || page.wikipedia_id === null ? "" : String(page.wikipedia_id);
  if (pageId === "") throw new PageError("?", "wikipedia_id", "missing");
  if (!Array.isArray(page.text)) throw new PageError(pageId, "text", "expected an array of strings");
  const title = typeof page.wikipedia_title === "string" ? page.wikipedia_title : String(page.wikipedia_title ?? "");
  const anchors = anchorsByParagraph(page, pageId);

  const out: Draft[] = [];
  let section = ABSTRACT_SECTION;
  const words: WordSpan[] = [];

  const make = (paragraphId: number, map: OffsetMap, text: string, startU: number, endU: number, count: number): Draft => {
    const start = map.toCodePoint(startU);
    const end = map.toCodePoint(endU);
    return {
      id: `${pageId}#${out.length}`,
      wikipedia_id: pageId,
      wikipedia_title: title,
      section,
      start_paragraph_id: paragraphId,
      start_character: start,
      end_paragraph_id: paragraphId,
      end_character: end,
      text: text.slice(startU, endU),
      words: count,
      sources: [{ paragraph_id: paragraphId, start, end }],
      anchors: anchorsInside(anchors.get(paragraphId), paragraphId, start, end, 0),
      mergeLength: count,
    };
  };

  for (let p = 1; p < page.text.length; p++) {
    const text = page.text[p];
    if (typeof text !== "string") throw new PageError(pageId, `text[${p}]`, `expected a string, found ${text === null ? "null" : typeof text}`);
    if (text.includes("Section::::")) {
      section = pyStrip(text);
      continue;
    }
    const map = new OffsetMap(text);
    if (unit === "paragraph") {
      words.length = 0;
      wordsIn(text, 0, text.length, words);
      if (words.length > 0) out.push(make(p, map, text, words[0].start, words[words.length - 1].end, words.length));
      continue;
    }
    let bufStart = -1;
    let bufEnd = -1;
    let bufCount = 0;
    for (const sentence of splitSentences(text)) {
      words.length = 0;
      wordsIn(text, sentence.start, sentence.end, words);
      if (words.length === 0) continue;
      if (bufCount > 0 && bufCount + words.length >= size) {
        out.push(make(p, map, text, bufStart, bufEnd, bufCount));
        bufCount = 0;
      }
      if (bufCount === 0) bufStart = words[0].start;
      bufEnd = words[words.length - 1].end;
      bufCount += words.length;
    }
    if (bufCount === 0) continue;
    const tail = make(p, map, text, bufStart, bufEnd, bufCount);
    const prev = out.length > 0 ? out[out.length - 1] : undefined;
    if (prev !== undefined && prev.section === section && bufCount + prev.mergeLength < size) {
      const shift = cpLength(prev.text) + 1;
      for (const a of tail.anchors) {
        a.start += shift;
        a.end += shift;
        prev.anchors.push(a);
      }
      prev.text += ` ${tail.text}`;
      prev.sources.push(tail.sources[0]);
      prev.end_paragraph_id = p;
      prev.end_character = tail.end_character;
      prev.words += bufCount;
      prev.mergeLength += bufCount + 1;
    } else {
      out.push(tail);
    }
  }
  return out.map(({ mergeLength: _, ...passage }) => passage);
}

/** The KILT provenance a passage stands for (with its text, as retrieval outputs carry it). */
export function passageProvenance(p: Passage, withText = true): Provenance {
  const prov: Provenance = {
    wikipedia_id: p.wikipedia_id,
    title: p.wikipedia_title,
    section: p.section,
    start_paragraph_id: p.start_paragraph_id,
    start_character: p.start_character,
    end_paragraph_id: p.end_paragraph_id,
    end_character: p.end_character,
  };
  if (withText) prov.text = p.text;
  return prov;
}
