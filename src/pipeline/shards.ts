// A run split into shards (`tartan run --workers N`): each shard writes OUT.partI by itself and resumes
// by itself; once all are done their records are merged into OUT in input order, with the records of
// an earlier run's OUT kept, and the parts removed. Who runs the shards (child processes, machines) is
// the caller's choice: this module plans their outputs and merges them.

import { rmSync } from "node:fs";
import { JsonlWriter, readJsonl } from "../records/jsonl.js";
import { pythonIdKey } from "../records/python-str.js";
import type { KiltRecord } from "../records/types.js";
import { checkRunOutput, markRunOutput, runSidecar } from "./run.js";

/** Where the shards of a run write, and the earlier output whose records are kept. */
export interface ShardPlan {
  /** OUT.part0 … OUT.part(N-1). */
  parts: string[];
  /** [OUT] when it holds an earlier run's predictions over the same input, else []. */
  earlier: string[];
}

/**
 * The shard outputs of a run over `input` into `out` with `workers` shards. Throws, before anything is
 * written, when `out` or a part is a file that `tartan run` did not write for this input.
 */
export function planShards(input: string, out: string, workers: number): ShardPlan {
  const parts = Array.from({ length: workers }, (_, i) => `${out}.part${i}`);
  const earlier = checkRunOutput(out, input) === "ours" ? [out] : [];
  for (const part of parts) checkRunOutput(part, input);
  return { parts, earlier };
}

/**
 * Merges finished shards into `out` in the order of `input` (the first record of an id wins: the
 * earlier output's, then the parts' in order), written atomically and marked as this run's output;
 * then removes the parts. Returns the records written.
 */
export async function mergeShards(input: string, out: string, plan: ShardPlan): Promise<number> {
  const lines = new Map<string, string>();
  for (const part of [...plan.earlier, ...plan.parts])
    for await (const { value } of readJsonl<KiltRecord>(part)) {
      const key = pythonIdKey(value.id);
      if (!lines.has(key)) lines.set(key, JSON.stringify(value));
    }
  const w = new JsonlWriter(out);
  let written = 0;
  for await (const { value } of readJsonl<KiltRecord>(input)) {
    const line = lines.get(pythonIdKey(value.id));
    if (line !== undefined) {
      await w.writeLine(line);
      written++;
    }
  }
  await w.close();
  markRunOutput(out, input);
  for (const part of plan.parts) {
    rmSync(part, { force: true });
    rmSync(runSidecar(part), { force: true });
  }
  return written;
}
