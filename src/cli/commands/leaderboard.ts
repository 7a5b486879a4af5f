// `tartan leaderboard`: the recorded runs in the KILT papers' table shape, with confidence intervals.

import { Command, Option } from "commander";
import { TABLE_FORMATS, type TableFormat } from "../../compare/table.js";
import { BOARD_KINDS, buildLeaderboard, renderLeaderboard, type BoardKind } from "../../runs/leaderboard.js";
import { openRuns } from "../../backends/open.js";
import { RUNS_HELP } from "../options.js";
import { writeFileSafe } from "../../util/safe-output.js";

export function registerLeaderboard(program: Command): void {
  program
    .command("leaderboard")
    .description("recorded runs as the KILT papers' tables (downstream, R-precision, recall@5, KILT scores) with bootstrap confidence intervals")
    .option("--dataset <name>", "one dataset: its runs as rows")
    .option("--tables <list>", `which tables (${BOARD_KINDS.join(",")})`, BOARD_KINDS.join(","))
    .addOption(new Option("--format <format>", "output format").choices([...TABLE_FORMATS, "json"]).default("text"))
    .option("--samples <n>", "bootstrap resamples", "10000")
    .option("--seed <n>", "seed of the resampling", "42")
    .option("--out <file>", "write here instead of standard output")
    .option("--runs <location>", RUNS_HELP)
    .action(async (o: { dataset?: string; tables: string; format: TableFormat | "json"; samples: string; seed: string; out?: string; runs?: string }) => {
      const kinds = o.tables.split(",").map((k) => k.trim()) as BoardKind[];
      for (const k of kinds) if (!BOARD_KINDS.includes(k)) throw new Error(`--tables: unknown table "${k}" (${BOARD_KINDS.join(", ")})`);
      const samples = Number(o.samples);
      if (!Number.isInteger(samples) || samples <= 0) throw new Error(`--samples must be a positive integer, got "${o.samples}"`);
      const store = await openRuns(o.runs);
      let text: string;
      try {
        text = `${renderLeaderboard(await buildLeaderboard(store, { dataset: o.dataset, samples, seed: Number(o.seed) }), o.format, kinds)}\n`;
      } finally {
        await store.close();
      }
      if (o.out) writeFileSafe(o.out, text);
      else process.stdout.write(text);
    });
}
