// Per-query score tables from the KILT evaluator's output: one flat metric name per figure
// (`em`, `f1`, `KILT-em`, `Rprec`, `recall@5`, …), one Float64Array per metric in gold order. The
// same flattening applies to the summary, so every column's mean is the printed figure.

import { evaluate, type EvalOptions, type EvalResult, type PerQueryRow, type RecordSource } from "../eval/evaluate.js";
import { readJsonl } from "../records/jsonl.js";

/** The evaluator's result sections (a summary, or one gold record's scores). */
export interface ScoreSections {
  eval_downstream: {
    kilt: Record<string, number>;
    downstream: Record<string, number>;
    retrieval: Record<string, number>;
  } | null;
  eval_retrieval: Record<string, number> | null;
}

/** One line of `tartan eval --per-query` (the evaluator's `PerQueryRow`). */
export type PerQueryLine = PerQueryRow | (ScoreSections & { id: string });

/** Per-query scores: `metrics[m][i]` is query `ids[i]`'s score for metric m. */
export interface QueryScores {
  ids: string[];
  metrics: Record<string, Float64Array>;
}

/**
 * Flat metric names: downstream metrics as the evaluator names them (accuracy, em, f1, rougel), the
 * KILT scores (KILT-accuracy, …), then `eval_retrieval`'s keys (Rprec, precision@k, recall@k, …). The
 * page-level Rprec and recall@5 of `eval_downstream.retrieval` are used only when `eval_retrieval` is
 * absent (with page-level rank keys the two are the same figures).
 */
export function flattenScores(s: ScoreSections): Record<string, number> {
  const out: Record<string, number> = {};
  if (s.eval_downstream) {
    Object.assign(out, s.eval_downstream.downstream, s.eval_downstream.kilt);
    if (!s.eval_retrieval) Object.assign(out, s.eval_downstream.retrieval);
  }
  if (s.eval_retrieval) Object.assign(out, s.eval_retrieval);
  return out;
}

/** Builds column-wise per-query scores from rows (in their order). */
export class ScoreTable {
  readonly ids: string[] = [];
  private readonly columns = new Map<string, number[]>();

  /** Adds one query's scores (a per-query line of the evaluator). */
  add(row: PerQueryLine): void {
    const flat = flattenScores(row as ScoreSections);
    const i = this.ids.length;
    this.ids.push(String(row.id));
    for (const [m, v] of Object.entries(flat)) {
      let col = this.columns.get(m);
      if (!col) {
        if (i > 0) throw new Error(`query ${row.id} has metric ${m}, which earlier queries lack`);
        col = [];
        this.columns.set(m, col);
      }
      col.push(v);
    }
    for (const [m, col] of this.columns) if (col.length !== i + 1) throw new Error(`query ${row.id} lacks metric ${m}`);
  }

  /** Every metric's scores, one column per metric in query order. */
  metrics(): Record<string, Float64Array> {
    const out: Record<string, Float64Array> = {};
    for (const [m, col] of this.columns) out[m] = Float64Array.from(col);
    return out;
  }
}

/** Reads a `tartan eval --per-query` file. */
export async function readPerQueryFile(path: string): Promise<QueryScores> {
  const table = new ScoreTable();
  for await (const { value, line } of readJsonl<PerQueryLine>(path)) {
    if (typeof value !== "object" || value === null || !("id" in value) || !("eval_downstream" in value || "eval_retrieval" in value))
      throw new Error(`${path}:${line}: not a per-query score line (want {"id", "eval_downstream", "eval_retrieval"})`);
    try {
      table.add({ id: value.id, eval_downstream: value.eval_downstream ?? null, eval_retrieval: value.eval_retrieval ?? null });
    } catch (e) {
      throw new Error(`${path}:${line}: ${(e as Error).message}`);
    }
  }
  return { ids: table.ids, metrics: table.metrics() };
}

/** Scores predictions with the KILT evaluator and keeps every query's scores (in gold order). */
export async function scorePredictions(
  gold: RecordSource,
  guess: RecordSource,
  options: Omit<EvalOptions, "perQuery"> = {},
): Promise<{ result: EvalResult; scores: QueryScores }> {
  const table = new ScoreTable();
  const result = await evaluate(gold, guess, { ...options, perQuery: (row) => table.add(row) });
  return { result, scores: { ids: table.ids, metrics: table.metrics() } };
}
