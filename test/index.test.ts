// The package entry point exposes every subsystem: records and the evaluator at the top level, the
// rest as namespaces, and they work through it.

import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import * as tartan from "../src/index.js";

const FIX = fileURLToPath(new URL("../../shared/fixtures/eval/probe-p6/", import.meta.url));

describe("package entry", () => {
  it("exports the evaluator and the subsystems", async () => {
    const r = await tartan.evaluate(`${FIX}gold.jsonl`, `${FIX}guess.jsonl`, { ks: [1, 2, 3, 5] });
    expect(r.eval_downstream?.downstream.rougel).toBe(0.46574674853667575);
    expect(tartan.rougeL("the the the cat", "the cat sat on the mat")).toBe(0.2857142816326531);
    expect(typeof tartan.knowledge.KnowledgeSource.open).toBe("function");
    expect(typeof tartan.retrieval.openIndex).toBe("function");
    expect(typeof tartan.readers.ExtractiveReader).toBe("function");
    expect(typeof tartan.pipeline.runPipeline).toBe("function");
    expect(tartan.mapping.kiltWeights(2)).toEqual([0.5, 0.5]);
    expect(typeof tartan.analysis.analyzeOverlap).toBe("function");
    expect(tartan.findDataset("nq")?.splits.dev?.records).toBe(2837);
  });
});
