// A pipeline run's settings (`tartan run`, or a PIPELINE.json given with --config): read from a file
// with errors naming the file and the field, merged with command-line values, and checked before
// anything runs (the input exists and is readable, the output is not an input, numbers are positive
// integers, the reader and text mode are known).

import { existsSync } from "node:fs";
import { assertReadableFile } from "../records/jsonl.js";
import { readerKind } from "../readers/open.js";
import { readJsonFile } from "../util/json-file.js";
import { assertOutputsNotInputs } from "../util/safe-output.js";
import type { TextMode } from "./run.js";

/** What a pipeline run is given (`--config PIPELINE.json` holds the same names as the flags). */
export interface PipelineConfig {
  /** KILT records to answer. */
  input: string;
  /** Predictions (appended; an interrupted run resumes). */
  out: string;
  /** Index directories (several: reciprocal-rank fusion) or a clickhouse:// BM25 index URL; none: closed-book. */
  index?: string[];
  /** One of the reader kinds (../readers/open.ts). */
  reader: string;
  /** The reader's model: a file, a directory or a name, by reader. */
  model?: string;
  /** The generative reader's endpoint. */
  baseUrl?: string;
  /** Passages retrieved per record. */
  topK?: number;
  /** Passages given to the reader. */
  readerK?: number;
  /** Processes (shards) to run. */
  workers?: number;
  /** Evaluate at the end (when the input has gold answers). */
  evaluate?: boolean;
  /** Passage text in the written provenance. */
  text?: TextMode;
  /** A reranker spec (`NAME:key=value,…`, docs/retrieval.md "Reranking") applied to the retrieved passages. */
  reranker?: string;
  /** With `reranker`: passages reranked per record (default: topK). */
  rerankDepth?: number;
}

/** The text modes of the written provenance. */
export const TEXT_MODES: readonly TextMode[] = ["full", "cited", "none"];

const STRINGS = ["input", "out", "reader", "model", "baseUrl", "text", "reranker"] as const;
const INTEGERS = ["topK", "readerK", "workers", "rerankDepth"] as const;
const KNOWN = new Set<string>([...STRINGS, ...INTEGERS, "index", "evaluate"]);

/** Reads a PIPELINE.json: an object of the fields above; throws naming the file and the field. */
export function readPipelineConfig(file: string): Partial<PipelineConfig> {
  const value = readJsonFile(file, "the pipeline config");
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error(`${file}: a pipeline config is a JSON object`);
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!KNOWN.has(k)) throw new Error(`${file}: unknown field ${JSON.stringify(k)} (the fields: ${[...KNOWN].join(", ")})`);
  for (const k of STRINGS) if (o[k] !== undefined && typeof o[k] !== "string") throw new Error(`${file}: ${k} must be a string`);
  for (const k of INTEGERS)
    if (o[k] !== undefined && !(Number.isInteger(o[k]) && (o[k] as number) >= 1)) throw new Error(`${file}: ${k} must be a positive integer`);
  if (o.evaluate !== undefined && typeof o.evaluate !== "boolean") throw new Error(`${file}: evaluate must be true or false`);
  if (o.index !== undefined && !(Array.isArray(o.index) && o.index.every((d) => typeof d === "string")))
    throw new Error(`${file}: index must be a list of index directories or URLs`);
  return o as Partial<PipelineConfig>;
}

/** Command-line values: strings as given (numbers too, before they are checked); undefined when absent. */
export interface PipelineFlags {
  input?: string;
  out?: string;
  index?: string[];
  reader?: string;
  model?: string;
  baseUrl?: string;
  topK?: string | number;
  readerK?: string | number;
  workers?: string | number;
  /** false when --no-evaluate was given. */
  evaluate?: boolean;
  text?: string;
  reranker?: string;
  rerankDepth?: string | number;
}

/** A depth given as a flag (a string) or in the file (a number). */
const depthOf = (v: string | number | undefined): number | undefined => (v === undefined ? undefined : Number(v));

/**
 * The settings of a run: command-line values over the file's for names and paths; the file's numbers
 * over the command line's (whose defaults are always there); evaluation unless either turns it off.
 * Checked before anything runs: throws naming the option.
 */
export function resolvePipelineConfig(flags: PipelineFlags, fromFile: Partial<PipelineConfig> = {}, configFile?: string): PipelineConfig {
  const c: PipelineConfig = {
    input: flags.input ?? fromFile.input ?? "",
    out: flags.out ?? fromFile.out ?? "",
    index: flags.index ?? fromFile.index,
    reader: flags.reader ?? fromFile.reader ?? "",
    model: flags.model ?? fromFile.model,
    baseUrl: flags.baseUrl ?? fromFile.baseUrl,
    topK: Number(fromFile.topK ?? flags.topK ?? 20),
    readerK: Number(fromFile.readerK ?? flags.readerK ?? 5),
    workers: Number(fromFile.workers ?? flags.workers ?? 1),
    evaluate: flags.evaluate !== false && fromFile.evaluate !== false,
    text: (flags.text ?? fromFile.text ?? "full") as TextMode,
    reranker: flags.reranker ?? fromFile.reranker,
    rerankDepth: depthOf(flags.rerankDepth ?? fromFile.rerankDepth),
  };
  if (!c.input || !c.out || !c.reader) throw new Error("--input, --out and --reader are required (or a --config file holding them)");
  readerKind(c.reader);
  if (!TEXT_MODES.includes(c.text!)) throw new Error(`--text must be one of ${TEXT_MODES.join(", ")}`);
  for (const [k, v] of [["top-k", c.topK], ["reader-k", c.readerK], ["workers", c.workers]] as const)
    if (!Number.isInteger(v) || (v as number) < 1) throw new Error(`--${k} must be a positive integer`);
  if (c.rerankDepth !== undefined && !(Number.isInteger(c.rerankDepth) && c.rerankDepth >= 1)) throw new Error("--rerank-depth must be a positive integer");
  if (c.rerankDepth !== undefined && c.reranker === undefined) throw new Error("--rerank-depth goes with --reranker");
  if (c.reranker !== undefined && !(c.index && c.index.length > 0)) throw new Error("--reranker reranks retrieved passages: give --index");
  if (!existsSync(c.input)) throw new Error(`${c.input}: no such file`);
  assertOutputsNotInputs([c.out], [c.input, configFile, c.model]);
  assertReadableFile(c.input);
  return c;
}
