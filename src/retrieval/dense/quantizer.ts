// The trained part of a compressed dense index, learned from a sample of the corpus's vectors:
//   - a two-level coarse quantizer (k1 top centroids, k2 under each: k1·k2 lists), so assigning a vector
//     costs (k1 + k2) inner products instead of k1·k2 — what makes a 22M-vector build fit in hours;
//   - per-dimension int8 scalar quantization (min/max of the sample) for the rescoring vectors;
//   - the sample mean;
//   - the codes the lists are scanned with: a code type of ./codes/registry.ts (binary, PQ, 4-bit PQ,
//     int8), trained here after the coarse quantizer and stored after it.
// `Quantizer` encodes batches and is saved as `quantizer.bin` (./ivf-files.ts): a header (the code type's
// name as `kind`, dim, k1, k2 and the code type's own fields), then top, sub, mean, the int8 scaling and
// the code type's floats.

import { closeSync, openSync } from "node:fs";
import { assignByDot, kmeans } from "./kmeans.js";
import { IVF_FORMAT, IVF_FORMAT_VERSION, headerBytes, openIvfFile, readAll, writeAll } from "./ivf-files.js";
import { codeTypes, type QuantizeKind } from "./codes/registry.js";
import type { CoarseLists, Codec } from "./codes/code-type.js";

export { QUANTIZE_KINDS, type QuantizeKind } from "./codes/registry.js";

/** Training parameters. */
export interface QuantizerParams {
  quantize: QuantizeKind;
  /** Top-level coarse centroids (default: about the fourth root of 16·n). */
  k1?: number;
  /** Centroids under each top centroid (default: k1). */
  k2?: number;
  /** PQ sub-spaces (default dim / 8 for pq, dim / 4 for pq4, so codes take as many bytes as binary codes). */
  pqM?: number;
  /** k-means iterations (default 8). */
  iterations?: number;
  seed?: number;
}

/** The coarse list count for `n` vectors: about 4·√n as k1 × k2 with k1 = k2. */
export function defaultK(n: number): number {
  return Math.max(1, Math.min(256, Math.round(Math.sqrt(4 * Math.sqrt(Math.max(1, n))))));
}

/** The list of each row of `xs` (nearest top centroid, then nearest of its sub-centroids). */
function assignLists(top: Float32Array, sub: Float32Array, dim: number, k1: number, k2: number, xs: Float32Array): Int32Array {
  const n = xs.length / dim;
  const topOf = assignByDot(top, dim, xs);
  const out = new Int32Array(n);
  const groups: number[][] = Array.from({ length: k1 }, () => []);
  for (let i = 0; i < n; i++) groups[topOf[i]].push(i);
  for (let c = 0; c < k1; c++) {
    const g = groups[c];
    if (g.length === 0) continue;
    const part = new Float32Array(g.length * dim);
    for (let j = 0; j < g.length; j++) part.set(xs.subarray(g[j] * dim, (g[j] + 1) * dim), j * dim);
    const a = assignByDot(sub.subarray(c * k2 * dim, (c + 1) * k2 * dim), dim, part);
    for (let j = 0; j < g.length; j++) out[g[j]] = c * k2 + a[j];
  }
  return out;
}

export class Quantizer implements CoarseLists {
  readonly lists: number;

  constructor(
    readonly dim: number,
    readonly k1: number,
    readonly k2: number,
    readonly top: Float32Array,
    readonly sub: Float32Array,
    readonly mean: Float32Array,
    readonly sqLo: Float32Array,
    readonly sqScale: Float32Array,
    /** The trained code type the lists are scanned with. */
    readonly codes: Codec,
  ) {
    this.lists = k1 * k2;
  }

  /** The code type's name. */
  get kind(): QuantizeKind {
    return this.codes.kind as QuantizeKind;
  }

  /** Bytes of one row's code (0: none). */
  get codeBytes(): number {
    return this.codes.codeBytes;
  }

  /** Trains on `sample` (`n × dim`, unit vectors). */
  static train(sample: Float32Array, dim: number, p: QuantizerParams, corpusSize: number): Quantizer {
    const type = codeTypes.get(p.quantize, "quantize");
    const n = sample.length / dim;
    const k1 = p.k1 ?? defaultK(corpusSize);
    const k2 = p.k2 ?? k1;
    const seed = p.seed ?? 1234;
    const iterations = p.iterations ?? 8;
    const top = kmeans(sample, dim, k1, { metric: "dot", iterations, seed });
    const topOf = n > 0 ? assignByDot(top, dim, sample) : new Int32Array(0);
    const sub = new Float32Array(k1 * k2 * dim);
    for (let c = 0; c < k1; c++) {
      let m = 0;
      for (let i = 0; i < n; i++) if (topOf[i] === c) m++;
      const members = new Float32Array(m * dim);
      m = 0;
      for (let i = 0; i < n; i++) if (topOf[i] === c) members.set(sample.subarray(i * dim, (i + 1) * dim), dim * m++);
      // a top cluster with no sample rows keeps its own centroid for every sub-list
      const s = m > 0 ? kmeans(members, dim, k2, { metric: "dot", iterations, seed: seed + 1 + c }) : new Float32Array(k2 * dim).map((_, j) => top[c * dim + (j % dim)]);
      sub.set(s, c * k2 * dim);
    }
    const mean = new Float32Array(dim);
    const lo = new Float32Array(dim).fill(Infinity);
    const hi = new Float32Array(dim).fill(-Infinity);
    for (let i = 0; i < n; i++) {
      for (let d = 0; d < dim; d++) {
        const v = sample[i * dim + d];
        mean[d] += v / n;
        if (v < lo[d]) lo[d] = v;
        if (v > hi[d]) hi[d] = v;
      }
    }
    const scale = new Float32Array(dim);
    for (let d = 0; d < dim; d++) {
      if (!(hi[d] > lo[d])) {
        lo[d] = n > 0 ? lo[d] : -1;
        hi[d] = lo[d] + 1e-6;
      }
      scale[d] = (hi[d] - lo[d]) / 255;
    }
    const coarse: CoarseLists = { dim, lists: k1 * k2, sub, mean };
    const codes = type.train({ sample, coarse, assign: (xs) => assignLists(top, sub, dim, k1, k2, xs), pqM: p.pqM, iterations, seed });
    return new Quantizer(dim, k1, k2, top, sub, mean, lo, scale, codes);
  }

  /** The list of each row of `xs` (nearest top centroid, then nearest of its sub-centroids). */
  assign(xs: Float32Array): Int32Array {
    return assignLists(this.top, this.sub, this.dim, this.k1, this.k2, xs);
  }

  /** Codes of the rows of `xs` in their lists (`n × codeBytes`; empty for int8). */
  encode(xs: Float32Array, lists: Int32Array): Uint8Array {
    return this.codes.encode(xs, lists, this);
  }

  /** int8 rescoring rows of `xs` (`n × dim`). */
  int8Rows(xs: Float32Array): Int8Array {
    const dim = this.dim;
    const out = new Int8Array(xs.length);
    for (let i = 0; i < xs.length; i++) {
      const d = i % dim;
      const c = Math.round((xs[i] - this.sqLo[d]) / this.sqScale[d]) - 128;
      out[i] = c < -128 ? -128 : c > 127 ? 127 : c;
    }
    return out;
  }

  /** What a query needs to score int8 rows: `q ⊙ scale` and the constant `Σ q (lo + 128·scale)`. */
  int8Query(q: Float32Array, qo: number): { weights: Float32Array; bias: number } {
    const w = new Float32Array(this.dim);
    let bias = 0;
    for (let d = 0; d < this.dim; d++) {
      w[d] = q[qo + d] * this.sqScale[d];
      bias += q[qo + d] * (this.sqLo[d] + 128 * this.sqScale[d]);
    }
    return { weights: w, bias };
  }

  /** Saves to `path` with the build id. */
  save(path: string, build: string): void {
    const parts = [this.top, this.sub, this.mean, this.sqLo, this.sqScale, this.codes.stored];
    const floats = parts.reduce((s, p) => s + p.length, 0);
    const h = headerBytes({ format: IVF_FORMAT, version: IVF_FORMAT_VERSION, file: "quantizer", build, rows: floats, rowBytes: 4, kind: this.kind, dim: this.dim, k1: this.k1, k2: this.k2, ...this.codes.header });
    const fd = openSync(path, "wx");
    try {
      writeAll(fd, h, null, path);
      for (const p of parts) writeAll(fd, new Uint8Array(p.buffer, p.byteOffset, p.byteLength), null, path);
    } finally {
      closeSync(fd);
    }
  }

  /** Loads `path`, checking it belongs to build `build`. */
  static load(path: string, build: string): Quantizer {
    const { fd, header: h, offset } = openIvfFile(path, { file: "quantizer", build, rowBytes: 4 });
    try {
      const all = new Float32Array(h.rows);
      readAll(fd, new Uint8Array(all.buffer), offset, path);
      const dim = h.dim as number, k1 = h.k1 as number, k2 = h.k2 as number;
      const type = codeTypes.get(h.kind as string, path);
      const sizes = [k1 * dim, k1 * k2 * dim, dim, dim, dim, type.storedFloats(dim, h)];
      if (sizes.reduce((a, b) => a + b, 0) !== h.rows) throw new Error(`${path}: ${h.rows} values, its parameters need ${sizes.reduce((a, b) => a + b, 0)}`);
      const out: Float32Array[] = [];
      let at = 0;
      for (const s of sizes) {
        out.push(all.subarray(at, at + s));
        at += s;
      }
      return new Quantizer(dim, k1, k2, out[0], out[1], out[2], out[3], out[4], type.load(dim, h, out[5]));
    } finally {
      closeSync(fd);
    }
  }

  /** A quantizer from the parts {@link parts} gave (a build worker's copy). */
  static fromParts(p: QuantizerParts): Quantizer {
    return new Quantizer(p.dim, p.k1, p.k2, p.top, p.sub, p.mean, p.sqLo, p.sqScale, codeTypes.get(p.kind).load(p.dim, p.header, p.stored));
  }

  /** Its arrays and the code type's header and floats (structured-cloneable). */
  parts(): QuantizerParts {
    return { kind: this.kind, dim: this.dim, k1: this.k1, k2: this.k2, top: this.top, sub: this.sub, mean: this.mean, sqLo: this.sqLo, sqScale: this.sqScale, header: { ...this.codes.header }, stored: this.codes.stored };
  }
}

/** A trained quantizer's arrays, as a build worker is sent them. */
export interface QuantizerParts {
  kind: QuantizeKind;
  dim: number;
  k1: number;
  k2: number;
  top: Float32Array;
  sub: Float32Array;
  mean: Float32Array;
  sqLo: Float32Array;
  sqScale: Float32Array;
  header: Record<string, number>;
  stored: Float32Array;
}
