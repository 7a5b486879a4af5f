// Query vectors for dense search. `queryMatrix` turns one call's queries into the `n × dim` matrix a
// dense index searches: a query that came with its vector keeps it (row for row, never looked up by its
// text), the others are encoded by the index's encoder. `QueryVectorFile` is a file of vectors encoded
// elsewhere (`tartan retrieve --query-vectors FILE.npy`): row i is the query of record i of the input
// file, whatever the records' texts, and a row count other than the records' is refused.

import type { Encoder } from "./encoder-types.js";
import { normalizeRows } from "./vectors.js";
import { queryText, queryVector, type QueryInput } from "../query.js";
import { openVectorFile, type VectorSource } from "./vector-files.js";

/** The message of a dense index asked to encode a text when it has no encoder. */
export const NO_ENCODER = "this dense index was built from precomputed vectors and names no encoder: search with query vectors (tartan retrieve --query-vectors FILE.npy), or give an encoder";

/**
 * The queries as one row-major `n × dim` matrix: given vectors as they are, the texts of the others
 * encoded (by `encoder()`, asked only when some query has no vector) and scaled to unit length.
 */
export async function queryMatrix(queries: readonly QueryInput[], dim: number, encoder: () => Promise<Encoder>): Promise<Float32Array> {
  const out = new Float32Array(queries.length * dim);
  const texts: string[] = [];
  const at: number[] = [];
  queries.forEach((q, i) => {
    const v = queryVector(q);
    if (v === undefined) {
      texts.push(queryText(q));
      at.push(i);
      return;
    }
    if (v.length !== dim) throw new Error(`query ${i + 1} of the batch: a ${v.length}-d vector, the dense index holds ${dim}-d vectors`);
    out.set(v, i * dim);
  });
  if (texts.length > 0) {
    const encoded = await (await encoder()).encodeQueries(texts);
    const rows = normalizeRows(encoded, encoded.length / texts.length);
    if (rows.length !== texts.length * dim) throw new Error(`the encoder gave ${rows.length / texts.length}-d vectors, the dense index holds ${dim}-d vectors`);
    at.forEach((i, j) => out.set(rows.subarray(j * dim, (j + 1) * dim), i * dim));
  }
  return out;
}

/** A file of query vectors encoded elsewhere, one row per record of the input file (row i = record i). */
export class QueryVectorFile {
  private constructor(private readonly source: VectorSource) {}

  /** Opens `file` for `records` records; refuses another row count, or (with `dim`) another dimension. */
  static open(file: string, records: number, dim?: number): QueryVectorFile {
    const source = openVectorFile(file);
    try {
      if (source.count !== records) throw new Error(`${file}: ${source.count.toLocaleString("en-US")} query vectors for ${records.toLocaleString("en-US")} records (row i is the query of record i)`);
      if (dim !== undefined && source.dim !== dim) throw new Error(`${file}: ${source.dim}-d query vectors, the dense index holds ${dim}-d vectors`);
    } catch (e) {
      source.close();
      throw e;
    }
    return new QueryVectorFile(source);
  }

  /** The vectors' dimension. */
  get dim(): number {
    return this.source.dim;
  }

  /** Record `i`'s vector (0-based, in file order). */
  vector(i: number): Float32Array {
    return this.source.read(i, 1);
  }

  /** Releases the file. */
  close(): void {
    this.source.close();
  }
}
