// The reference figures the reproducibility matrices check, each with its source: the SQuAD figures
// measured on this project's machine (Lucene 8 and tartan itself), Pyserini's KILT replication guide
// (dev sets: R-precision and recall@100 of DrQA TF-IDF and Anserini BM25 over documents and passages),
// Pyserini's removed KILT regression test, and the KILT paper's Table 4 (test sets, shown for context:
// test answers are hidden, so no local run can check them). Figures are fractions (0.3821, not 38.21).

/** A published figure and where it comes from (a key of {@link SOURCES}). */
export interface Reference {
  value: number;
  source: keyof typeof SOURCES;
}

/** A source of reference figures. */
export interface Source {
  title: string;
  /** Where to read it. */
  where: string;
  note?: string;
}

/** Every source a reference cites. */
export const SOURCES = {
  "lucene8-squad": {
    title: "Lucene 8.7 (Debian liblucene8-java), BM25Similarity(0.9, 0.4), EnglishAnalyzer, on the 2,067 SQuAD v1.1 dev paragraphs (title + text), 10,570 questions, one thread",
    where: "shared/reference/measurements.md, \"BM25 on the SQuAD knowledge source with Lucene 8\" (2026-11-21)",
    note: "four decimals; page level = each paragraph's article, pages de-duplicated in rank order",
  },
  "tartan-squad": {
    title: "tartan 0.1.0 on the same source and questions, measured for this matrix (2026-11-26) with the commands of each cell",
    where: "docs/repro.md, \"SQuAD matrix\"",
    note: "full precision: a later tartan must give the same figures bit for bit (rankings and the evaluator are deterministic)",
  },
  "tartan-quickstart": {
    title: "tartan quickstart (BM25 over paragraphs, top 20; the extractive reader trained on articles 0-23 reads the top 5; the questions of articles 24-47), the figures README.md prints",
    where: "README.md, \"Quick start\" (percentages with two decimals)",
    note: "the reader's training is seeded: the same figures on every run",
  },
  "pyserini-kilt": {
    title: "Pyserini, \"Replicating BM25 Baselines for KILT\" (docs/experiments-kilt.md), Results tables, KILT dev sets",
    where: "https://github.com/castorini/pyserini/blob/135dc268713a71b99541afca4fde88432233fc43/docs/experiments-kilt.md (removed from Pyserini in PR #2513, May 2026)",
    note: "document index: Pyserini's convert_kilt_to_document_jsonl.py; passage index: convert_kilt_to_passage_jsonl.py --sections --bigrams --stem; runs top 1000; the DrQA row is KILT's TF-IDF baseline",
  },
  "pyserini-kilt-test": {
    title: "Pyserini's KILT regression test integrations/dense/test_kilt.py (FEVER document R-precision 0.3821, delta 0.0001; AIDA 0.0343) and PR #538's full output",
    where: "castorini/pyserini PR #538; the test was removed in PR #2513 (May 2026)",
  },
  "kilt-paper": {
    title: "Petroni et al., KILT: a Benchmark for Knowledge Intensive Language Tasks (NAACL 2021), Table 4: page-level R-precision on the test data",
    where: "https://aclanthology.org/2021.naacl-main.200 (shared/seeds/001_…, Table 4)",
    note: "test sets: their answers and provenance are hidden (EvalAI), so these figures are context, never checked by a local run",
  },
} as const satisfies Record<string, Source>;

/** The eleven KILT datasets in the papers' column order, with their short column names. */
export const KILT_COLUMNS = [
  ["fever", "FEV"],
  ["aidayago2", "AY2"],
  ["wned", "WnWi"],
  ["cweb", "WnCw"],
  ["trex", "T-REx"],
  ["zsre", "zsRE"],
  ["nq", "NQ"],
  ["hotpotqa", "HoPo"],
  ["triviaqa", "TQA"],
  ["eli5", "ELI5"],
  ["wow", "WoW"],
] as const;

/** The KILT retrievers of the matrix ("dense": a prebuilt dense index given to the command; no reference is checked). */
export type KiltSystem = "tfidf" | "bm25-document" | "bm25-passage" | "dense";

/** The sparse retrievers Pyserini's guide has figures for. */
export type PyseriniSystem = Exclude<KiltSystem, "dense">;

const pct = (row: readonly (number | null)[]): Record<string, number | null> => Object.fromEntries(KILT_COLUMNS.map(([d], i) => [d, row[i] === null ? null : Math.round(row[i]! * 100) / 10000]));

/** Pyserini's dev R-precision (%), per system, in KILT_COLUMNS order. */
export const PYSERINI_RPREC: Record<PyseriniSystem, Record<string, number | null>> = {
  tfidf: pct([50.75, 2.44, 0.15, 1.27, 43.43, 60.63, 28.59, 34.63, 45.7, 11.02, 41.82]),
  "bm25-document": pct([38.21, 3.43, 0.09, 2.71, 44.64, 50.08, 29.93, 38.37, 36.76, 7.17, 22.27]),
  "bm25-passage": pct([43.04, 3.18, 0.15, 2.75, 55.06, 67.5, 24.64, 41.43, 24.95, 5.84, 24.85]),
};

/** Pyserini's dev recall@100 (%), per system ("-" for the entity-linking sets). */
export const PYSERINI_RECALL100: Record<PyseriniSystem, Record<string, number | null>> = {
  tfidf: pct([91.87, null, null, null, 84.82, 94.12, 70.98, 62.32, 87.04, 39.98, 91.53]),
  "bm25-document": pct([88.41, null, null, null, 83.24, 91.83, 75.12, 59.66, 81.21, 34.0, 69.95]),
  "bm25-passage": pct([91.99, null, null, null, 88.03, 98.01, 75.55, 61.52, 80.18, 32.5, 65.96]),
};

/** DPR figures users reported on KILT's issues (context for a dense cell, not checked: they depend on the checkpoint). */
export const DPR_CONTEXT = "DPR (KILT's checkpoint) as users reported it: NQ dev R-precision 53.68 (facebookresearch/KILT issue #23); WoW dev recall@5 48.82, multi-task DPR recall@1 41.07 (issue #63)";

/** The KILT paper's TF-IDF page-level R-precision on the test sets (Table 4), for context. */
export const KILT_PAPER_TFIDF_TEST = pct([50.85, 3.74, 0.24, 2.09, 44.74, 60.83, 28.12, 34.14, 46.37, 13.67, 49.01]);

/** The quick start's figures as README.md prints them (percent, two decimals), as fractions. */
export const QUICKSTART_REFERENCES = { Rprec: 0.9442, "recall@5": 0.9922, em: 0.3205, f1: 0.4029, "KILT-em": 0.3197, "KILT-f1": 0.4009 } as const;

/** The SQuAD references (fractions): Lucene 8's four-decimal figures and tartan's own at full precision (top 20 units per question, as each cell retrieves). */
export const SQUAD_REFERENCES = {
  lucene: {
    pageRprec: 0.9429,
    pageRecall5: 0.9912,
    paragraphRprec: 0.7752,
    paragraphRecall5: 0.9304,
    paragraphRecall20: 0.9731,
  },
  tartan: {
    bm25PassagePageRprec: 0.9387890255439925,
    bm25PassagePageRecall5: 0.988647114474929,
    tfidfPageRprec: 0.9286660359508042,
    tfidfPageRecall5: 0.9830652790917691,
  },
} as const;
