// `tartan repro squad` and `tartan repro kilt --ks DIR --data DIR`: the reproducibility matrices
// (src/repro): each cell runs retrieve → eval and checks its figures against the published references;
// writes report.md, report.html and report.json under --out, prints the table (or the JSON with
// --json), exits 1 when a checked figure is not reproduced. Resumable cell by cell.

import type { Command } from "commander";
import { reproSquad, DEFAULT_SQUAD } from "../../repro/squad.js";
import { reproKilt } from "../../repro/kilt.js";
import { textTable, writeReports } from "../../repro/render.js";
import type { MatrixResult } from "../../repro/matrix.js";
import type { KiltSystem } from "../../repro/references.js";
import { Progress } from "../../util/progress.js";
import { terminalProgress } from "../progress.js";

const log = (s: string) => process.stderr.write(`${s}\n`);

/** Prints the matrix, writes its pages, and sets the exit code. */
function finish(m: MatrixResult, out: string, json: boolean | undefined): void {
  const files = writeReports(m, out);
  if (json) process.stdout.write(`${JSON.stringify(m, null, 2)}\n`);
  else process.stdout.write(`${textTable(m)}\n`);
  log(`written: ${files.md}, ${files.html}, ${files.json}`);
  if (m.failed > 0) process.exitCode = 1;
}

/** A progress line over the cells (on a terminal only). */
function cellProgress(): { onCell: (i: number, total: number) => void; done: () => void } {
  let bar: Progress | null = null;
  return {
    onCell: (i, total) => {
      bar ??= new Progress({ label: "repro", unit: "cells", totalItems: total, countItems: true });
      bar.update(i);
    },
    done: () => bar?.done(),
  };
}

export function registerRepro(program: Command): void {
  const repro = program.command("repro").description("reproducibility matrices: published baselines re-run cell by cell and checked against their reference figures");
  repro
    .command("squad")
    .description("the matrix on the bundled SQuAD source (BM25 paragraphs and passages, DrQA TF-IDF; about a minute)")
    .option("--squad <file>", "SQuAD v1.1 file", DEFAULT_SQUAD)
    .option("--out <dir>", "working and output directory", ".tartan/repro-squad")
    .option("--pipeline", "add the pipeline cell: the quick start (BM25 + the trained extractive reader) against its KILT scores (about 80 CPU-s more)")
    .option("--fresh", "run every cell again (default: reuse cells whose inputs are unchanged)")
    .option("--json", "print the matrix as JSON")
    .action(async (o: { squad: string; out: string; pipeline?: boolean; fresh?: boolean; json?: boolean }) => {
      const p = cellProgress();
      const m = await reproSquad({ squad: o.squad, work: o.out, pipeline: o.pipeline, fresh: o.fresh, log, onCell: p.onCell, onProgress: terminalProgress() });
      p.done();
      finish(m, o.out, o.json);
    });
  repro
    .command("kilt")
    .description("KILT's retrieval baselines (DrQA TF-IDF, BM25 documents and passages) per dev set, checked against Pyserini's figures")
    .requiredOption("--ks <dir>", "knowledge-source store (tartan ks ingest of kilt_knowledgesource.json)")
    .requiredOption("--data <dir>", "directory of the KILT dev files (tartan datasets download dev)")
    .option("--out <dir>", "working and output directory", ".tartan/repro-kilt")
    .option("--datasets <names>", "only these datasets, comma-separated (default: every dev file found)")
    .option("--systems <names>", "only these retrievers, comma-separated: tfidf, bm25-document, bm25-passage, dense")
    .option("--dense <dir>", "a prebuilt dense index over the same source: one more cell per dataset (reported, no reference)")
    .option("--fresh", "run every cell again")
    .option("--json", "print the matrix as JSON")
    .action(async (o: { ks: string; data: string; out: string; datasets?: string; systems?: string; dense?: string; fresh?: boolean; json?: boolean }) => {
      const systems = o.systems?.split(",").map((s) => s.trim()) as KiltSystem[] | undefined;
      for (const s of systems ?? []) if (!["tfidf", "bm25-document", "bm25-passage", "dense"].includes(s)) throw new Error(`--systems: unknown retriever ${JSON.stringify(s)} (tfidf, bm25-document, bm25-passage, dense)`);
      const p = cellProgress();
      const m = await reproKilt({ ks: o.ks, data: o.data, work: o.out, datasets: o.datasets?.split(",").map((s) => s.trim()), systems, dense: o.dense, fresh: o.fresh, log, onCell: p.onCell, onProgress: terminalProgress() });
      p.done();
      finish(m, o.out, o.json);
    });
}
