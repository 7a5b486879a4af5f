// SQuAD (v1.1 and v2.0 JSON) as a small real KILT knowledge source: one KILT page per SQuAD article,
// and KILT task records whose provenance points at the paragraph and answer characters of those pages.
// Page layout and id scheme: docs/knowledge-build.md ("SQuAD pages").

import { readFileSync } from "node:fs";
import type { KiltPage, KiltRecord, Output } from "../records/types.js";
import { cpLength, cpSlice } from "./codepoints.js";
import { articleUrl, displayTitle } from "./wiki-title.js";

/** A SQuAD answer: its text and character offset in the paragraph. */
export interface SquadAnswer {
  text: string;
  answer_start: number;
}
/** A SQuAD question with its answers (v2.0: possibly unanswerable). */
export interface SquadQuestion {
  id: string;
  question: string;
  answers: SquadAnswer[];
  is_impossible?: boolean;
  plausible_answers?: SquadAnswer[];
}
/** A SQuAD paragraph and its questions. */
export interface SquadParagraph {
  context: string;
  qas: SquadQuestion[];
}
/** A SQuAD article: a Wikipedia title and its paragraphs. */
export interface SquadArticle {
  title: string;
  paragraphs: SquadParagraph[];
}
/** A SQuAD JSON file (v1.1 or v2.0). */
export interface SquadFile {
  version?: string;
  data: SquadArticle[];
}

/** A SQuAD file that does not have the expected shape: names the file and the JSON path. */
export class SquadFormatError extends Error {
  constructor(
    readonly file: string,
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${file}: ${path}: ${reason}`);
    this.name = "SquadFormatError";
  }
}

/** The section SQuAD provenance is given (SQuAD paragraphs carry no section; KILT's lead-section value). */
export const SQUAD_SECTION = "Section::::Abstract.";

/** The page id of a SQuAD article: `squad:` + the title exactly as the file writes it (e.g. `squad:Super_Bowl_50`). */
export function squadPageId(title: string): string {
  return `squad:${title}`;
}

function kind(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "an array" : typeof v;
}

/** Checks the shape of parsed SQuAD JSON, throwing {@link SquadFormatError} at the first problem. */
export function validateSquad(value: unknown, file = "<squad>"): SquadFile {
  const fail = (path: string, reason: string): never => {
    throw new SquadFormatError(file, path, reason);
  };
  if (value === null || typeof value !== "object" || Array.isArray(value)) fail("$", `expected an object, found ${kind(value)}`);
  const data = (value as { data?: unknown }).data;
  if (!Array.isArray(data)) fail("data", `expected an array, found ${kind(data)}`);
  (data as unknown[]).forEach((a, ai) => {
    const at = `data[${ai}]`;
    if (a === null || typeof a !== "object") fail(at, `expected an object, found ${kind(a)}`);
    const art = a as Record<string, unknown>;
    if (typeof art.title !== "string" || art.title.length === 0) fail(`${at}.title`, `expected a non-empty string, found ${kind(art.title)}`);
    if (!Array.isArray(art.paragraphs)) fail(`${at}.paragraphs`, `expected an array, found ${kind(art.paragraphs)}`);
    (art.paragraphs as unknown[]).forEach((p, pi) => {
      const pat = `${at}.paragraphs[${pi}]`;
      const par = p as Record<string, unknown>;
      if (par === null || typeof par !== "object") fail(pat, `expected an object, found ${kind(p)}`);
      if (typeof par.context !== "string") fail(`${pat}.context`, `expected a string, found ${kind(par.context)}`);
      if (!Array.isArray(par.qas)) fail(`${pat}.qas`, `expected an array, found ${kind(par.qas)}`);
      (par.qas as unknown[]).forEach((q, qi) => {
        const qat = `${pat}.qas[${qi}]`;
        const qa = q as Record<string, unknown>;
        if (qa === null || typeof qa !== "object") fail(qat, `expected an object, found ${kind(q)}`);
        if (typeof qa.id !== "string" && typeof qa.id !== "number") fail(`${qat}.id`, `expected a string, found ${kind(qa.id)}`);
        if (typeof qa.question !== "string") fail(`${qat}.question`, `expected a string, found ${kind(qa.question)}`);
        if (!Array.isArray(qa.answers)) fail(`${qat}.answers`, `expected an array, found ${kind(qa.answers)}`);
        (qa.answers as unknown[]).forEach((an, ni) => {
          const nat = `${qat}.answers[${ni}]`;
          const ans = an as Record<string, unknown>;
          if (ans === null || typeof ans !== "object") fail(nat, `expected an object, found ${kind(an)}`);
          if (typeof ans.text !== "string") fail(`${nat}.text`, `expected a string, found ${kind(ans.text)}`);
          if (!Number.isInteger(ans.answer_start) || (ans.answer_start as number) < 0)
            fail(`${nat}.answer_start`, `expected a non-negative integer, found ${JSON.stringify(ans.answer_start)}`);
        });
      });
    });
  });
  return value as SquadFile;
}

/** Reads and validates a SQuAD JSON file. */
export function readSquadFile(file: string): SquadFile {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`${file}: cannot read (${err instanceof Error ? err.message : String(err)})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    throw new SquadFormatError(file, "$", `invalid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  return validateSquad(value, file);
}

/**
 * One KILT page per article: `text[0]` is the title line, then the article's paragraphs in order, so
 * SQuAD paragraph i is KILT paragraph i + 1. Every paragraph ends in "\n", as in KILT's knowledge
 * source; the context before it is byte-for-byte SQuAD's, so answer offsets hold unchanged.
 */
export function squadArticleToPage(article: SquadArticle, articleIndex: number): KiltPage {
  const id = squadPageId(article.title);
  const title = displayTitle(article.title);
  return {
    _id: id,
    wikipedia_id: id,
    wikipedia_title: title,
    text: [`${title}\n`, ...article.paragraphs.map((p) => `${p.context}\n`)],
    anchors: [],
    categories: "",
    history: { url: articleUrl(article.title) },
    meta: { source: "squad", squad_title: article.title, article_index: articleIndex },
  };
}

/** KILT pages for every article of a SQuAD file, in file order. Throws on two articles with the same title. */
export function squadToPages(squad: SquadFile): KiltPage[] {
  const seen = new Map<string, number>();
  return squad.data.map((a, i) => {
    const prev = seen.get(a.title);
    if (prev !== undefined) throw new Error(`SQuAD articles ${prev} and ${i} share the title ${JSON.stringify(a.title)}: page ids would collide`);
    seen.set(a.title, i);
    return squadArticleToPage(a, i);
  });
}

/** An answer whose offset does not reproduce its text, and what was done about it. */
export interface OffsetException {
  question_id: string;
  answer: string;
  answer_start: number;
  /** `relocated`: the text was found elsewhere in the paragraph and that span is used; `dropped`: not found. */
  action: "relocated" | "dropped";
  /** The start used when relocated. */
  used_start?: number;
}

/** What converting SQuAD questions to KILT records counted. */
export interface SquadConversionStats {
  articles: number;
  paragraphs: number;
  questions: number;
  /** Answers as listed (with repeats from several annotators). */
  answers: number;
  /** Outputs written: one per distinct answer text of a question. */
  outputs: number;
  records: number;
  /** v2.0 questions marked `is_impossible` (or with no answers). */
  impossible: number;
  /** Answers whose `context[answer_start:answer_start+len(text)]` is not their text. */
  offsetExceptions: OffsetException[];
  /** Questions left out: their paragraph is not in the pages given (ids listed). */
  unmapped: string[];
}

/** Options of converting SQuAD questions to KILT records. */
export interface SquadQuestionOptions {
  /**
   * The pages provenance points into. Default: the pages of this same file. Give the pages of another
   * SQuAD file (e.g. v1.1 dev) to point v2.0 questions at them: articles are matched by title and
   * paragraphs by their exact text, so subsets and reorderings map correctly.
   */
  pages?: KiltPage[];
  /** What to do with unanswerable (v2.0) questions: leave them out (default) or keep them with `output: []`. */
  impossible?: "skip" | "keep";
}

function findNearest(context: string, text: string, near: number): number {
  // Code-point start of the occurrence of `text` in `context` closest to code point `near`, or -1.
  let best = -1;
  let bestDist = Infinity;
  for (let i = context.indexOf(text); i !== -1; i = context.indexOf(text, i + 1)) {
    const cp = cpLength(context.slice(0, i));
    const d = Math.abs(cp - near);
    if (d < bestDist) {
      best = cp;
      bestDist = d;
    }
  }
  return best;
}

/**
 * KILT task records for the questions of a SQuAD file: `id` = SQuAD id, `input` = question, one output
 * per distinct answer text (first listed start) with one provenance span
 * `{wikipedia_id, title, section, start/end_paragraph_id = paragraph + 1, start/end_character, bleu_score: 1}`;
 * `meta` = `{article_index, article_title, paragraph_index}` of the question in its file. Character
 * offsets count code points, as SQuAD's and KILT's do. Every span is checked against the page text.
 */
export function squadQuestionsToKilt(
  squad: SquadFile,
  options: SquadQuestionOptions = {},
): { records: KiltRecord[]; stats: SquadConversionStats } {
  const pages = options.pages ?? squadToPages(squad);
  const keepImpossible = (options.impossible ?? "skip") === "keep";
  const byTitle = new Map<string, { page: KiltPage; paragraphOf: Map<string, number> }>();
  for (const page of pages) {
    const paragraphOf = new Map<string, number>();
    page.text.forEach((t, i) => {
      if (i > 0 && !paragraphOf.has(t)) paragraphOf.set(t, i);
    });
    byTitle.set(page.wikipedia_title, { page, paragraphOf });
  }
  const stats: SquadConversionStats = {
    articles: squad.data.length,
    paragraphs: 0,
    questions: 0,
    answers: 0,
    outputs: 0,
    records: 0,
    impossible: 0,
    offsetExceptions: [],
    unmapped: [],
  };
  const records: KiltRecord[] = [];
  squad.data.forEach((article, articleIndex) => {
    const target = byTitle.get(displayTitle(article.title));
    article.paragraphs.forEach((paragraph, paragraphIndex) => {
      stats.paragraphs++;
      const pageParagraph = target?.paragraphOf.get(`${paragraph.context}\n`) ?? target?.paragraphOf.get(paragraph.context);
      for (const q of paragraph.qas) {
        stats.questions++;
        stats.answers += q.answers.length;
        const impossible = q.is_impossible === true || q.answers.length === 0;
        if (impossible) stats.impossible++;
        if (impossible && !keepImpossible) continue;
        if (target === undefined || pageParagraph === undefined) {
          stats.unmapped.push(String(q.id));
          continue;
        }
        const pageText = target.page.text[pageParagraph];
        const outputs: Output[] = [];
        const seen = new Set<string>();
        for (const a of q.answers) {
          if (seen.has(a.text)) continue;
          seen.add(a.text);
          let start = a.answer_start;
          if (cpSlice(pageText, start, start + cpLength(a.text)) !== a.text) {
            const found = findNearest(paragraph.context, a.text, start);
            if (found < 0) {
              stats.offsetExceptions.push({ question_id: String(q.id), answer: a.text, answer_start: a.answer_start, action: "dropped" });
              continue;
            }
            stats.offsetExceptions.push({
              question_id: String(q.id),
              answer: a.text,
              answer_start: a.answer_start,
              action: "relocated",
              used_start: found,
            });
            start = found;
          }
          outputs.push({
            answer: a.text,
            provenance: [
              {
                wikipedia_id: target.page.wikipedia_id,
                title: target.page.wikipedia_title,
                section: SQUAD_SECTION,
                start_paragraph_id: pageParagraph,
                start_character: start,
                end_paragraph_id: pageParagraph,
                end_character: start + cpLength(a.text),
                bleu_score: 1.0,
              },
            ],
          });
        }
        if (outputs.length === 0 && !impossible) continue; // every answer dropped: already reported
        stats.outputs += outputs.length;
        stats.records++;
        const meta: Record<string, unknown> = { article_index: articleIndex, article_title: article.title, paragraph_index: paragraphIndex };
        if (impossible) meta.is_impossible = true;
        records.push({ id: q.id, input: q.question, output: outputs, meta });
      }
    });
  });
  return { records, stats };
}
