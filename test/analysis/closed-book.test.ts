// Closed-book predictions carry answers and no provenance: `tartan eval` scores the answers, gives KILT
// scores of 0 (no evidence, as in the paper) and skips the retrieval section with a note. Predictions:
// the nearest-neighbour baseline (a real closed-book system: the answer of the most similar train
// question) on SQuAD v1.1 dev split by article.

import { mkdtempSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadQaItems, nearestNeighbourPredictions, splitItems } from "../../src/analysis/overlap.js";
import { evaluate } from "../../src/eval/evaluate.js";
import { readSquadFile, squadQuestionsToKilt } from "../../src/knowledge/squad.js";
import type { KiltRecord } from "../../src/records/types.js";

const V11 = fileURLToPath(new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url));
const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-closed-book-"));

describe("closed-book predictions through the evaluator", async () => {
  const { train, test } = splitItems((await loadQaItems(V11)).items, 24);
  const guesses = nearestNeighbourPredictions(train, test);
  const testIds = new Set(test.map((x) => x.id));
  const gold = squadQuestionsToKilt(readSquadFile(V11)).records.filter((r) => testIds.has(String(r.id)));

  it("scores answers, gives KILT scores of 0 and skips retrieval with a note", async () => {
    expect([gold.length, guesses.length]).toEqual([4874, 4874]);
    expect(guesses.every((g) => !("provenance" in g.output[0]))).toBe(true);
    const r = await evaluate(gold, guesses as KiltRecord[]);
    expect(r.eval_downstream!.downstream.em).toBe(12 / 4874); // the 12 correct NN predictions of the overlap analysis
    expect(r.eval_downstream!.kilt).toEqual({ "KILT-accuracy": 0, "KILT-em": 0, "KILT-f1": 0, "KILT-rougel": 0 });
    expect(r.eval_downstream!.retrieval).toEqual({ Rprec: 0, "recall@5": 0 });
    expect(r.eval_retrieval).toBeNull();
    expect(r.problems.map((p) => [p.severity, p.message])).toContainEqual(["note", "no prediction carries provenance: retrieval metrics skipped"]);
    expect(r.problems.filter((p) => p.severity === "error")).toEqual([]);
  });

  it("does the same from the command line (exit 0, downstream and KILT rows, no retrieval section)", () => {
    const g = join(tmp, "squad-test-gold.jsonl");
    const p = join(tmp, "nn-guess.jsonl");
    writeFileSync(g, gold.map((x) => JSON.stringify(x)).join("\n"));
    writeFileSync(p, guesses.map((x) => JSON.stringify(x)).join("\n"));
    const r = spawnSync("node", [CLI, "eval", g, p, "--json"], { encoding: "utf8" });
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.eval_downstream.downstream.em).toBe(12 / 4874);
    expect(out.eval_downstream.kilt["KILT-em"]).toBe(0);
    expect(out.eval_downstream.retrieval).toEqual({ Rprec: 0, "recall@5": 0 });
    expect(out.eval_retrieval).toBeNull();
    expect(r.stderr).toContain("note    [retrieval] no prediction carries provenance: retrieval metrics skipped");
    const table = spawnSync("node", [CLI, "eval", g, p], { encoding: "utf8" });
    expect(table.stdout).toContain("em          0.0025  0.0000");
    expect(table.stdout).not.toContain("precision@");
  });
});
