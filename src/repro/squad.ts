// `tartan repro squad`: the reproducibility matrix on the bundled SQuAD source (the 48 SQuAD v1.1 dev
// articles as KILT pages, their 10,570 questions as KILT records, as the quick start builds them):
// BM25 over paragraphs (checked against Lucene 8's figures and tartan's own), BM25 over 100-word
// passages and DrQA TF-IDF over pages (checked against tartan's own figures, bit for bit). It runs
// end to end in about a minute, so every user and CI can see the matrix work.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadSquad } from "../readers/extractive/squad-data.js";
import { writeJsonl } from "../records/jsonl.js";
import { ingest } from "../knowledge/ingest.js";
import { makeDirs, writeFileSafe } from "../util/safe-output.js";
import { inputChecksum, runMatrix, tally, type CellSpec, type MatrixResult, type MatrixOptions } from "./matrix.js";
import { SQUAD_REFERENCES, type Reference } from "./references.js";
import { TARTAN_VERSION } from "../retrieval/manifest.js";

/** The SQuAD file used when none is given (as `tartan quickstart`). */
export const DEFAULT_SQUAD = "../shared/data/squad/dev-v1.1.reconstructed.json";

/** Options of {@link reproSquad}. */
export interface ReproSquadOptions extends Pick<MatrixOptions, "fresh" | "log" | "onCell"> {
  /** SQuAD v1.1 JSON; default {@link DEFAULT_SQUAD}. */
  squad?: string;
  /** Working and output directory. */
  work: string;
}

const lucene = (value: number): Reference => ({ value, source: "lucene8-squad" });
const own = (value: number): Reference => ({ value, source: "tartan-squad" });
const LUCENE_TOL = "Lucene's figure is rounded to four decimals: ±0.0001";
const OWN_TOL = "tartan's own figure: identical or it fails";

/** The cells of the SQuAD matrix over `gold`. */
export function squadCells(gold: string): CellSpec[] {
  const L = SQUAD_REFERENCES.lucene;
  const T = SQUAD_REFERENCES.tartan;
  return [
    {
      id: "bm25-paragraph",
      system: "BM25 over paragraphs (EnglishAnalyzer, k1 0.9, b 0.4)",
      dataset: "SQuAD v1.1 dev",
      index: { kind: "bm25", unit: "paragraph" },
      gold,
      topK: 20,
      figures: [
        { metric: "Rprec", level: "page", reference: lucene(L.pageRprec), tolerance: 0.0001, toleranceNote: LUCENE_TOL },
        { metric: "recall@5", level: "page", reference: lucene(L.pageRecall5), tolerance: 0.0001, toleranceNote: LUCENE_TOL },
        { metric: "Rprec", level: "paragraph", reference: lucene(L.paragraphRprec), tolerance: 0.0001, toleranceNote: LUCENE_TOL },
        { metric: "recall@5", level: "paragraph", reference: lucene(L.paragraphRecall5), tolerance: 0.0001, toleranceNote: LUCENE_TOL },
        {
          metric: "recall@20",
          level: "paragraph",
          reference: lucene(L.paragraphRecall20),
          tolerance: 0.0002,
          toleranceNote: "±0.0002: paragraphs with equal scores are ordered by unit in tartan and by document id in Lucene, which moves a few questions across rank 20",
        },
      ],
    },
    {
      id: "bm25-passage",
      system: "BM25 over 100-word passages (EnglishAnalyzer, k1 0.9, b 0.4)",
      dataset: "SQuAD v1.1 dev",
      index: { kind: "bm25", unit: "passage", words: 100 },
      gold,
      topK: 20,
      figures: [
        { metric: "Rprec", level: "page", reference: own(T.bm25PassagePageRprec), tolerance: 0, toleranceNote: OWN_TOL },
        { metric: "recall@5", level: "page", reference: own(T.bm25PassagePageRecall5), tolerance: 0, toleranceNote: OWN_TOL },
      ],
    },
    {
      id: "tfidf-page",
      system: "DrQA TF-IDF over pages (bigram hashing)",
      dataset: "SQuAD v1.1 dev",
      index: { kind: "tfidf", unit: "page" },
      gold,
      topK: 20,
      figures: [
        { metric: "Rprec", level: "page", reference: own(T.tfidfPageRprec), tolerance: 0, toleranceNote: OWN_TOL },
        { metric: "recall@5", level: "page", reference: own(T.tfidfPageRecall5), tolerance: 0, toleranceNote: OWN_TOL },
      ],
    },
  ];
}

/**
 * Builds the SQuAD knowledge source and gold records in `work` (reused while the SQuAD file is
 * unchanged) and runs the matrix. Writes nothing but under `work`.
 */
export async function reproSquad(o: ReproSquadOptions): Promise<MatrixResult> {
  const log = o.log ?? (() => {});
  const squad = o.squad ?? DEFAULT_SQUAD;
  if (!existsSync(squad)) throw new Error(`${squad}: no such file (run from the repository with ../shared beside it, or pass --squad)`);
  makeDirs(o.work);
  const squadSum = await inputChecksum(squad);
  const pages = join(o.work, "pages.jsonl");
  const gold = join(o.work, "gold.jsonl");
  const ks = join(o.work, "ks");
  const stamp = join(o.work, "source.json");
  const prepared = existsSync(stamp) && (JSON.parse(readFileSync(stamp, "utf8")) as { squad?: string }).squad === squadSum && existsSync(ks) && existsSync(gold);
  if (!prepared) {
    log(`building the knowledge source from ${squad}`);
    const data = loadSquad(squad);
    await writeJsonl(pages, data.pages);
    await writeJsonl(gold, data.records);
    await ingest(pages, { out: ks, force: true, workers: 0 });
    writeFileSafe(stamp, `${JSON.stringify({ squad: squadSum })}\n`);
  }
  const ksSum = await inputChecksum(ks);
  const cells = await runMatrix(squadCells(gold), { work: o.work, ks, fresh: o.fresh, log, onCell: o.onCell }, ksSum);
  return {
    title: "tartan repro squad: retrieval on the SQuAD knowledge source",
    notes: [
      `Knowledge source: the 48 articles of SQuAD v1.1 dev (${squad}) as KILT pages, 2,067 paragraphs; gold: its 10,570 questions as KILT records with their paragraph as provenance.`,
      "Page level: the provenance page (wikipedia_id); paragraph level: the page and its paragraph (wikipedia_id, start_paragraph_id). Figures are the KILT evaluator's, as fractions.",
      "References: Lucene 8's figures for BM25 over paragraphs (four decimals); tartan's own figures at full precision for the other cells (a later version must reproduce them exactly).",
    ],
    cells,
    inputs: { [squad]: squadSum, [ks]: ksSum },
    setup: [`tartan ks from-squad ${squad} --out ${pages}`, `tartan datasets convert squad ${squad} --out ${gold}`, `tartan ks ingest ${pages} --out ${ks}`],
    ...tally(cells),
    created: new Date().toISOString(),
    tartanVersion: TARTAN_VERSION,
  };
}
