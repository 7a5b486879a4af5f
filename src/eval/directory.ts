// Evaluation of several datasets at once: pair each gold file of one directory with its prediction
// file in another by KILT file name (same name, or same dataset and split), evaluate each pair.

import { readdirSync } from "node:fs";
import { join } from "node:path";
import { datasetForFile, findDataset } from "../datasets/catalogue.js";
import { evaluate, type EvalOptions } from "./evaluate.js";
import type { DatasetRow } from "./report.js";

const JSONL_RE = /\.jsonl(\.gz)?$/;

/** The prediction file for a gold file: same name first, then a file naming the same dataset and split. */
export function matchGuessFile(goldFile: string, guessFiles: readonly string[]): string | undefined {
  if (guessFiles.includes(goldFile)) return goldFile;
  const g = datasetForFile(goldFile);
  if (!g) return undefined;
  const same = guessFiles.filter((f) => {
    const m = datasetForFile(f);
    return m && m.dataset.name === g.dataset.name && m.split === g.split;
  });
  if (same.length === 1) return same[0];
  // Prediction files are often named after the dataset and split only (`nq-dev.jsonl`, `nq-dev-predictions.jsonl`).
  const prefixes = [g.dataset.name, ...g.dataset.aliases].map((a) => `${a}-${g.split}`);
  const loose = guessFiles.filter((f) => prefixes.some((p) => f.startsWith(p)));
  return loose.length === 1 ? loose[0] : undefined;
}

/** Why no prediction file matched `goldFile`: the names looked for in `guessDir`, or the files that made it ambiguous. */
export function noGuessFileReason(goldFile: string, guessFiles: readonly string[], guessDir: string): string {
  const g = datasetForFile(goldFile);
  if (!g) return `no prediction file: looked for ${join(guessDir, goldFile)} (the same name; ${goldFile} is not a KILT release name)`;
  const prefixes = [g.dataset.name, ...g.dataset.aliases].map((a) => `${a}-${g.split}`);
  const candidates = guessFiles.filter((f) => {
    const m = datasetForFile(f);
    return (m && m.dataset.name === g.dataset.name && m.split === g.split) || prefixes.some((p) => f.startsWith(p));
  });
  if (candidates.length > 1) return `no prediction file: several in ${guessDir} could be ${goldFile}'s (${candidates.sort().join(", ")}); keep one`;
  return `no prediction file: looked in ${guessDir} for ${goldFile} or a .jsonl file named ${prefixes.map((p) => `${p}*`).join(" or ")}`;
}

/** Evaluates every KILT gold file of `goldDir` that has a prediction file in `guessDir`. */
export async function evaluateDirectories(goldDir: string, guessDir: string, options: EvalOptions = {}): Promise<DatasetRow[]> {
  const goldFiles = readdirSync(goldDir).filter((f) => JSONL_RE.test(f)).sort();
  const guessFiles = readdirSync(guessDir).filter((f) => JSONL_RE.test(f));
  const rows: DatasetRow[] = [];
  for (const goldFile of goldFiles) {
    const match = datasetForFile(goldFile);
    const dataset = match?.dataset ?? findDataset(goldFile.split("-")[0]);
    if (match && !match.splitFile.hasAnswers) continue; // test files hold no answers to score against
    const guessFile = matchGuessFile(goldFile, guessFiles);
    const row: DatasetRow = {
      dataset: dataset ? `${dataset.name}${match ? `-${match.split}` : ""}` : goldFile,
      family: dataset?.family ?? "?",
      metric: dataset?.metric ?? "em",
      kiltMetric: dataset?.kiltMetric ?? "",
      gold: join(goldDir, goldFile),
    };
    if (!guessFile) {
      row.failure = noGuessFileReason(goldFile, guessFiles, guessDir);
      rows.push(row);
      continue;
    }
    row.guess = join(guessDir, guessFile);
    row.result = await evaluate(row.gold, row.guess, options);
    const errors = row.result.problems.filter((p) => p.severity === "error");
    if (errors.length > 0) row.failure = errors.map((e) => e.code).join(", ");
    rows.push(row);
  }
  return rows;
}
