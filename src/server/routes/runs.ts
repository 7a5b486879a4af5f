// Runs endpoints over the runs database (`tartan runs add`): the list, one run, its records with
// filters and a search by text, a two-run comparison (`tartan compare`'s statistics on the recorded per-query scores) and
// the leaderboard (`tartan leaderboard`'s tables, src/runs/leaderboard.ts). Run names are looked up in the database; the files a run was scored from are the
// paths recorded with it, never anything from the request.

import type { Hono } from "hono";
import { defaultMetrics } from "../../compare/load.js";
import { DEFAULT_SAMPLES, DEFAULT_SEED } from "../../compare/resampling.js";
import { buildLeaderboard, datasetBoard } from "../../runs/leaderboard.js";
import type { RunInfo } from "../../runs/types.js";
import { ApiError } from "../errors.js";
import { offThread } from "../compute.js";
import { choice, int, str } from "../params.js";
import { FILTERS, runMetrics, type RecordFilter, type RunRecords } from "../run-records.js";
import type { CompareAnswer, LeaderboardAnswer, RecordsAnswer, RunAnswer, RunsAnswer, RunView } from "../api-types.js";
import type { ServerEnv } from "../context.js";

/** Most bootstrap resamples a leaderboard request may ask for (each runs on the compute worker, under the gate). */
export const MAX_SAMPLES = 20_000;

/** Disagreeing records listed by /api/compare. */
const MAX_DISAGREEMENTS = 100;


/** A run as the API lists it: no local file paths, the metrics the explorer shows. */
export function runBody(r: RunInfo): RunView {
  return { name: r.name, dataset: r.dataset, created: r.created, notes: r.notes, queries: r.queries, summary: r.summary, metrics: runMetrics(r), official: r.official, config: { tartan: r.config.tartan, gitCommit: r.config.gitCommit, eval: r.config.eval } };
}

function records(c: { var: ServerEnv["Variables"] }): RunRecords {
  const r = c.var.resources.runRecords;
  if (!r) throw new ApiError(404, "no runs database is loaded (start the server with --runs DIR)");
  return r;
}

function runName(c: { req: { param(name: string): string } }): string {
  const name = c.req.param("name");
  if (name.length > 200) throw new ApiError(400, "run name is longer than 200 characters");
  return name;
}

export function registerRuns(app: Hono<ServerEnv>): void {
  /** /api/leaderboard answers by (dataset, samples, seed, the runs' names and dates): at most 16. */
  const boardCache = new Map<string, LeaderboardAnswer>();
  app.get("/api/runs", async (c) => {
    records(c);
    const dataset = str(c.req.query(), "dataset", { max: 100 });
    const runs = await c.var.resources.runs!.list(dataset ? { dataset } : undefined);
    return c.json({ runs: runs.map(runBody) } satisfies RunsAnswer);
  });

  app.get("/api/runs/:name", async (c) => {
    const info = await records(c).info(runName(c));
    return c.json({ run: runBody(info) } satisfies RunAnswer);
  });

  app.get("/api/runs/:name/records", async (c) => {
    const q = c.req.query();
    const filter = choice(q, "filter", FILTERS, "all");
    const offset = int(q, "offset", { min: 0, max: 100_000_000, fallback: 0 });
    const limit = int(q, "limit", { min: 1, max: 200, fallback: 20 });
    const text = str(q, "q", { max: 200 }) ?? null;
    const rr = records(c);
    const run = await rr.load(runName(c));
    // Each filter's records, narrowed to those holding the search text when one is given.
    const under = (f: RecordFilter) => (text === null ? run.byFilter[f] : rr.search(run, run.byFilter[f], text));
    const chosen = under(filter);
    const counts = Object.fromEntries(FILTERS.map((f) => [f, f === filter ? chosen.length : under(f).length])) as RecordsAnswer["counts"];
    return c.json({ run: run.info.name, filter, q: text, offset, limit, total: chosen.length, counts, warnings: run.warnings, records: await Promise.all(chosen.slice(offset, offset + limit).map((i) => rr.view(run, i))) } satisfies RecordsAnswer);
  });

  app.get("/api/compare", async (c) => {
    const q = c.req.query();
    // Run names hold no commas (src/runs/types.ts checkRunName).
    const names = str(q, "runs", { required: true, max: 401 }).split(",").map((s) => s.trim());
    if (names.length !== 2 || names.some((n) => n.length === 0 || n.length > 200)) throw new ApiError(400, "runs must name two runs: runs=A,B");
    const [a, b] = names;
    if (a === b) throw new ApiError(400, "runs must name two different runs");
    const rr = records(c);
    const [ra, rb] = [await rr.load(a), await rr.load(b)];
    const shared = Object.keys(ra.scores).filter((m) => m in rb.scores);
    const metrics = defaultMetrics(shared, ra.info.dataset ?? undefined, ra.info.gold.path);
    const metric = str(q, "metric", { max: 100 }) ?? metrics[0] ?? shared[0];
    if (!shared.includes(metric)) throw new ApiError(400, `metric must be one both runs have: ${shared.join(", ")}`);
    if (!metrics.includes(metric)) metrics.push(metric);
    // On the compute worker, under the computation gate: the resampling takes seconds on large runs.
    const job = {
      kind: "compare" as const,
      runs: [
        { name: a, ids: ra.ids, metrics: ra.scores },
        { name: b, ids: rb.ids, metrics: rb.scores },
      ],
      options: { metrics },
    };
    const result = await c.var.limits.compute.run(() =>
      offThread(job, c.var.settings.requestTimeoutMs).catch((e: unknown) => {
        throw e instanceof ApiError ? e : new ApiError(422, (e as Error).message);
      }),
    );
    // Per-query differences in the baseline's query order, and the records where the runs disagree.
    const posB = new Map(rb.ids.map((id, i) => [id, i]));
    const differences: number[] = [];
    const disagree: number[] = [];
    ra.ids.forEach((id, i) => {
      const d = rb.scores[metric][posB.get(id)!] - ra.scores[metric][i];
      differences.push(d);
      if (d !== 0) disagree.push(i);
    });
    const answer = (run: typeof ra, id: string) => {
      const o = run.guess.get(id)?.output?.[0];
      return typeof o?.answer === "string" ? o.answer : null;
    };
    return c.json({
      metric,
      metrics: shared,
      comparison: result,
      differences,
      disagreements: {
        total: disagree.length,
        records: disagree.slice(0, MAX_DISAGREEMENTS).map((i) => {
          const id = ra.ids[i];
          const g = ra.gold.get(id);
          return { id, input: typeof g?.input === "string" ? g.input : "", a: { answer: answer(ra, id), score: ra.scores[metric][i] }, b: { answer: answer(rb, id), score: rb.scores[metric][posB.get(id)!] } };
        }),
      },
    } satisfies CompareAnswer);
  });

  app.get("/api/leaderboard", async (c) => {
    records(c);
    const q = c.req.query();
    const only = str(q, "dataset", { max: 100 });
    const samples = int(q, "samples", { min: 1, max: MAX_SAMPLES, fallback: DEFAULT_SAMPLES });
    const seed = int(q, "seed", { min: 0, max: 2 ** 31 - 1, fallback: DEFAULT_SEED });
    const store = c.var.resources.runs!;
    // `tartan leaderboard`'s computation (latest run per system and dataset, bootstrap intervals), cached
    // while the recorded runs stay the same.
    const listed = await store.list(only ? { dataset: only } : undefined);
    const key = JSON.stringify([only, samples, seed, listed.map((r) => [r.name, r.created])]);
    let body = boardCache.get(key);
    if (!body) {
      // The resampling runs on the compute worker, each run's under the computation gate.
      const timeout = c.var.settings.requestTimeoutMs;
      const resample = (columns: Float64Array[], o: { samples: number; seed: number }) => c.var.limits.compute.run(() => offThread({ kind: "bootstrap", columns, ...o }, timeout));
      const board = await buildLeaderboard(store, { dataset: only, samples, seed, resample });
      const info = new Map(listed.map((r) => [r.name, r]));
      body = {
        settings: board.settings,
        datasets: board.datasets.map((dataset) => {
          const t = datasetBoard(board, dataset);
          return {
            dataset,
            metrics: t.metrics,
            runs: t.systems.map((system) => {
              const cells = t.kinds.map((k) => board.cells[k][system]?.[dataset]);
              const run = cells.find((x) => x !== undefined)!.run;
              return {
                system,
                name: run,
                queries: info.get(run)?.queries ?? null,
                created: info.get(run)?.created ?? null,
                values: Object.fromEntries(t.metrics.map((m, i) => [m, cells[i]?.mean ?? null])),
                intervals: Object.fromEntries(t.metrics.map((m, i) => [m, cells[i]?.interval ?? null])),
              };
            }),
          };
        }),
      } satisfies LeaderboardAnswer;
      if (boardCache.size >= 16) boardCache.delete(boardCache.keys().next().value!);
      boardCache.set(key, body);
    }
    return c.json(body);
  });
}
