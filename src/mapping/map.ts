// The provenance-mapping job (`tartan map`): for every provenance entry of every output, fetch its page
// (by wikipedia_id, title or URL), locate the evidence text (or the output's answer) with
// {@link matchAnswer}, and write KILT provenance with paragraph, code-point offsets and `bleu_score`.
// Dev/test outputs whose provenance falls below the BLEU threshold (0.5) or cannot be placed are
// dropped and reported, as KILT did; train outputs keep low-BLEU provenance. Streams JSONL in and out.

import { statSync } from "node:fs";
import { JsonlWriter, readJsonl, type LineError } from "../records/jsonl.js";
import type { KiltPage, KiltRecord, Output, Provenance } from "../records/types.js";
import { cpLength, cpSlice } from "../knowledge/codepoints.js";
import { displayTitle } from "../knowledge/wiki-title.js";
import { titlesFromUrl } from "../knowledge/url.js";
import { isMatch, matchAnswer, PreparedPage, type MatchMethod, type MatchResult, type NoMatchReason } from "./match.js";

/** Where pages come from: the knowledge-source store (`KnowledgeSource`), or pages held in memory. Methods may be async. */
export interface PageLookup {
  /** The page whose wikipedia_id is `id` (trimmed), if loaded. */
  getPageById(id: string): KiltPage | null | undefined | Promise<KiltPage | null | undefined>;
  /** The page titled `title` exactly, else by its display title (as `displayTitle` normalises it), if loaded. */
  getPageByTitle(title: string): KiltPage | null | undefined | Promise<KiltPage | null | undefined>;
  /** The page a Wikipedia URL names (optional: lookups without it map by id and title only). */
  getPageFromUrl?(url: string): KiltPage | null | undefined | Promise<KiltPage | null | undefined>;
}

/** Pages loaded from a pages JSONL file into memory, found by id, exact title, display title or URL. */
export class MemoryPages implements PageLookup {
  private readonly byId = new Map<string, KiltPage>();
  private readonly byTitle = new Map<string, KiltPage>();
  private readonly byDisplay = new Map<string, KiltPage>();

  constructor(pages: Iterable<KiltPage>) {
    for (const p of pages) this.add(p);
  }

  /** Adds a page (a later page with the same id or title replaces the earlier one). */
  add(page: KiltPage): void {
    const id = String(page.wikipedia_id);
    if (!this.byId.has(id)) this.byId.set(id, page);
    if (!this.byTitle.has(page.wikipedia_title)) this.byTitle.set(page.wikipedia_title, page);
    const d = displayTitle(page.wikipedia_title);
    if (!this.byDisplay.has(d)) this.byDisplay.set(d, page);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Loads every page of a pages JSONL file. */
  static async load(file: string): Promise<MemoryPages> {
    const pages = new MemoryPages([]);
    for await (const { value } of readJsonl<KiltPage>(file)) pages.add(value);
    return pages;
  }

  getPageById(id: string): KiltPage | undefined {
    return this.byId.get(String(id).trim());
  }

  getPageByTitle(title: string): KiltPage | undefined {
    return this.byTitle.get(title) ?? this.byDisplay.get(displayTitle(title));
  }

  /** KILT's URL rules (titlesFromUrl, as the store uses), each title looked up as by getPageByTitle. */
  getPageFromUrl(url: string): KiltPage | undefined {
    for (const t of titlesFromUrl(url)) {
      const p = this.getPageByTitle(t);
      if (p) return p;
    }
    return undefined;
  }
}

/** The split a file to map belongs to (dev and test drop low-scoring provenance; train keeps it). */
export type Split = "train" | "dev" | "test";

/** Options of {@link mapFile}. */
export interface MapOptions {
  /** dev and test drop outputs below the threshold; train keeps them (with their BLEU). */
  split: Split;
  /** Minimum BLEU for dev/test provenance; default 0.5. */
  threshold?: number;
  /** Candidate paragraphs for the BLEU search; default 3 (KILT's MAX_PARAGRAPH_CANDIDATE). */
  candidates?: number;
  /** Dropped items listed in the report; default 20. */
  maxExamples?: number;
  /** Called after each record with records done and bytes read. */
  onProgress?: (records: number, bytes: number) => void;
}

/** Why a provenance entry (and in dev/test its output) was not kept. */
export type DropReason = "below-threshold" | "page-not-found" | "no-page-reference" | "nothing-to-map" | NoMatchReason;

/** A provenance entry (or output) that was not kept, and why. */
export interface DroppedItem {
  id: string;
  line: number;
  output: number;
  reason: DropReason;
  page?: string;
  text?: string;
  bleu?: number;
  /** Where the low-BLEU span was placed (paragraph, start, end). */
  span?: [number, number, number];
}

/** What {@link mapFile} did: records and provenance read, mapped and dropped, with examples. */
export interface MapReport {
  input: string;
  output: string;
  split: Split;
  threshold: number;
  records: { read: number; written: number; dropped: number };
  outputs: { read: number; written: number; dropped: number; withoutProvenance: number };
  provenance: {
    read: number;
    mapped: number;
    keptAsGiven: number;
    byMethod: Record<MatchMethod, number>;
    failed: Record<DropReason, number>;
  };
  /** BLEU of every mapped span in ten buckets [0,0.1) … [0.9,1.0) plus exactly 1.0. */
  bleuHistogram: number[];
  /** Malformed input lines (skipped): how many, and the first few messages (`file:line: reason`). */
  badLineCount: number;
  badLines: string[];
  dropped: DroppedItem[];
}

/** Fields of an input provenance entry that only steer the mapping and are not written out. */
const INPUT_ONLY = new Set(["text", "context", "answer_start", "url"]);

/** The section a paragraph belongs to: the nearest `Section::::` paragraph at or before it, else the lead. */
export function sectionOf(page: KiltPage, paragraph: number): string {
  for (let i = Math.min(paragraph, page.text.length - 1); i >= 1; i--) if (page.text[i].startsWith("Section::::")) return page.text[i];
  return "Section::::Abstract.";
}

/** Maps records one at a time, holding the last pages it prepared. */
export class ProvenanceMapper {
  private readonly pagesById = new Map<string, PreparedPage>();
  private readonly lookups = new Map<string, PreparedPage | null>();
  readonly threshold: number;
  readonly candidates: number;

  constructor(
    private readonly pages: PageLookup,
    options: { threshold?: number; candidates?: number } = {},
    private readonly cacheSize = 256,
  ) {
    this.threshold = options.threshold ?? 0.5;
    this.candidates = options.candidates ?? 3;
  }

  /** The page a provenance entry names: wikipedia_id first, then title, then URL. Lookups are cached. */
  async findPage(p: Provenance): Promise<{ page: PreparedPage | null; reference: string | null }> {
    const refs: [string, unknown][] = [
      ["id", p.wikipedia_id],
      ["title", p.title],
      ["url", p.url],
    ];
    let reference: string | null = null;
    for (const [kind, v] of refs) {
      if (v === undefined || v === null || String(v).trim() === "") continue;
      const key = kind === "id" ? String(v).trim() : String(v);
      const ref = `${kind}:${key}`;
      reference ??= ref;
      let page = this.cached(ref);
      if (page === undefined) {
        let found: KiltPage | null | undefined;
        if (kind === "id") found = await this.pages.getPageById(key);
        else if (kind === "title") found = await this.pages.getPageByTitle(key);
        else if (this.pages.getPageFromUrl) found = await this.pages.getPageFromUrl(key);
        else for (const t of titlesFromUrl(key)) if ((found = await this.pages.getPageByTitle(t))) break;
        page = found ? this.prepared(found) : null;
        this.remember(ref, page);
      }
      if (page) return { page, reference };
    }
    return { page: null, reference };
  }

  private cached(ref: string): PreparedPage | null | undefined {
    const p = this.lookups.get(ref);
    if (p !== undefined) {
      this.lookups.delete(ref);
      this.lookups.set(ref, p);
    }
    return p;
  }

  private remember(ref: string, page: PreparedPage | null): void {
    this.lookups.set(ref, page);
    if (this.lookups.size > this.cacheSize * 4) this.lookups.delete(this.lookups.keys().next().value as string);
  }

  /** One PreparedPage per page id among the recently used, so paragraphs are tokenized once. */
  private prepared(page: KiltPage): PreparedPage {
    const id = String(page.wikipedia_id);
    let p = this.pagesById.get(id);
    if (p) {
      this.pagesById.delete(id);
      this.pagesById.set(id, p);
      return p;
    }
    p = new PreparedPage(page);
    this.pagesById.set(id, p);
    if (this.pagesById.size > this.cacheSize) this.pagesById.delete(this.pagesById.keys().next().value as string);
    return p;
  }

  /**
   * Locates `text` on the page. With `context` (the passage the text was taken from, e.g. a SQuAD
   * paragraph or an NQ long answer), the context is located first and the text searched inside it,
   * nearest `answerStart` (code points into the context); the whole page is searched when that does
   * better.
   */
  locate(text: string, page: PreparedPage, context?: string, answerStart?: number): MatchResult | { reason: NoMatchReason } {
    const whole = () => matchAnswer(text, page, { candidates: this.candidates });
    if (context === undefined || context.trim() === "") return whole();
    const ctx = matchAnswer(context, page, { candidates: this.candidates });
    if (!isMatch(ctx)) return whole();
    const paragraph = page.page.text[ctx.paragraph];
    const region = cpSlice(paragraph, ctx.start, ctx.end);
    // The text exactly where the caller says it starts: take it as is.
    if (answerStart !== undefined && cpSlice(region, answerStart, answerStart + cpLength(text)) === text)
      return { paragraph: ctx.paragraph, start: ctx.start + answerStart, end: ctx.start + answerStart + cpLength(text), bleu: 1.0, method: "substring" };
    const inRegion = matchAnswer(text, new PreparedPage({ wikipedia_id: "region", wikipedia_title: "", text: [region] }), {
      candidates: 1,
      near: answerStart,
    });
    if (isMatch(inRegion) && inRegion.bleu === 1) return { ...inRegion, paragraph: ctx.paragraph, start: inRegion.start + ctx.start, end: inRegion.end + ctx.start };
    const w = whole();
    if (!isMatch(inRegion)) return w;
    const shifted = { ...inRegion, paragraph: ctx.paragraph, start: inRegion.start + ctx.start, end: inRegion.end + ctx.start };
    return isMatch(w) && w.bleu > inRegion.bleu ? w : shifted;
  }

  /** Maps one record; returns the record to write (or null when dev/test drops all its outputs) and what happened. */
  async mapRecord(
    record: KiltRecord,
    split: Split,
    line: number,
    report: MapReport,
    maxExamples: number,
  ): Promise<KiltRecord | null> {
    const id = String(record.id);
    const outputs = Array.isArray(record.output) ? record.output : [];
    const kept: Output[] = [];
    const strict = split !== "train";
    const drop = (item: DroppedItem) => {
      if (report.dropped.length < maxExamples) report.dropped.push(item);
    };
    for (let oi = 0; oi < outputs.length; oi++) {
      const out = outputs[oi];
      report.outputs.read++;
      const provs = Array.isArray(out.provenance) ? out.provenance : null;
      if (provs === null || provs.length === 0) {
        report.outputs.withoutProvenance++;
        kept.push(out);
        continue;
      }
      const mapped: Provenance[] = [];
      let failed = false;
      for (const p of provs) {
        report.provenance.read++;
        const text = typeof p.text === "string" ? p.text : typeof out.answer === "string" ? out.answer : null;
        const given = typeof p.start_paragraph_id === "number" && typeof p.start_character === "number" && typeof p.end_character === "number";
        if (text === null) {
          if (given) {
            report.provenance.keptAsGiven++;
            mapped.push(p);
            continue;
          }
          report.provenance.failed["nothing-to-map"]++;
          drop({ id, line, output: oi, reason: "nothing-to-map" });
          failed = true;
          continue;
        }
        const { page, reference } = await this.findPage(p);
        if (page === null) {
          const reason: DropReason = reference === null ? "no-page-reference" : "page-not-found";
          report.provenance.failed[reason]++;
          drop({ id, line, output: oi, reason, ...(reference ? { page: reference } : {}), text: clip(text) });
          failed = true;
          continue;
        }
        const context = typeof p.context === "string" ? p.context : undefined;
        const answerStart = typeof p.answer_start === "number" ? p.answer_start : undefined;
        const m = this.locate(text, page, context, answerStart);
        const pageId = String(page.page.wikipedia_id);
        if (!isMatch(m)) {
          report.provenance.failed[m.reason]++;
          drop({ id, line, output: oi, reason: m.reason, page: pageId, text: clip(text) });
          failed = true;
          continue;
        }
        report.provenance.mapped++;
        report.provenance.byMethod[m.method]++;
        report.bleuHistogram[m.bleu >= 1 ? 10 : Math.floor(m.bleu * 10)]++;
        const below = m.bleu < this.threshold;
        if (below) {
          report.provenance.failed["below-threshold"]++;
          if (strict) {
            drop({ id, line, output: oi, reason: "below-threshold", page: pageId, text: clip(text), bleu: m.bleu, span: [m.paragraph, m.start, m.end] });
            failed = true;
            continue;
          }
        }
        mapped.push(toProvenance(p, page.page, m));
      }
      if (failed && strict) {
        report.outputs.dropped++;
        continue;
      }
      if (mapped.length > 0) kept.push({ ...out, provenance: mapped });
      else if (typeof out.answer === "string") {
        const { provenance: _gone, ...rest } = out;
        kept.push(rest);
      } else report.outputs.dropped++; // neither an answer nor a placed provenance left
    }
    report.outputs.written += kept.length;
    if (kept.length === 0 && outputs.length > 0) {
      report.records.dropped++;
      return null;
    }
    return { ...record, output: kept };
  }
}

function clip(s: string, n = 200): string {
  return s.length <= n ? s : `${s.slice(0, n)}…`;
}

/** A mapped provenance entry: page id and title from the page, the span and its BLEU, extra input fields kept. */
function toProvenance(input: Provenance, page: KiltPage, m: MatchResult): Provenance {
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input))
    if (!INPUT_ONLY.has(k) && !["wikipedia_id", "title", "section", "start_paragraph_id", "start_character", "end_paragraph_id", "end_character", "bleu_score", "meta"].includes(k)) extra[k] = v;
  const meta = { ...(input.meta ?? {}), match: m.method };
  return {
    wikipedia_id: String(page.wikipedia_id),
    title: page.wikipedia_title,
    section: sectionOf(page, m.paragraph),
    start_paragraph_id: m.paragraph,
    start_character: m.start,
    end_paragraph_id: m.paragraph,
    end_character: m.end,
    bleu_score: m.bleu,
    ...extra,
    meta,
  };
}

export function emptyReport(input: string, output: string, split: Split, threshold: number): MapReport {
  return {
    input,
    output,
    split,
    threshold,
    records: { read: 0, written: 0, dropped: 0 },
    outputs: { read: 0, written: 0, dropped: 0, withoutProvenance: 0 },
    provenance: {
      read: 0,
      mapped: 0,
      keptAsGiven: 0,
      byMethod: { substring: 0, token: 0, "substring-in-word": 0, bleu: 0 },
      failed: { "below-threshold": 0, "page-not-found": 0, "no-page-reference": 0, "nothing-to-map": 0, "empty-text": 0, "no-tokens": 0, "empty-page": 0 },
    },
    bleuHistogram: new Array<number>(11).fill(0),
    badLineCount: 0,
    badLines: [],
    dropped: [],
  };
}

/** Maps a records JSONL file to `out` (streaming; written atomically) and returns the report. */
export async function mapFile(input: string, out: string, pages: PageLookup, options: MapOptions): Promise<MapReport> {
  const threshold = options.threshold ?? 0.5;
  const report = emptyReport(input, out, options.split, threshold);
  const mapper = new ProvenanceMapper(pages, { threshold, candidates: options.candidates });
  const maxExamples = options.maxExamples ?? 20;
  const writer = new JsonlWriter(out);
  let bytes = 0;
  try {
    for await (const { value, line } of readJsonl<KiltRecord>(input, {
      onError: (e: LineError) => {
        if (report.badLineCount++ < maxExamples) report.badLines.push(e.message);
      },
      onProgress: (b) => (bytes = b),
    })) {
      report.records.read++;
      const r = await mapper.mapRecord(value, options.split, line, report, maxExamples);
      if (r !== null) {
        await writer.write(r);
        report.records.written++;
      }
      options.onProgress?.(report.records.read, bytes);
    }
  } catch (e) {
    await writer.abort();
    throw e;
  }
  await writer.close();
  return report;
}

/** The split a file name suggests (`…-train…`, `…-dev…`, `…-test…`), or null. */
export function splitFromName(file: string): Split | null {
  const base = file.split(/[\\/]/).pop() ?? file;
  const m = /(?:^|[^a-z])(train|dev|test)(?:[^a-z]|$)/i.exec(base);
  return m ? (m[1].toLowerCase() as Split) : null;
}

/** The one-screen summary of a report. */
export function formatMapReport(r: MapReport): string {
  const pct = (a: number, b: number) => (b === 0 ? "0.0%" : `${((100 * a) / b).toFixed(1)}%`);
  const f = r.provenance.failed;
  const lines = [
    `${r.records.read} records → ${r.records.written} written (${r.records.dropped} dropped) → ${r.output}`,
    `outputs: ${r.outputs.read} read, ${r.outputs.written} written, ${r.outputs.dropped} dropped (${r.split}, BLEU threshold ${r.threshold}), ${r.outputs.withoutProvenance} without provenance passed through`,
    `provenance: ${r.provenance.read} read, ${r.provenance.mapped} mapped (substring ${r.provenance.byMethod.substring}, token ${r.provenance.byMethod.token}, in-word substring ${r.provenance.byMethod["substring-in-word"]}, BLEU ${r.provenance.byMethod.bleu}), ${r.provenance.keptAsGiven} kept as given`,
    `BLEU = 1: ${r.bleuHistogram[10]} (${pct(r.bleuHistogram[10], r.provenance.mapped)}); below ${r.threshold}: ${f["below-threshold"]}`,
  ];
  const failures = Object.entries(f).filter(([k, v]) => v > 0 && k !== "below-threshold");
  if (failures.length > 0) lines.push(`not placed: ${failures.map(([k, v]) => `${k} ${v}`).join(", ")}`);
  if (r.badLineCount > 0) lines.push(`malformed lines skipped: ${r.badLineCount} (first: ${r.badLines[0]})`);
  for (const d of r.dropped.slice(0, 5))
    lines.push(
      `  ${d.reason}: id ${d.id} (line ${d.line}, output ${d.output})${d.page ? ` page ${d.page}` : ""}${d.bleu !== undefined ? ` BLEU ${d.bleu.toFixed(4)}` : ""}${d.text ? `: ${JSON.stringify(d.text.slice(0, 80))}` : ""}`,
    );
  return lines.join("\n");
}

/** Total size of a file, for progress percentages. */
export function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
