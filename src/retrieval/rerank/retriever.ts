// A retriever whose hits are reranked: the wrapped retriever's best `depth` units for a query (default:
// the k asked for) are scored by a reranker against the query text, with each unit's title and text
// (its unit store's; with the hit's score, page and first paragraph for rerankers that use them), and the best k of them returned by the reranker's score, ties by lower unit number
// (the Retriever contract's order). Its kind and manifest stay the wrapped retriever's; the `rerank` stage
// (../stages/rerank.ts) builds it.

import { queryText, type QueryInput, type SearchOptions } from "../query.js";
import type { Hit, Retriever, RetrieverKind } from "../types.js";
import type { Reranker, RerankItem } from "./reranker.js";

/** A retriever reranked by a {@link Reranker}; see the module comment. */
export class RerankingRetriever implements Retriever {
  /** The wrapped retriever's kind. */
  readonly kind: RetrieverKind;
  /** The wrapped retriever's units. */
  readonly units: Retriever["units"];
  /** The wrapped retriever's manifest. */
  readonly manifest: Retriever["manifest"];

  constructor(
    /** The retriever whose hits are reranked. */
    readonly inner: Retriever,
    /** The reranker (closed with this retriever). */
    readonly reranker: Reranker,
    /** Units taken from the wrapped retriever per query; undefined: k. */
    readonly depth?: number,
  ) {
    this.kind = inner.kind;
    this.units = inner.units;
    this.manifest = inner.manifest;
  }

  private item(query: QueryInput, hits: readonly Hit[]): RerankItem {
    return {
      query: queryText(query),
      passages: hits.map((h) => {
        const u = this.units.get(h.unit);
        return { title: u.wikipedia_title, text: u.text, score: h.score, page: u.wikipedia_id, ...(u.start_paragraph_id !== undefined ? { paragraph: u.start_paragraph_id } : {}) };
      }),
    };
  }

  private async rerankHits(queries: readonly QueryInput[], lists: readonly Hit[][], k: number): Promise<Hit[][]> {
    const outs = await this.reranker.rerank(queries.map((q, i) => this.item(q, lists[i])));
    return lists.map((hits, i) => {
      const scores = outs[i].scores;
      return hits
        .map((h, j) => ({ unit: h.unit, score: scores[j] }))
        .sort((a, b) => b.score - a.score || a.unit - b.unit)
        .slice(0, k);
    });
  }

  /** The best `k` of the wrapped retriever's `depth` hits, by the reranker's score. */
  async search(query: QueryInput, k: number, options?: SearchOptions): Promise<Hit[]> {
    const hits = await this.inner.search(query, this.depth ?? k, options);
    return (await this.rerankHits([query], [hits], k))[0];
  }

  /** Many queries at once: one batch from the wrapped retriever, one call to the reranker. */
  async searchBatch(queries: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]> {
    const lists: Hit[][] = [];
    if (this.inner.searchBatch) lists.push(...(await this.inner.searchBatch(queries, this.depth ?? k, options)));
    else for (const q of queries) lists.push(await this.inner.search(q, this.depth ?? k, options));
    return this.rerankHits(queries, lists, k);
  }

  /** Closes the reranker and the wrapped retriever. */
  async close(): Promise<void> {
    try {
      await this.reranker.close();
    } finally {
      await this.inner.close();
    }
  }
}
