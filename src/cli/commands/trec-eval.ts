// TREC on the command line: the trec_eval mode of `tartan eval` (--qrels Q --run R: trec_eval 10.0's
// measures in its three-column format, per query with -q, or JSON). `tartan retrieve --from-trec` is
// src/trec/guesses.ts's work.

import { Option, type Command } from "commander";
import type { TrecEvalResult } from "../../trec/measures.js";

export interface TrecEvalFlags {
  qrels?: string;
  run?: string;
  measures?: string;
  measure?: string[];
  q?: boolean;
  c?: boolean;
  json?: boolean;
}

/** Adds the trec_eval options to `tartan eval`. */
export function addTrecEvalOptions(cmd: Command): Command {
  return cmd
    .option("--qrels <file>", "trec_eval mode: TREC qrels (see tartan datasets qrels)")
    .option("--run <file>", "trec_eval mode: TREC run (qid Q0 docno rank score tag)")
    .option("--measures <list>", "trec_eval mode: measures by printed name, comma-separated (map,ndcg_cut_10,P_10,recall_100,recip_rank,Rprec,success_5); default official")
    .addOption(new Option("-m, --measure <spec>", "trec_eval mode: a measure as trec_eval's -m takes it (P.5,10; ndcg_cut; official); repeatable").argParser((v: string, prev: string[] = []) => [...prev, v]))
    .option("-q", "trec_eval mode: also print every query's values")
    .option("-c", "trec_eval mode: average over every judged query (a query without results scores as an empty ranking)");
}

function asJson(r: TrecEvalResult, perQuery: boolean): unknown {
  const line = (vs: { measure: string; value: number | string }[]) => Object.fromEntries(vs.map((v) => [v.measure, v.value]));
  return {
    ...(perQuery ? { per_query: Object.fromEntries(r.perQuery.map((q) => [q.qid, line(q.values)])) } : {}),
    all: line(r.summary),
  };
}

/** Whether the flags ask for the trec_eval mode (--qrels or --run). */
export const wantsTrecEval = (flags: TrecEvalFlags): boolean => Boolean(flags.qrels || flags.run);

/**
 * Runs the trec_eval mode (the flags ask for it: {@link wantsTrecEval}). The TREC modules are imported
 * here, not at start: the KILT evaluator's start-up does not pay for them.
 */
export async function runTrecEvalMode(flags: TrecEvalFlags): Promise<void> {
  if (!flags.qrels || !flags.run) throw new Error("--qrels and --run go together");
  const [{ readQrels, readRun }, { formatTrecEval, parseMeasures, trecEval }] = await Promise.all([
    import("../../trec/files.js"),
    import("../../trec/measures.js"),
  ]);
  const specs = [...(flags.measure ?? []), ...(flags.measures ? flags.measures.split(",").map((s) => s.trim()).filter(Boolean) : [])];
  const measures = parseMeasures(specs.length ? specs : ["official"]);
  const result = trecEval(readQrels(flags.qrels), readRun(flags.run), measures, { complete: flags.c });
  process.stdout.write(flags.json ? `${JSON.stringify(asJson(result, !!flags.q), null, 2)}\n` : formatTrecEval(result, !!flags.q));
}
