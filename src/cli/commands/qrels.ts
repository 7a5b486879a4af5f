// `tartan datasets qrels GOLD`: TREC qrels from a KILT gold file (one relevance line per distinct
// provenance unit of the record's outputs; docids as `tartan retrieve --format trec` writes them).

import type { Command } from "commander";
import { qrelsFromGold } from "../../trec/convert.js";
import { assertOutputsNotInputs, writeFileSafe } from "../../util/safe-output.js";

export function registerQrels(datasets: Command): void {
  datasets
    .command("qrels")
    .description("KILT gold records → TREC qrels for trec_eval-style measures (tartan eval --qrels, compare --qrels)")
    .argument("<gold>", "KILT gold file (.jsonl, .jsonl.gz)")
    .option("--rank-keys <list>", "provenance keys making a document id, joined by + (page: wikipedia_id; paragraph: wikipedia_id,start_paragraph_id)", "wikipedia_id")
    .option("--out <file>", "write here instead of standard output")
    .action(async (gold: string, o: { rankKeys: string; out?: string }) => {
      assertOutputsNotInputs([o.out], [gold]);
      const keys = o.rankKeys.split(",").map((k) => k.trim()).filter(Boolean);
      if (keys.length === 0) throw new Error("--rank-keys must name at least one provenance key");
      const { lines, stats } = await qrelsFromGold(gold, keys);
      const text = lines.length ? `${lines.join("\n")}\n` : "";
      if (o.out) {
        writeFileSafe(o.out, text);
      } else process.stdout.write(text);
      process.stderr.write(
        `${stats.lines.toLocaleString("en-US")} qrels lines for ${stats.judged.toLocaleString("en-US")} of ${stats.records.toLocaleString("en-US")} records` +
          (stats.incomplete ? `; ${stats.incomplete.toLocaleString("en-US")} provenance entries without ${keys.join("+")} left out` : "") +
          (o.out ? ` → ${o.out}` : "") +
          "\n",
      );
    });
}
