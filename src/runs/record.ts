// Making a run to record: score the predictions with the KILT evaluator keeping every query's scores,
// checksum both files, and note what made the run (tartan version, git commit, index manifests,
// reader settings, evaluator settings, date). The result goes into any `RunsStore`.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync, statSync } from "node:fs";
import { readJsonFile } from "../util/json-file.js";
import { resolve } from "node:path";
import { flattenScores, scorePredictions, type ScoreSections } from "../compare/scores.js";
import { datasetForFile, findDataset } from "../datasets/catalogue.js";
import { officialJson } from "../eval/report.js";
import { MANIFEST_FILE, TARTAN_VERSION } from "../retrieval/manifest.js";
import { checkRunName, type NewRun, type RunFile } from "./types.js";

/** Options of {@link makeRun}: the files scored and what to record about the run. */
export interface RecordOptions {
  gold: string;
  guess: string;
  /** Default: the prediction file's name without its extension. */
  name?: string;
  /** The system (leaderboard row) the run belongs to; default: the run's name. */
  system?: string;
  notes?: string;
  /** Catalogue name; default: from the gold file's name when it is a KILT file. */
  dataset?: string;
  ks?: number[];
  rankKeys?: string[];
  /** Index directories the run used (their manifests are recorded), or indexes already described (a clickhouse:// index with its retriever's manifest). */
  indexes?: (string | { dir: string; manifest: unknown })[];
  /** Reader / pipeline settings: an object, or a JSON file to read. */
  reader?: unknown;
  extra?: Record<string, unknown>;
  /** Date to record (default now). */
  created?: Date;
}

/** sha256 and size of a file, streamed. */
export async function fileChecksum(path: string): Promise<RunFile> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return { path: resolve(path), sha256: hash.digest("hex"), bytes: statSync(path).size };
}

/** `git rev-parse HEAD` in `dir`, or null (not a checkout, or no git). */
export function gitCommit(dir = process.cwd()): string | null {
  const r = spawnSync("git", ["rev-parse", "HEAD"], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return r.status === 0 && /^[0-9a-f]{40}$/u.test(r.stdout.trim()) ? r.stdout.trim() : null;
}

function readIndexManifest(dir: string): unknown {
  const file = `${dir}/${MANIFEST_FILE}`;
  if (!existsSync(file)) throw new Error(`${dir}: no ${MANIFEST_FILE} (not an index directory?)`);
  return readJsonFile(file, "the index manifest");
}

/** Scores `guess` against `gold` and returns the run to record. Throws on input errors (nothing to record). */
export async function makeRun(o: RecordOptions): Promise<NewRun> {
  const ks = o.ks ?? [1, 5, 10, 20];
  const rankKeys = o.rankKeys ?? ["wikipedia_id"];
  const { result, scores } = await scorePredictions(o.gold, o.guess, { ks, rankKeys });
  const errors = result.problems.filter((p) => p.severity === "error");
  if (errors.length > 0 || scores.ids.length === 0)
    throw new Error(`${o.guess}: not scored against ${o.gold}: ${errors.map((p) => p.message).join("; ") || "no gold record evaluated"}`);
  const name = checkRunName(o.name ?? (o.guess.split("/").pop() ?? o.guess).replace(/(\.jsonl)?(\.gz)?$/u, ""));
  let dataset: string | null = null;
  if (o.dataset !== undefined) {
    const d = findDataset(o.dataset);
    dataset = d ? d.name : o.dataset;
  } else dataset = datasetForFile(o.gold)?.dataset.name ?? null;
  const reader = typeof o.reader === "string" && existsSync(o.reader) ? readJsonFile(o.reader, "the reader description") : (o.reader ?? null);
  return {
    name,
    ...(o.system ? { system: o.system } : {}),
    dataset,
    created: (o.created ?? new Date()).toISOString(),
    notes: o.notes ?? null,
    queries: scores.ids.length,
    gold: await fileChecksum(o.gold),
    guess: await fileChecksum(o.guess),
    summary: flattenScores({ eval_downstream: result.eval_downstream, eval_retrieval: result.eval_retrieval } as ScoreSections),
    official: officialJson(result),
    config: {
      tartan: TARTAN_VERSION,
      gitCommit: gitCommit(),
      eval: { ks: result.options.ks, rankKeys: result.options.rankKeys },
      indexes: (o.indexes ?? []).map((ix) => (typeof ix === "string" ? { dir: resolve(ix), manifest: readIndexManifest(ix) } : ix)),
      reader,
      ...(o.extra ? { extra: o.extra } : {}),
    },
    scores,
  };
}
