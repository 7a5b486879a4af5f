// The seam of a compressed dense index's code types (./registry.ts registers them; ../ivf-build.ts and
// ../ivf-search.ts use them without knowing any by name). A code type supplies:
//   - at build: training on the sample (`train`), its code size, and the encoding of rows in their lists;
//   - in quantizer.bin: the header fields and the floats it stores after the coarse quantizer's (`header`,
//     `stored`), and how they are read back (`storedFloats`, `load`);
//   - at search: the codes of codes.bin held in memory (`openLists`, `attachLists` in a search worker),
//     which prepare each query (its code, its look-up tables) and scan the probed lists into the positions
//     of the `refine` best candidates (refined on the way where the code type refines), that
//     ../ivf-search.ts then rescores with the int8 rows.
// A new code type is one file exporting a `CodeType` and one line in ./registry.ts.

import type { Descriptor } from "../../../util/registry.js";

/** quantizer.bin's header as a code type reads it (its own fields among the others). */
export type QuantizerHeader = Readonly<Record<string, unknown>>;

/** What a code type sees of the trained coarse quantizer (../quantizer.ts). */
export interface CoarseLists {
  readonly dim: number;
  /** Coarse lists (k1 · k2). */
  readonly lists: number;
  /** The list centroids (`lists × dim`). */
  readonly sub: Float32Array;
  /** The sample's mean (`dim`). */
  readonly mean: Float32Array;
}

/** What a code type trains on: the sample (`n × dim`, unit rows), the coarse quantizer and the build's parameters. */
export interface CodeTrainInput {
  readonly sample: Float32Array;
  readonly coarse: CoarseLists;
  /** The coarse list of each sample row. */
  assign(xs: Float32Array): Int32Array;
  /** PQ sub-spaces asked for (`--pq-m`); code types without sub-spaces ignore it. */
  readonly pqM?: number;
  readonly iterations: number;
  readonly seed: number;
}

/** Where an opened index's codes come from: codes.bin of a directory, its rows in list order. */
export interface ListSource {
  /** The path of codes.bin (for messages). */
  readonly path: string;
  /** Rows (vectors) in the index. */
  readonly count: number;
  /** List l holds positions `offsets[l] … offsets[l+1]−1`. */
  readonly offsets: Float64Array;
  /** The most rows a list holds. */
  readonly maxList: number;
  /** Scratch slots of the kernels' shared memory: one for the opening thread and one per search worker. */
  readonly slots: number;
  /** Reads all of codes.bin's rows into `into` (or a new array), checking its header (rows, row size). */
  read(into?: Uint8Array): Uint8Array;
  /** Opens codes.bin (header checked) for `f`, which reads rows `from …` into `into` (as many as it holds) with `rows`. */
  withRows<T>(f: (rows: (from: number, into: Uint8Array) => void) => T): T;
}

/** One query's scan of its probed lists: what {@link ListCodes.candidates} is asked. */
export interface ListScan {
  /** The query: `dim` values of `qs` from `qo`. */
  readonly qs: Float32Array;
  readonly qo: number;
  /** The probed lists (nearest first). */
  readonly lists: Int32Array;
  /**
   * The query's inner product with each probed list's centroid, in the order of `lists` (the probe's own
   * scores, ../ivf-probe.ts); absent, code types that need them compute them ({@link listBase}).
   */
  readonly listScores?: Float64Array;
  /** Rows the probed lists hold (more than `refine`). */
  readonly total: number;
  /** Candidates asked for. */
  readonly refine: number;
  /** The refinement depth factor of code types that shortlist `refine × refineFactor` first. */
  readonly refineFactor: number;
  /** The hits asked for (when given), by which code types with an error bound drop the candidates that cannot be among the k best. */
  readonly k?: number;
}

/** The codes of an opened index in memory, scanned for each query. */
export interface ListCodes {
  /** What a search worker attaches with (structured-cloneable; shared memory is not copied). */
  share(): unknown;
  /** The positions of the best `s.refine` candidates of one query in its probed lists. */
  candidates(s: ListScan): Float64Array;
}

/** A trained code type: what one index's codes are. */
export interface Codec {
  /** The code type's name (`--quantize`, `params.quantize`). */
  readonly kind: string;
  /** Bytes of one row's code in codes.bin (0: no codes). */
  readonly codeBytes: number;
  /** Header fields of quantizer.bin that are the code type's (also recorded in the manifest's params). */
  readonly header: Readonly<Record<string, number>>;
  /** The floats quantizer.bin holds after the coarse quantizer's and the int8 scaling (may be empty). */
  readonly stored: Float32Array;
  /** The codes of the rows of `xs` in their `lists` (`n × codeBytes`). */
  encode(xs: Float32Array, lists: Int32Array, coarse: CoarseLists): Uint8Array;
  /** The codes of codes.bin, held for search (in shared memory, so search workers attach). */
  openLists(src: ListSource, coarse: CoarseLists): ListCodes;
  /** The codes an opened index `share`d, attached from a search worker with scratch slot `slot`. */
  attachLists(share: unknown, slot: number, offsets: Float64Array, coarse: CoarseLists): ListCodes;
  /**
   * Where lists are scanned elsewhere (../ivf-sequence.ts `remoteStore`): the indices of the best `refine`
   * of a query's shortlisted `codes` (in list order), refined as `ListCodes.candidates` refines them.
   * Absent for code types whose scan does not refine.
   */
  refineCodes?(qs: Float32Array, qo: number, codes: readonly Uint8Array[], refine: number, coarse: CoarseLists): Float64Array;
}

/** A code type's descriptor, registered in ./registry.ts. */
export interface CodeType<K extends string = string> extends Descriptor {
  readonly name: K;
  /** Trains the code type on the sample (throws on parameters it cannot take). */
  train(t: CodeTrainInput): Codec;
  /** Floats of `stored` that quantizer.bin holds for an index of `dim` dimensions whose header is `h`. */
  storedFloats(dim: number, h: QuantizerHeader): number;
  /** The trained code type from quantizer.bin's header and its stored floats. */
  load(dim: number, h: QuantizerHeader, stored: Float32Array): Codec;
}

/**
 * Reads codes.bin's rows (list order) a few whole lists at a time, at most 32 MiB unless one list is
 * larger, so no second copy of all the codes is held: `each(rows, from, to)` gets the row-major rows of
 * lists `from … to − 1`, which start at position `offsets[from]`.
 */
export function forEachListChunk(src: ListSource, codeBytes: number, each: (rows: Uint8Array, from: number, to: number) => void): void {
  const offsets = src.offsets;
  src.withRows((read) => {
    const lists = offsets.length - 1;
    const chunkRows = Math.max(1, Math.floor((1 << 25) / Math.max(1, codeBytes)));
    let buf = new Uint8Array(0);
    let l = 0;
    while (l < lists) {
      let e = l + 1;
      while (e < lists && offsets[e + 1] - offsets[l] <= chunkRows) e++;
      const rows = offsets[e] - offsets[l];
      if (buf.length < rows * codeBytes) buf = new Uint8Array(rows * codeBytes);
      const part = buf.subarray(0, rows * codeBytes);
      read(offsets[l], part);
      each(part, l, e);
      l = e;
    }
  });
}

/** Every position of the `lists` (which hold `total` rows), list by list. */
export function allPositions(offsets: Float64Array, lists: Int32Array, total: number): Float64Array {
  const all = new Float64Array(total);
  let t = 0;
  for (const l of lists) for (let p = offsets[l]; p < offsets[l + 1]; p++) all[t++] = p;
  return all;
}

/** `from` plus the query's inner product with the centroid of list `l`, added in dimension order. */
export function centroidScore(coarse: CoarseLists, qs: Float32Array, qo: number, l: number, from = 0): number {
  const dim = coarse.dim;
  const sub = coarse.sub;
  let s = from;
  for (let d = 0; d < dim; d++) s += qs[qo + d] * sub[l * dim + d];
  return s;
}

/** `from` plus the query's inner product with the centroid of the scan's `i`-th probed list: the probe's score where the scan carries it. */
export function listBase(coarse: CoarseLists, s: ListScan, i: number, from = 0): number {
  return s.listScores === undefined ? centroidScore(coarse, s.qs, s.qo, s.lists[i], from) : from + s.listScores[i];
}
