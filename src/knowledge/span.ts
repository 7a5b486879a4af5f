// The text of a provenance span: page, paragraph range and character range, KILT's way (kilt-spec.md
// §1.3): paragraph ids index `text` (0 is the title line), characters are code points (Python string
// indexes), `end_character` is exclusive. This is what every part shows as evidence.

import type { KiltPage } from "../records/types.js";
import { cpLength, cpSlice } from "./codepoints.js";

/** The location fields of a KILT provenance entry. Only `start_paragraph_id` is required. */
export interface SpanLocation {
  start_paragraph_id?: number | string;
  /** Default 0. */
  start_character?: number | string;
  /** Default: `start_paragraph_id`. */
  end_paragraph_id?: number | string;
  /** Exclusive; default: the end of the end paragraph. */
  end_character?: number | string;
}

/** A span that does not fit its page; the message names the page, the field and the limits. */
export class SpanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SpanError";
  }
}

function pageName(page: KiltPage): string {
  return `page ${page.wikipedia_id} (${JSON.stringify(page.wikipedia_title)})`;
}

/** A non-negative integer field (ids may be written as strings in KILT files), or `fallback` when absent. */
function field(page: KiltPage, span: SpanLocation, name: keyof SpanLocation, fallback?: number): number {
  const v = span[name];
  if (v === undefined || v === null) {
    if (fallback === undefined) throw new SpanError(`${pageName(page)}: provenance has no ${name}`);
    return fallback;
  }
  const n = typeof v === "string" && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n)) throw new SpanError(`${pageName(page)}: ${name} ${JSON.stringify(v)} is not an integer`);
  if (n < 0) {
    throw new SpanError(
      `${pageName(page)}: ${name} ${n} is negative (KILT writes -1 when it has no character offsets; leave the field out to take whole paragraphs)`,
    );
  }
  return n;
}

/**
 * The evidence text of `span` in `page`: one paragraph's slice, or the tail of the start paragraph, the
 * paragraphs in between and the head of the end paragraph, concatenated as stored (KILT paragraphs end
 * in "\n"; a "\n" is put between paragraphs that do not). Throws a SpanError for spans out of range.
 */
export function provenanceText(page: KiltPage, span: SpanLocation): string {
  const text = page.text;
  const n = text.length;
  const sp = field(page, span, "start_paragraph_id");
  const ep = field(page, span, "end_paragraph_id", sp);
  if (sp >= n) throw new SpanError(`${pageName(page)}: start_paragraph_id ${sp} is out of range (the page has ${n} paragraphs, 0-${n - 1})`);
  if (ep >= n) throw new SpanError(`${pageName(page)}: end_paragraph_id ${ep} is out of range (the page has ${n} paragraphs, 0-${n - 1})`);
  if (ep < sp) throw new SpanError(`${pageName(page)}: end_paragraph_id ${ep} is before start_paragraph_id ${sp}`);
  const startLen = cpLength(text[sp]);
  const endLen = sp === ep ? startLen : cpLength(text[ep]);
  const sc = field(page, span, "start_character", 0);
  const ec = field(page, span, "end_character", endLen);
  if (sc > startLen) {
    throw new SpanError(`${pageName(page)}: start_character ${sc} is beyond paragraph ${sp}, which has ${startLen} characters`);
  }
  if (ec > endLen) throw new SpanError(`${pageName(page)}: end_character ${ec} is beyond paragraph ${ep}, which has ${endLen} characters`);
  if (sp === ep) {
    if (ec < sc) throw new SpanError(`${pageName(page)}: end_character ${ec} is before start_character ${sc} in paragraph ${sp}`);
    return cpSlice(text[sp], sc, ec);
  }
  const pieces = [cpSlice(text[sp], sc, startLen), ...text.slice(sp + 1, ep), cpSlice(text[ep], 0, ec)];
  let out = pieces[0];
  for (let i = 1; i < pieces.length; i++) {
    // The separator depends on the whole paragraph, not on where the span cut it.
    out += (text[sp + i - 1].endsWith("\n") ? "" : "\n") + pieces[i];
  }
  return out;
}
