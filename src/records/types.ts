// The KILT data formats: task records (gold and guess files) and knowledge-source pages.
// Field meanings follow the KILT README and kilt-spec.md §1; every field a loader may meet is typed,
// and values that appear with several JSON types in real files (ids as numbers or strings) say so.

/** An id as found in KILT files: usually a string, sometimes an int (compared as Python `str(id).strip()`). */
export type KiltId = string | number;

/** One piece of evidence: a span of a knowledge-source page. Only `wikipedia_id` is mandatory. */
export interface Provenance {
  wikipedia_id: KiltId;
  title?: string;
  section?: string;
  start_paragraph_id?: number | string;
  start_character?: number;
  end_paragraph_id?: number | string;
  end_character?: number;
  /** BLEU of the mapped span against the dataset's original evidence. */
  bleu_score?: number;
  /** Passage text: retrieval outputs carry it, and the context metrics of the evaluator read it. */
  text?: string;
  /** Retrieval score, written by tartan's retrievers. */
  score?: number;
  meta?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** One output: an answer, an evidence set, or both (gold files hold alternatives; guesses hold one). */
export interface Output {
  answer?: string;
  provenance?: Provenance[];
  meta?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** A task record: one line of a KILT gold or guess file. */
export interface KiltRecord {
  id: KiltId;
  /** Question, claim, entity-marked sentence or dialogue history. TriviaQA's released files lack it. */
  input?: string;
  output: Output[];
  meta?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** A hyperlink inside a knowledge-source page, with its paragraph and character offsets. */
export interface Anchor {
  text: string;
  href: string;
  paragraph_id: number;
  start: number;
  end: number;
  wikipedia_title?: string;
  wikipedia_id?: string;
}

/** One page of the knowledge source (`kilt_knowledgesource.json`, kilt-spec.md §1.3). */
export interface KiltPage {
  _id?: string;
  wikipedia_id: string;
  wikipedia_title: string;
  /** Paragraphs; text[0] is the title line, `Section::::` paragraphs are headers, `BULLET::::-` list items. */
  text: string[];
  anchors?: Anchor[];
  /** Comma-separated category names. */
  categories?: string;
  history?: {
    revid?: number | string;
    timestamp?: string;
    parentid?: number | string;
    pre_dump?: boolean;
    pageid?: number | string;
    url?: string;
  };
  wikidata_info?: {
    description?: string;
    enwikiquote_title?: string;
    wikidata_id?: string;
    wikidata_label?: string;
    wikipedia_title?: string;
    aliases?: unknown;
  };
  [extra: string]: unknown;
}
