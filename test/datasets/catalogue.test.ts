// Tests for the dataset catalogue: the counts and names of kilt-spec.md §1.2, lookups, and that every
// real KILT file in ../shared/data maps to its dataset and split.

import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { DATASETS, KILT_URL_BASE, catalogueRows, datasetForFile, findDataset, localPath } from "../../src/datasets/catalogue.js";

const DATA = fileURLToPath(new URL("../../../shared/data/", import.meta.url));
const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));

describe("the KILT datasets", () => {
  const kilt = DATASETS.filter((d) => d.kilt);

  it("are the 11 of the benchmark, with their families and headline metrics", () => {
    expect(kilt.map((d) => [d.name, d.family, d.metric, d.kiltMetric])).toEqual([
      ["fever", "Fact Checking", "accuracy", "KILT-accuracy"],
      ["aidayago2", "Entity Linking", "accuracy", "KILT-accuracy"],
      ["wned", "Entity Linking", "accuracy", "KILT-accuracy"],
      ["cweb", "Entity Linking", "accuracy", "KILT-accuracy"],
      ["trex", "Slot Filling", "accuracy", "KILT-accuracy"],
      ["zsre", "Slot Filling", "accuracy", "KILT-accuracy"],
      ["nq", "Open Domain QA", "em", "KILT-em"],
      ["hotpotqa", "Open Domain QA", "em", "KILT-em"],
      ["triviaqa", "Open Domain QA", "em", "KILT-em"],
      ["eli5", "Open Domain QA", "rougel", "KILT-rougel"],
      ["wow", "Dialogue", "f1", "KILT-f1"],
    ]);
  });

  it("have the released file names and record counts", () => {
    const table = Object.fromEntries(
      kilt.map((d) => [d.name, [d.splits.train?.file, d.splits.train?.records, d.splits.dev?.file, d.splits.dev?.records, d.splits.test?.file, d.splits.test?.records]]),
    );
    expect(table).toEqual({
      fever: ["fever-train-kilt.jsonl", 104966, "fever-dev-kilt.jsonl", 10444, "fever-test_without_answers-kilt.jsonl", 10100],
      aidayago2: ["aidayago2-train-kilt.jsonl", 18395, "aidayago2-dev-kilt.jsonl", 4784, "aidayago2-test_without_answers-kilt.jsonl", 4463],
      wned: [undefined, undefined, "wned-dev-kilt.jsonl", 3396, "wned-test_without_answers-kilt.jsonl", 3376],
      cweb: [undefined, undefined, "cweb-dev-kilt.jsonl", 5599, "cweb-test_without_answers-kilt.jsonl", 5543],
      trex: ["trex-train-kilt.jsonl", 2284168, "trex-dev-kilt.jsonl", 5000, "trex-test_without_answers-kilt.jsonl", 5000],
      zsre: [
        "structured_zeroshot-train-kilt.jsonl", 147909,
        "structured_zeroshot-dev-kilt.jsonl", 3724,
        "structured_zeroshot-test_without_answers-kilt.jsonl", 4966,
      ],
      nq: ["nq-train-kilt.jsonl", 87372, "nq-dev-kilt.jsonl", 2837, "nq-test_without_answers-kilt.jsonl", 1444],
      hotpotqa: ["hotpotqa-train-kilt.jsonl", 88869, "hotpotqa-dev-kilt.jsonl", 5600, "hotpotqa-test_without_answers-kilt.jsonl", 5569],
      triviaqa: ["triviaqa-train_id-kilt.jsonl", 61844, "triviaqa-dev_id-kilt.jsonl", 5359, "triviaqa-test_id_without_answers-kilt.jsonl", 6586],
      eli5: ["eli5-train-kilt.jsonl", 272634, "eli5-dev-kilt.jsonl", 1507, "eli5-test_without_answers-kilt.jsonl", 600],
      wow: ["wow-train-kilt.jsonl", 63734, "wow-dev-kilt.jsonl", 3054, "wow-test_without_answers-kilt.jsonl", 2944],
    });
  });

  it("download from the KILT bucket, test files without answers, TriviaQA without input", () => {
    const files = kilt.flatMap((d) => Object.values(d.splits));
    expect(files.length).toBe(31);
    expect(files.every((f) => f.url === KILT_URL_BASE + f.file && f.sha256 === undefined)).toBe(true);
    expect(findDataset("nq")?.splits.dev?.url).toBe("http://dl.fbaipublicfiles.com/KILT/nq-dev-kilt.jsonl");
    expect(files.filter((f) => !f.hasAnswers).map((f) => f.file)).toHaveLength(11);
    expect(files.filter((f) => !f.hasInput).map((f) => f.file)).toEqual([
      "triviaqa-train_id-kilt.jsonl",
      "triviaqa-dev_id-kilt.jsonl",
      "triviaqa-test_id_without_answers-kilt.jsonl",
    ]);
  });
});

describe("the extra datasets", () => {
  it("are complete: none is marked pending", () => {
    const mintaka = findDataset("mintaka")!;
    expect([mintaka.splits.train?.records, mintaka.splits.dev?.records, mintaka.splits.test?.records]).toEqual([14000, 2000, 4000]);
    expect(mintaka.languages).toHaveLength(9);
    expect(mintaka.complexityTypes).toHaveLength(8);
    expect(mintaka.metric).toBe("hits@1");
    expect(findDataset("wikireading")?.metric).toBe("mean-f1");
    const squad = findDataset("SQuAD v1.1")!;
    // open-book: its runs retrieve over its articles, so the leaderboard shows them under open-domain QA
    expect(squad.family).toBe("Open Domain QA");
    expect([squad.splits.dev?.records, squad.articles]).toEqual([10570, 48]);
    expect(DATASETS.filter((d) => !d.kilt).map((d) => [d.name, d.pending !== undefined])).toEqual([
      ["mintaka", false],
      ["wikireading", false],
      ["squad", false],
    ]);
  });
});

describe("findDataset", () => {
  it("accepts names, aliases, display and config names in any case", () => {
    expect(findDataset("NQ")?.name).toBe("nq");
    expect(findDataset("Natural Questions")?.name).toBe("nq");
    expect(findDataset("structured_zeroshot")?.name).toBe("zsre");
    expect(findDataset("Zero Shot RE")?.name).toBe("zsre");
    expect(findDataset("AIDA-YAGO2")?.name).toBe("aidayago2");
    expect(findDataset("wizard of wikipedia")?.name).toBe("wow");
    expect(findDataset("squad2")).toBeUndefined();
  });

  it("never gives two datasets the same name or alias", () => {
    const keys = DATASETS.flatMap((d) => [d.name, ...d.aliases]);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe("datasetForFile", () => {
  const expectedSplit = (file: string) => (file.includes("-train") ? "train" : file.includes("-dev") ? "dev" : "test");
  const prefixToName: Record<string, string> = { structured_zeroshot: "zsre" };

  it("maps every real file in kilt-samples and kilt-dev to its dataset and split", () => {
    const samples = readdirSync(join(DATA, "kilt-samples")).sort();
    const dev = readdirSync(join(DATA, "kilt-dev")).sort();
    expect(samples).toHaveLength(26); // 9 datasets x 3 splits, WNED has no train split
    expect(dev).toEqual(["hotpotqa-dev-kilt.jsonl", "wow-dev-kilt.jsonl"]);
    for (const file of [...samples, ...dev]) {
      const found = datasetForFile(file);
      const prefix = file.split("-")[0];
      expect([file, found?.dataset.name, found?.split]).toEqual([file, prefixToName[prefix] ?? prefix, expectedSplit(file)]);
      expect(found?.splitFile.file).toBe(file);
    }
  });

  it("takes paths, .gz names and TriviaQA's names after get_triviaqa_input.py", () => {
    const tqa = datasetForFile("/data/kilt/triviaqa-dev_id-kilt.jsonl");
    expect([tqa?.dataset.name, tqa?.split]).toEqual(["triviaqa", "dev"]);
    const filled = datasetForFile("triviaqa-test_without_answers-kilt.jsonl");
    expect([filled?.dataset.name, filled?.split, filled?.splitFile.file]).toEqual(["triviaqa", "test", "triviaqa-test_id_without_answers-kilt.jsonl"]);
    const gz = datasetForFile("guesses/nq-dev-kilt.jsonl.gz");
    expect([gz?.dataset.name, gz?.split]).toEqual(["nq", "dev"]);
  });

  it("rejects other names", () => {
    expect(datasetForFile("nq-dev.jsonl")).toBeUndefined();
    expect(datasetForFile("wned-train-kilt.jsonl")).toBeUndefined();
    expect(datasetForFile("mintaka_dev.json")).toBeUndefined();
    expect(datasetForFile("xnq-dev-kilt.jsonl")).toBeUndefined();
  });
});

describe("localPath", () => {
  it("joins the data directory and the released file name", () => {
    expect(localPath("hotpotqa", "dev", join(DATA, "kilt-dev"))).toBe(join(DATA, "kilt-dev", "hotpotqa-dev-kilt.jsonl"));
    expect(localPath(findDataset("triviaqa")!, "test", "/d")).toBe("/d/triviaqa-test_id_without_answers-kilt.jsonl");
    expect(localPath("mintaka", "dev", join(DATA, "mintaka"))).toBe(join(DATA, "mintaka", "mintaka_dev.json"));
  });

  it("throws for a missing split or an unknown dataset", () => {
    expect(() => localPath("wned", "train", "/d")).toThrow("wned has no train split");
    expect(() => localPath("nope", "dev", "/d")).toThrow("unknown dataset: nope");
  });
});

describe("tartan datasets", () => {
  it("has one row per dataset with the counts of each split", () => {
    const rows = catalogueRows();
    expect(rows[0]).toEqual(["name", "dataset", "task", "train", "dev", "test", "metric"]);
    expect(rows).toHaveLength(15);
    expect(rows.find((r) => r[0] === "trex")).toEqual(["trex", "T-REx", "Slot Filling", "2,284,168", "5,000", "5,000", "accuracy (KILT-accuracy)"]);
    expect(rows.find((r) => r[0] === "wned")?.slice(3, 6)).toEqual(["-", "3,396", "3,376"]);
    expect(rows.find((r) => r[0] === "squad")?.slice(3, 7)).toEqual(["-", "10,570", "-", "em"]);
  });

  it("prints an aligned table, and JSON with --json", () => {
    const out = execFileSync("node", [CLI, "datasets"], { encoding: "utf8" });
    const lines = out.trimEnd().split("\n");
    expect(lines).toHaveLength(15); // header and 14 datasets; no footnote when nothing is pending
    expect(out).not.toContain("later work");
    expect(lines[0]).toMatch(/^name\s+dataset\s+task\s+train\s+dev\s+test\s+metric$/);
    expect(lines[5]).toBe("trex         T-REx                Slot Filling      2,284,168      5,000    5,000  accuracy (KILT-accuracy)");
    const metricColumn = lines[0].indexOf("metric");
    expect(lines.slice(1, 15).map((l) => l.slice(metricColumn))).toEqual(catalogueRows().slice(1).map((r) => r[6]));
    const json = JSON.parse(execFileSync("node", [CLI, "datasets", "--json"], { encoding: "utf8" })) as { name: string; splits: { dev?: { records: number } } }[];
    expect(json.map((d) => d.name)).toEqual(DATASETS.map((d) => d.name));
    expect(json.find((d) => d.name === "wow")?.splits.dev?.records).toBe(3054);
  });

  it("prints exactly the table docs/datasets.md shows", () => {
    const doc = readFileSync(fileURLToPath(new URL("../../docs/datasets.md", import.meta.url)), "utf8");
    const shown = /```\n\$ tartan datasets\n([\s\S]*?)```\n/.exec(doc)?.[1];
    expect(shown).toBe(execFileSync("node", [CLI, "datasets"], { encoding: "utf8" }));
  });
});
