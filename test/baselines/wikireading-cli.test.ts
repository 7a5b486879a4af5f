// `tartan baseline wikireading train|predict` end to end with `tartan eval --task wikireading`, on the
// hand-written shard and on its converted KILT records.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const SHARD = fileURLToPath(new URL("../fixtures/wikireading/shard.json", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-baseline-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r;
}

describe("tartan baseline wikireading", () => {
  it("bow: trains on the shard, predicts it, and scores the single-answer bound 23/24", () => {
    const model = join(tmp, "bow");
    const guess = join(tmp, "bow.jsonl");
    const t = tartan("baseline", "wikireading", "train", SHARD, "--model", model, "--epochs", "30");
    expect(t.stderr).toContain("16 instances, 9 classes, 190 features");
    expect(t.stderr).toContain(`bow baseline: 16 of 16 instances have one of the 9 answers; model → ${model}`);
    tartan("baseline", "wikireading", "predict", SHARD, "--model", model, "--out", guess);
    expect(readFileSync(guess, "utf8").split("\n")[3]).toBe('{"id":"7186:occupation","input":"Marie Curie [SEP] occupation","output":[{"answer":"physicist"}]}');
    const rep = JSON.parse(tartan("eval", "--task", "wikireading", SHARD, guess, "--train", SHARD, "--json").stdout);
    expect(rep.overall["mean-f1"]).toBeCloseTo(23 / 24, 15);
    expect(rep.categorical["mean-f1"]).toBe(1);
    expect(rep.date["mean-f1"]).toBe(1);
  });

  it("embeddings: trains and predicts from converted KILT records; 3 answers give 8/16", () => {
    const kilt = join(tmp, "wr.jsonl");
    tartan("datasets", "convert", "wikireading", SHARD, "--out", kilt);
    const model = join(tmp, "emb");
    const guess = join(tmp, "emb.jsonl");
    const t = tartan("baseline", "wikireading", "train", kilt, "--model", model, "--features", "embeddings", "--answers", "3", "--epochs", "30");
    expect(t.stderr).toContain("16 instances, 3 classes, 200 features");
    tartan("baseline", "wikireading", "predict", kilt, "--model", model, "--out", guess);
    const rep = JSON.parse(tartan("eval", "--task", "wikireading", kilt, guess, "--train", SHARD, "--json").stdout);
    expect(rep.overall).toEqual({ count: 16, "mean-f1": 0.5 });
  });
});
