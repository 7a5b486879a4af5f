// Knowledge-source building commands: `tartan ks from-squad`, `ks from-dump`, `ks passages` (pages JSONL
// in, KILT pages or passages JSONL out) and `tartan datasets convert squad` (SQuAD questions → KILT
// records); the work is the library's (src/knowledge/build.ts, src/retrieval/passages.ts). The store
// itself (`ks ingest` and friends) lives in ./ks.ts.

import { Command, Option } from "commander";
import { datasetsConvertCommand, subcommand } from "../subcommand.js";
import { convertSquad, fromDump, fromSquad } from "../../knowledge/build.js";
import type { Bz2Mode } from "../../knowledge/dump.js";
import type { PassageUnit } from "../../knowledge/passages.js";
import { passagesFrom } from "../../retrieval/passages.js";
import { localPath, log, positiveInt } from "../options.js";
import { terminalProgress } from "../progress.js";

/** The `ks` command of `program`, created (with a description) if no other module made it yet. */
export function ksCommand(program: Command): Command {
  return subcommand(program, "ks", "knowledge sources: build, store and read KILT pages and passages");
}

/** Adds `from-squad`, `from-dump` and `passages` to the `ks` command. */
export function registerKsBuild(ks: Command): void {
  ks.command("from-squad")
    .description("SQuAD JSON (v1.1/v2.0) → KILT pages JSONL: one page per article, paragraph i of the article is text[i+1]")
    .argument("<file>", "SQuAD JSON file")
    .requiredOption("--out <pages.jsonl>", "KILT pages to write (.gz to compress)")
    .action(async (file: string, o: { out: string }) => {
      await fromSquad(file, o.out, log);
    });

  ks.command("from-dump")
    .description("MediaWiki XML export (.xml, .xml.bz2, .xml.gz) → KILT pages JSONL (namespace 0, redirects apart)")
    .argument("<file>", "pages-articles export")
    .requiredOption("--out <pages.jsonl>", "KILT pages to write (.gz to compress)")
    .option("--redirects <redirects.jsonl>", "write the redirects ({wikipedia_id, title, target, fragment?}) here")
    .addOption(new Option("--bz2 <how>", "decompress .bz2 with the bzip2 program or in JavaScript").choices(["auto", "native", "js"]).default("auto"))
    .action(async (file: string, o: { out: string; redirects?: string; bz2: Bz2Mode }) => {
      await fromDump(file, { ...o, onProgress: terminalProgress() }, log);
    });

  ks.command("passages")
    .description("cut KILT pages into retrieval passages, KILT's create_kilt_data_paragraphs rules with word counts (streamed: memory does not grow with the source)")
    .option("--pages <pages.jsonl>", "KILT pages JSONL (.gz too)")
    .option("--ks <dir>", "knowledge-source store directory (tartan ks ingest)")
    .option("--out <passages.jsonl>", "passages to write (.gz to compress)")
    .option("--table <dir>", "with --ks: write a unit table instead (provenance and offsets into the store, no text) for `tartan index build --units DIR`")
    .option("--words <n>", "chunk size in words", positiveInt, 100)
    .addOption(new Option("--unit <unit>", "chunk: sentence-buffered chunks; paragraph: one passage per paragraph").choices(["chunk", "paragraph"]).default("chunk"))
    .action(async (o: { pages?: string; ks?: string; out?: string; table?: string; words: number; unit: PassageUnit }) => {
      const ks = o.ks === undefined ? undefined : localPath("--ks", o.ks, "a store directory", "tartan index build --ks URL cuts a ClickHouse knowledge source into units itself");
      await passagesFrom({ pages: o.pages, ks }, { ...o, onProgress: terminalProgress() }, log);
    });
}

/** Adds `convert squad` under the `datasets` command (creating `datasets` only if no module made it). */
export function registerConvert(program: Command): void {
  datasetsConvertCommand(program)
    .command("squad")
    .description("SQuAD JSON → KILT records: provenance = answer span in the SQuAD pages (see ks from-squad)")
    .argument("<file>", "SQuAD JSON file (v1.1 or v2.0)")
    .requiredOption("--out <records.jsonl>", "KILT records to write (.gz to compress)")
    .option("--pages <pages.jsonl>", "point provenance into these SQuAD pages (default: the pages of FILE itself)")
    .option("--keep-impossible", "keep v2.0 unanswerable questions (with no output) instead of leaving them out")
    .action(async (file: string, o: { out: string; pages?: string; keepImpossible?: boolean }) => {
      await convertSquad(file, o, log);
    });
}
