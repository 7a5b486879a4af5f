// Where the runs of a comparison come from: KILT prediction files scored against the gold file (the
// evaluator's per-query scores), `tartan eval --per-query` files read as they are, or TREC runs scored
// with trec_eval's measures against qrels. Also the default metrics of a dataset (the KILT papers'
// columns: headline metric, its KILT score, R-precision, recall@5).

import { open } from "node:fs/promises";
import { createGunzip } from "node:zlib";
import { createReadStream } from "node:fs";
import { datasetForFile, findDataset } from "../datasets/catalogue.js";
import type { EvalOptions } from "../eval/evaluate.js";
import { formatProblem } from "../eval/problems.js";
import { readPerQueryFile, scorePredictions, type QueryScores } from "./scores.js";

/** Whether the file's first line is a per-query score line (`{"id", "eval_downstream", "eval_retrieval"}`). */
export async function isPerQueryFile(path: string): Promise<boolean> {
  let first = "";
  if (path.endsWith(".gz")) {
    const stream = createReadStream(path).pipe(createGunzip());
    for await (const chunk of stream) {
      first += (chunk as Buffer).toString("utf8");
      if (first.includes("\n") || first.length > 1 << 20) break;
    }
    stream.destroy();
  } else {
    const fh = await open(path, "r");
    try {
      const buf = Buffer.alloc(1 << 16);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      first = buf.subarray(0, bytesRead).toString("utf8");
    } finally {
      await fh.close();
    }
  }
  const line = first.split("\n")[0];
  try {
    const v = JSON.parse(line) as Record<string, unknown>;
    return typeof v === "object" && v !== null && "id" in v && "eval_retrieval" in v && "eval_downstream" in v && !("output" in v);
  } catch {
    return /^\{"id":.*"eval_downstream":/u.test(line);
  }
}

/** One run's per-query scores: a per-query file as it is, or predictions scored against `gold`. */
export async function loadRunScores(gold: string, file: string, options: Omit<EvalOptions, "perQuery"> = {}): Promise<QueryScores> {
  if (await isPerQueryFile(file)) return readPerQueryFile(file);
  const { result, scores } = await scorePredictions(gold, file, options);
  const errors = result.problems.filter((p) => p.severity === "error");
  if (errors.length > 0) throw new Error(`${file} against ${gold}:\n${errors.map(formatProblem).join("\n")}`);
  if (scores.ids.length === 0) throw new Error(`${file}: no gold record of ${gold} was scored`);
  return scores;
}

/**
 * The KILT papers' columns for a dataset (by name, or from a KILT file name): headline metric, its KILT
 * score, R-precision, recall@5; only those in `available` (in that order). Without a known dataset the
 * headline metric is the first of em, accuracy, f1, rougel that is available.
 */
export function defaultMetrics(available: readonly string[], dataset?: string, goldFile?: string): string[] {
  const d = (dataset ? findDataset(dataset) : undefined) ?? (goldFile ? datasetForFile(goldFile)?.dataset : undefined);
  const headline = d && available.includes(d.metric) ? d.metric : ["em", "accuracy", "f1", "rougel"].find((m) => available.includes(m));
  const wanted = headline ? [headline, `KILT-${headline}`, "Rprec", "recall@5"] : ["Rprec", "recall@5", "precision@1"];
  return wanted.filter((m) => available.includes(m));
}
