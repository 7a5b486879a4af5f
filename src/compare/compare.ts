// Comparing systems on the same queries: per run and metric the mean with a paired-bootstrap
// confidence interval; per run against the baseline the difference, its interval, a significance test
// (randomization by default; t, Wilcoxon, bootstrap), win/tie/loss counts, and p-values corrected for
// the number of comparisons in the table. Input is per-query scores aligned by query id (from
// `tartan eval --per-query`, the evaluator's library callback, or trec_eval measures).

import { adjustPValues, type Correction } from "./corrections.js";
import { pairedTTest, wilcoxonTest } from "./parametric.js";
import {
  bootstrapMeans,
  bootstrapTestFromMeans,
  DEFAULT_PERMUTATIONS,
  DEFAULT_SAMPLES,
  DEFAULT_SEED,
  percentileInterval,
  randomizationTest,
  type Interval,
} from "./resampling.js";

/** The significance tests {@link compareRuns} offers: Fisher's randomization test, the paired t-test, Wilcoxon's signed-rank test, the paired bootstrap. */
export const TESTS = ["randomization", "t", "wilcoxon", "bootstrap"] as const;
/** A significance test of {@link compareRuns}. */
export type SignificanceTest = (typeof TESTS)[number];

/** One system's per-query scores: `ids[i]`'s score for metric m is `metrics[m][i]`. */
export interface ScoredRun {
  name: string;
  ids: readonly string[];
  metrics: Readonly<Record<string, ArrayLike<number>>>;
}

/** Options of {@link compareRuns}. */
export interface CompareOptions {
  /** Metrics to compare (keys of every run's `metrics`); default: every metric all runs have. */
  metrics?: string[];
  /** The run the others are compared with: its name or index; default the first. */
  baseline?: string | number;
  /** Significance test; default "randomization". */
  test?: SignificanceTest;
  /** Correction for many comparisons (the family: every run × metric compared); default "holm". */
  correction?: Correction;
  /** Bootstrap resamples for the intervals (and the bootstrap test); default 10,000. */
  samples?: number;
  /** Permutations of the randomization test; default 10,000. */
  permutations?: number;
  /** Seed of every random draw; default 42. */
  seed?: number;
  /** Confidence level of the intervals; default 0.95. */
  level?: number;
  /** Significance level for marking differences; default 0.05. */
  alpha?: number;
}

/** One run's score on one metric: its mean and bootstrap interval. */
export interface Cell {
  /** Mean over the queries, summed in query order and divided once (as the KILT evaluator does). */
  mean: number;
  interval: Interval;
}

/** One run against the baseline on one metric: the difference, its interval and significance, and win/tie/loss counts. */
export interface Comparison {
  /** mean(run) − mean(baseline). */
  difference: number;
  /** Percentile interval of the bootstrap differences. */
  interval: Interval;
  statistic?: number;
  pvalue: number;
  /** After the correction (equal to pvalue for "none"). */
  adjusted: number;
  significant: boolean;
  wins: number;
  ties: number;
  losses: number;
}

/** One run's row of the comparison table. */
export interface RunRow {
  name: string;
  cells: Record<string, Cell>;
  /** Against the baseline; absent on the baseline's own row. */
  comparisons?: Record<string, Comparison>;
}

/** The comparison of several runs: one row per run, differences to the baseline, the best per metric and the settings used. */
export interface CompareResult {
  queries: number;
  metrics: string[];
  baseline: string;
  runs: RunRow[];
  /** Best mean per metric (the run names; several on a tie). */
  best: Record<string, string[]>;
  settings: Required<Omit<CompareOptions, "metrics" | "baseline">>;
}

/** Aligns run j's values of metric m to the baseline's query order; throws naming the missing ids. */
function align(runs: readonly ScoredRun[], metrics: readonly string[]): Float64Array[][] {
  const ids = runs[0].ids;
  return runs.map((run) => {
    if (run.ids.length !== ids.length)
      throw new Error(`${run.name} has scores for ${run.ids.length} queries, ${runs[0].name} for ${ids.length}: compare runs on the same gold file`);
    let order: Int32Array | null = null;
    if (run.ids.some((id, i) => id !== ids[i])) {
      const pos = new Map<string, number>();
      run.ids.forEach((id, i) => pos.set(id, i));
      order = new Int32Array(ids.length);
      for (let i = 0; i < ids.length; i++) {
        const p = pos.get(ids[i]);
        if (p === undefined) throw new Error(`${run.name} has no score for query ${ids[i]} (which ${runs[0].name} has)`);
        order[i] = p;
      }
    }
    return metrics.map((m) => {
      const src = run.metrics[m];
      if (!src) throw new Error(`${run.name} has no metric "${m}" (it has ${Object.keys(run.metrics).join(", ")})`);
      if (src.length !== ids.length) throw new Error(`${run.name}: metric "${m}" has ${src.length} values for ${ids.length} queries`);
      const out = new Float64Array(ids.length);
      for (let i = 0; i < ids.length; i++) out[i] = src[order ? order[i] : i];
      return out;
    });
  });
}

/** The mean as the evaluator computes it: a left-to-right sum divided once. */
export function plainMean(values: ArrayLike<number>): number {
  if (values.length === 0) return 0;
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i];
  return s / values.length;
}

/** Compares runs on the same queries (see the module comment). */
export function compareRuns(runs: readonly ScoredRun[], options: CompareOptions = {}): CompareResult {
  if (runs.length === 0) throw new Error("no runs to compare");
  const names = new Set<string>();
  for (const r of runs) {
    if (names.has(r.name)) throw new Error(`two runs are named "${r.name}": name them apart`);
    names.add(r.name);
  }
  const metrics = options.metrics ?? Object.keys(runs[0].metrics).filter((m) => runs.every((r) => m in r.metrics));
  if (metrics.length === 0) throw new Error("no metric common to all runs");
  const settings = {
    test: options.test ?? "randomization",
    correction: options.correction ?? "holm",
    samples: options.samples ?? DEFAULT_SAMPLES,
    permutations: options.permutations ?? DEFAULT_PERMUTATIONS,
    seed: options.seed ?? DEFAULT_SEED,
    level: options.level ?? 0.95,
    alpha: options.alpha ?? 0.05,
  } satisfies CompareResult["settings"];
  if (!(TESTS as readonly string[]).includes(settings.test)) throw new Error(`test must be one of ${TESTS.join(", ")}, got "${settings.test}"`);
  if (!(settings.level > 0 && settings.level < 1)) throw new Error(`confidence level must be between 0 and 1, got ${settings.level}`);
  const b = typeof options.baseline === "number" ? options.baseline : options.baseline === undefined ? 0 : runs.findIndex((r) => r.name === options.baseline);
  if (b < 0 || b >= runs.length) throw new Error(`no run named "${String(options.baseline)}" to use as the baseline`);

  // the baseline first (row 0), the others after it in the caller's order
  const values = align([runs[b], ...runs.filter((_, i) => i !== b)], metrics);
  // restore the caller's order of rows, baseline wherever it was
  const rowOf = (i: number) => (i === b ? 0 : i < b ? i + 1 : i);
  const n = runs[0].ids.length;

  // one paired bootstrap for every column, so run and baseline resamples match
  const columns = values.flat();
  const boots = bootstrapMeans(columns, { samples: settings.samples, seed: settings.seed });
  const boot = (row: number, m: number) => boots[row * metrics.length + m];

  const rows: RunRow[] = runs.map((run, i) => {
    const r = rowOf(i);
    const cells: Record<string, Cell> = {};
    metrics.forEach((m, j) => {
      cells[m] = { mean: plainMean(values[r][j]), interval: percentileInterval(boot(r, j), settings.level) };
    });
    if (i === b) return { name: run.name, cells };
    const comparisons: Record<string, Comparison> = {};
    metrics.forEach((m, j) => {
      const x = values[r][j];
      const y = values[0][j];
      let wins = 0;
      let ties = 0;
      let losses = 0;
      for (let q = 0; q < n; q++) {
        if (x[q] > y[q]) wins++;
        else if (x[q] < y[q]) losses++;
        else ties++;
      }
      const difference = cells[m].mean - plainMean(y);
      const bt = bootstrapTestFromMeans(boot(r, j), boot(0, j), difference, settings.level);
      let pvalue: number;
      let statistic: number | undefined;
      if (settings.test === "randomization") pvalue = randomizationTest(x, y, { permutations: settings.permutations, seed: settings.seed }).pvalue;
      else if (settings.test === "bootstrap") pvalue = bt.pvalue;
      else {
        const t = settings.test === "t" ? pairedTTest(x, y) : wilcoxonTest(x, y);
        pvalue = t.pvalue;
        statistic = t.statistic;
      }
      comparisons[m] = { difference, interval: bt.interval, ...(statistic === undefined ? {} : { statistic }), pvalue, adjusted: pvalue, significant: false, wins, ties, losses };
    });
    return { name: run.name, cells, comparisons };
  });

  // correct over the whole family
  const family: Comparison[] = [];
  for (const row of rows) if (row.comparisons) for (const m of metrics) family.push(row.comparisons[m]);
  const adjusted = adjustPValues(
    family.map((c) => c.pvalue),
    settings.correction,
  );
  family.forEach((c, i) => {
    c.adjusted = adjusted[i];
    c.significant = adjusted[i] < settings.alpha;
  });

  const best: Record<string, string[]> = {};
  for (const m of metrics) {
    const top = Math.max(...rows.map((r) => r.cells[m].mean));
    best[m] = rows.filter((r) => r.cells[m].mean === top).map((r) => r.name);
  }
  return { queries: n, metrics, baseline: runs[b].name, runs: rows, best, settings };
}
