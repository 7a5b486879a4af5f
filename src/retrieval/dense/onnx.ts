// Any transformer encoder exported to ONNX, run with `@huggingface/transformers` (onnxruntime-node's CPU
// binary): the model's own tokenizer, then mean pooling under the attention mask or the first ([CLS])
// token, optional L2 normalisation, and configurable query/passage prefixes (E5: "query: ", "passage: ").
// A local directory (config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx) is always
// loaded from disk with remote loading switched off; anything else is taken as a Hugging Face model id
// and needs the network the first time.

import { assertModelDir } from "../../util/model-dir.js";
import { importOptional } from "../../util/optional.js";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Encoder, OnnxSpec } from "./encoder-types.js";
import { normalizeRows } from "./vectors.js";

interface Tensor {
  dims: number[];
  data: Float32Array;
}
type Extractor = ((texts: string[], options: { pooling: "mean" | "cls"; normalize: boolean }) => Promise<Tensor>) & { dispose(): Promise<void> };

/** True when `model` names an existing local directory (loaded offline) rather than a hub id. */
export function isLocalModel(model: string): boolean {
  return existsSync(resolve(model));
}

/** A local ONNX sentence-embedding model as an {@link Encoder} (mean or CLS pooling). */
export class OnnxEncoder implements Encoder {
  private size = 0;

  private constructor(
    readonly spec: OnnxSpec,
    private readonly extractor: Extractor,
  ) {}

  /** Loads the model of `spec` (a local directory is checked for every file it needs first). */
  static async load(spec: OnnxSpec): Promise<OnnxEncoder> {
    const tf = await importOptional<typeof import("@huggingface/transformers")>("@huggingface/transformers", "the ONNX encoder (dense encoder type onnx)");
    const local = isLocalModel(spec.model);
    if (local) {
      tf.env.allowLocalModels = true;
      tf.env.allowRemoteModels = false;
    }
    const model = local ? resolve(spec.model) : spec.model;
    if (local) assertModelDir(model, spec.dtype ?? "fp32");
    const extractor = (await tf.pipeline("feature-extraction", model, {
      dtype: spec.dtype ?? "fp32",
      device: "cpu",
      local_files_only: local,
    })) as unknown as Extractor;
    // Record an absolute path, so the index reopens from any working directory.
    return new OnnxEncoder({ ...spec, model }, extractor);
  }

  get dim(): number {
    return this.size;
  }

  encodeQueries(texts: readonly string[]): Promise<Float32Array> {
    return this.encode(texts, this.spec.queryPrefix ?? "");
  }

  /** Encodes passages (with the spec's passage prefix). */
  encodePassages(texts: readonly string[]): Promise<Float32Array> {
    return this.encode(texts, this.spec.passagePrefix ?? "");
  }

  private async encode(texts: readonly string[], prefix: string): Promise<Float32Array> {
    const batch = Math.max(1, this.spec.batchSize ?? 32);
    const pooling = this.spec.pooling ?? "mean";
    const normalize = this.spec.normalize ?? true;
    const parts: Float32Array[] = [];
    for (let s = 0; s < texts.length; s += batch) {
      const t = await this.extractor(
        texts.slice(s, s + batch).map((x) => prefix + x),
        { pooling, normalize },
      );
      if (t.dims.length !== 2) throw new Error(`${this.spec.model}: pooled output has shape [${t.dims.join(", ")}]`);
      this.size = t.dims[1];
      parts.push(Float32Array.from(t.data));
    }
    const out = new Float32Array(texts.length * this.size);
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return normalize ? normalizeRows(out, this.size || 1) : out;
  }

  /** Releases the ONNX session. */
  async close(): Promise<void> {
    await this.extractor.dispose();
  }
}
