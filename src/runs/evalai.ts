// An EvalAI submission from recorded runs: for each dataset one prediction file, copied from the run's
// prediction file after checking that it is still the file that was scored. A run scored on the test split
// is named as the official KILT test file of its dataset (e.g. `nq-test_without_answers-kilt.jsonl`), the
// name EvalAI expects; a run scored on another split is named for that split
// (`nq-dev-predictions-kilt.jsonl`), so dev-set predictions are never uploaded by mistake as a submission.

import { constants, copyFileSync, existsSync, mkdirSync, renameSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { findDataset } from "../datasets/catalogue.js";
import { fileChecksum } from "./record.js";
import type { RunInfo, RunsStore } from "./types.js";

/** One file of an EvalAI submission written by `tartan runs export --evalai`. */
export interface EvalAiFile {
  dataset: string;
  run: string;
  file: string;
  /** The split the run was scored on (a dev-set run is exported too, named for its split, with this saying so). */
  scoredOn: string;
}

/** Writes the submission files into `dir` (which must not hold them yet); returns what was written. */
export async function exportEvalAi(store: RunsStore, dir: string, options: { system?: string } = {}): Promise<EvalAiFile[]> {
  const runs = (await store.list()).filter((r) => options.system === undefined || (r.system ?? r.name) === options.system);
  const byDataset = new Map<string, RunInfo>();
  for (const r of runs) {
    const d = r.dataset ? findDataset(r.dataset) : undefined;
    if (!d?.kilt) continue;
    const prev = byDataset.get(d.name);
    if (!prev || prev.created <= r.created) byDataset.set(d.name, r);
  }
  if (byDataset.size === 0) throw new Error(`no recorded run on a KILT dataset${options.system ? ` for system ${options.system}` : ""} (tartan runs add RUN --gold GOLD --dataset NAME)`);
  mkdirSync(dir, { recursive: true });
  const out: EvalAiFile[] = [];
  for (const [name, run] of byDataset) {
    // the split from the gold file's name, else its folder's (no higher: /tmp/tartan-test-… says nothing)
    const splitOf = (name: string) => /-(train|dev|test)[-_]/u.exec(name)?.[1];
    const split = splitOf(basename(run.gold.path)) ?? splitOf(basename(dirname(run.gold.path))) ?? "unknown split";
    const target = join(dir, split === "test" ? findDataset(name)!.splits.test!.file : `${name}-${split.replace(" ", "-")}-predictions-kilt.jsonl`);
    if (existsSync(target)) throw new Error(`${target} exists: export into an empty directory`);
    if (!existsSync(run.guess.path)) throw new Error(`run ${run.name}: its prediction file ${run.guess.path} is gone`);
    const now = await fileChecksum(run.guess.path);
    if (now.sha256 !== run.guess.sha256) throw new Error(`run ${run.name}: ${run.guess.path} changed since it was recorded (sha256 ${now.sha256.slice(0, 12)}…, recorded ${run.guess.sha256.slice(0, 12)}…)`);
    const tmp = `${target}.${process.pid}.partial`;
    copyFileSync(run.guess.path, tmp, constants.COPYFILE_EXCL);
    renameSync(tmp, target);
    out.push({ dataset: name, run: run.name, file: target, scoredOn: split });
  }
  return out;
}
