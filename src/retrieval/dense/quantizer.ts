// The trained part of a compressed dense index, learned from a sample of the corpus's vectors:
//   - a two-level coarse quantizer (k1 top centroids, k2 under each: k1·k2 lists), so assigning a vector
//     costs (k1 + k2) inner products instead of k1·k2 — what makes a 22M-vector build fit in hours;
//   - per-dimension int8 scalar quantization (min/max of the sample) for the rescoring vectors;
//   - the codes the lists are scanned with: binary (sign of the vector minus the sample mean: 1 bit a
//     dimension, Hamming distance) or product quantization of the residual to the list centroid
//     (m sub-spaces × 256 centroids; for inner products the residual's look-up table does not depend on
//     the list, so one table per query serves every list); "pq4" is product quantization with 16
//     centroids a sub-space (4-bit codes, two a byte), scanned by the fast-scan kernel of ./fastscan.ts;
//     "int8" scans the int8 vectors themselves.
// `Quantizer` encodes batches and is saved as `quantizer.bin` (./ivf-files.ts).

import { closeSync, openSync } from "node:fs";
import { assignByDot, kmeans } from "./kmeans.js";
import { PqEncoder } from "./pq-encode.js";
import { IVF_FORMAT, IVF_FORMAT_VERSION, headerBytes, openIvfFile, readAll, writeAll } from "./ivf-files.js";

/** How a compressed index's lists are scanned. */
export type QuantizeKind = "binary" | "pq" | "pq4" | "int8";

/** Centroids a PQ sub-space has: 256 for pq, 16 for pq4, 0 for kinds without PQ. */
export function ksubOf(kind: QuantizeKind): 256 | 16 | 0 {
  return kind === "pq" ? 256 : kind === "pq4" ? 16 : 0;
}

/** The quantization kinds, as `--quantize` takes them. */
export const QUANTIZE_KINDS: readonly QuantizeKind[] = ["binary", "pq", "pq4", "int8"];

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

export class Quantizer {
  readonly lists: number;
  readonly codeBytes: number;
  readonly dsub: number;
  /** PQ codes are encoded by this (made on first use). */
  private pqEncoder: PqEncoder | null = null;

  constructor(
    readonly kind: QuantizeKind,
    readonly dim: number,
    readonly k1: number,
    readonly k2: number,
    readonly top: Float32Array,
    readonly sub: Float32Array,
    readonly mean: Float32Array,
    readonly sqLo: Float32Array,
    readonly sqScale: Float32Array,
    readonly pqM: number,
    readonly codebooks: Float32Array,
  ) {
    this.lists = k1 * k2;
    this.dsub = kind === "pq" || kind === "pq4" ? dim / pqM : 0;
    this.codeBytes = kind === "binary" ? Math.ceil(dim / 128) * 16 : kind === "pq" ? pqM : kind === "pq4" ? pqM / 2 : 0;
  }

  /** Centroids a PQ sub-space has (256 for pq, 16 for pq4; 0 without PQ). */
  get ksub(): 256 | 16 | 0 {
    return ksubOf(this.kind);
  }

  /** Trains on `sample` (`n × dim`, unit vectors). */
  static train(sample: Float32Array, dim: number, p: QuantizerParams, corpusSize: number): Quantizer {
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
    let pqM = 0;
    let codebooks = new Float32Array(0);
    if (p.quantize === "pq" || p.quantize === "pq4") {
      const ksub = ksubOf(p.quantize);
      pqM = p.pqM ?? Math.max(1, Math.floor(dim / (ksub === 256 ? 8 : 4)));
      if (dim % pqM !== 0) throw new Error(`PQ: ${dim} dimensions do not split into ${pqM} equal sub-spaces`);
      if (ksub === 16 && pqM % 2 !== 0) throw new Error(`pq4: ${pqM} sub-spaces; an even number is needed (two 4-bit codes a byte)`);
      const q0 = new Quantizer(p.quantize, dim, k1, k2, top, sub, mean, lo, scale, pqM, new Float32Array(pqM * ksub * (dim / pqM)));
      const lists = q0.assign(sample);
      const dsub = dim / pqM;
      codebooks = new Float32Array(pqM * ksub * dsub);
      for (let s = 0; s < pqM; s++) {
        const part = new Float32Array(n * dsub);
        for (let i = 0; i < n; i++) {
          const lo2 = lists[i] * dim + s * dsub;
          for (let d = 0; d < dsub; d++) part[i * dsub + d] = sample[i * dim + s * dsub + d] - sub[lo2 + d];
        }
        codebooks.set(kmeans(part, dsub, ksub, { metric: "l2", iterations, seed: seed + 7919 + s }), s * ksub * dsub);
      }
    }
    return new Quantizer(p.quantize, dim, k1, k2, top, sub, mean, lo, scale, pqM, codebooks);
  }

  /** The list of each row of `xs` (nearest top centroid, then nearest of its sub-centroids). */
  assign(xs: Float32Array): Int32Array {
    const dim = this.dim;
    const n = xs.length / dim;
    const topOf = assignByDot(this.top, dim, xs);
    const out = new Int32Array(n);
    const groups: number[][] = Array.from({ length: this.k1 }, () => []);
    for (let i = 0; i < n; i++) groups[topOf[i]].push(i);
    for (let c = 0; c < this.k1; c++) {
      const g = groups[c];
      if (g.length === 0) continue;
      const part = new Float32Array(g.length * dim);
      for (let j = 0; j < g.length; j++) part.set(xs.subarray(g[j] * dim, (g[j] + 1) * dim), j * dim);
      const a = assignByDot(this.sub.subarray(c * this.k2 * dim, (c + 1) * this.k2 * dim), dim, part);
      for (let j = 0; j < g.length; j++) out[g[j]] = c * this.k2 + a[j];
    }
    return out;
  }

  /** Codes of the rows of `xs` in their lists (`n × codeBytes`; empty for int8). */
  encode(xs: Float32Array, lists: Int32Array): Uint8Array {
    const dim = this.dim;
    const n = xs.length / dim;
    if (this.kind === "pq" || this.kind === "pq4") {
      this.pqEncoder ??= new PqEncoder(dim, this.pqM, this.codebooks, true, this.ksub as 256 | 16);
      return this.pqEncoder.encode(xs, lists, this.sub);
    }
    const out = new Uint8Array(n * this.codeBytes);
    if (this.kind === "binary") for (let i = 0; i < n; i++) this.binaryCode(xs, i * dim, out, i * this.codeBytes);
    return out;
  }

  /** Sign bits of `x − mean` (bit d of byte d/8, LSB first), zero-padded to the code size. */
  binaryCode(x: Float32Array, xo: number, out: Uint8Array, oo: number): void {
    for (let d = 0; d < this.dim; d++) if (x[xo + d] > this.mean[d]) out[oo + (d >> 3)] |= 1 << (d & 7);
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

  /**
   * The asymmetric refinement of binary codes for one query: entry b × 256 + v is the sum of (q − mean)
   * over the set bits of value v in code byte b, so a code's score is the sum of its bytes' entries.
   */
  binaryTable(q: Float32Array, qo: number): Float32Array {
    const cb = this.codeBytes;
    const table = new Float32Array(cb * 256);
    for (let b = 0; b < cb; b++) {
      for (let bit = 0; bit < 8; bit++) {
        const d = b * 8 + bit;
        const w = d < this.dim ? q[qo + d] - this.mean[d] : 0;
        const step = 1 << bit;
        for (let v = 0; v < 256; v++) if (v & step) table[b * 256 + v] += w;
      }
    }
    return table;
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
    const parts = [this.top, this.sub, this.mean, this.sqLo, this.sqScale, this.codebooks];
    const floats = parts.reduce((s, p) => s + p.length, 0);
    const h = headerBytes({ format: IVF_FORMAT, version: IVF_FORMAT_VERSION, file: "quantizer", build, rows: floats, rowBytes: 4, kind: this.kind, dim: this.dim, k1: this.k1, k2: this.k2, pqM: this.pqM });
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
      const dim = h.dim as number, k1 = h.k1 as number, k2 = h.k2 as number, pqM = h.pqM as number;
      const kind = h.kind as QuantizeKind;
      const ksub = ksubOf(kind);
      const sizes = [k1 * dim, k1 * k2 * dim, dim, dim, dim, ksub > 0 ? pqM * ksub * (dim / pqM) : 0];
      if (sizes.reduce((a, b) => a + b, 0) !== h.rows) throw new Error(`${path}: ${h.rows} values, its parameters need ${sizes.reduce((a, b) => a + b, 0)}`);
      const out: Float32Array[] = [];
      let at = 0;
      for (const s of sizes) {
        out.push(all.subarray(at, at + s));
        at += s;
      }
      return new Quantizer(kind, dim, k1, k2, out[0], out[1], out[2], out[3], out[4], pqM, out[5]);
    } finally {
      closeSync(fd);
    }
  }
}
