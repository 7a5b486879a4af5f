// Runs test/fixtures/splade-onnx/make.py (Debian's python3-onnx and python3-numpy) into a temporary
// directory: a random BERT masked-language model as ONNX graphs (with and without token_type_ids, and one
// whose output is not logits), its vocab.txt from SQuAD words, and ref.json with the Python tokenizer's
// ids and NumPy's float64 SPLADE weights; `texts` are encoded too (ref.texts). TARTAN_PYTHON picks the
// interpreter (default /usr/bin/python3, Debian's).

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const SQUAD = join(import.meta.dirname, "../../../../shared/data/squad/dev-v1.1.reconstructed.json");
const MAKE = join(import.meta.dirname, "../../fixtures/splade-onnx/make.py");

/** Reference weights of a set of texts: per text its ids and its non-zero weights. */
export interface SpladeRefPart {
  texts: string[];
  maxLength: number;
  ids: number[][];
  weights: Record<string, number>[];
}

export interface SpladeRef {
  vocabSize: number;
  sample: SpladeRefPart;
  short: SpladeRefPart;
  texts?: SpladeRefPart;
}

/** Generates the fixture (with `texts` encoded at `maxLength` when given); its directory and the parsed ref.json. */
export function makeSpladeFixture(texts?: string[], maxLength = 128): { dir: string; ref: SpladeRef } {
  const python = process.env.TARTAN_PYTHON ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
  const dir = mkdtempSync(join(tmpdir(), "tartan-splade-"));
  const args = [MAKE, "--squad", SQUAD, "--out", dir];
  if (texts) {
    writeFileSync(join(dir, "texts.json"), JSON.stringify(texts));
    args.push("--texts", join(dir, "texts.json"), "--max-length", String(maxLength));
  }
  const r = spawnSync(python, args, { encoding: "utf8", timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${MAKE} failed with ${python} (status ${r.status}; needs apt-get install python3-onnx python3-numpy):\n${r.stderr}${r.error ?? ""}`);
  return { dir, ref: JSON.parse(readFileSync(join(dir, "ref.json"), "utf8")) as SpladeRef };
}

/** The largest absolute difference between two sparse vectors (a term absent from one weighs 0 there). */
export function sparseDiff(got: Record<string, number>, want: Record<string, number>): number {
  let worst = 0;
  for (const t of new Set([...Object.keys(got), ...Object.keys(want)])) worst = Math.max(worst, Math.abs((got[t] ?? 0) - (want[t] ?? 0)));
  return worst;
}
