// `tartan analyze overlap | recite build | recite score` through the compiled CLI on NQ-open and SQuAD.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const DATA = fileURLToPath(new URL("../../../shared/data/", import.meta.url));
const NQ = join(DATA, "nq-open", "NQ-open.dev.jsonl");
const EQA = join(DATA, "nq-open", "NQ-open.efficientqa.dev.1.1.jsonl");
const SQUAD = join(DATA, "squad", "dev-v1.1.reconstructed.json");
const tmp = mkdtempSync(join(tmpdir(), "tartan-analyze-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const countLines = (f: string) => readFileSync(f, "utf8").split("\n").filter((l) => l.length > 0).length;

describe("tartan analyze overlap", () => {
  it("prints the paper's tables for NQ-open dev vs EfficientQA dev with the nearest-neighbour baseline", () => {
    const nn = join(tmp, "nn.jsonl");
    const pairs = join(tmp, "pairs.jsonl");
    const r = tartan("analyze", "overlap", "--train", NQ, "--test", EQA, "--nn-predictions", nn, "--pairs", pairs);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")).toEqual([
      `nearest-neighbour predictions (answer of the most similar train question): 1800 → ${nn}`,
      `train ${NQ}, test ${EQA}`,
      "train: 3,610 questions, 5,432 distinct normalized answers; test: 1,800 questions",
      "answer overlap (a test answer is a train answer): 451 / 1,800 = 25.1%",
      "question overlap (a train question sharing an answer, TF-IDF cosine ≥ 0.5): 44 / 1,800 = 2.4%",
      "near-duplicate questions (any train question, cosine ≥ 0.8): 20 = 1.1%, 6 of them with a shared answer",
      "predictions: 1,800 test questions predicted; exact match 2.2%",
      "  predictions that are train answers (O_test ∩ G_train): 99.9%; gold answers that are (G_test ∩ G_train): 25.1%",
      "               in train answers     not in train answers",
      "  correct      2.2% (39)            0.0% (0)",
      "  incorrect    97.8% (1,760)        0.1% (1)",
      "  exact match: question overlap 68.2% of 44, answer overlap only 2.2% of 407, no overlap 0.0% of 1,349",
      `64 pairs to check → ${pairs}`,
      "",
    ]);
    expect(countLines(nn)).toBe(1800);
    expect(countLines(pairs)).toBe(64);
    expect(JSON.parse(readFileSync(pairs, "utf8").split("\n")[44])).toMatchObject({ kind: "duplicate", similarity: 1 });
  });

  it("splits SQuAD by article and NQ-open by position with --split", () => {
    const sq = tartan("analyze", "overlap", "--train", SQUAD, "--split", "24", "--json");
    expect(sq.code).toBe(0);
    const j = JSON.parse(sq.stdout);
    expect([j.train.questions, j.test.questions, j.answerOverlap.overlapping, j.questionOverlap.overlapping, j.nearDuplicates.overlapping]).toEqual([5696, 4874, 674, 3, 0]);
    const nq = tartan("analyze", "overlap", "--train", NQ, "--split", "1805");
    expect(nq.stdout.split("\n").slice(0, 5)).toEqual([
      `${NQ} split by item: the first 1805 items train, the rest test`,
      "train: 1,805 questions, 2,890 distinct normalized answers; test: 1,805 questions",
      "answer overlap (a test answer is a train answer): 371 / 1,805 = 20.6%",
      "question overlap (a train question sharing an answer, TF-IDF cosine ≥ 0.5): 60 / 1,805 = 3.3%",
      "near-duplicate questions (any train question, cosine ≥ 0.8): 22 = 1.2%, 11 of them with a shared answer",
    ]);
  });

  it("wants exactly one of --test and --split", () => {
    const r = tartan("analyze", "overlap", "--train", NQ);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("give --test FILE, or --split K");
  });
});

describe("tartan analyze recite", () => {
  const dir = join(tmp, "recite20");
  it("builds the probe and files for the paper's 20-passage subset", () => {
    const r = tartan("analyze", "recite", "build", SQUAD, "--out", dir, "--passages", "20", "--markers", "--qa-split", "16,2,2");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `20 passages, 183 masked answer spans, 378 questions → ${dir} (with <passage>/<question> markers)\n` +
        "QA split by passage: train 16 (318 questions), valid 2 (28), test 2 (32)\n",
    );
    for (const f of ["lm/train.source", "lm/train.target", "lm/valid.source", "lm/valid.target", "lm/test.source", "recite.jsonl"]) expect(countLines(join(dir, f))).toBe(20);
    expect(countLines(join(dir, "qa-bridge", "test.target"))).toBe(32);
  });

  it("scores recitations given one per line or as JSONL by id", () => {
    const probe = join(dir, "recite.jsonl");
    const perfect = tartan("analyze", "recite", "score", "--probe", probe, "--predictions", join(dir, "lm", "valid.target"));
    expect(perfect.stdout).toBe("reciting accuracy: 183 / 183 masked spans = 100.0% (mean per passage 100.0%) over 20 passages; window 10 tokens\n");
    const copy = tartan("analyze", "recite", "score", "--probe", probe, "--predictions", join(dir, "lm", "valid.source"), "--json");
    expect(JSON.parse(copy.stdout)).toMatchObject({ passages: 20, spans: 183, correct: 1 }); // one span and its window recur unmasked
    const ids = readFileSync(probe, "utf8").trim().split("\n").map((l) => JSON.parse(l).id as string);
    const targets = readFileSync(join(dir, "lm", "valid.target"), "utf8").trim().split("\n");
    const jsonl = join(tmp, "recitations.jsonl");
    writeFileSync(jsonl, [JSON.stringify({ id: ids[3], prediction: targets[3] }), JSON.stringify({ id: ids[0], prediction: targets[0] })].join("\n"));
    const partial = tartan("analyze", "recite", "score", "--probe", probe, "--predictions", jsonl, "--json");
    expect(JSON.parse(partial.stdout)).toMatchObject({ passages: 20, missing: 18, accuracy: 1, passageMean: 1 });
  });

  it("refuses a recitation file whose lines do not match the probe", () => {
    const bad = join(tmp, "short.txt");
    writeFileSync(bad, "one line\n");
    const r = tartan("analyze", "recite", "score", "--probe", join(dir, "recite.jsonl"), "--predictions", bad);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("1 lines for 20 probe passages");
  });
});
