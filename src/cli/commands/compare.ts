// `tartan compare GOLD RUN_A RUN_B …`: runs on the same gold file side by side, with confidence
// intervals, significance against a baseline and win/tie/loss counts; with --qrels the runs are TREC
// runs scored with trec_eval's measures; with --stored they come from the runs database.

import { Command, Option } from "commander";
import { basename } from "node:path";
import { compareRuns, TESTS, type CompareOptions, type ScoredRun, type SignificanceTest } from "../../compare/compare.js";
import { CORRECTIONS, type Correction } from "../../compare/corrections.js";
import { defaultMetrics, loadRunScores } from "../../compare/load.js";
import { COMPARE_FORMATS, renderComparison, type CompareFormat } from "../../compare/render.js";
import { openRuns } from "../../backends/open.js";
import { RUNS_HELP, positiveInt } from "../options.js";
import { readQrels, readRun } from "../../trec/files.js";
import { parseMeasures, trecEval } from "../../trec/measures.js";
import { assertOutputsNotInputs, writeFileSafe } from "../../util/safe-output.js";

interface CompareFlags {
  name?: string[];
  metrics?: string;
  baseline?: string;
  test: SignificanceTest;
  correction: Correction;
  samples: number;
  permutations: number;
  seed: string;
  level: string;
  alpha: string;
  ks: string;
  rankKeys: string;
  dataset?: string;
  format: CompareFormat;
  json?: boolean;
  out?: string;
  qrels?: string;
  measures?: string;
  stored?: boolean;
  runs?: string;
}

function list(s: string | undefined): string[] | undefined {
  return s === undefined ? undefined : s.split(",").map((x) => x.trim()).filter(Boolean);
}

function runName(file: string): string {
  return basename(file).replace(/(\.jsonl|\.trec|\.txt|\.run)?(\.gz)?$/u, "");
}

/** The runs of the comparison, per the flags. */
/** The metrics every run has (a reader's run and a retrieval-only run share the retrieval metrics). */
function sharedMetrics(runs: readonly ScoredRun[]): string[] {
  return Object.keys(runs[0].metrics).filter((m) => runs.every((r) => m in r.metrics));
}

async function loadRuns(args: string[], f: CompareFlags): Promise<{ runs: ScoredRun[]; metrics?: string[]; inputs: string[] }> {
  if (f.stored) {
    const store = await openRuns(f.runs);
    try {
      const runs: ScoredRun[] = [];
      for (const name of args) {
        const info = await store.get(name);
        if (!info) throw new Error(`no run named "${name}" in ${store.location} (see tartan runs list)`);
        const s = await store.scores(name);
        runs.push({ name, ids: s.ids, metrics: s.metrics });
      }
      const first = await store.get(args[0]);
      const metrics = list(f.metrics) ?? defaultMetrics(sharedMetrics(runs), f.dataset ?? first?.dataset ?? undefined);
      return { runs, metrics, inputs: [] };
    } finally {
      await store.close();
    }
  }
  const names = f.name ?? [];
  if (f.qrels) {
    const qrels = readQrels(f.qrels);
    const measures = parseMeasures(list(f.measures) ?? []);
    if (names.length > args.length) throw new Error(`${names.length} --name values for ${args.length} runs`);
    const runs = args.map((file, i) => {
      const r = trecEval(qrels, readRun(file), measures, { complete: true });
      return { name: names[i] ?? runName(file), ids: r.columns.qids, metrics: r.columns.values };
    });
    return { runs, metrics: list(f.metrics), inputs: [f.qrels, ...args] };
  }
  const [gold, ...files] = args;
  if (files.length === 0) throw new Error("give GOLD and at least one run (KILT predictions or per-query files)");
  if (names.length > files.length) throw new Error(`${names.length} --name values for ${files.length} runs`);
  const nameOf = (i: number) => names[i] ?? runName(files[i]);
  const ks = f.ks.split(",").map(Number);
  const rankKeys = f.rankKeys.split(",").map((k) => k.trim()).filter(Boolean);
  const runs: ScoredRun[] = [];
  for (let i = 0; i < files.length; i++) {
    const s = await loadRunScores(gold, files[i], { ks, rankKeys });
    runs.push({ name: nameOf(i), ids: s.ids, metrics: s.metrics });
  }
  const metrics = list(f.metrics) ?? defaultMetrics(sharedMetrics(runs), f.dataset, gold);
  return { runs, metrics, inputs: [gold, ...files] };
}

export function registerCompare(program: Command): void {
  program
    .command("compare")
    .description("compare runs on the same gold file: means with bootstrap confidence intervals, differences to a baseline with p-values and win/tie/loss counts")
    .argument("<gold-or-runs...>", "GOLD RUN_A RUN_B … (KILT predictions or `tartan eval --per-query` files); with --qrels: TREC runs; with --stored: run names")
    .option("--name <name...>", "names of the runs in the table, in order (default: file names)")
    .option("--metrics <list>", "metrics (default: the dataset's headline metric, its KILT score, Rprec, recall@5; with --qrels the measures)")
    .option("--baseline <run>", "the run the others are compared with: its name or 1-based position (default the first)")
    .addOption(new Option("--test <test>", "significance test").choices([...TESTS]).default("randomization"))
    .addOption(new Option("--correction <method>", "correction for many comparisons").choices([...CORRECTIONS]).default("holm"))
    .option("--samples <n>", "bootstrap resamples for the intervals", positiveInt, 10000)
    .option("--permutations <n>", "permutations of the randomization test", positiveInt, 10000)
    .option("--seed <n>", "seed of the resampling", "42")
    .option("--level <x>", "confidence level of the intervals", "0.95")
    .option("--alpha <x>", "significance level for the † marks", "0.05")
    .option("--ks <list>", "cut-offs of the retrieval metrics", "1,5,10,20")
    .option("--rank-keys <list>", "provenance keys of a retrieved unit", "wikipedia_id")
    .option("--dataset <name>", "dataset whose headline metric is the default (default: from the gold file's name)")
    .addOption(new Option("--format <format>", "output format").choices([...COMPARE_FORMATS]).default("text"))
    .option("--json", "same as --format json")
    .option("--out <file>", "write the table to this file instead of standard output")
    .option("--qrels <file>", "score TREC runs against these qrels with trec_eval's measures (every judged query, as trec_eval -c)")
    .option("--measures <list>", "with --qrels: trec_eval measures", "map,ndcg_cut_10,P_10,recip_rank")
    .option("--stored", "the arguments are names of runs in the runs database")
    .option("--runs <location>", `with --stored: ${RUNS_HELP}`)
    .action(async (args: string[], f: CompareFlags) => {
      const { runs, metrics, inputs } = await loadRuns(args, f);
      const baseline = f.baseline === undefined ? undefined : /^\d+$/u.test(f.baseline) ? Number(f.baseline) - 1 : f.baseline;
      const options: CompareOptions = {
        metrics,
        baseline,
        test: f.test,
        correction: f.correction,
        samples: f.samples,
        permutations: f.permutations,
        seed: Number(f.seed),
        level: Number(f.level),
        alpha: Number(f.alpha),
      };
      const result = compareRuns(runs, options);
      const text = `${renderComparison(result, f.json ? "json" : f.format)}\n`;
      if (f.out) {
        assertOutputsNotInputs([f.out], inputs);
        writeFileSafe(f.out, text);
        process.stderr.write(`comparison of ${runs.length} runs on ${result.queries.toLocaleString("en-US")} queries → ${f.out}\n`);
      } else process.stdout.write(text);
    });
}
