// Checks a local transformers.js model directory before loading it, so a missing file is named
// ("tokenizer_config.json is missing") instead of surfacing as a library crash ("Cannot read
// properties of undefined (reading 'tokenizer_class')").

import { existsSync } from "node:fs";
import { join } from "node:path";

/** The ONNX weights file transformers.js loads for each dtype. */
const WEIGHTS: Record<string, string> = {
  fp32: "model.onnx",
  fp16: "model_fp16.onnx",
  q8: "model_quantized.onnx",
  int8: "model_int8.onnx",
  uint8: "model_uint8.onnx",
  q4: "model_q4.onnx",
  q4f16: "model_q4f16.onnx",
  bnb4: "model_bnb4.onnx",
};

/** Throws, naming the directory and every missing file, unless `dir` holds a loadable model. */
export function assertModelDir(dir: string, dtype = "fp32"): void {
  const need = ["config.json", "tokenizer.json", "tokenizer_config.json", join("onnx", WEIGHTS[dtype] ?? "model.onnx")];
  const missing = need.filter((f) => !existsSync(join(dir, f)));
  if (missing.length > 0)
    throw new Error(`${dir}: not a complete model directory: ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} missing (a model directory holds ${need.join(", ")})`);
}
