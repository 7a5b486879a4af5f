// Impact search (learned sparse retrieval) over the BM25 on-disk layout holding quantized impacts
// (./build.ts): a query is a sparse vector of term weights, and a unit scores the sum over its terms of
// float32(impact × float32(weight)), exact, ranked by the BM25 search's MaxScore with block-max pruning
// (../bm25/maxscore.ts) over the impact scorer (../bm25/impact-scorer.ts), ties to the lower unit. Text
// queries become vectors by the index's SPLADE encoder when its manifest records one (`params.encoder`,
// ./splade.ts: loaded on the first text query, a missing model refused naming the manifest's field), else by
// its query analyzer (./queries.ts): tokens split on white space, repetition = weight (Pyserini's
// `--impact --pretokenized`), or BM25's analyzer for quantized BM25. A query's own terms
// (`Query.terms`) are searched as they are.

import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { readManifest } from "../manifest.js";
import type { Hit, IndexManifest, Retriever } from "../types.js";
import { queryText, type QueryInput } from "../query.js";
import { UnitStore } from "../units/store.js";
import { Dictionary } from "../bm25/dictionary.js";
import type { TermInfo } from "../bm25/dictionary.js";
import { FILES } from "../bm25/format.js";
import { PostingCursor, postingsAt } from "../bm25/postings-reader.js";
import { checkBm25Files } from "../bm25/check.js";
import { maxScoreScratch, maxScoreSearch, type MaxScoreScratch, type QueryTerm, type SearchStats } from "../bm25/maxscore.js";
import { TopK } from "../bm25/top-k.js";
import { ImpactScoring } from "../bm25/impact-scorer.js";
import { IMPACT_FORMAT_VERSION, IMPACT_KIND, type ImpactIndexParams } from "./build.js";
import { textQueryWeights, type QueryWeights } from "./queries.js";
import type { SpladeEncoder } from "./splade.js";

const f = Math.fround;

/** An impact index opened for search: its term index in memory, postings read per query. */
export class ImpactSearcher {
  readonly params: ImpactIndexParams;
  readonly units: number;
  /** @internal The term dictionary (format internals). */
  readonly dictionary: Dictionary;
  /** @internal How postings score: impact × query weight. */
  readonly scoring = new ImpactScoring();
  readonly stats: SearchStats = { scored: 0, candidates: 0, windowsSkipped: 0, blocksSkipped: 0 };
  /** @internal Buffers of the search, reused from query to query. */
  readonly scratch: MaxScoreScratch = maxScoreScratch();
  private readonly postingsFd: number;
  private readonly postingsPath: string;

  constructor(
    readonly dir: string,
    readonly manifest: IndexManifest,
  ) {
    if (manifest.kind !== IMPACT_KIND) throw new Error(`${dir}: a ${manifest.kind} index, not an impact one`);
    if (manifest.formatVersion !== IMPACT_FORMAT_VERSION) throw new Error(`${dir}: impact index format ${manifest.formatVersion}, this tartan reads ${IMPACT_FORMAT_VERSION} (rebuild the index)`);
    const p = manifest.params as unknown as ImpactIndexParams;
    const q = p.quantization as { mode?: unknown } | undefined;
    if (q?.mode !== "scale" && q?.mode !== "bits") throw new Error(`${dir}/manifest.json: params.quantization missing or malformed`);
    this.params = p;
    this.units = manifest.units;
    checkBm25Files(dir, manifest);
    this.dictionary = new Dictionary(dir, p.terms);
    this.postingsPath = join(dir, FILES.postings);
    this.postingsFd = openSync(this.postingsPath, "r");
  }

  /** Opens the impact index in `dir`. */
  static open(dir: string): ImpactSearcher {
    return new ImpactSearcher(dir, readManifest(dir));
  }

  close(): void {
    this.dictionary.close();
    closeSync(this.postingsFd);
  }

  /** The query terms present in the index with their weights (terms of weight 0 left out). */
  queryTerms(weights: QueryWeights): QueryTerm[] {
    const out: QueryTerm[] = [];
    for (const [term, weight] of weights) {
      if (!(weight > 0)) continue;
      const info = this.dictionary.lookup(term);
      if (info !== null) out.push({ term, info, weight: f(weight) });
    }
    return out;
  }

  /** @internal A cursor over a term's postings. */
  cursor(info: TermInfo, reuse?: PostingCursor): PostingCursor {
    if (info.offset + info.bytes > Number.MAX_SAFE_INTEGER) throw new Error(`${this.postingsPath}: corrupt dictionary`);
    const src = postingsAt(this.postingsFd, info.offset, info.bytes, this.postingsPath);
    if (reuse) return reuse.reset(src, info.docFreq, this.scoring, this.postingsPath);
    return new PostingCursor(src, info.docFreq, this.scoring, this.postingsPath);
  }

  /** The top k for a sparse query vector: MaxScore with block-max pruning, equal to {@link searchExhaustive}. */
  search(weights: QueryWeights, k: number): Hit[] {
    const terms = this.queryTerms(weights);
    const kk = Math.min(Math.floor(k), this.units);
    if (!(kk > 0) || terms.length === 0) return [];
    return maxScoreSearch(this, terms, kk);
  }

  /** The top k by scoring every posting of every query term (the reference the pruned search equals). */
  searchExhaustive(weights: QueryWeights, k: number): Hit[] {
    const terms = this.queryTerms(weights);
    if (!(k >= 1) || terms.length === 0) return [];
    const acc = new Map<number, number>();
    for (const t of terms) {
      const c = this.cursor(t.info);
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) acc.set(d, (acc.get(d) ?? 0) + f(c.tf * t.weight));
    }
    const top = new TopK(Math.min(Math.floor(k), acc.size));
    for (const [d, s] of acc) top.offerAny(f(s), d);
    return top.hits();
  }

  /** Every (term, unit, impact) posting, term by term in dictionary order (verification, conversions). */
  *postings(): Generator<{ term: string; unit: number; impact: number }> {
    for (const [term, info] of this.dictionary.entries()) {
      const c = this.cursor(info);
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) yield { term, unit: d, impact: c.tf };
    }
  }
}

/** An impact index directory opened for search (text queries through its query analyzer). */
export class ImpactRetriever implements Retriever {
  readonly kind = IMPACT_KIND;
  readonly units: UnitStore;
  readonly searcher: ImpactSearcher;

  get manifest(): IndexManifest {
    return this.searcher.manifest;
  }

  constructor(
    readonly dir: string,
    manifest?: IndexManifest,
  ) {
    this.searcher = new ImpactSearcher(dir, manifest ?? readManifest(dir));
    try {
      this.units = UnitStore.open(dir);
    } catch (e) {
      this.searcher.close();
      throw e;
    }
    if (this.units.count !== this.searcher.units) {
      void this.close();
      throw new Error(`${dir}: ${this.units.count} units stored but the impact index has ${this.searcher.units}`);
    }
  }

  private encoding: Promise<SpladeEncoder> | null = null;

  /** The index's SPLADE encoder (loaded once, on the first text query), or null when it records none. */
  private encoder(): Promise<SpladeEncoder> | null {
    const spec = this.searcher.params.encoder;
    if (spec === undefined) return null;
    if (this.encoding === null) {
      const where = `${this.dir}/manifest.json: params.encoder`;
      this.encoding = import("./splade.js").then(({ SpladeEncoder }) => SpladeEncoder.load(spec, where));
      this.encoding.catch(() => undefined);
    }
    return this.encoding;
  }

  /** The weights of queries: each one's sparse vector when it has one, else its text through the index's encoder or query analyzer. */
  async weightsBatch(queries: readonly QueryInput[]): Promise<QueryWeights[]> {
    const out: (QueryWeights | undefined)[] = queries.map((q) => (typeof q !== "string" && q.terms !== undefined ? new Map(Object.entries(q.terms)) : undefined));
    const texts = queries.flatMap((q, i) => (out[i] === undefined ? [i] : []));
    if (texts.length > 0) {
      const encoder = this.encoder();
      if (encoder === null) for (const i of texts) out[i] = textQueryWeights(queryText(queries[i]), this.searcher.params.queryAnalyzer);
      else {
        const encoded = await (await encoder).encodeQueries(texts.map((i) => queryText(queries[i])));
        texts.forEach((i, j) => (out[i] = new Map(encoded[j].terms.map((t, n) => [t, encoded[j].weights[n]]))));
      }
    }
    return out as QueryWeights[];
  }

  /** The weights of a query (see {@link ImpactRetriever.weightsBatch}). */
  async weights(query: QueryInput): Promise<QueryWeights> {
    return (await this.weightsBatch([query]))[0];
  }

  async search(query: QueryInput, k: number): Promise<Hit[]> {
    return this.searcher.search(await this.weights(query), k);
  }

  async searchBatch(queries: readonly QueryInput[], k: number): Promise<Hit[][]> {
    return (await this.weightsBatch(queries)).map((w) => this.searcher.search(w, k));
  }

  async close(): Promise<void> {
    const encoding = this.encoding;
    this.encoding = null;
    if (encoding) await encoding.then((e) => e.close(), () => undefined);
    this.searcher.close();
    this.units.close();
  }
}

/** Checks every posting of the index in `dir` decodes, units in range and increasing, impacts ≥ 1 (`tartan index verify`). */
export function checkImpactIndex(dir: string): void {
  const s = ImpactSearcher.open(dir);
  try {
    let postings = 0;
    let terms = 0;
    for (const [term, info] of s.dictionary.entries()) {
      terms++;
      const c = s.cursor(info);
      let last = -1;
      let n = 0;
      for (let d = c.nextDoc(); d !== PostingCursor.NO_MORE; d = c.nextDoc()) {
        if (d <= last || d >= s.units) throw new Error(`${dir}: term ${JSON.stringify(term)}: unit ${d} out of order or range`);
        if (!(c.tf >= 1)) throw new Error(`${dir}: term ${JSON.stringify(term)}: impact ${c.tf} at unit ${d}`);
        last = d;
        n++;
      }
      if (n !== info.docFreq) throw new Error(`${dir}: term ${JSON.stringify(term)}: ${n} postings, the dictionary says ${info.docFreq}`);
      postings += n;
    }
    if (terms !== s.params.terms || postings !== s.params.postings) throw new Error(`${dir}: ${terms} terms and ${postings} postings, manifest.json says ${s.params.terms} and ${s.params.postings}`);
  } finally {
    s.close();
  }
}
