// JSON files a user names (a reader model, a pipeline config, an index manifest): an error names the
// file and what is wrong with it, and a reader model of the wrong shape is refused before it is used.

import { afterAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExtractiveReader } from "../../src/readers/extractive/reader.js";
import { FEATURE_NAMES } from "../../src/readers/extractive/features.js";
import { readManifest } from "../../src/retrieval/manifest.js";
import { readJsonFile } from "../../src/util/json-file.js";

const dir = mkdtempSync(join(tmpdir(), "tartan-json-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

describe("JSON files", () => {
  it("name the file that cannot be read or is not JSON", () => {
    expect(readJsonFile(file("ok.json", '{"a": [1, 2]}'), "the thing")).toEqual({ a: [1, 2] });
    expect(() => readJsonFile(join(dir, "missing.json"), "the thing")).toThrow(`${join(dir, "missing.json")}: cannot read the thing (ENOENT)`);
    expect(() => readJsonFile(dir, "the thing")).toThrow(`${dir}: cannot read the thing (EISDIR)`);
    const jsonl = file("two.jsonl", '{"id": 1}\n{"id": 2}\n');
    expect(() => readJsonFile(jsonl, "the thing")).toThrow(`${jsonl}: not valid JSON (`);
  });

  it("a reader model: named when it is not one, or when its weights do not fit the features", () => {
    const n = FEATURE_NAMES.length;
    const model = { kind: "tartan-span-ranker", version: 1, features: [...FEATURE_NAMES], mean: Array(n).fill(0), std: Array(n).fill(1), weights: Array(n).fill(0.5) };
    expect(ExtractiveReader.load(file("model.json", JSON.stringify(model))).model.weights.length).toBe(n);
    const cases: [unknown, string][] = [
      [null, "not a tartan span-ranker model (kind undefined)"],
      [{ kind: "x" }, "not a tartan span-ranker model (kind x)"],
      [{ ...model, features: FEATURE_NAMES.slice(1) }, "model features differ from this tartan version's features: retrain the model"],
      [{ ...model, weights: model.weights.slice(1) }, `weights must be ${n} finite numbers, one per feature`],
      [{ ...model, std: [...model.std.slice(1), "1"] }, `std must be ${n} finite numbers, one per feature`],
    ];
    cases.forEach(([json, message], i) => {
      const f = file(`bad${i}.json`, JSON.stringify(json));
      expect(() => ExtractiveReader.load(f)).toThrow(`${f}: ${message}`);
    });
    const kilt = file("nq.jsonl", '{"id": "q1", "input": "who"}\n{"id": "q2", "input": "what"}\n');
    expect(() => ExtractiveReader.load(kilt)).toThrow(`${kilt}: not valid JSON (`);
  });

  it("an index manifest that is not JSON", () => {
    const index = join(dir, "index");
    mkdirSync(index);
    writeFileSync(join(index, "manifest.json"), '{"kind": "bm25",');
    expect(() => readManifest(index)).toThrow(`${join(index, "manifest.json")}: not valid JSON (`);
  });
});
