// A local ONNX model directory with a file missing: the error names the directory and the file
// (transformers.js alone says "Cannot read properties of undefined (reading 'tokenizer_class')").

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OnnxQaReader } from "../../src/readers/onnx/reader.js";
import { writeModelDir } from "../fixtures/readers/tiny-onnx.js";
import { BERT_TOKENIZER_CONFIG, bertTokenizerJson, buildVocab } from "../fixtures/readers/wordpiece.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function modelDir(): string {
  const vocab = buildVocab(["Denver Broncos won Super Bowl 50."]);
  const dir = mkdtempSync(join(tmpdir(), "tartan-model-dir-"));
  dirs.push(dir);
  writeModelDir(dir, bertTokenizerJson(vocab), BERT_TOKENIZER_CONFIG, vocab.map(() => 0), vocab.map(() => 0));
  return dir;
}

describe("a model directory missing a file", () => {
  it("names the directory and the missing tokenizer_config.json", async () => {
    const dir = modelDir();
    rmSync(join(dir, "tokenizer_config.json"));
    await expect(OnnxQaReader.load({ model: dir })).rejects.toThrow(
      `${dir}: not a complete model directory: tokenizer_config.json is missing (a model directory holds config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx)`,
    );
  });

  it("names every missing file", async () => {
    const dir = modelDir();
    rmSync(join(dir, "tokenizer.json"));
    rmSync(join(dir, "onnx", "model.onnx"));
    await expect(OnnxQaReader.load({ model: dir })).rejects.toThrow(`${dir}: not a complete model directory: tokenizer.json, onnx/model.onnx are missing`);
  });
});
