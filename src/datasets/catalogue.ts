// The KILT datasets (kilt-spec.md §1.2: file names, record counts, task family, headline metric)
// and the other datasets tartan works with, plus lookups by name and by KILT file name.

import { basename, join } from "node:path";

/** A dataset split. */
export type Split = "train" | "dev" | "test";
/** The splits, in order. */
export const SPLITS: readonly Split[] = ["train", "dev", "test"];

/** KILT's task families (and the families of the other tasks tartan reads). */
export type TaskFamily =
  | "Fact Checking"
  | "Entity Linking"
  | "Slot Filling"
  | "Open Domain QA"
  | "Dialogue"
  | "Machine Reading"
  | "Closed-Book QA";

/** Downstream metric keys as the KILT evaluator names them, plus the headline metrics of the extra datasets. */
export type Metric = "accuracy" | "em" | "f1" | "rougel" | "hits@1" | "mean-f1";

/** Where KILT's files are downloaded from. */
export const KILT_URL_BASE = "http://dl.fbaipublicfiles.com/KILT/";
/** Where Mintaka's files are downloaded from. */
export const MINTAKA_URL_BASE = "https://raw.githubusercontent.com/amazon-science/mintaka/main/data/";
/** Where WikiReading's files are downloaded from. */
export const WIKIREADING_URL_BASE = "https://storage.googleapis.com/wikireading/";

/** One released file of a dataset split. */
export interface SplitFile {
  /** File name as released. */
  file: string;
  /** Records (lines) in the released file. */
  records: number;
  /** Where to download it; undefined where not known here. */
  url?: string;
  /** sha256 of the released file; undefined: the checksums are not known here (none are published with KILT). */
  sha256?: string;
  /** False for test files, whose answers and provenance are withheld. */
  hasAnswers: boolean;
  /** False for TriviaQA's released `_id` files, which hold ids but no `input`. */
  hasInput: boolean;
  /** Other names the same split goes by (TriviaQA after `get_triviaqa_input.py`). */
  otherFiles?: string[];
}

/** One dataset of the catalogue: its task, files per split, record counts and metrics. */
export interface Dataset {
  /** Short name used on the command line (`nq`). */
  name: string;
  displayName: string;
  family: TaskFamily;
  /** True for the 11 datasets of the KILT benchmark. */
  kilt: boolean;
  /** Dataset name in `kilt/configs/*.json`. */
  configName?: string;
  /** Other names `findDataset` accepts (file-name prefix, common abbreviations). */
  aliases: string[];
  splits: Partial<Record<Split, SplitFile>>;
  /** Headline downstream metric. */
  metric: Metric;
  /** Its KILT counterpart (downstream score counted only where R-precision is 1). */
  kiltMetric?: string;
  /** For an entry tartan does not fully support yet: what is missing (`tartan datasets` marks it with `*`). */
  pending?: string;
  languages?: string[];
  complexityTypes?: string[];
  articles?: number;
}

/** A KILT release file: hosted under KILT_URL_BASE, checksum not known here; test files hold no answers. */
function kiltFile(file: string, records: number, idsOnly?: { otherFiles: string[] }): SplitFile {
  const hasAnswers = !file.includes("without_answers");
  const base = { file, records, url: KILT_URL_BASE + file, sha256: undefined, hasAnswers };
  return idsOnly ? { ...base, hasInput: false, otherFiles: idsOnly.otherFiles } : { ...base, hasInput: true };
}

/** The train/dev/test files of a KILT dataset named `<prefix>-<split>-kilt.jsonl`. */
function kiltSplits(prefix: string, train: number | undefined, dev: number, test: number): Partial<Record<Split, SplitFile>> {
  return {
    ...(train === undefined ? {} : { train: kiltFile(`${prefix}-train-kilt.jsonl`, train) }),
    dev: kiltFile(`${prefix}-dev-kilt.jsonl`, dev),
    test: kiltFile(`${prefix}-test_without_answers-kilt.jsonl`, test),
  };
}

const KILT_METRIC: Record<string, string> = {
  accuracy: "KILT-accuracy",
  em: "KILT-em",
  f1: "KILT-f1",
  rougel: "KILT-rougel",
};

function kiltDataset(
  d: Omit<Dataset, "kilt" | "kiltMetric" | "metric"> & { metric: "accuracy" | "em" | "f1" | "rougel" },
): Dataset {
  return { ...d, kilt: true, kiltMetric: KILT_METRIC[d.metric] };
}

/** The dataset catalogue: the 11 KILT datasets, then Mintaka and WikiReading. */
export const DATASETS: readonly Dataset[] = [
  kiltDataset({
    name: "fever",
    displayName: "FEVER",
    family: "Fact Checking",
    configName: "FEVER",
    aliases: [],
    splits: kiltSplits("fever", 104_966, 10_444, 10_100),
    metric: "accuracy",
  }),
  kiltDataset({
    name: "aidayago2",
    displayName: "AIDA CoNLL-YAGO",
    family: "Entity Linking",
    configName: "AIDA-YAGO2",
    aliases: ["aida"],
    splits: kiltSplits("aidayago2", 18_395, 4_784, 4_463),
    metric: "accuracy",
  }),
  kiltDataset({
    name: "wned",
    displayName: "WNED-WIKI",
    family: "Entity Linking",
    configName: "WNED",
    aliases: ["wned-wiki"],
    splits: kiltSplits("wned", undefined, 3_396, 3_376),
    metric: "accuracy",
  }),
  kiltDataset({
    name: "cweb",
    displayName: "WNED-CWEB",
    family: "Entity Linking",
    configName: "CWEB",
    aliases: ["wned-cweb"],
    splits: kiltSplits("cweb", undefined, 5_599, 5_543),
    metric: "accuracy",
  }),
  kiltDataset({
    name: "trex",
    displayName: "T-REx",
    family: "Slot Filling",
    configName: "T-REx",
    aliases: ["t-rex"],
    splits: kiltSplits("trex", 2_284_168, 5_000, 5_000),
    metric: "accuracy",
  }),
  kiltDataset({
    name: "zsre",
    displayName: "Zero-Shot RE",
    family: "Slot Filling",
    configName: "Zero Shot RE",
    aliases: ["structured_zeroshot", "zero-shot-re"],
    splits: kiltSplits("structured_zeroshot", 147_909, 3_724, 4_966),
    metric: "accuracy",
  }),
  kiltDataset({
    name: "nq",
    displayName: "Natural Questions",
    family: "Open Domain QA",
    configName: "Natural Questions",
    aliases: ["natural-questions"],
    splits: kiltSplits("nq", 87_372, 2_837, 1_444),
    metric: "em",
  }),
  kiltDataset({
    name: "hotpotqa",
    displayName: "HotpotQA",
    family: "Open Domain QA",
    configName: "HotpotQA",
    aliases: ["hotpot"],
    splits: kiltSplits("hotpotqa", 88_869, 5_600, 5_569),
    metric: "em",
  }),
  kiltDataset({
    name: "triviaqa",
    displayName: "TriviaQA",
    family: "Open Domain QA",
    configName: "TriviaQA",
    aliases: ["tqa"],
    // Released with ids only; scripts/get_triviaqa_input.py adds the questions under the names in otherFiles.
    splits: {
      train: kiltFile("triviaqa-train_id-kilt.jsonl", 61_844, { otherFiles: ["triviaqa-train-kilt.jsonl"] }),
      dev: kiltFile("triviaqa-dev_id-kilt.jsonl", 5_359, { otherFiles: ["triviaqa-dev-kilt.jsonl"] }),
      test: kiltFile("triviaqa-test_id_without_answers-kilt.jsonl", 6_586, {
        otherFiles: ["triviaqa-test_without_answers-kilt.jsonl"],
      }),
    },
    metric: "em",
  }),
  kiltDataset({
    name: "eli5",
    displayName: "ELI5",
    family: "Open Domain QA",
    configName: "ELI5",
    aliases: [],
    splits: kiltSplits("eli5", 272_634, 1_507, 600),
    metric: "rougel",
  }),
  kiltDataset({
    name: "wow",
    displayName: "Wizard of Wikipedia",
    family: "Dialogue",
    configName: "Wizard of Wikipedia",
    aliases: ["wizard-of-wikipedia"],
    splits: kiltSplits("wow", 63_734, 3_054, 2_944),
    metric: "f1",
  }),
  {
    name: "mintaka",
    displayName: "Mintaka",
    family: "Open Domain QA",
    kilt: false,
    aliases: [],
    // The official JSON files of github.com/amazon-science/mintaka (docs/mintaka.md; tartan datasets convert mintaka).
    splits: {
      train: { file: "mintaka_train.json", records: 14_000, url: `${MINTAKA_URL_BASE}mintaka_train.json`, hasAnswers: true, hasInput: true },
      dev: { file: "mintaka_dev.json", records: 2_000, url: `${MINTAKA_URL_BASE}mintaka_dev.json`, hasAnswers: true, hasInput: true },
      test: { file: "mintaka_test.json", records: 4_000, url: `${MINTAKA_URL_BASE}mintaka_test.json`, hasAnswers: true, hasInput: true },
    },
    metric: "hits@1",
    languages: ["en", "ar", "de", "es", "fr", "hi", "it", "ja", "pt"],
    // The 8 complex types; 'generic' questions (no complex type) come on top.
    complexityTypes: ["comparative", "count", "difference", "intersection", "multihop", "ordinal", "superlative", "yesno"],
  },
  {
    name: "wikireading",
    displayName: "WikiReading",
    family: "Machine Reading",
    kilt: false,
    aliases: ["wiki-reading"],
    // The streamed-JSON releases (one object per line, in shards inside each archive; the TFRecord
    // ones are train.tar.gz etc.); counts are instances; the validation split is `dev` (docs/wikireading.md).
    splits: {
      train: { file: "train.json.tar.gz", records: 16_039_400, url: `${WIKIREADING_URL_BASE}train.json.tar.gz`, hasAnswers: true, hasInput: true },
      dev: { file: "validation.json.tar.gz", records: 1_886_798, url: `${WIKIREADING_URL_BASE}validation.json.tar.gz`, hasAnswers: true, hasInput: true },
      test: { file: "test.json.tar.gz", records: 941_280, url: `${WIKIREADING_URL_BASE}test.json.tar.gz`, hasAnswers: true, hasInput: true },
    },
    metric: "mean-f1",
  },
  {
    name: "squad",
    displayName: "SQuAD v1.1",
    // Its runs here retrieve over its 48 articles, then read (open-book): not closed-book QA.
    family: "Open Domain QA",
    kilt: false,
    aliases: ["squad1.1", "squad-v1.1"],
    splits: {
      dev: { file: "dev-v1.1.json", records: 10_570, hasAnswers: true, hasInput: true },
    },
    metric: "em",
    // The 48 dev articles are the small real knowledge source (`tartan ks from-squad`), the questions
    // KILT records (`tartan datasets convert squad`): docs/knowledge-build.md.
    articles: 48,
  },
];

/** The dataset called `name` (its short name, an alias, its display or config name; any case), or undefined. */
export function findDataset(name: string): Dataset | undefined {
  const key = name.trim().toLowerCase();
  return DATASETS.find(
    (d) =>
      d.name === key ||
      d.aliases.includes(key) ||
      d.displayName.toLowerCase() === key ||
      d.configName?.toLowerCase() === key,
  );
}

/** A released file identified: its dataset, split and catalogue entry. */
export interface DatasetFile {
  dataset: Dataset;
  split: Split;
  splitFile: SplitFile;
}

/**
 * The dataset and split of a KILT file name (`nq-dev-kilt.jsonl`, `triviaqa-dev_id-kilt.jsonl`), given
 * as a bare name or a path, optionally ending in `.gz`; undefined for any other name.
 */
export function datasetForFile(fileName: string): DatasetFile | undefined {
  const name = basename(fileName).replace(/\.gz$/, "");
  for (const dataset of DATASETS) {
    if (!dataset.kilt) continue;
    for (const split of SPLITS) {
      const splitFile = dataset.splits[split];
      if (splitFile && (splitFile.file === name || splitFile.otherFiles?.includes(name))) return { dataset, split, splitFile };
    }
  }
  return undefined;
}

/** Where a dataset's split lives under `dataDir` (the released file name). Throws for an unknown dataset or split. */
export function localPath(dataset: Dataset | string, split: Split, dataDir: string): string {
  const d = typeof dataset === "string" ? findDataset(dataset) : dataset;
  if (!d) throw new Error(`unknown dataset: ${String(dataset)}`);
  const splitFile = d.splits[split];
  if (!splitFile) throw new Error(`${d.name} has no ${split} split`);
  return join(dataDir, splitFile.file);
}

/** The catalogue as table rows: a header, one row per dataset; extras still being filled in are marked with `*`. */
export function catalogueRows(datasets: readonly Dataset[] = DATASETS): string[][] {
  const header = ["name", "dataset", "task", ...SPLITS, "metric"];
  const rows = datasets.map((d) => [
    d.pending ? `${d.name}*` : d.name,
    d.displayName,
    d.family,
    ...SPLITS.map((s) => d.splits[s]?.records.toLocaleString("en-US") ?? "-"),
    d.kiltMetric ? `${d.metric} (${d.kiltMetric})` : d.metric,
  ]);
  return [header, ...rows];
}
