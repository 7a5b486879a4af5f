// Runs test/fixtures/bert-onnx/make.py (Debian's python3-onnx and python3-numpy) into a temporary
// directory: a random BERT-shaped ONNX graph, its vocab.txt from SQuAD words, and ref.json with the
// Python WordPiece's token ids and the NumPy reference vectors. TARTAN_PYTHON picks the interpreter
// (default /usr/bin/python3, Debian's, where the packages install; else python3 on the PATH).

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const SQUAD = join(import.meta.dirname, "../../../../shared/data/squad/dev-v1.1.reconstructed.json");
const MAKE = join(import.meta.dirname, "../../fixtures/bert-onnx/make.py");

/** Pooled reference rows of one set of texts (float64 from NumPy), raw and unit length. */
export interface RefVectors {
  texts: string[];
  maxLength: number;
  ids: number[][];
  cls: number[][];
  mean: number[][];
  pooler: number[][];
  clsUnit: number[][];
  meanUnit: number[][];
  poolerUnit: number[][];
}

export interface BertRef {
  hidden: number;
  maxPositions: number;
  vocabSize: number;
  questions: number;
  tokenizer: { texts: string[]; uncased: number[][]; cased: number[][] };
  vectors: RefVectors;
  prefixed: RefVectors & { prefix: string };
  /** model-query.onnx's vectors of the first 50 questions. */
  queryModel: RefVectors;
}

/** Generates the fixture; returns its directory and the parsed ref.json. */
export function makeBertFixture(): { dir: string; ref: BertRef } {
  const python = process.env.TARTAN_PYTHON ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
  const dir = mkdtempSync(join(tmpdir(), "tartan-bert-onnx-"));
  const r = spawnSync(python, [MAKE, "--squad", SQUAD, "--out", dir], { encoding: "utf8", timeout: 300_000 });
  if (r.status !== 0) {
    throw new Error(`${MAKE} failed with ${python} (status ${r.status}; needs apt-get install python3-onnx python3-numpy):\n${r.stderr}${r.error ?? ""}`);
  }
  return { dir, ref: JSON.parse(readFileSync(join(dir, "ref.json"), "utf8")) as BertRef };
}
