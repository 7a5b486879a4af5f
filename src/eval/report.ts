// Human-readable and JSON renderings of evaluation results: the metric table of one evaluation, and
// the one-row-per-dataset table of a directory evaluation (like the KILT papers' Tables 3 to 5).

import type { EvalResult } from "./evaluate.js";

/** Four decimals for reading; the JSON output keeps every bit. */
export function fmt(v: number | undefined): string {
  return v === undefined ? "-" : v.toFixed(4);
}

function table(rows: string[][], rightAlignFrom = 1): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows
    .map((r) => r.map((c, i) => (i >= rightAlignFrom ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd())
    .join("\n");
}

/**
 * The JSON the `--json` flag prints: with one mode, that evaluator's dict exactly; with both,
 * `{"eval_downstream": …, "eval_retrieval": …}`, each exactly what the official function returns
 * (null where a section could not be computed), so the downstream block's page-level `Rprec` and
 * `recall@5` are never mixed up with `eval_retrieval`'s figures for other ks and rank keys.
 */
export function officialJson(result: EvalResult): Record<string, unknown> {
  const { mode } = result.options;
  if (mode === "downstream") return (result.eval_downstream ?? {}) as unknown as Record<string, unknown>;
  if (mode === "retrieval") return result.eval_retrieval ?? {};
  return { eval_downstream: result.eval_downstream, eval_retrieval: result.eval_retrieval };
}

/** The metric table of one evaluation. */
export function formatResult(result: EvalResult): string {
  const parts: string[] = [];
  const d = result.eval_downstream;
  if (d) {
    parts.push(
      table([
        ["downstream", "score", "KILT"],
        ["accuracy", fmt(d.downstream.accuracy), fmt(d.kilt["KILT-accuracy"])],
        ["em", fmt(d.downstream.em), fmt(d.kilt["KILT-em"])],
        ["f1", fmt(d.downstream.f1), fmt(d.kilt["KILT-f1"])],
        ["rougel", fmt(d.downstream.rougel), fmt(d.kilt["KILT-rougel"])],
      ]),
    );
  }
  const r = result.eval_retrieval;
  if (r) {
    const ks = result.options.ks;
    const head = [`retrieval (${result.options.rankKeys.join("+")})`, ...ks.map((k) => `@${k}`)];
    const row = (name: string, key: string, from = 1) => [name, ...ks.map((k) => (k >= from ? fmt(r[`${key}@${k}`]) : "-"))];
    parts.push(
      [
        table([
          ["R-precision", fmt(r.Rprec)],
          ["entity_in_input", fmt(r.entity_in_input)],
        ]),
        table([
          head,
          row("precision", "precision"),
          row("recall", "recall", 2),
          row("success_rate", "success_rate", 2),
          row("answer_in_context", "answer_in_context"),
          row("answer_and_ent_in_context", "answer_and_ent_in_context"),
          row("entity_in_context", "entity_in_context"),
        ]),
      ].join("\n"),
    );
  } else if (d) {
    parts.push(table([["R-precision (page)", fmt(d.retrieval.Rprec)], ["recall@5 (page)", fmt(d.retrieval["recall@5"])]]));
  }
  const c = result.counts;
  parts.push(
    `${c.evaluated} records evaluated (gold ${c.goldRecords}, predictions ${c.guessRecords}${c.extraGuesses ? `, ${c.extraGuesses} ignored` : ""})`,
  );
  return parts.join("\n\n");
}

/** One dataset's line of a directory evaluation. */
export interface DatasetRow {
  dataset: string;
  family: string;
  metric: string;
  kiltMetric: string;
  gold: string;
  guess?: string;
  result?: EvalResult;
  failure?: string;
}

const DOWN_KEYS: Record<string, { down: "accuracy" | "em" | "f1" | "rougel"; kilt: string }> = {
  accuracy: { down: "accuracy", kilt: "KILT-accuracy" },
  em: { down: "em", kilt: "KILT-em" },
  f1: { down: "f1", kilt: "KILT-f1" },
  rougel: { down: "rougel", kilt: "KILT-rougel" },
};

/** The table across datasets: headline metric, its KILT version, page R-precision and recall@5. */
export function formatDatasetTable(rows: readonly DatasetRow[]): string {
  const out: string[][] = [["dataset", "task", "metric", "score", "KILT", "R-prec", "recall@5", "records"]];
  for (const row of rows) {
    const keys = DOWN_KEYS[row.metric];
    const d = row.result?.eval_downstream;
    const r = row.result?.eval_retrieval;
    out.push([
      row.dataset,
      row.family,
      row.metric,
      d && keys ? fmt(d.downstream[keys.down]) : "-",
      d && keys ? fmt((d.kilt as Record<string, number>)[keys.kilt]) : "-",
      fmt(r?.Rprec ?? d?.retrieval.Rprec),
      fmt(r?.["recall@5"] ?? d?.retrieval["recall@5"]),
      // The reason in full is the CLI's to print (stderr); the table keeps its first clause.
      row.failure ? `failed: ${row.failure.split(":")[0]}` : String(row.result?.counts.evaluated ?? "-"),
    ]);
  }
  return table(out, 3);
}
