// A TREC run file as KILT guesses (`tartan retrieve --from-trec RUN --out FILE`'s work): the run read,
// its document ids split into provenance by the keys (./convert.ts), written as KILT guesses in the
// gold file's order when one is given, with a summary for `log`.

import { writeJsonl } from "../records/jsonl.js";
import { assertOutputsNotInputs } from "../util/safe-output.js";
import type { RunToKiltOptions } from "./convert.js";
import { readRun } from "./files.js";

/** A TREC run file as KILT guesses (`tartan retrieve --from-trec RUN --out FILE`). */
export async function trecRunToGuesses(run: string, out: string, options: RunToKiltOptions, log: (s: string) => void): Promise<void> {
  assertOutputsNotInputs([out], [run, options.gold]);
  const trec = readRun(run);
  // Loaded here, not at startup: it pulls in the passage pool (and SQLite), which `tartan eval` never needs.
  const { runToKilt } = await import("./convert.js");
  let guesses;
  try {
    guesses = await runToKilt(trec, options);
  } catch (e) {
    // A docid that does not split into the keys: say which file, and how to give the keys it has.
    const message = e instanceof Error ? e.message : String(e);
    if (!/^query .* document id/.test(message)) throw e;
    throw new Error(`${run}: ${message}; give --trec-keys with one field per "+"-separated part (e.g. --trec-keys wikipedia_id,start_paragraph_id)`);
  }
  const n = await writeJsonl(out, guesses);
  const empty = guesses.filter((g) => (g.output?.[0]?.provenance?.length ?? 0) === 0).length;
  log(`${n.toLocaleString("en-US")} guesses from ${run} (run ${trec.tag}, ${trec.queries.size.toLocaleString("en-US")} queries) → ${out}${empty ? `; ${empty.toLocaleString("en-US")} without results` : ""}`);
}
