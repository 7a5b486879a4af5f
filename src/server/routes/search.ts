// Search endpoints: `GET /api/search` (one query) and `POST /api/search` (a batch, bounded, spread over
// the cores by the index's SearchPool for every kind). Each hit
// carries its KILT provenance (what `tartan retrieve` writes), its text and the character ranges of
// the query words it matches (the words `tartan search` highlights).

import type { Hono } from "hono";
import { matchedRanges, queryMatcher } from "../../retrieval/highlight.js";
import type { Hit, Retriever } from "../../retrieval/types.js";
import { unitProvenance } from "../../retrieval/units.js";
import { ApiError } from "../errors.js";
import { int, jsonObject, str } from "../params.js";
import type { BatchSearchAnswer, SearchAnswer, SearchHit } from "../api-types.js";
import type { ServerEnv } from "../context.js";

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

export function registerSearch(app: Hono<ServerEnv>): void {
  app.get("/api/search", async (c) => {
    const q = c.req.query();
    const query = str(q, "q", { required: true, max: MAX_QUERY });
    const k = int(q, "k", { min: 1, max: MAX_K, fallback: 10 });
    const ix = c.var.resources.index(str(q, "index", { max: 200 }));
    const hits = await c.var.limits.search.run(() => ix.retriever.search(query, k));
    return c.json({ query, index: ix.name, kind: ix.manifest.kind, unit: ix.manifest.unit, k, hits: searchHits(ix.retriever, query, hits) } satisfies SearchAnswer);
  });

  app.post("/api/search", async (c) => {
    const body = await jsonObject(c.req.raw);
    const queries = body.queries;
    if (!Array.isArray(queries) || queries.length === 0 || queries.length > MAX_BATCH) throw new ApiError(400, `queries must be an array of 1 to ${MAX_BATCH} strings`);
    queries.forEach((s, i) => {
      if (typeof s !== "string" || s.length === 0 || s.length > MAX_QUERY) throw new ApiError(400, `queries[${i}] must be a string of 1 to ${MAX_QUERY} characters`);
    });
    if (body.k !== undefined && (typeof body.k !== "number" || !Number.isInteger(body.k) || body.k < 1 || body.k > MAX_K)) throw new ApiError(400, `k must be a whole number between 1 and ${MAX_K}`);
    if (body.index !== undefined && typeof body.index !== "string") throw new ApiError(400, "index must be a string");
    const k = (body.k as number | undefined) ?? 10;
    const ix = c.var.resources.index(body.index as string | undefined);
    const r = ix.retriever;
    const qs = queries as string[];
    // Over the cores for every kind, as `tartan retrieve` searches (SearchPool).
    const all = await c.var.limits.batch.run(() => ix.pool.search(qs, k));
    return c.json({ index: ix.name, kind: ix.manifest.kind, unit: ix.manifest.unit, k, results: all.map((hits, i) => ({ query: qs[i], hits: searchHits(r, qs[i], hits) })) } satisfies BatchSearchAnswer);
  });
}
