// `tartan runs add|list|show|rm|export`: the runs database (default .tartan/runs, or --runs DIR /
// a backend URL): scored runs with their per-query scores, settings, checksums and date.

import type { Command } from "commander";
import { formatTable } from "./datasets.js";
import { pct } from "../../compare/render.js";
import { exportEvalAi } from "../../runs/evalai.js";
import { describeIndex, isRemote, openRuns } from "../../backends/index.js";
import { RUNS_HELP, splitList } from "../options.js";
import { makeRun } from "../../runs/record.js";
import type { RunsStore } from "../../runs/types.js";


async function withStore<T>(location: string | undefined, f: (s: RunsStore) => Promise<T>): Promise<T> {
  const store = await openRuns(location);
  try {
    return await f(store);
  } finally {
    await store.close();
  }
}

export function registerRuns(program: Command): void {
  const runs = program.command("runs").description("the runs database: record scored runs with their per-query scores, list, show, remove, export");

  runs
    .command("add")
    .description("score a prediction file against its gold file and record it (per-query scores, summary, settings, checksums, date)")
    .argument("<run>", "KILT prediction file")
    .requiredOption("--gold <file>", "gold KILT file")
    .option("--name <name>", "run name (default: the file name)")
    .option("--system <name>", "system the run belongs to (its leaderboard row; default: the run name)")
    .option("--notes <text>", "free-text notes")
    .option("--dataset <name>", "dataset (default: from the gold file's name)")
    .option("--ks <list>", "cut-offs of the retrieval metrics", "1,5,10,20")
    .option("--rank-keys <list>", "provenance keys of a retrieved unit", "wikipedia_id")
    .option("--index <dirs...>", "index directories or clickhouse:// index URLs the run used (their manifests are recorded)")
    .option("--reader <file>", "reader or pipeline settings (JSON) to record")
    .option("--replace", "replace a recorded run of the same name")
    .option("--runs <location>", RUNS_HELP)
    .action(async (file: string, o: { gold: string; name?: string; system?: string; notes?: string; dataset?: string; ks: string; rankKeys: string; index?: string[]; reader?: string; replace?: boolean; runs?: string }) => {
      const run = await makeRun({
        gold: o.gold,
        guess: file,
        name: o.name,
        system: o.system,
        notes: o.notes,
        dataset: o.dataset,
        ks: splitList(o.ks).map(Number),
        rankKeys: splitList(o.rankKeys),
        indexes: o.index && (await Promise.all(o.index.map(async (l) => (isRemote(l) ? { dir: l, manifest: await describeIndex(l) } : l)))),
        reader: o.reader,
      });
      await withStore(o.runs, async (s) => {
        await s.add(run, { replace: o.replace });
        process.stderr.write(`recorded ${run.name} (${run.dataset ?? "dataset unknown"}, ${run.queries.toLocaleString("en-US")} queries) in ${s.location}\n`);
      });
    });

  runs
    .command("list")
    .description("the recorded runs, oldest first")
    .option("--dataset <name>", "only this dataset's runs")
    .option("--json", "as JSON")
    .option("--runs <location>", RUNS_HELP)
    .action(async (o: { dataset?: string; json?: boolean; runs?: string }) => {
      const list = await withStore(o.runs, (s) => s.list(o.dataset ? { dataset: o.dataset } : {}));
      if (o.json) return void process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
      if (list.length === 0) return void process.stdout.write("no runs recorded yet (tartan runs add RUN --gold GOLD)\n");
      const rows = [["name", "system", "dataset", "queries", "created", "notes"], ...list.map((r) => [r.name, r.system ?? r.name, r.dataset ?? "-", r.queries.toLocaleString("en-US"), r.created.slice(0, 19).replace("T", " "), r.notes ?? ""])];
      process.stdout.write(`${formatTable(rows, new Set([3]))}\n`);
    });

  runs
    .command("show")
    .description("one run: its summary, settings, files and checksums")
    .argument("<name>", "run name")
    .option("--json", "as JSON")
    .option("--runs <location>", RUNS_HELP)
    .action(async (name: string, o: { json?: boolean; runs?: string }) => {
      const info = await withStore(o.runs, (s) => s.get(name));
      if (!info) throw new Error(`no run named "${name}" (see tartan runs list)`);
      if (o.json) return void process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
      const lines = [
        `run      ${info.name}${info.system ? ` (system ${info.system})` : ""}`,
        `dataset  ${info.dataset ?? "-"}, ${info.queries.toLocaleString("en-US")} queries, recorded ${info.created}`,
        ...(info.notes ? [`notes    ${info.notes}`] : []),
        `gold     ${info.gold.path} (sha256 ${info.gold.sha256})`,
        `guess    ${info.guess.path} (sha256 ${info.guess.sha256})`,
        `tartan   ${info.config.tartan}${info.config.gitCommit ? `, git ${info.config.gitCommit}` : ""}; eval ks ${info.config.eval.ks.join(",")}, rank keys ${info.config.eval.rankKeys.join(",")}`,
        ...info.config.indexes.map((i) => `index    ${i.dir}`),
        "",
        formatTable([["metric", "value"], ...Object.entries(info.summary).map(([m, v]) => [m, pct(v)])], new Set([1])),
      ];
      process.stdout.write(`${lines.join("\n")}\n`);
    });

  runs
    .command("rm")
    .description("remove a recorded run")
    .argument("<name>", "run name")
    .option("--runs <location>", RUNS_HELP)
    .action(async (name: string, o: { runs?: string }) => {
      const removed = await withStore(o.runs, (s) => s.remove(name));
      if (!removed) throw new Error(`no run named "${name}" (see tartan runs list)`);
      process.stderr.write(`removed ${name}\n`);
    });

  runs
    .command("export")
    .description("export recorded runs: --evalai DIR writes one prediction file per KILT dataset, named as the official test file for test-set runs, for their split otherwise")
    .requiredOption("--evalai <dir>", "directory for the submission files")
    .option("--system <name>", "only this system's runs (default: the latest run of each dataset)")
    .option("--runs <location>", RUNS_HELP)
    .action(async (o: { evalai: string; system?: string; runs?: string }) => {
      const files = await withStore(o.runs, (s) => exportEvalAi(s, o.evalai, { system: o.system }));
      for (const f of files) process.stderr.write(`${f.dataset}: ${f.run} → ${f.file}${f.scoredOn !== "test" ? ` (scored on ${f.scoredOn}: not a submission; EvalAI scores predictions for the test file ${f.dataset}'s catalogue names)` : ""}\n`);
    });
}
