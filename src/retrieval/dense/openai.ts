// An OpenAI-compatible embeddings endpoint as an encoder: `POST {baseUrl}/embeddings` with
// `{model, input: [...], encoding_format: "float", dimensions?}`, rows taken by their `index`. The key
// comes from the options or from the environment variable the spec names (OPENAI_API_KEY by default) and
// is never written to a manifest. 429 and 5xx answers are retried (3 tries, growing pauses).

import type { Encoder, OpenAISpec } from "./encoder-types.js";
import { normalizeRows } from "./vectors.js";

/** Options of an {@link OpenAIEncoder} that are not recorded in the manifest. */
export interface OpenAIOptions {
  /** Overrides the environment variable. */
  apiKey?: string;
  /** Tries per request for 429/5xx and network errors; default 3. */
  tries?: number;
  /** First pause between tries in ms (doubles each time); default 500. */
  retryDelayMs?: number;
}

interface EmbeddingsResponse {
  data?: { index?: number; embedding?: unknown }[];
  error?: { message?: string };
}

/** An OpenAI-compatible `/embeddings` endpoint as an {@link Encoder}. */
export class OpenAIEncoder implements Encoder {
  private size = 0;
  private readonly url: string;
  private readonly key: string | undefined;

  constructor(
    readonly spec: OpenAISpec,
    private readonly options: OpenAIOptions = {},
  ) {
    if (!spec.baseUrl) throw new Error("openai encoder: baseUrl is required");
    if (!spec.model) throw new Error("openai encoder: model is required");
    this.url = `${spec.baseUrl.replace(/\/+$/, "")}/embeddings`;
    this.key = options.apiKey ?? process.env[spec.apiKeyEnv ?? "OPENAI_API_KEY"];
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
    const batch = Math.max(1, this.spec.batchSize ?? 128);
    const parts: Float32Array[] = [];
    for (let s = 0; s < texts.length; s += batch) parts.push(await this.request(texts.slice(s, s + batch).map((t) => prefix + t)));
    const out = new Float32Array(texts.length * this.size);
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return normalizeRows(out, this.size || 1);
  }

  private async request(input: string[]): Promise<Float32Array> {
    const body: Record<string, unknown> = { model: this.spec.model, input, encoding_format: "float" };
    if (this.spec.dimensions !== undefined) body.dimensions = this.spec.dimensions;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    const tries = Math.max(1, this.options.tries ?? 3);
    let delay = this.options.retryDelayMs ?? 500;
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(this.url, { method: "POST", headers, body: JSON.stringify(body) });
      } catch (e) {
        if (attempt >= tries) throw new Error(`${this.url}: ${e instanceof Error ? e.message : String(e)}`);
        await new Promise((r) => setTimeout(r, delay));
        delay *= 2;
        continue;
      }
      const text = await res.text();
      if (!res.ok) {
        if ((res.status === 429 || res.status >= 500) && attempt < tries) {
          await new Promise((r) => setTimeout(r, delay));
          delay *= 2;
          continue;
        }
        let message = text.slice(0, 300);
        try {
          message = (JSON.parse(text) as EmbeddingsResponse).error?.message ?? message;
        } catch {
          /* not JSON */
        }
        throw new Error(`${this.url}: HTTP ${res.status}: ${message}`);
      }
      return this.parse(text, input.length);
    }
  }

  private parse(text: string, n: number): Float32Array {
    let json: EmbeddingsResponse;
    try {
      json = JSON.parse(text) as EmbeddingsResponse;
    } catch {
      throw new Error(`${this.url}: answer is not JSON`);
    }
    const data = json.data;
    if (!Array.isArray(data) || data.length !== n) throw new Error(`${this.url}: expected ${n} embeddings, got ${Array.isArray(data) ? data.length : "none"}`);
    const rows: number[][] = new Array(n);
    data.forEach((d, i) => {
      const idx = d.index ?? i;
      if (!Number.isInteger(idx) || idx < 0 || idx >= n || rows[idx]) throw new Error(`${this.url}: bad or repeated embedding index ${idx}`);
      if (!Array.isArray(d.embedding) || !d.embedding.every((x) => typeof x === "number")) throw new Error(`${this.url}: embedding ${idx} is not an array of numbers`);
      rows[idx] = d.embedding as number[];
    });
    const dim = rows[0]?.length ?? 0;
    if (dim === 0 || rows.some((r) => r.length !== dim)) throw new Error(`${this.url}: embeddings of different or zero sizes`);
    if (this.size !== 0 && dim !== this.size) throw new Error(`${this.url}: embedding size changed from ${this.size} to ${dim}`);
    this.size = dim;
    const out = new Float32Array(n * dim);
    rows.forEach((r, i) => out.set(r, i * dim));
    return out;
  }

  /** Nothing to release (one HTTP request per batch). */
  async close(): Promise<void> {}
}
