// Training the learned reranker from files (`tartan reranker train`'s work): KILT task records (the queries
// and their gold provenance) and a first-stage run of the same queries (KILT guesses, as `tartan retrieve`
// writes them), the passages' text from the run's provenance or the knowledge source (`--ks`), as
// `tartan rerank` reads them (./rerank.ts). Each candidate is graded against its record's gold provenance:
// 2 when it is on a gold page and its paragraph span overlaps a gold entry's (or the gold entry names no
// paragraph), 1 when only the page is right, 0 otherwise; the linear model is trained on the pairs
// (src/retrieval/rerank/learned-model.ts) and written whole or not at all.

import { openKnowledgeSource } from "../backends/open.js";
import { assertReadableFile, LineError, readJsonl } from "../records/jsonl.js";
import type { KiltRecord, Provenance } from "../records/types.js";
import { trainLinearRanker, type LearnedModel, type TrainingExample } from "../retrieval/rerank/learned-model.js";
import type { RerankPassage } from "../retrieval/rerank/reranker.js";
import { TARTAN_VERSION } from "../retrieval/manifest.js";
import { trecQid } from "../trec/convert.js";
import { formatCount as fmt, type OnProgress } from "../util/progress.js";
import { assertOutputsNotInputs, writeFileSafe } from "../util/safe-output.js";
import { detectFormat, Texts } from "./rerank.js";

/** What {@link trainRerankerFromFiles} reads and writes. */
export interface RerankerTrainOptions {
  /** KILT task records: each query's input and gold provenance. */
  records: string;
  /** The first-stage run over the same queries: KILT guesses (`tartan retrieve`'s output). */
  run: string;
  /** The knowledge source the passages' text is read from when the run's provenance has none. */
  ks?: string;
  /** The model file written. */
  out: string;
  /** Candidates per query taken from the run (default 100). */
  depth?: number;
  /** Features (default: all, src/retrieval/rerank/features.ts). */
  features?: readonly string[];
  epochs?: number;
  learningRate?: number;
  l2?: number;
  seed?: number;
  onProgress?: OnProgress;
}

/** What {@link trainRerankerFromFiles} did. */
export interface RerankerTrainStats {
  /** Queries of the run. */
  queries: number;
  /** Queries trained on (with a better and a worse candidate). */
  used: number;
  pairs: number;
  /** The loss before training and after the last epoch. */
  loss: [number, number];
  model: LearnedModel;
}

function paragraphSpan(p: Provenance): [number, number] | null {
  const s = p.start_paragraph_id;
  if (s === undefined || s === null || s === "") return null;
  const start = Number(s);
  const e = p.end_paragraph_id;
  const end = e === undefined || e === null || e === "" ? start : Number(e);
  return Number.isFinite(start) && Number.isFinite(end) ? [start, end] : null;
}

/** The grade of one candidate against a record's gold provenance (2: page and paragraph, 1: page, 0: neither). */
export function gradeCandidate(candidate: Provenance, gold: readonly Provenance[]): number {
  let best = 0;
  const id = candidate.wikipedia_id === undefined || candidate.wikipedia_id === null ? null : String(candidate.wikipedia_id);
  if (id === null) return 0;
  const span = paragraphSpan(candidate);
  for (const g of gold) {
    if (g.wikipedia_id === undefined || g.wikipedia_id === null || String(g.wikipedia_id) !== id) continue;
    const gs = paragraphSpan(g);
    if (gs === null || (span !== null && span[0] <= gs[1] && gs[0] <= span[1])) return 2;
    best = 1;
  }
  return best;
}

/** Trains the learned reranker (`tartan reranker train`); see the module comment. `log` gets the summary. */
export async function trainRerankerFromFiles(o: RerankerTrainOptions, log: (s: string) => void): Promise<RerankerTrainStats> {
  const depth = o.depth ?? 100;
  if (!Number.isInteger(depth) || depth < 1) throw new Error(`--depth must be a positive integer, not ${depth}`);
  assertOutputsNotInputs([o.out], [o.records, o.run]);
  assertReadableFile(o.records);
  assertReadableFile(o.run);
  if (detectFormat(o.run) !== "kilt") throw new Error(`${o.run}: a TREC run; train on KILT guesses (tartan retrieve's output, or retrieve --from-trec RUN --input RECORDS)`);
  const gold = new Map<string, { input: string; provenance: Provenance[] }>();
  for await (const { value, line } of readJsonl<KiltRecord>(o.records)) {
    if (value.id === undefined || value.id === null) throw new LineError(o.records, line, "record without id");
    if (typeof value.input !== "string") throw new LineError(o.records, line, `record ${String(value.id)} has no input`);
    gold.set(trecQid(value.id), { input: value.input, provenance: (value.output ?? []).flatMap((out) => out.provenance ?? []) });
  }
  const ks = o.ks ? await openKnowledgeSource(o.ks) : null;
  const texts = new Texts(ks, o.ks);
  const examples: TrainingExample[] = [];
  const report = o.onProgress ?? (() => {});
  try {
    for await (const { value, line } of readJsonl<KiltRecord>(o.run)) {
      if (value.id === undefined || value.id === null) throw new LineError(o.run, line, "record without id");
      const qid = trecQid(value.id);
      const g = gold.get(qid);
      if (g === undefined) throw new LineError(o.run, line, `record ${qid} is not in ${o.records}: train on a run of the records' own queries`);
      const provenance = (value.output?.[0]?.provenance ?? []).slice(0, depth);
      const passages: RerankPassage[] = [];
      for (const p of provenance) passages.push(await texts.passage(p, `${o.run}:${line}: record ${qid}`));
      examples.push({ item: { query: g.input, passages }, labels: provenance.map((p) => gradeCandidate(p, g.provenance)) });
      texts.clear();
      report({ label: "reranker train: candidates", unit: "queries", items: examples.length, countItems: true });
    }
  } finally {
    await ks?.close();
  }
  report({ label: "reranker train: candidates", unit: "queries", items: 0, done: true });
  if (examples.length === 0) throw new Error(`${o.run}: no queries`);
  const epochs = o.epochs ?? 300;
  const result = trainLinearRanker(examples, {
    features: o.features,
    epochs,
    learningRate: o.learningRate,
    l2: o.l2,
    seed: o.seed,
    onEpoch: (e) => report({ label: "reranker train: epochs", unit: "epochs", items: e, totalItems: epochs }),
  });
  report({ label: "reranker train: epochs", unit: "epochs", items: 0, done: true });
  const model: LearnedModel = { ...result.model, training: { tartanVersion: TARTAN_VERSION, records: o.records, run: o.run, depth, ...result.model.training } };
  writeFileSafe(o.out, `${JSON.stringify(model, null, 2)}\n`);
  const loss = result.loss;
  log(
    `learned reranker trained on ${fmt(result.queries)} of ${fmt(examples.length)} queries (${fmt(result.pairs)} pairs, ${model.features.length} features, ${epochs} epochs): ` +
      `loss ${loss[0].toFixed(4)} → ${loss[loss.length - 1].toFixed(4)}; model → ${o.out}`,
  );
  return { queries: examples.length, used: result.queries, pairs: result.pairs, loss: [loss[0], loss[loss.length - 1]], model };
}
