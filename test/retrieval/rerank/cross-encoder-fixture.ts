// Runs test/fixtures/cross-encoder/make.py (Debian's python3-onnx and python3-numpy) into a temporary
// directory: a random BERT-shaped sequence classifier as ONNX graphs (one logit, two logits, no
// token_type_ids), its vocab.txt from SQuAD words, and ref.json with the Python tokenizer's pair encodings
// and NumPy's float64 logits of 24 SQuAD questions × 8 of their article's paragraphs. TARTAN_PYTHON picks
// the interpreter (default /usr/bin/python3, Debian's).

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const SQUAD = join(import.meta.dirname, "../../../../shared/data/squad/dev-v1.1.reconstructed.json");
const MAKE = join(import.meta.dirname, "../../fixtures/cross-encoder/make.py");

/** The reference of one maxLength: per item, per passage. */
export interface PairRef {
  ids: number[][][];
  types: number[][][];
  logit: number[][];
  logits2: number[][][];
  noTypes: number[][];
}

export interface CrossEncoderRef {
  items: { query: string; passages: { title: string; text: string }[] }[];
  maxLength: { "128": PairRef; "40": PairRef };
}

/** Generates the fixture; returns its directory and the parsed ref.json. */
export function makeCrossEncoderFixture(): { dir: string; ref: CrossEncoderRef } {
  const python = process.env.TARTAN_PYTHON ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
  const dir = mkdtempSync(join(tmpdir(), "tartan-cross-encoder-"));
  const r = spawnSync(python, [MAKE, "--squad", SQUAD, "--out", dir], { encoding: "utf8", timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${MAKE} failed with ${python} (status ${r.status}; needs apt-get install python3-onnx python3-numpy):\n${r.stderr}${r.error ?? ""}`);
  return { dir, ref: JSON.parse(readFileSync(join(dir, "ref.json"), "utf8")) as CrossEncoderRef };
}
