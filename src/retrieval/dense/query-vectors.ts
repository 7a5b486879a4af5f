// Query vectors encoded elsewhere (`tartan retrieve --query-vectors FILE.npy`): row i of the file is the
// query of record i of the input file. The dense members of a retriever (alone, or inside a fusion with
// BM25 or others) are wrapped so that a query's text is answered with its row's vector, while the other
// members go on searching the text; records whose inputs are equal share the first one's row.
// `setDenseSearch` sets the search depth (lists probed, candidates rescored) of the compressed dense
// members the same way.

import type { Hit, Retriever } from "../types.js";
import type { IvfSearchOptions } from "./ivf-search.js";
import { HybridRetriever, type HybridOptions } from "../hybrid.js";
import { openVectorFile, type VectorSource } from "./vector-files.js";

interface VectorSearch {
  searchVectors(vectors: Float32Array, k: number): Promise<Hit[][]>;
}

function vectorSearch(r: Retriever): VectorSearch | null {
  const inner = (r as unknown as { inner?: Retriever }).inner;
  for (const c of [r, inner]) if (c && typeof (c as unknown as VectorSearch).searchVectors === "function") return c as unknown as VectorSearch;
  return null;
}

/** A dense retriever answering texts with their precomputed query vectors. */
class QueryVectorRetriever implements Retriever {
  readonly kind;
  readonly units;
  readonly manifest;
  constructor(
    private readonly dense: Retriever,
    private readonly search_: VectorSearch,
    private readonly source: VectorSource,
    private readonly rows: Map<string, number>,
  ) {
    this.kind = dense.kind;
    this.units = dense.units;
    this.manifest = dense.manifest;
  }

  private row(query: string): number {
    const r = this.rows.get(query);
    if (r === undefined) throw new Error(`${this.source.name}: no query vector for ${JSON.stringify(query.slice(0, 80))} (not an input of the records file)`);
    return r;
  }

  async search(query: string, k: number): Promise<Hit[]> {
    return (await this.searchBatch([query], k))[0];
  }

  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    const dim = this.source.dim;
    const v = new Float32Array(queries.length * dim);
    queries.forEach((q, i) => v.set(this.source.read(this.row(q), 1), i * dim));
    return this.search_.searchVectors(v, k);
  }

  async close(): Promise<void> {
    this.source.close();
    await this.dense.close();
  }
}

/**
 * Wraps the dense members of `retriever` to use the vectors of `file` (row i = `inputs[i]`, the records'
 * inputs in file order, null for a record without one). Refuses a row count other than the records'.
 */
export function withQueryVectors(retriever: Retriever, file: string, inputs: readonly (string | null)[], fusion: HybridOptions = {}): Retriever {
  const probe = openVectorFile(file);
  const count = probe.count;
  probe.close();
  if (count !== inputs.length) throw new Error(`${file}: ${count.toLocaleString("en-US")} query vectors for ${inputs.length.toLocaleString("en-US")} records (row i is the query of record i)`);
  const rows = new Map<string, number>();
  inputs.forEach((t, i) => {
    if (t !== null && !rows.has(t)) rows.set(t, i);
  });
  let wrapped = 0;
  const wrap = (r: Retriever): Retriever => {
    const s = vectorSearch(r);
    if (!s) return r;
    wrapped++;
    const source = openVectorFile(file);
    const dim = (r.manifest.params as { dim?: number }).dim;
    if (dim !== undefined && source.dim !== dim) {
      source.close();
      throw new Error(`${file}: ${source.dim}-d query vectors, the dense index holds ${dim}-d vectors`);
    }
    return new QueryVectorRetriever(r, s, source, rows);
  };
  const out = retriever instanceof HybridRetriever ? new HybridRetriever(retriever.members.map(wrap), { k0: retriever.k0, depth: retriever.depth, ...fusion }) : wrap(retriever);
  if (wrapped === 0) throw new Error(`${file}: query vectors given, but no index is dense`);
  return out;
}

/** Sets lists probed and candidates rescored on every compressed dense member of `retriever` (unset fields keep the index's). */
export function setDenseSearch(retriever: Retriever, o: IvfSearchOptions): void {
  if (o.nprobe === undefined && o.rerank === undefined && o.topProbe === undefined && o.refine === undefined) return;
  const members = retriever instanceof HybridRetriever ? retriever.members : [retriever];
  for (const m of members) {
    const inner = (m as unknown as { inner?: Retriever }).inner;
    for (const c of [m, inner]) {
      const d = c as unknown as { setSearchOptions?: (o: IvfSearchOptions) => void };
      if (typeof d?.setSearchOptions === "function") d.setSearchOptions(o);
    }
  }
}
