// The evaluator's output sections: the per-datapoint score columns the guess scorer fills, and the
// official dicts built from them (`eval_downstream`'s nested dict, `eval_retrieval`'s OrderedDict in
// the official key order), as means summed in gold order (the official arithmetic) or as one
// datapoint's values (per-query rows).

/** `kilt.eval_downstream.evaluate`'s result. */
export interface DownstreamResult {
  kilt: { "KILT-accuracy": number; "KILT-em": number; "KILT-f1": number; "KILT-rougel": number };
  downstream: { accuracy: number; em: number; f1: number; rougel: number };
  retrieval: { Rprec: number; "recall@5": number };
}

/** `kilt.eval_retrieval.evaluate`'s result: keys in the official order. */
export type RetrievalResult = Record<string, number>;

/** One metric's value per gold record (0 where not scored). */
export interface Column {
  name: string;
  values: Float64Array;
}

/** The per-datapoint columns of `eval_downstream`. */
export interface DownColumns {
  accuracy: Column;
  em: Column;
  f1: Column;
  rougel: Column;
  kiltAccuracy: Column;
  kiltEm: Column;
  kiltF1: Column;
  kiltRougel: Column;
  rprec: Column;
  recall5: Column;
}

/** The per-datapoint columns of `eval_retrieval` (one column per k for the @k metrics). */
export interface RetColumns {
  rprec: Column;
  entityInInput: Column;
  precision: Column[];
  recall: Column[];
  success: Column[];
  answerInContext: Column[];
  answerAndEnt: Column[];
  entityInContext: Column[];
}

const column = (name: string, n: number): Column => ({ name, values: new Float64Array(n) });

/** Zeroed `eval_downstream` columns for `n` gold records. */
export function downColumns(n: number): DownColumns {
  const col = (name: string) => column(name, n);
  return {
    accuracy: col("accuracy"),
    em: col("em"),
    f1: col("f1"),
    rougel: col("rougel"),
    kiltAccuracy: col("KILT-accuracy"),
    kiltEm: col("KILT-em"),
    kiltF1: col("KILT-f1"),
    kiltRougel: col("KILT-rougel"),
    rprec: col("Rprec"),
    recall5: col("recall@5"),
  };
}

/** Zeroed `eval_retrieval` columns for `n` gold records and the cut-offs `ks`. */
export function retColumns(n: number, ks: readonly number[]): RetColumns {
  const col = (name: string) => column(name, n);
  return {
    rprec: col("Rprec"),
    entityInInput: col("entity_in_input"),
    precision: ks.map((k) => col(`precision@${k}`)),
    recall: ks.map((k) => col(`recall@${k}`)),
    success: ks.map((k) => col(`success_rate@${k}`)),
    answerInContext: ks.map((k) => col(`answer_in_context@${k}`)),
    answerAndEnt: ks.map((k) => col(`answer_and_ent_in_context@${k}`)),
    entityInContext: ks.map((k) => col(`entity_in_context@${k}`)),
  };
}

/**
 * Per-datapoint scores kept row by row (a datapoint's scores side by side, as predictions arrive in any
 * order: one place in memory per prediction, not one per column), copied into their columns once, when
 * scoring is done. Row layout: `columns` in order.
 */
export class ScoreRows {
  readonly width: number;
  readonly rows: Float64Array;
  private filled = false;

  constructor(
    private readonly n: number,
    private readonly columns: readonly Column[],
  ) {
    this.width = columns.length;
    this.rows = new Float64Array(n * this.width);
  }

  /** Copies the rows into the columns (once; later scores are not copied). */
  fill(): void {
    if (this.filled) return;
    this.filled = true;
    const { rows, width, n } = this;
    const cols = this.columns.map((c) => c.values);
    for (let i = 0, p = 0; i < n; i++) for (let c = 0; c < width; c++, p++) cols[c][i] = rows[p];
  }
}

/** Where each downstream score sits in a score row: accuracy, em, f1, rougel (KILT ones: +4), Rprec, recall@5. */
export const DOWN_ACCURACY = 0, DOWN_EM = 1, DOWN_F1 = 2, DOWN_ROUGEL = 3, DOWN_KILT = 4, DOWN_RPREC = 8, DOWN_RECALL5 = 9;

/** The downstream columns in a score row's order (the offsets above). */
export function downRow(d: DownColumns): Column[] {
  return [d.accuracy, d.em, d.f1, d.rougel, d.kiltAccuracy, d.kiltEm, d.kiltF1, d.kiltRougel, d.rprec, d.recall5];
}

/**
 * Where each retrieval score sits in its part of a score row: Rprec, entity_in_input, then per k (from
 * `RET_K + RET_K_WIDTH * j`) precision, recall, success, answer, both, entity.
 */
export const RET_RPREC = 0, RET_ENTITY_IN_INPUT = 1, RET_K = 2, RET_K_WIDTH = 6;
export const RET_PRECISION = 0, RET_RECALL = 1, RET_SUCCESS = 2, RET_ANSWER = 3, RET_BOTH = 4, RET_ENTITY = 5;

/** The retrieval columns in a score row's order (the offsets above). */
export function retRow(r: RetColumns): Column[] {
  const cols = [r.rprec, r.entityInInput];
  for (let j = 0; j < r.precision.length; j++) cols.push(r.precision[j], r.recall[j], r.success[j], r.answerInContext[j], r.answerAndEnt[j], r.entityInContext[j]);
  return cols;
}

/** `eval_downstream`'s dict with each value taken by `v` (a mean, or one datapoint's value). */
export function downstreamSection(down: DownColumns, v: (c: Column) => number): DownstreamResult {
  return {
    kilt: {
      "KILT-accuracy": v(down.kiltAccuracy),
      "KILT-em": v(down.kiltEm),
      "KILT-f1": v(down.kiltF1),
      "KILT-rougel": v(down.kiltRougel),
    },
    downstream: { accuracy: v(down.accuracy), em: v(down.em), f1: v(down.f1), rougel: v(down.rougel) },
    retrieval: { Rprec: v(down.rprec), "recall@5": v(down.recall5) },
  };
}

/** `eval_retrieval`'s OrderedDict (official key order) with each value taken by `v`. */
export function retrievalSection(ret: RetColumns, ks: readonly number[], withEntityInInput: boolean, v: (c: Column) => number): RetrievalResult {
  const r: RetrievalResult = {};
  r.Rprec = v(ret.rprec);
  if (withEntityInInput) r.entity_in_input = v(ret.entityInInput);
  ks.forEach((k, j) => {
    r[`precision@${k}`] = v(ret.precision[j]);
    r[`answer_in_context@${k}`] = v(ret.answerInContext[j]);
    r[`answer_and_ent_in_context@${k}`] = v(ret.answerAndEnt[j]);
    r[`entity_in_context@${k}`] = v(ret.entityInContext[j]);
    if (k > 1) {
      r[`recall@${k}`] = v(ret.recall[j]);
      r[`success_rate@${k}`] = v(ret.success[j]);
    }
  });
  return r;
}

/** Sums a column in gold order over the evaluated datapoints, then divides once (the official arithmetic). */
export function mean(values: Float64Array, evaluated: Uint8Array, total: number): number {
  if (total === 0) return 0;
  let s = 0;
  for (let i = 0; i < values.length; i++) if (evaluated[i]) s += values[i];
  return s / total;
}
