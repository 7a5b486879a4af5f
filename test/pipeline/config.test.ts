// A pipeline run's settings: a PIPELINE.json read with errors naming the file and the field, merged with
// command-line values, checked before anything runs; readers opened by kind from the one registry.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readPipelineConfig, resolvePipelineConfig } from "../../src/pipeline/config.js";
import { openReader, READER_KINDS } from "../../src/readers/open.js";
import { DialogueReader } from "../../src/readers/tasks/dialogue.js";

const dir = mkdtempSync(join(tmpdir(), "tartan-pipeline-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const input = join(dir, "in.jsonl");
writeFileSync(input, '{"id": "q1", "input": "who?"}\n');

function configFile(name: string, text: string): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

describe("pipeline config", () => {
  it("reads the fields and names the file and the field of a bad one", () => {
    const ok = configFile("ok.json", JSON.stringify({ input, out: "o.jsonl", reader: "dialogue", index: ["a", "b"], topK: 50, evaluate: false }));
    expect(readPipelineConfig(ok)).toEqual({ input, out: "o.jsonl", reader: "dialogue", index: ["a", "b"], topK: 50, evaluate: false });
    const cases: [string, string][] = [
      ["{ not json", "not valid JSON ("],
      ["[]", "a pipeline config is a JSON object"],
      ['{"readr": "dialogue"}', 'unknown field "readr" (the fields: input, out, reader, model, baseUrl, text, reranker, topK, readerK, workers, rerankDepth, index, evaluate)'],
      ['{"topK": 0}', "topK must be a positive integer"],
      ['{"workers": 1.5}', "workers must be a positive integer"],
      ['{"input": 3}', "input must be a string"],
      ['{"index": "dir"}', "index must be a list of index directories or URLs"],
      ['{"evaluate": "no"}', "evaluate must be true or false"],
    ];
    cases.forEach(([text, message], i) => {
      const f = configFile(`bad${i}.json`, text);
      expect(() => readPipelineConfig(f)).toThrow(`${f}: ${message}`);
    });
    expect(() => readPipelineConfig(join(dir, "missing.json"))).toThrow(`${join(dir, "missing.json")}: cannot read the pipeline config (ENOENT)`);
  });

  it("merges flags over the file's names and the file's numbers over the flags' defaults, then checks", () => {
    const c = resolvePipelineConfig(
      { input, out: join(dir, "flag-out.jsonl"), reader: "dialogue", topK: "20", readerK: "5", workers: "1", evaluate: true },
      { out: join(dir, "file-out.jsonl"), topK: 7, text: "none", evaluate: false },
    );
    expect(c).toEqual({ input, out: join(dir, "flag-out.jsonl"), index: undefined, reader: "dialogue", model: undefined, baseUrl: undefined, topK: 7, readerK: 5, workers: 1, evaluate: false, text: "none" });
    const base = { input, out: join(dir, "o.jsonl"), reader: "dialogue" };
    expect(() => resolvePipelineConfig({ input, out: join(dir, "o.jsonl") })).toThrow("--input, --out and --reader are required");
    expect(() => resolvePipelineConfig({ ...base, reader: "bart" })).toThrow(`unknown reader "bart": one of ${READER_KINDS.join(", ")}`);
    expect(() => resolvePipelineConfig({ ...base, text: "some" })).toThrow("--text must be one of full, cited, none");
    expect(() => resolvePipelineConfig({ ...base, readerK: "0" })).toThrow("--reader-k must be a positive integer");
    expect(() => resolvePipelineConfig({ ...base, input: join(dir, "none.jsonl") })).toThrow(`${join(dir, "none.jsonl")}: no such file`);
    expect(() => resolvePipelineConfig({ ...base, out: input })).toThrow(input);
    // a reranker: from the flags or the file, its depth a positive integer, with an index to rerank
    const spec = "llm-listwise:model=m,window=20";
    expect(resolvePipelineConfig({ ...base, index: ["idx"], reranker: spec, rerankDepth: "50" })).toMatchObject({ reranker: spec, rerankDepth: 50 });
    expect(resolvePipelineConfig({ ...base }, { index: ["idx"], reranker: spec, rerankDepth: 30 })).toMatchObject({ reranker: spec, rerankDepth: 30 });
    expect(() => resolvePipelineConfig({ ...base, index: ["idx"], rerankDepth: "50" })).toThrow("--rerank-depth goes with --reranker");
    expect(() => resolvePipelineConfig({ ...base, index: ["idx"], reranker: spec, rerankDepth: "0" })).toThrow("--rerank-depth must be a positive integer");
    expect(() => resolvePipelineConfig({ ...base, reranker: spec })).toThrow("--reranker reranks retrieved passages: give --index");
    const file = configFile("self.json", "{}");
    expect(() => resolvePipelineConfig({ ...base, out: file }, {}, file)).toThrow(file);
  });

  it("opens readers by kind and says what a kind needs", async () => {
    expect(await openReader("dialogue")).toBeInstanceOf(DialogueReader);
    await expect(openReader("extractive")).rejects.toThrow("--reader extractive needs --model (a model file from tartan reader train)");
    await expect(openReader("onnx")).rejects.toThrow("--reader onnx needs --model (a local ONNX QA model directory)");
    await expect(openReader("bart")).rejects.toThrow(`unknown reader "bart": one of ${READER_KINDS.join(", ")}`);
  });
});
