#!/usr/bin/env node
// The `tartan` command line: one file per command under ./commands, registered here.

import { Command } from "commander";
import { createRequire } from "node:module";
import { registerEval } from "./commands/eval.js";
import { registerDatasets } from "./commands/datasets.js";
import { registerValidate } from "./commands/validate.js";
import { ksCommand, registerConvert, registerKsBuild } from "./commands/ks-build.js";
import { registerKs } from "./commands/ks.js";
import { registerTasks } from "./commands/tasks.js";
import { registerIndexBuild } from "./commands/index-build.js";
import { registerIndexVerify } from "./commands/index-verify.js";
import { registerRetrieve } from "./commands/retrieve.js";
import { registerMap } from "./commands/map.js";
import { registerRun } from "./commands/run.js";
import { registerAnalyze } from "./commands/analyze.js";
import { registerReader } from "./commands/reader.js";
import { registerServe } from "./commands/serve.js";
import { registerCompare } from "./commands/compare.js";
import { registerRuns } from "./commands/runs.js";
import { registerLeaderboard } from "./commands/leaderboard.js";
import { setDefaultMaxLineBytes } from "../records/jsonl.js";
import { registerCluster } from "./commands/cluster.js";

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
  });

registerEval(program);
registerDatasets(program);
registerValidate(program);
registerKsBuild(ksCommand(program));
registerKs(ksCommand(program));
registerConvert(program);
registerTasks(program);
registerIndexBuild(program);
registerIndexVerify(program);
registerRetrieve(program);
registerMap(program);
registerRun(program);
registerAnalyze(program);
registerReader(program);
registerServe(program);
registerCompare(program);
registerRuns(program);
registerLeaderboard(program);
registerCluster(program);

// `tartan … | head` closes the pipe early: stop quietly instead of crashing on EPIPE.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`tartan: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
