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
import { QUICKSTART_REFERENCES, SQUAD_REFERENCES, type Reference } from "./references.js";
import { quickstart } from "../pipeline/quickstart.js";
import { TARTAN_VERSION } from "../retrieval/manifest.js";

/** The SQuAD file used when none is given (as `tartan quickstart`). */
export const DEFAULT_SQUAD = "../shared/data/squad/dev-v1.1.reconstructed.json";

/** Options of {@link reproSquad}. */
export interface ReproSquadOptions extends Pick<MatrixOptions, "fresh" | "log" | "onCell" | "onProgress"> {
  /** SQuAD v1.1 JSON; default {@link DEFAULT_SQUAD}. */
  squad?: string;
  /** Working and output directory. */
  work: string;
  /** Add the pipeline cell (the quick start: BM25 + the trained extractive reader, KILT scores); about 80 CPU-s more. */
  pipeline?: boolean;
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

/** The pipeline cell: the quick start run in the cell's directory, its page-level KILT downstream figures. */
export function squadPipelineCell(squad: string, gold: string, work: string): CellSpec {
  const Q = QUICKSTART_REFERENCES;
  const tol = "the quick start's figures are printed as percentages with two decimals: ±0.00005";
  const ref = (value: number) => ({ reference: { value, source: "tartan-quickstart" as const }, tolerance: 0.00005, toleranceNote: tol });
  return {
    id: "pipeline-bm25-reader",
    system: "BM25 over paragraphs (top 20) + the extractive reader trained here (top 5)",
    dataset: "SQuAD v1.1 dev, articles 24-47",
    index: { kind: "bm25", unit: "paragraph" },
    gold,
    topK: 20,
    figures: [
      { metric: "Rprec", level: "downstream", ...ref(Q.Rprec) },
      { metric: "recall@5", level: "downstream", ...ref(Q["recall@5"]) },
      { metric: "em", level: "downstream", ...ref(Q.em) },
      { metric: "f1", level: "downstream", ...ref(Q.f1) },
      { metric: "KILT-em", level: "downstream", ...ref(Q["KILT-em"]) },
      { metric: "KILT-f1", level: "downstream", ...ref(Q["KILT-f1"]) },
    ],
    custom: {
      commands: [`tartan quickstart --squad ${squad} --work ${join(work, "pipelines", "pipeline-bm25-reader")} --top-k 20 --reader-k 5`],
      run: async (dir) => {
        const r = await quickstart({ squad, work: dir, topK: 20, readerK: 5 });
        const d = r.systems[0].result.eval_downstream;
        if (!d) throw new Error(`pipeline-bm25-reader: no downstream evaluation (${r.systems[0].result.problems.map((p) => p.message).join("; ")})`);
        const values: Record<string, number> = {
          "downstream:Rprec": d.retrieval.Rprec,
          "downstream:recall@5": d.retrieval["recall@5"],
          "downstream:em": d.downstream.em,
          "downstream:f1": d.downstream.f1,
          "downstream:KILT-em": d.kilt["KILT-em"],
          "downstream:KILT-f1": d.kilt["KILT-f1"],
        };
        return { values, records: r.systems[0].result.counts.evaluated };
      },
    },
  };
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
  const specs = [...squadCells(gold), ...(o.pipeline ? [squadPipelineCell(squad, gold, o.work)] : [])];
  const cells = await runMatrix(specs, { work: o.work, ks, fresh: o.fresh, log, onCell: o.onCell, onProgress: o.onProgress }, ksSum);
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
