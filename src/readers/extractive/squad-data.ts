// SQuAD as reader training and test data: KILT pages and records (src/knowledge/squad.ts), the split
// by article index (train on the first half of the articles, test on the second, never the same
// article), and the passages a record is read from: paragraphs of its own article ranked by an
// IDF-weighted stem overlap with the question (a stand-in retriever within the article), best first.

import type { KiltPage, KiltRecord, Provenance } from "../../records/types.js";
import { cpLength } from "../../knowledge/codepoints.js";
import { readSquadFile, squadQuestionsToKilt, squadToPages, SQUAD_SECTION } from "../../knowledge/squad.js";
import type { ReaderPassage } from "../types.js";
import { analyzeQuestion } from "./question.js";
import { analyzeCached, idfWeights } from "./text.js";

/** A SQuAD file as KILT pages and records. */
export interface SquadData {
  pages: KiltPage[];
  records: KiltRecord[];
  /** Number of articles; records' `meta.article_index` is below it. */
  articles: number;
}

/** Reads a SQuAD file into KILT pages and records. */
export function loadSquad(file: string): SquadData {
  const squad = readSquadFile(file);
  const pages = squadToPages(squad);
  const { records } = squadQuestionsToKilt(squad, { pages });
  return { pages, records, articles: squad.data.length };
}

/** The article index of a SQuAD-derived record (`meta.article_index`). */
export function articleIndex(r: KiltRecord): number {
  const i = r.meta?.article_index;
  if (typeof i !== "number") throw new Error(`record ${String(r.id)} has no meta.article_index (not a SQuAD record?)`);
  return i;
}

/** Splits records by article: `train` = articles [0, half), `test` = [half, articles). */
export function splitByArticle(records: readonly KiltRecord[], articles: number): { train: KiltRecord[]; test: KiltRecord[]; half: number } {
  const half = Math.floor(articles / 2);
  const train: KiltRecord[] = [];
  const test: KiltRecord[] = [];
  for (const r of records) (articleIndex(r) < half ? train : test).push(r);
  return { train, test, half };
}

/** One passage per body paragraph of a page, with exact KILT provenance (no text copy). */
export function pageParagraphPassages(page: KiltPage): ReaderPassage[] {
  const out: ReaderPassage[] = [];
  for (let i = 1; i < page.text.length; i++) {
    const text = page.text[i].endsWith("\n") ? page.text[i].slice(0, -1) : page.text[i];
    if (text.includes("Section::::") || text.trim() === "") continue;
    const provenance: Provenance = {
      wikipedia_id: page.wikipedia_id,
      title: page.wikipedia_title,
      section: SQUAD_SECTION,
      start_paragraph_id: i,
      start_character: 0,
      end_paragraph_id: i,
      end_character: cpLength(text),
    };
    out.push({ text, provenance });
  }
  return out;
}

/**
 * The `k` paragraphs of `candidates` that best match the question: score = sum over the question's
 * content stems found in the paragraph of ln((N + 1) / (df + 0.5)), df over these paragraphs. Ties keep
 * paragraph order. Paragraphs matching nothing still rank (score 0), so there are min(k, N) passages.
 */
export function rankPassages(question: string, candidates: readonly ReaderPassage[], k: number): ReaderPassage[] {
  const q = analyzeQuestion(question);
  const stemSets = candidates.map((p) => new Set(analyzeCached(p.text).tokens.map((t) => t.stem)));
  const { idf } = idfWeights(q.stems, stemSets);
  const scored = candidates.map((p, i) => {
    let score = 0;
    for (const s of q.stems) if (stemSets[i].has(s)) score += idf.get(s) ?? 0;
    return { i, score };
  });
  scored.sort((a, b) => b.score - a.score || a.i - b.i);
  return scored.slice(0, k).map(({ i, score }) => ({ ...candidates[i], score }));
}

/** Passages for SQuAD records: each record's own article, ranked by {@link rankPassages}. */
export class ArticlePassages {
  private readonly byId = new Map<string, ReaderPassage[]>();
  constructor(
    pages: readonly KiltPage[],
    readonly k = 5,
  ) {
    for (const p of pages) this.byId.set(String(p.wikipedia_id), pageParagraphPassages(p));
  }

  /** The page id of a record's article (its first provenance). */
  static pageOf(r: KiltRecord): string {
    const id = r.output.find((o) => o.provenance && o.provenance.length > 0)?.provenance?.[0].wikipedia_id;
    if (id === undefined) throw new Error(`record ${String(r.id)} has no provenance`);
    return String(id);
  }

  /** The paragraphs of the record's article as reader passages. */
  for(r: KiltRecord): ReaderPassage[] {
    const all = this.byId.get(ArticlePassages.pageOf(r));
    if (!all) throw new Error(`record ${String(r.id)}: page ${ArticlePassages.pageOf(r)} not loaded`);
    return rankPassages(r.input ?? "", all, this.k);
  }
}
