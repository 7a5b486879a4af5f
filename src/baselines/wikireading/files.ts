// The WikiReading baseline over files, as `tartan baseline wikireading train|predict` runs it: examples
// read from WikiReading shards or from the KILT records `datasets convert wikireading` wrote, a model
// trained and saved, predictions written as KILT guesses for `tartan eval --task wikireading`.

import type { WikiReadingExample } from "../../datasets/wikireading.js";
import { readWikiReading, SEP } from "../../datasets/wikireading.js";
import { isRawWikiReading } from "../../eval/tasks/wikireading.js";
import { readJsonl, writeJsonl } from "../../records/jsonl.js";
import type { KiltRecord } from "../../records/types.js";
import { assertOutputsNotInputs } from "../../util/safe-output.js";
import { loadBaseline, predictAnswer, prepareForPrediction, saveBaseline, trainBaseline, type Baseline, type BaselineConfig } from "./model.js";

/**
 * WikiReading examples of a shard/directory/tar, or of KILT records made by `datasets convert
 * wikireading` (document words from the provenance text, property from meta.property); a record
 * without them is an error naming its file and line.
 */
export async function* baselineExamples(path: string, limit?: number): AsyncGenerator<WikiReadingExample> {
  if (isRawWikiReading(path)) {
    yield* readWikiReading(path, { limit });
    return;
  }
  let n = 0;
  for await (const { value: r, line } of readJsonl<KiltRecord>(path)) {
    if (limit !== undefined && n >= limit) return;
    n++;
    const m = r.meta ?? {};
    const text = r.output?.[0]?.provenance?.[0]?.text;
    if (typeof m.property !== "string" || typeof text !== "string")
      throw new Error(`${path}:${line}: needs meta.property and the document in output[0].provenance[0].text (convert without --no-text)`);
    yield {
      id: String(r.id),
      title: typeof m.title === "string" ? m.title : "",
      property: m.property,
      answers: Array.isArray(m.answers) ? m.answers.filter((a): a is string => typeof a === "string") : [],
      paragraphs: text.split("\n"),
      tokens: text.split(/\s+/),
      file: path,
      line,
    };
  }
}

/** Trains a baseline on the examples of `path` (the first `limit`) and saves it into `modelDir`. */
export async function trainBaselineFromFile(
  path: string,
  modelDir: string,
  config: Partial<BaselineConfig> = {},
  options: { limit?: number; log?: (line: string) => void } = {},
): Promise<Baseline> {
  const b = await trainBaseline(() => baselineExamples(path, options.limit), config, options.log);
  saveBaseline(b, modelDir);
  return b;
}

/** Predicts one answer per example of `path` with the model in `modelDir`, written to `out` as KILT guesses; returns the count. */
export async function predictBaselineToFile(path: string, modelDir: string, out: string, options: { limit?: number } = {}): Promise<{ predictions: number; kind: string }> {
  assertOutputsNotInputs([out], [path]);
  const b = loadBaseline(modelDir);
  await prepareForPrediction(b, () => baselineExamples(path, options.limit));
  async function* guesses(): AsyncGenerator<KiltRecord> {
    for await (const ex of baselineExamples(path, options.limit)) yield { id: ex.id, input: `${ex.title}${SEP}${ex.property}`, output: [{ answer: predictAnswer(b, ex) }] };
  }
  return { predictions: await writeJsonl(out, guesses()), kind: b.config.kind };
}
