#!/usr/bin/env node
// The `tartan` command line: one file per command under ./commands, registered here.

import { Command } from "commander";
import { createRequire } from "node:module";
import { setDefaultMaxLineBytes } from "../records/jsonl.js";
import { lockOutput } from "../util/lock.js";
import { failureMessage } from "../util/failure.js";

const require = createRequire(import.meta.url);
const { version } = require("../../../package.json") as { version: string };

const program = new Command();
program
  .name("tartan")
  .description("Knowledge-intensive language tasks: KILT records, evaluation, knowledge sources, retrieval")
  .version(version)
  .option("--max-line-bytes <n>", "longest input line read, in bytes (default 256 MB); longer lines stop with file:line")
  .hook("preAction", (_root, action) => {
    const n = (action.optsWithGlobals() as { maxLineBytes?: string }).maxLineBytes;
    if (n !== undefined) setDefaultMaxLineBytes(Number(n));
    // Every command that writes a named output or store holds its lock for the whole run (OUT.lock:
    // a second writer is refused naming the holder's pid; src/util/lock.ts).
    const opts = action.opts() as Record<string, unknown>;
    for (const key of OUTPUT_OPTIONS) {
      const v = opts[key];
      if (typeof v === "string" && v !== "-" && !/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) lockOutput(v);
    }
  });

/** Options that name what a command writes: a file, a store or an index directory, a work directory. */
const OUTPUT_OPTIONS = ["out", "table", "work"] as const;

// Command modules are imported only for the command invoked (loading all of them costs ~0.5 CPU-s and
// ~55 MB before any work): each entry names the top-level commands it registers or extends, in the
// order they were registered. No command word, `help` or an unknown word loads them all, so `--help`
// stays complete.
const COMMANDS: [string[], (p: Command) => Promise<void>][] = [
  [["eval"], async (p) => (await import("./commands/eval.js")).registerEval(p)],
  [["datasets"], async (p) => (await import("./commands/datasets.js")).registerDatasets(p)],
  [["datasets"], async (p) => (await import("./commands/datasets-download.js")).registerDatasetsDownload(p)],
  [["validate"], async (p) => (await import("./commands/validate.js")).registerValidate(p)],
  [["ks"], async (p) => { const m = await import("./commands/ks-build.js"); m.registerKsBuild(m.ksCommand(p)); }],
  [["ks"], async (p) => (await import("./commands/ks.js")).registerKs((await import("./commands/ks-build.js")).ksCommand(p))],
  [["datasets"], async (p) => (await import("./commands/ks-build.js")).registerConvert(p)],
  [["datasets", "baseline"], async (p) => (await import("./commands/tasks.js")).registerTasks(p)],
  [["index"], async (p) => (await import("./commands/index-build.js")).registerIndexBuild(p)],
  [["index"], async (p) => (await import("./commands/index-verify.js")).registerIndexVerify(p)],
  [["index"], async (p) => (await import("./commands/index-update.js")).registerIndexUpdate(p)],
  [["index"], async (p) => (await import("./commands/index-merge.js")).registerIndexMerge(p)],
  [["index"], async (p) => (await import("./commands/index-pack.js")).registerIndexPack(p)],
  [["index"], async (p) => (await import("./commands/index-pull.js")).registerIndexPull(p)],
  [["retrieve", "search"], async (p) => (await import("./commands/retrieve.js")).registerRetrieve(p)],
  [["rerank"], async (p) => (await import("./commands/rerank.js")).registerRerank(p)],
  [["reranker"], async (p) => (await import("./commands/reranker.js")).registerReranker(p)],
  [["map"], async (p) => (await import("./commands/map.js")).registerMap(p)],
  [["run", "quickstart"], async (p) => (await import("./commands/run.js")).registerRun(p)],
  [["analyze"], async (p) => (await import("./commands/analyze.js")).registerAnalyze(p)],
  [["reader"], async (p) => (await import("./commands/reader.js")).registerReader(p)],
  [["serve"], async (p) => (await import("./commands/serve.js")).registerServe(p)],
  [["mcp"], async (p) => (await import("./commands/mcp.js")).registerMcp(p)],
  [["compare"], async (p) => (await import("./commands/compare.js")).registerCompare(p)],
  [["runs"], async (p) => (await import("./commands/runs.js")).registerRuns(p)],
  [["leaderboard"], async (p) => (await import("./commands/leaderboard.js")).registerLeaderboard(p)],
  [["cluster"], async (p) => (await import("./commands/cluster.js")).registerCluster(p)],
  [["repro"], async (p) => (await import("./commands/repro.js")).registerRepro(p)],
];

/** The command word of argv (the first argument that is not a global option or its value). */
function commandWord(argv: string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === "--max-line-bytes") i++;
    else if (!argv[i].startsWith("-")) return argv[i];
  }
  return undefined;
}

const word = commandWord(process.argv);
const known = word !== undefined && COMMANDS.some(([names]) => names.includes(word));
// `tartan --version` alone needs no command (it took ~0.8 CPU-s when it loaded them all).
const versionOnly = word === undefined && process.argv.slice(2).some((a) => a === "--version" || a === "-V");
if (!versionOnly) for (const [names, register] of COMMANDS) if (!known || names.includes(word)) await register(program);

// `tartan … | head` closes the pipe early: stop quietly instead of crashing on EPIPE.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`tartan: ${failureMessage(err)}\n`);
  process.exit(2);
});
