// Search endpoints: `GET /api/search` (one query) and `POST /api/search` (a batch, bounded, spread over
// the cores by the index's SearchPool for every kind). Each hit
// carries its KILT provenance (what `tartan retrieve` writes), its text and the character ranges of
// the query words it matches (the words `tartan search` highlights). A compressed dense index takes the
// call's `nprobe` and `refine` (its rescoring depth; `rerank` was its old name and is refused naming the new
// one), a BM25 index its `k1` and `b` and query feedback (`rm3` or `rocchio`); a batch may bring one query vector per query (`vectors`), searched by the
// dense index instead of the text, and one sparse query vector per query (`terms`: {term: weight}), searched
// by an impact index instead of the text (the other members of a fusion search the text); a dense index with no encoder refuses text with 422. Several indexes
// named (`index` repeated, or an array) are fused for the request (./fusion.ts: fusion, norm, weights, …).
// A request may name one of the server's rerankers (`reranker`, `rerank_depth`: ../rerankers.ts).

import type { Hono } from "hono";
import { matchedRanges, queryMatcher } from "../../retrieval/highlight.js";
import type { Hit, IndexManifest, Retriever } from "../../retrieval/types.js";
import { hasBm25Options, hasSearchOptions, type QueryInput, type SearchOptions } from "../../retrieval/query.js";
import { describeKind, isCompressedDense, memberManifests } from "../../retrieval/manifest.js";
import { NO_ENCODER } from "../../retrieval/dense/query-vectors.js";
import { parseQueryTerms } from "../../retrieval/impact/queries.js";
import { unitProvenance } from "../../retrieval/units/unit.js";
import { ApiError } from "../errors.js";
import { checkFeedback, FEEDBACK_METHODS, parseFeedback, type FeedbackSpec } from "../../retrieval/feedback/params.js";
import { int, jsonObject, str } from "../params.js";
import type { BatchSearchAnswer, SearchAnswer, SearchHit } from "../api-types.js";
import type { ServerEnv } from "../context.js";
import { searchTarget } from "./fusion.js";
import { searchReranked } from "../rerankers.js";

export const MAX_K = 1000;
export const MAX_BATCH = 1000;
export const MAX_QUERY = 2000;

export function searchHits(r: Retriever, query: string, hits: readonly Hit[]): SearchHit[] {
  const matcher = queryMatcher(query);
  return hits.map((h, i) => {
    const u = r.units.get(h.unit);
    return { rank: i + 1, score: h.score, provenance: unitProvenance(u, h.score, false), text: u.text, highlights: matchedRanges(u.text, matcher) };
  });
}

/** Why a request's `rerank` is refused: the rescoring depth's old name, rerankers' now. */
export const RERANK_RENAMED = "rerank is no longer a search option: a compressed dense index's rescoring depth is refine (rerank's old meaning), and a reranker is chosen by reranker (a name from the server's --reranker NAME=SPEC) with rerank_depth";

/** `nprobe` and `refine` of a request (query parameters or body fields), and BM25's `k1` and `b`, checked. Shared with the MCP search tool. */
export function searchOptions(get: (name: string) => unknown): SearchOptions {
  const o: SearchOptions = {};
  if (get("rerank") !== undefined) throw new ApiError(400, RERANK_RENAMED);
  for (const name of ["nprobe", "refine"] as const) {
    const v = get(name);
    if (v === undefined) continue;
    const n = typeof v === "string" && /^\d+$/u.test(v) ? Number(v) : v;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 1_000_000) throw new ApiError(400, `${name} must be a whole number between 1 and 1000000`);
    o[name] = n;
  }
  // BM25's k1 and b for this call (checked by the searcher: k1 > 0, b in [0, 1]).
  const bm25: { k1?: number; b?: number } = {};
  for (const name of ["k1", "b"] as const) {
    const v = get(name);
    if (v === undefined || v === "") continue;
    const n = typeof v === "string" ? Number(v) : v;
    if (typeof n !== "number" || !Number.isFinite(n) || (name === "k1" ? !(n > 0) : !(n >= 0 && n <= 1))) throw new ApiError(400, name === "k1" ? "k1 must be a number above 0" : "b must be a number from 0 to 1");
    bm25[name] = n;
  }
  if (bm25.k1 !== undefined || bm25.b !== undefined) o.bm25 = bm25;
  const feedback = requestFeedback(get);
  if (feedback) o.feedback = feedback;
  return o;
}

/**
 * The request's `rm3` or `rocchio` (not both): `rm3=` or `rm3=true` for Anserini's defaults, `rm3=fbDocs=5,fbTerms=20`
 * (a query parameter or a body string), or in a body an object of the parameters; 400 naming the bad one.
 */
export function requestFeedback(get: (name: string) => unknown): FeedbackSpec | undefined {
  const given = FEEDBACK_METHODS.filter((m) => get(m) !== undefined && get(m) !== false);
  if (given.length > 1) throw new ApiError(400, "give rm3 or rocchio, not both");
  if (given.length === 0) return undefined;
  const method = given[0];
  const v = get(method);
  try {
    if (v === true || typeof v === "string") return parseFeedback(method, v, method);
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return checkFeedback({ ...v, method }, method);
  } catch (e) {
    throw new ApiError(400, (e as Error).message);
  }
  throw new ApiError(400, `${method} must be true, a key=value list or an object of ${method}'s parameters`);
}

/** Why a call's `nprobe`/`refine` (or `k1`/`b`, or feedback) do not fit the index `m` (they set a compressed dense index's depth), or null; `name` names the index in the message. Shared with the MCP search tool. */
export function optionsMisfit(m: IndexManifest, o: SearchOptions, name: string): string | null {
  if (hasBm25Options(o) && !memberManifests(m).some((x) => x.kind === "bm25")) return `k1 and b apply to a BM25 index; ${name} is ${describeKind(m)}`;
  if (o.feedback !== undefined && !memberManifests(m).some((x) => x.kind === "bm25")) return `${o.feedback.method} expands the query of a BM25 index; ${name} is ${describeKind(m)}`;
  return hasSearchOptions(o) && !isCompressedDense(m) ? `nprobe and refine apply to a compressed dense index; ${name} is ${describeKind(m)}` : null;
}

/** Options for a compressed dense index only; a text refused by a dense index without encoder is the client's to fix (422). */
async function guarded<T>(ix: { manifest: IndexManifest }, o: SearchOptions, run: () => Promise<T>): Promise<T> {
  const misfit = optionsMisfit(ix.manifest, o, "this index");
  if (misfit) throw new ApiError(400, misfit);
  try {
    return await run();
  } catch (e) {
    if (e instanceof Error && e.message === NO_ENCODER) throw new ApiError(422, "this dense index was built from precomputed vectors and names no encoder: text search is not possible; POST /api/search with vectors");
    throw e;
  }
}

export function registerSearch(app: Hono<ServerEnv>): void {
  app.get("/api/search", async (c) => {
    const q = c.req.query();
    const query = str(q, "q", { required: true, max: MAX_QUERY });
    const k = int(q, "k", { min: 1, max: MAX_K, fallback: 10 });
    const choice = c.var.resources.rerankers.choose((n) => q[n], k);
    const ix = searchTarget(c.var.resources, (c.req.queries("index") ?? []).map((n) => str({ index: n }, "index", { max: 200 })!), (n) => q[n], { base: choice !== null });
    const options = searchOptions((n) => q[n]);
    const hits = await guarded(ix, options, () => c.var.limits.search.run(async () => (choice ? (await searchReranked(ix.retriever, choice, [query], k, options))[0] : ix.retriever.search(query, k, options))));
    return c.json({ query, index: ix.name, kind: ix.manifest.kind, unit: ix.manifest.unit, k, ...(choice ? { reranker: choice.name } : {}), hits: searchHits(ix.retriever, query, hits) } satisfies SearchAnswer);
  });

  app.post("/api/search", async (c) => {
    const body = await jsonObject(c.req.raw);
    const queries = body.queries;
    if (!Array.isArray(queries) || queries.length === 0 || queries.length > MAX_BATCH) throw new ApiError(400, `queries must be an array of 1 to ${MAX_BATCH} strings`);
    queries.forEach((s, i) => {
      if (typeof s !== "string" || s.length === 0 || s.length > MAX_QUERY) throw new ApiError(400, `queries[${i}] must be a string of 1 to ${MAX_QUERY} characters`);
    });
    if (body.k !== undefined && (typeof body.k !== "number" || !Number.isInteger(body.k) || body.k < 1 || body.k > MAX_K)) throw new ApiError(400, `k must be a whole number between 1 and ${MAX_K}`);
    if (body.index !== undefined && typeof body.index !== "string" && !(Array.isArray(body.index) && body.index.every((n) => typeof n === "string"))) throw new ApiError(400, "index must be a string, or an array of index names to fuse");
    const k = (body.k as number | undefined) ?? 10;
    const names = body.index === undefined ? [] : Array.isArray(body.index) ? (body.index as string[]) : [body.index as string];
    const choice = c.var.resources.rerankers.choose((n) => body[n], k);
    const ix = searchTarget(c.var.resources, names, (n) => body[n], { base: choice !== null });
    const r = ix.retriever;
    const qs = queries as string[];
    const options = searchOptions((n) => body[n]);
    const vectors = body.vectors;
    let batch: QueryInput[] = qs;
    if (vectors !== undefined) {
      // A fusion's dense member searches them (its other members the text, or their terms).
      const dense = memberManifests(ix.manifest).find((m) => m.kind === "dense");
      if (!dense) throw new ApiError(400, `vectors are searched by a dense index; this index is ${describeKind(ix.manifest)}`);
      const dim = (dense.params as { dim?: number }).dim;
      if (!Array.isArray(vectors) || vectors.length !== qs.length) throw new ApiError(400, `vectors must be an array of ${qs.length} vectors, one per query`);
      batch = qs.map((text, i) => {
        const v = vectors[i] as unknown;
        if (!Array.isArray(v) || v.length !== dim || !v.every((x) => typeof x === "number" && Number.isFinite(x))) throw new ApiError(400, `vectors[${i}] must be ${String(dim)} finite numbers`);
        return { text, vector: Float32Array.from(v as number[]) };
      });
    }
    const terms = body.terms;
    if (terms !== undefined) {
      if (!memberManifests(ix.manifest).some((m) => m.kind === "impact")) throw new ApiError(400, `terms are searched by an impact index; this index is ${describeKind(ix.manifest)}`);
      if (!Array.isArray(terms) || terms.length !== qs.length) throw new ApiError(400, `terms must be an array of ${qs.length} objects of term weights, one per query`);
      batch = batch.map((q, i) => {
        let t: Record<string, number>;
        try {
          t = parseQueryTerms(terms[i], `terms[${i}]`);
        } catch (e) {
          throw new ApiError(400, (e as Error).message);
        }
        return typeof q === "string" ? { text: q, terms: t } : { ...q, terms: t };
      });
    }
    // Over the cores for every kind, as `tartan retrieve` searches (SearchPool); the options reach every thread.
    // (A fusion built for the request searches its members' batches on this thread, as does an index whose
    // pool reranks by the server's default reranker when the request chose its own.)
    const loaded = ix.fused ? null : c.var.resources.index(names[0]);
    const pooled = loaded !== null && (choice === null || loaded.base === loaded.retriever) ? loaded.pool : null;
    const first = pooled ? (qs: readonly QueryInput[], n: number) => pooled.search(qs, n, undefined, options) : undefined;
    const all = await guarded(ix, options, () => c.var.limits.batch.run(() => (choice ? searchReranked(r, choice, batch, k, options, first) : first ? first(batch, k) : r.searchBatch!(batch, k, options))));
    return c.json({ index: ix.name, kind: ix.manifest.kind, unit: ix.manifest.unit, k, ...(choice ? { reranker: choice.name } : {}), results: all.map((hits, i) => ({ query: qs[i], hits: searchHits(r, qs[i], hits) })) } satisfies BatchSearchAnswer);
  });
}
