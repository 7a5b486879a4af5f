// `tartan repro kilt --ks DIR --data DIR`: KILT's retrieval baselines as a matrix, one cell per
// (retriever × dataset dev set found in DIR): DrQA TF-IDF over pages, BM25 over whole pages
// (documents) and BM25 over KILT's 100-word passages (and a prebuilt dense index when given,
// reported without a check), each checked against Pyserini's replication
// figures (page-level R-precision and recall@100 on the dev sets) within the tolerance stated per
// cell; the KILT paper's test figures are shown beside them for context. The full matrix needs the
// 35 GB knowledge source (tartan datasets download knowledge-source; tartan ks ingest); the same
// machinery runs on any KILT-format source.

import { existsSync } from "node:fs";
import { readManifest } from "../retrieval/manifest.js";
import { join } from "node:path";
import { DATASETS } from "../datasets/catalogue.js";
import { TARTAN_VERSION } from "../retrieval/manifest.js";
import { inputChecksum, runMatrix, tally, type CellSpec, type FigureSpec, type IndexSpec, type MatrixOptions, type MatrixResult } from "./matrix.js";
import { DPR_CONTEXT, KILT_COLUMNS, KILT_PAPER_TFIDF_TEST, PYSERINI_RECALL100, PYSERINI_RPREC, type KiltSystem } from "./references.js";

/** Options of {@link reproKilt}. */
export interface ReproKiltOptions extends Pick<MatrixOptions, "fresh" | "log" | "onCell" | "onProgress"> {
  /** The knowledge-source store (tartan ks ingest of kilt_knowledgesource.json). */
  ks: string;
  /** Directory holding the KILT dev files (tartan datasets download dev). */
  data: string;
  /** Working and output directory. */
  work: string;
  /** Only these datasets (catalogue names); default: every dev file found in `data`. */
  datasets?: string[];
  /** Only these retrievers; default the three sparse ones, and "dense" when `dense` is given. */
  systems?: KiltSystem[];
  /** A prebuilt dense index over the same source (tartan index build --kind dense, or pulled): one more cell per dataset, reported without a reference. */
  dense?: string;
}

/** The retrievers of the KILT matrix: index, depth, tolerance and why. */
export const KILT_SYSTEMS: Record<Exclude<KiltSystem, "dense">, { system: string; index: IndexSpec; topK: number; tolerance: number; why: string }> = {
  tfidf: {
    system: "DrQA TF-IDF over pages (bigram hashing)",
    index: { kind: "tfidf", unit: "page" },
    topK: 100,
    tolerance: 0.01,
    why: "±1 point: tartan re-implements DrQA's tokenizer and hashing; the figure is KILT's DrQA run as Pyserini lists it",
  },
  "bm25-document": {
    system: "BM25 over pages (documents)",
    index: { kind: "bm25", unit: "page" },
    topK: 100,
    tolerance: 0.01,
    why: "±1 point: BM25 as Lucene scores it, but Pyserini's documents come from its own converter and analyzer settings",
  },
  "bm25-passage": {
    system: "BM25 over 100-word passages",
    index: { kind: "bm25", unit: "passage", words: 100 },
    topK: 1000,
    tolerance: 0.02,
    why: "±2 points: Pyserini cuts its own passages (sections, bigrams, stemming); tartan's are KILT's 100-word chunks, ranked as pages by their best passage (top 1,000 passages)",
  },
};

/** The dev file of a dataset in `data` (TriviaQA: the file with questions that get_triviaqa_input.py writes), or null. */
export function devFile(dataset: string, data: string): string | null {
  const d = DATASETS.find((x) => x.name === dataset);
  const split = d?.splits.dev;
  if (!split) return null;
  for (const name of [...(split.otherFiles ?? []), split.file]) {
    const path = join(data, name);
    if (existsSync(path) && (split.hasInput || split.otherFiles?.includes(name))) return path;
  }
  return null;
}

/** The figures of one (system, dataset) cell with Pyserini's references where it has them (none for dense). */
function figures(system: KiltSystem, dataset: string): FigureSpec[] {
  if (system === "dense") {
    const why = "no reference: dense figures depend on the encoder and checkpoint (DPR figures are shown for context)";
    return [
      { metric: "Rprec", level: "page", tolerance: 0, toleranceNote: why },
      { metric: "recall@100", level: "page", tolerance: 0, toleranceNote: why },
    ];
  }
  const s = KILT_SYSTEMS[system];
  const out: FigureSpec[] = [];
  const rprec = PYSERINI_RPREC[system][dataset];
  out.push({ metric: "Rprec", level: "page", ...(rprec === null ? {} : { reference: { value: rprec, source: "pyserini-kilt" } }), tolerance: s.tolerance, toleranceNote: s.why });
  const r100 = PYSERINI_RECALL100[system][dataset];
  out.push({ metric: "recall@100", level: "page", ...(r100 === null || r100 === undefined ? {} : { reference: { value: r100, source: "pyserini-kilt" } }), tolerance: s.tolerance, toleranceNote: s.why });
  return out;
}

/** The cell spec of a prebuilt dense index (its unit from its manifest; top 1,000 units below page level). */
function denseSystem(dir: string): { system: string; index: IndexSpec; topK: number } {
  const m = readManifest(dir);
  if (m.kind !== "dense") throw new Error(`${dir}: a ${m.kind} index, not a dense one`);
  const encoder = (m.params as { encoder?: { type?: string } }).encoder?.type ?? "?";
  return { system: `dense over ${m.unit} units (${encoder} encoder, prebuilt)`, index: { kind: "dense", unit: m.unit, dir }, topK: m.unit === "page" ? 100 : 1000 };
}

/** The cells for the dev files found (dataset-major, then TF-IDF, BM25 document, BM25 passage). */
export function kiltCells(data: string, o: { datasets?: string[]; systems?: KiltSystem[]; dense?: string } = {}): { cells: CellSpec[]; missing: string[] } {
  const systems = o.systems ?? (["tfidf", "bm25-document", "bm25-passage", ...(o.dense ? ["dense"] : [])] as KiltSystem[]);
  if (systems.includes("dense") && o.dense === undefined) throw new Error("the dense cells need a prebuilt dense index (--dense DIR)");
  const dense = o.dense !== undefined ? denseSystem(o.dense) : null;
  const wanted = o.datasets ?? KILT_COLUMNS.map(([d]) => d as string);
  const known = new Set(KILT_COLUMNS.map(([d]) => d as string));
  for (const d of wanted) if (!known.has(d)) throw new Error(`unknown KILT dataset ${JSON.stringify(d)} (one of ${[...known].join(", ")})`);
  const cells: CellSpec[] = [];
  const missing: string[] = [];
  for (const [dataset] of KILT_COLUMNS) {
    if (!wanted.includes(dataset)) continue;
    const gold = devFile(dataset, data);
    if (gold === null) {
      missing.push(dataset);
      continue;
    }
    const display = DATASETS.find((x) => x.name === dataset)!.displayName;
    for (const system of systems) {
      const s = system === "dense" ? dense! : KILT_SYSTEMS[system];
      cells.push({ id: `${dataset}/${system}`, system: s.system, dataset: `${display} dev`, index: s.index, gold, topK: s.topK, figures: figures(system, dataset) });
    }
  }
  if (o.datasets && missing.length > 0) throw new Error(`${data}: no dev file for ${missing.join(", ")} (tartan datasets download ${missing.map((m) => `${m}:dev`).join(" ")} --out ${data})`);
  if (cells.length === 0) throw new Error(`${data}: no KILT dev file found (expected names like fever-dev-kilt.jsonl: tartan datasets download dev --out ${data})`);
  return { cells, missing };
}

/** Runs the KILT matrix; see the module comment. */
export async function reproKilt(o: ReproKiltOptions): Promise<MatrixResult> {
  const log = o.log ?? (() => {});
  if (!existsSync(o.ks)) throw new Error(`${o.ks}: no such knowledge-source directory (tartan datasets download knowledge-source; tartan ks ingest kilt_knowledgesource.json --out ${o.ks})`);
  const { cells: specs, missing } = kiltCells(o.data, o);
  if (missing.length > 0) log(`no dev file in ${o.data} for ${missing.join(", ")}: those cells are left out`);
  const ksSum = await inputChecksum(o.ks);
  const cells = await runMatrix(specs, { work: o.work, ks: o.ks, fresh: o.fresh, log, onCell: o.onCell, onProgress: o.onProgress }, ksSum);
  const context = KILT_COLUMNS.filter(([d]) => specs.some((c) => c.id.startsWith(`${d}/`)))
    .map(([d, col]) => `${col} ${(100 * KILT_PAPER_TFIDF_TEST[d]!).toFixed(2)}`)
    .join(", ");
  const inputs: Record<string, string> = { [o.ks]: ksSum };
  for (const c of cells) Object.assign(inputs, c.inputs);
  return {
    title: "tartan repro kilt: KILT's retrieval baselines",
    notes: [
      `Knowledge source: ${o.ks}; gold: the dev files in ${o.data}. References: Pyserini's KILT replication guide (dev sets, page-level R-precision and recall@100), cited per figure; the tolerance of each cell says why it is not zero.`,
      `For context (not checked: test answers are hidden), the KILT paper's TF-IDF R-precision on the test sets (Table 4): ${context}.`,
      ...(specs.some((c) => c.index.kind === "dense") ? [`Dense cells (${o.dense}) are reported without a check; for context, ${DPR_CONTEXT}.`] : []),
      "The references hold for KILT's own knowledge source (kilt_knowledgesource.json, 5,903,530 pages) and dev files; on any other source the figures are reported and the checks are expected to fail.",
    ],
    cells,
    inputs,
    setup: [`tartan datasets download dev knowledge-source --out ${o.data}`, `tartan ks ingest ${join(o.data, "kilt_knowledgesource.json")} --out ${o.ks}`],
    ...tally(cells),
    created: new Date().toISOString(),
    tartanVersion: TARTAN_VERSION,
  };
}
