// The local leaderboard: recorded runs in the KILT papers' table shape (Tables 3–5 of the NAACL
// paper): systems as rows, datasets as columns grouped by task family, one table each for the
// downstream headline metric, page-level R-precision, recall@5 and the KILT score; every figure with
// its paired-bootstrap confidence interval, rows ordered by their mean over the datasets every row has
// (said under each table).
// With one dataset: one table, its runs as rows and the four figures as columns.

import { plainMean } from "../compare/compare.js";
import { pct } from "../compare/render.js";
import { bootstrapMeans, DEFAULT_SAMPLES, DEFAULT_SEED, percentileInterval, type Interval } from "../compare/resampling.js";
import { renderTable, type Table, type TableCell, type TableFormat } from "../compare/table.js";
import { DATASETS, findDataset } from "../datasets/catalogue.js";
import type { RunInfo, RunsStore } from "./types.js";

/** The papers' short column names. */
const SHORT: Record<string, string> = {
  fever: "FEV",
  aidayago2: "AY2",
  wned: "WnWi",
  cweb: "WnCw",
  trex: "T-REx",
  zsre: "zsRE",
  nq: "NQ",
  hotpotqa: "HoPo",
  triviaqa: "TQA",
  eli5: "ELI5",
  wow: "WoW",
};

/** The kinds of leaderboard table: downstream score, R-precision, recall@5, KILT score. */
export type BoardKind = "downstream" | "rprec" | "recall" | "kilt";
/** The leaderboard tables, in the papers' order. */
export const BOARD_KINDS: readonly BoardKind[] = ["downstream", "rprec", "recall", "kilt"];

/** One leaderboard cell: the best run of a system on a dataset for one kind of score, with its interval. */
export interface BoardCell {
  metric: string;
  mean: number;
  interval: Interval;
  run: string;
}

/** The KILT papers' tables built from recorded runs. */
export interface Leaderboard {
  /** Datasets in the papers' order (catalogue order), then any others. */
  datasets: string[];
  systems: string[];
  /** cells[kind][system][dataset] */
  cells: Record<BoardKind, Record<string, Record<string, BoardCell | undefined>>>;
  settings: { samples: number; seed: number; level: number };
}

function metricFor(kind: BoardKind, dataset: string, summary: Record<string, number>): string | undefined {
  const d = findDataset(dataset);
  const headline = d && d.metric in summary ? d.metric : ["em", "accuracy", "f1", "rougel"].find((m) => m in summary);
  const m = kind === "downstream" ? headline : kind === "kilt" ? (headline ? `KILT-${headline}` : undefined) : kind === "rprec" ? "Rprec" : "recall@5";
  return m && m in summary ? m : undefined;
}

/** Builds the leaderboard from the store (optionally one dataset). */
export async function buildLeaderboard(
  store: RunsStore,
  options: {
    dataset?: string;
    samples?: number;
    seed?: number;
    level?: number;
    /** Computes the bootstrap means (default: {@link bootstrapMeans} here; the server runs it on a worker thread). */
    resample?: (columns: Float64Array[], o: { samples: number; seed: number }) => Float64Array[] | Promise<Float64Array[]>;
  } = {},
): Promise<Leaderboard> {
  const dataset = options.dataset === undefined ? undefined : (findDataset(options.dataset)?.name ?? options.dataset);
  const runs = await store.list(dataset === undefined ? {} : { dataset });
  const settings = { samples: options.samples ?? DEFAULT_SAMPLES, seed: options.seed ?? DEFAULT_SEED, level: options.level ?? 0.95 };
  // the latest run of each system on each dataset
  const latest = new Map<string, RunInfo>();
  for (const r of runs) {
    const key = `${r.system ?? r.name}\u0000${r.dataset ?? "other"}`;
    const prev = latest.get(key);
    if (!prev || prev.created <= r.created) latest.set(key, r);
  }
  const order = DATASETS.map((d) => d.name);
  const datasets = [...new Set([...latest.values()].map((r) => r.dataset ?? "other"))].sort((a, b) => {
    const ia = order.indexOf(a);
    const ib = order.indexOf(b);
    return (ia < 0 ? 1e9 : ia) - (ib < 0 ? 1e9 : ib) || a.localeCompare(b);
  });
  const cells = Object.fromEntries(BOARD_KINDS.map((k) => [k, {}])) as Leaderboard["cells"];
  for (const r of latest.values()) {
    const system = r.system ?? r.name;
    const ds = r.dataset ?? "other";
    const metrics = BOARD_KINDS.map((k) => metricFor(k, ds, r.summary));
    const wanted = [...new Set(metrics.filter((m): m is string => m !== undefined))];
    if (wanted.length === 0) continue;
    const scores = await store.scores(r.name);
    const columns = wanted.map((m) => Float64Array.from(scores.metrics[m]));
    const resample = options.resample ?? ((c: Float64Array[], o: { samples: number; seed: number }) => bootstrapMeans(c, o));
    const boots = await resample(columns, { samples: settings.samples, seed: settings.seed });
    BOARD_KINDS.forEach((k, i) => {
      const m = metrics[i];
      if (!m) return;
      const j = wanted.indexOf(m);
      (cells[k][system] ??= {})[ds] = { metric: m, mean: plainMean(scores.metrics[m]), interval: percentileInterval(boots[j], settings.level), run: r.name };
    });
  }
  const systems = [...new Set([...latest.values()].map((r) => r.system ?? r.name))];
  return { datasets, systems, cells, settings };
}

const TITLES: Record<BoardKind, string> = {
  downstream: "Downstream performance",
  rprec: "Page-level R-precision",
  recall: "Page-level recall@5",
  kilt: "KILT scores",
};

/**
 * Systems of one table, best first, and the words saying how: by the mean over the datasets every row
 * has a figure for (a system's weak dataset is not left out of its mean while others are judged on
 * it); when no dataset is in every row, by the number of datasets covered, then the mean over them.
 */
function ordered(board: Leaderboard, kind: BoardKind): { rows: string[]; order: string } {
  const rows = board.systems.filter((s) => board.datasets.some((d) => board.cells[kind][s]?.[d]));
  const shared = board.datasets.filter((d) => rows.every((s) => board.cells[kind][s]?.[d]));
  const over = (s: string, ds: readonly string[]) => {
    const vs = ds.map((d) => board.cells[kind][s]?.[d]?.mean).filter((v): v is number => v !== undefined);
    return vs.length ? vs.reduce((x, y) => x + y, 0) / vs.length : -Infinity;
  };
  if (shared.length > 0) {
    rows.sort((a, b) => over(b, shared) - over(a, shared) || a.localeCompare(b));
    return { rows, order: `rows: best first by the mean over ${shared.map((d) => SHORT[d] ?? d).join(", ")} (the datasets every row has)` };
  }
  const covered = (s: string) => board.datasets.filter((d) => board.cells[kind][s]?.[d]).length;
  rows.sort((a, b) => covered(b) - covered(a) || over(b, board.datasets) - over(a, board.datasets) || a.localeCompare(b));
  return { rows, order: "rows: no dataset is in every row; by the datasets covered, then the mean over them" };
}

function cellOf(c: BoardCell | undefined, best: boolean): TableCell {
  if (!c) return { text: "-" };
  return { text: pct(c.mean), bold: best, interval: `[${pct(c.interval.low)}, ${pct(c.interval.high)}]` };
}

/** One dataset's table as data: the kinds with a figure, their metric names, and the systems best first. */
export interface DatasetBoard {
  dataset: string;
  /** In the one-dataset table's column order: headline metric, KILT score, R-precision, recall@5. */
  kinds: BoardKind[];
  metrics: string[];
  /** Best first by the KILT score (else the first kind asked for), then by name; systems without it last. */
  systems: string[];
}

/** The one-dataset table of `dataset` (what `tartan leaderboard --dataset D` prints), as data. */
export function datasetBoard(board: Leaderboard, dataset: string, kinds: readonly BoardKind[] = BOARD_KINDS): DatasetBoard {
  const first = kinds.includes("kilt") ? "kilt" : kinds[0];
  const has = (k: BoardKind, s: string) => board.cells[k][s]?.[dataset] !== undefined;
  const value = (s: string) => board.cells[first][s]![dataset]!.mean;
  const ranked = board.systems.filter((s) => has(first, s)).sort((a, b) => value(b) - value(a) || a.localeCompare(b));
  const systems = [...ranked, ...board.systems.filter((s) => !has(first, s) && kinds.some((k) => has(k, s)))];
  const present = (["downstream", "kilt", "rprec", "recall"] as BoardKind[]).filter((k) => kinds.includes(k) && systems.some((s) => has(k, s)));
  const metrics = present.map((k) => board.cells[k][systems.find((s) => has(k, s))!]![dataset]!.metric);
  return { dataset, kinds: present, metrics, systems };
}

/** The tables (one per kind that has any figure) in the papers' shape. */
export function leaderboardTables(board: Leaderboard, kinds: readonly BoardKind[] = BOARD_KINDS): Table[] {
  const level = Math.round(board.settings.level * 100);
  const note = `[low, high]: ${level}% bootstrap interval (${board.settings.samples.toLocaleString("en-US")} resamples, seed ${board.settings.seed}); bold: best in its column.`;
  if (board.datasets.length === 1) {
    const ds = board.datasets[0];
    // one dataset: headline metric, its KILT score, R-precision, recall@5
    const { kinds: present, metrics, systems: rows } = datasetBoard(board, ds, kinds);
    const header = ["system", ...metrics];
    const best = present.map((k) => Math.max(...rows.map((s) => board.cells[k][s]?.[ds]?.mean ?? -Infinity)));
    return [
      {
        caption: `${findDataset(ds)?.displayName ?? ds}: leaderboard`,
        header,
        rows: rows.map((s) => [{ text: s }, ...present.map((k, i) => cellOf(board.cells[k][s]?.[ds], board.cells[k][s]?.[ds]?.mean === best[i]))]),
        notes: [note],
      },
    ];
  }
  const tables: Table[] = [];
  for (const kind of kinds) {
    const { rows, order } = ordered(board, kind);
    if (rows.length === 0) continue;
    const families: [string, number][] = [["", 1]];
    for (const d of board.datasets) {
      const fam = findDataset(d)?.family ?? "Other";
      const last = families[families.length - 1];
      if (last[0] === fam) last[1]++;
      else families.push([fam, 1]);
    }
    const metricRow = board.datasets.map((d) => {
      const c = rows.map((s) => board.cells[kind][s]?.[d]).find(Boolean);
      return c?.metric ?? "";
    });
    const best = board.datasets.map((d) => Math.max(...rows.map((s) => board.cells[kind][s]?.[d]?.mean ?? -Infinity)));
    tables.push({
      caption: TITLES[kind],
      groups: families,
      header: ["model", ...board.datasets.map((d, i) => `${SHORT[d] ?? d}${metricRow[i] ? ` (${metricRow[i]})` : ""}`)],
      rows: rows.map((s) => [{ text: s }, ...board.datasets.map((d, i) => cellOf(board.cells[kind][s]?.[d], board.cells[kind][s]?.[d]?.mean === best[i]))]),
      notes: [note, `${order}.`],
    });
  }
  return tables;
}

/** The leaderboard as text, Markdown, CSV, LaTeX or HTML (tables one after another). CSV is long and numeric. */
export function renderLeaderboard(board: Leaderboard, format: TableFormat | "json", kinds: readonly BoardKind[] = BOARD_KINDS): string {
  if (format === "json") return JSON.stringify(board, null, 2);
  if (format === "csv") {
    const lines = ["table,system,dataset,run,metric,mean,low,high"];
    for (const k of kinds)
      for (const s of board.systems)
        for (const d of board.datasets) {
          const c = board.cells[k][s]?.[d];
          if (c) lines.push([k, s, d, c.run, c.metric, c.mean, c.interval.low, c.interval.high].map((v) => (/[",\n]/u.test(String(v)) ? `"${String(v).replace(/"/gu, '""')}"` : String(v))).join(","));
        }
    return lines.join("\n");
  }
  const tables = leaderboardTables(board, kinds);
  if (tables.length === 0) return "no runs recorded yet (tartan runs add RUN --gold GOLD)";
  // Plain text has no bold: the best value of a column carries a star, and the note says so.
  if (format === "text")
    for (const t of tables) {
      for (const r of t.rows) for (const c of r) if (c.bold) c.text = `${c.text}*`;
      t.notes = t.notes?.map((n) => n.replace("bold: best in its column", "*: best in its column"));
    }
  return tables.map((t) => renderTable(t, format)).join("\n\n");
}
