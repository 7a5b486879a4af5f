// Product-quantization codes of a compressed dense index (8-bit: "pq"): the residual of a vector to its
// list centroid, cut into m sub-spaces, each coded by the nearest of 256 centroids (../pq-encode.ts). For
// inner products the residual's look-up table does not depend on the list, so one table per query serves
// every list: a code's score is q·(list centroid) + Σ_s LUT[s][code_s], the sum by the table kernel of
// ../hamming.ts, kept in a bounded min-heap. The training of the codebooks and the query's float table
// are shared with the 4-bit codes of ./pq4.ts.

import { HammingMemory, TABLE_CHUNK, type HammingShare } from "../hamming.js";
import { kmeans } from "../kmeans.js";
import { PqEncoder } from "../pq-encode.js";
import { TopHeap } from "../top-heap.js";
import { listBase, type CoarseLists, type Codec, type CodeTrainInput, type CodeType, type ListCodes, type ListScan, type ListSource, type QuantizerHeader } from "./code-type.js";

/** A PQ code type's trained state: m sub-spaces of `dim / m` dimensions, `ksub` centroids each. */
export interface PqBooks {
  readonly dim: number;
  readonly pqM: number;
  readonly ksub: 256 | 16;
  /** `pqM × ksub × dsub` centroids of the residuals. */
  readonly codebooks: Float32Array;
}

/** Trains the codebooks of `ksub` centroids a sub-space on the sample's residuals to their list centroids. */
export function trainPq(t: CodeTrainInput, ksub: 256 | 16, kind: string): PqBooks {
  const { sample, coarse, iterations, seed } = t;
  const dim = coarse.dim;
  const n = sample.length / dim;
  const pqM = t.pqM ?? Math.max(1, Math.floor(dim / (ksub === 256 ? 8 : 4)));
  if (dim % pqM !== 0) throw new Error(`PQ: ${dim} dimensions do not split into ${pqM} equal sub-spaces`);
  if (ksub === 16 && pqM % 2 !== 0) throw new Error(`${kind}: ${pqM} sub-spaces; an even number is needed (two 4-bit codes a byte)`);
  const lists = t.assign(sample);
  const dsub = dim / pqM;
  const sub = coarse.sub;
  const codebooks = new Float32Array(pqM * ksub * dsub);
  for (let s = 0; s < pqM; s++) {
    const part = new Float32Array(n * dsub);
    for (let i = 0; i < n; i++) {
      const lo2 = lists[i] * dim + s * dsub;
      for (let d = 0; d < dsub; d++) part[i * dsub + d] = sample[i * dim + s * dsub + d] - sub[lo2 + d];
    }
    codebooks.set(kmeans(part, dsub, ksub, { metric: "l2", iterations, seed: seed + 7919 + s }), s * ksub * dsub);
  }
  return { dim, pqM, ksub, codebooks };
}

/** Floats of the codebooks that quantizer.bin holds for a PQ code type. */
export function pqStoredFloats(dim: number, h: QuantizerHeader, ksub: 256 | 16): number {
  const pqM = h.pqM as number;
  return pqM * ksub * (dim / pqM);
}

/** The query's float look-up table: entry s × ksub + c is the query's sub-space s against centroid c. */
export function pqTable(b: PqBooks, qs: Float32Array, qo: number): Float32Array {
  const { pqM: m, ksub, codebooks } = b;
  const dsub = b.dim / m;
  const lut = new Float32Array(m * ksub);
  for (let s = 0; s < m; s++)
    for (let c = 0; c < ksub; c++) {
      let v = 0;
      const cbo = (s * ksub + c) * dsub;
      for (let d = 0; d < dsub; d++) v += qs[qo + s * dsub + d] * codebooks[cbo + d];
      lut[s * ksub + c] = v;
    }
  return lut;
}

/** What a PQ codec has in common: its books, header, stored floats and encoder. */
export abstract class PqCodec implements Codec {
  abstract readonly kind: string;
  abstract readonly codeBytes: number;
  readonly header: { pqM: number };
  readonly stored: Float32Array;
  /** PQ codes are encoded by this (made on first use). */
  private encoder: PqEncoder | null = null;

  constructor(readonly books: PqBooks) {
    this.header = { pqM: books.pqM };
    this.stored = books.codebooks;
  }

  encode(xs: Float32Array, lists: Int32Array, coarse: CoarseLists): Uint8Array {
    const b = this.books;
    this.encoder ??= new PqEncoder(b.dim, b.pqM, b.codebooks, true, b.ksub);
    return this.encoder.encode(xs, lists, coarse.sub);
  }

  abstract openLists(src: ListSource, coarse: CoarseLists): ListCodes;
  abstract attachLists(share: unknown, slot: number, offsets: Float64Array, coarse: CoarseLists): ListCodes;
}

class PqLists implements ListCodes {
  constructor(
    private readonly memory: HammingMemory,
    private readonly books: PqBooks,
    private readonly offsets: Float64Array,
    private readonly coarse: CoarseLists,
  ) {}

  share(): HammingShare {
    return this.memory.share();
  }

  candidates(s: ListScan): Float64Array {
    const { qs, qo, lists, refine } = s;
    const pq = this.memory;
    pq.setTable(pqTable(this.books, qs, qo));
    const heap = new TopHeap(refine);
    for (let i = 0; i < lists.length; i++) {
      const l = lists[i];
      const base = listBase(this.coarse, s, i);
      const o0 = this.offsets[l];
      const len = this.offsets[l + 1] - o0;
      for (let j0 = 0; j0 < len; j0 += TABLE_CHUNK) {
        const n = Math.min(TABLE_CHUNK, len - j0);
        const sums = pq.rangeTableScores(o0 + j0, n);
        for (let j = 0; j < n; j++) heap.push(base + sums[j], o0 + j0 + j);
      }
    }
    return heap.items();
  }
}

class Pq8Codec extends PqCodec {
  readonly kind = "pq";
  readonly codeBytes: number;

  constructor(books: PqBooks) {
    super(books);
    this.codeBytes = books.pqM;
  }

  openLists(src: ListSource, coarse: CoarseLists): ListCodes {
    // PQ codes in the same kind of shared kernel memory as binary codes: its table kernel sums a code's look-ups
    const memory = HammingMemory.create(src.count, this.codeBytes, 1, src.slots);
    src.read(memory.codes());
    return new PqLists(memory, this.books, src.offsets, coarse);
  }

  attachLists(share: unknown, slot: number, offsets: Float64Array, coarse: CoarseLists): ListCodes {
    return new PqLists(HammingMemory.attach(share as HammingShare, slot), this.books, offsets, coarse);
  }
}

/** 8-bit product quantization of the residual to the list centroid (m sub-spaces × 256 centroids). */
export const pqCodes: CodeType<"pq"> = {
  name: "pq",
  version: 1,
  summary: "product quantization of the residual to the list centroid, 256 centroids a sub-space (one byte each)",
  train: (t) => new Pq8Codec(trainPq(t, 256, "pq")),
  storedFloats: (dim, h) => pqStoredFloats(dim, h, 256),
  load: (dim, h, stored) => new Pq8Codec({ dim, pqM: h.pqM as number, ksub: 256, codebooks: stored }),
};
