// The OpenAPI 3.1 description of the JSON API, served at `/api/openapi.json`. The answers' schemas are
// generated from the types the routes build them with (src/server/api-types.ts → api-schemas.ts, by
// scripts/api-schemas.mjs); the paths, parameters and request bodies are written here, next to the
// routes. test/server/api.test.ts checks that every route is described and every described path
// answers; test/server/openapi-live.test.ts validates a running server's answers against the schemas.

import { API_SCHEMAS } from "./api-schemas.js";

const json = (schema: object) => ({ "application/json": { schema } });
/** A reference to a generated schema (a type of api-types.ts), checked to exist. */
const ref = (name: string) => {
  if (!(name in API_SCHEMAS)) throw new Error(`no schema ${name} in api-schemas.ts (npm run api-schemas)`);
  return { $ref: `#/components/schemas/${name}` };
};
const ok = (description: string, type: string) => ({ 200: { description, content: json(ref(type)) } });
/** The error answers `codes` and those every API request may get (401, 403, 500), each an `ErrorBody`. */
const errors = (...codes: number[]) =>
  Object.fromEntries([...new Set([...codes, 401, 403, 500])].sort((x, y) => x - y).map((c) => [String(c), { description: ERROR_TEXT[c], content: json(ref("ErrorBody")) }]));
const ERROR_TEXT: Record<number, string> = {
  400: "a parameter is missing, of the wrong type or out of range",
  401: "the bearer token is missing or wrong (a server started with --token)",
  403: "a foreign Host header or a cross-origin POST (a server without a token)",
  404: "not found, or not loaded on this server",
  408: "the work took longer than the deadline",
  413: "the upload is larger than --max-upload",
  415: "wrong content type",
  422: "the input is well-formed but cannot be used (a span outside its page, an unreadable file)",
  500: "an unexpected error (logged on the server; the answer shows no detail)",
  503: "too many requests of this kind at once",
};
const q = (name: string, description: string, schema: object, required = false) => ({ name, in: "query", required, description, schema });
const str = { type: "string" };
const int = { type: "integer" };

/** The OpenAPI 3.1 description of the API (served at `/api/openapi.json`). */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: { title: "tartan serve", version: "1", description: "Knowledge source, retrieval, evaluation and runs of tartan over HTTP. See docs/serve.md." },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "required when the server was started with --token" } },
      schemas: API_SCHEMAS,
    },
    security: [{}, { bearer: [] }],
    paths: {
      "/api/health": { get: { summary: "what is loaded: store pages, indexes (name, kind, unit, units), data directory, number of runs", responses: { ...ok("what is loaded", "HealthAnswer"), ...errors(401) } } },
      "/api/search": {
        get: {
          summary: "one query against a loaded index",
          parameters: [q("q", "the query", str, true), q("k", "hits, 1-1000 (default 10)", int), q("index", "index name from /api/health (default the first); repeated: their fusion", str), q("nprobe", "compressed dense index: lists probed (default the index's)", int), q("refine", "compressed dense index: candidates refined, rescored with int8 vectors (default the index's; was rerank)", int), q("fusion", "several indexes: rrf (default), wsum, combsum, combmnz, combmax, combanz", str), q("norm", "score fusions: min-max (default), max, sum, z-score, rank, none", str), q("weights", "one weight per index, comma-separated (rrf, wsum)", str), q("alpha", "two indexes: Pyserini's alpha·first + second (wsum)", str), q("rrf_k", "RRF constant (default 60)", int), q("k1", "BM25 index: k1 for this search (default the index's)", str), q("b", "BM25 index: b for this search, 0-1 (default the index's)", str), q("depth", "hits taken from each fused index (default max(k, 100))", int), q("reranker", "rerank with one of the server's named rerankers (/api/health rerankers; none: without the default one)", str), q("rerank_depth", "with reranker: first-stage hits reranked (default k; at most the server's --max-rerank-depth, 100 by default)", int), q("rm3", "BM25 index: RM3 query feedback as Anserini's; empty or true for its defaults (fbDocs=10,fbTerms=10,originalQueryWeight=0.5), or key=value pairs", str), q("rocchio", "BM25 index: Rocchio query feedback as Anserini's; empty or true for its defaults, or key=value pairs (topFbDocs, topFbTerms, alpha, beta, useNegative, bottomFbDocs, bottomFbTerms, gamma, depth)", str)],
          responses: { ...ok("hits, best first", "SearchAnswer"), ...errors(400, 401, 404, 408, 422, 503) },
        },
        post: {
          summary: "a batch of queries (at most 1000), bounded concurrency",
          requestBody: { required: true, content: json({ type: "object", required: ["queries"], properties: { queries: { type: "array", items: str, minItems: 1, maxItems: 1000 }, k: int, index: { oneOf: [str, { type: "array", items: str, description: "several: their fusion" }] }, nprobe: int, refine: int, fusion: str, norm: str, weights: { type: "array", items: { type: "number" } }, alpha: { type: "number" }, rrf_k: { type: "number" }, depth: int, k1: { type: "number" }, b: { type: "number" }, reranker: str, rerank_depth: int, rm3: { oneOf: [{ type: "boolean" }, str, { type: "object", description: "fbDocs, fbTerms, originalQueryWeight, filterTerms" }], description: "BM25 index: RM3 query feedback (Anserini's)" }, rocchio: { oneOf: [{ type: "boolean" }, str, { type: "object", description: "topFbTerms, topFbDocs, bottomFbTerms, bottomFbDocs, alpha, beta, gamma, useNegative, depth" }], description: "BM25 index: Rocchio query feedback (Anserini's)" }, vectors: { type: "array", items: { type: "array", items: { type: "number" } }, description: "dense index: one query vector per query (searched instead of the text)" }, terms: { type: "array", items: { type: "object", additionalProperties: { type: "number", minimum: 0 } }, description: "impact index: one sparse query vector {term: weight} per query (searched instead of the text; other fused indexes search the text)" } } }) },
          responses: { ...ok("one result per query, in order", "BatchSearchAnswer"), ...errors(400, 401, 404, 408, 413, 415, 422, 503) },
        },
      },
      "/api/pages/{id}": {
        get: { summary: "a knowledge-source page by wikipedia_id", parameters: [{ name: "id", in: "path", required: true, schema: str }], responses: { ...ok("the page", "PageView"), ...errors(400, 401, 404) } },
      },
      "/api/pages": {
        get: { summary: "a page by title (exact, else ignoring case)", parameters: [q("title", "the page title", str, true)], responses: { ...ok("the page", "PageView"), ...errors(400, 401, 404) } },
      },
      "/api/provenance": {
        get: {
          summary: "the text of a KILT provenance span (paragraph ids index the page's text, characters are code points, end exclusive)",
          parameters: [q("wikipedia_id", "page id", str, true), q("start_paragraph_id", "first paragraph", int, true), q("end_paragraph_id", "last paragraph (default the first)", int), q("start_character", "first character (default 0)", int), q("end_character", "end character, exclusive (default the end)", int)],
          responses: { ...ok("the span's text", "ProvenanceTextAnswer"), ...errors(400, 401, 404, 422) },
        },
      },
      "/api/eval": {
        post: {
          summary: "score predictions with the KILT evaluator: the official JSON, counts and problems",
          requestBody: {
            required: true,
            content: {
              "multipart/form-data": {
                schema: {
                  type: "object",
                  required: ["predictions"],
                  properties: {
                    predictions: { type: "string", format: "binary", description: "KILT predictions (JSONL, .gz by file name)" },
                    gold: { type: "string", format: "binary", description: "KILT gold records; or give dataset" },
                    dataset: { type: "string", description: "a catalogue name (nq, hotpotqa, …) whose gold file is in the server's --data directory" },
                    split: { type: "string", enum: ["train", "dev", "test"] },
                    ks: { type: "string", description: "cut-offs, comma-separated (default 1,5,10,20)" },
                    rank_keys: { type: "string", description: "provenance keys, comma-separated (default wikipedia_id)" },
                    mode: { type: "string", enum: ["all", "downstream", "retrieval"] },
                  },
                },
              },
            },
          },
          responses: {
            ...ok("result (official JSON), counts, options, problems, per-query scores", "EvalAnswer"),
            ...errors(400, 401, 404, 408, 413, 415, 503),
            422: { description: "nothing scored (the problems say why), or a file the evaluator cannot read", content: json({ anyOf: [ref("EvalRefusal"), ref("ErrorBody")] }) },
          },
        },
      },
      "/api/runs": {
        get: { summary: "the recorded runs (runs database)", parameters: [q("dataset", "only this dataset's runs", str)], responses: { ...ok("the runs, oldest first", "RunsAnswer"), ...errors(400, 401, 404) } },
      },
      "/api/runs/{name}": {
        get: { summary: "one recorded run", parameters: [{ name: "name", in: "path", required: true, schema: str }], responses: { ...ok("the run", "RunAnswer"), ...errors(400, 401, 404) } },
      },
      "/api/runs/{name}/records": {
        get: {
          summary: "a run's records: input, gold answers and evidence, prediction and provenance (gold passages marked), per-query scores; filtered, searched and paged",
          parameters: [{ name: "name", in: "path", required: true, schema: str }, q("filter", "all, right (em or accuracy 1), wrong, no-evidence (R-precision 0)", { type: "string", enum: ["all", "right", "wrong", "no-evidence"] }), q("q", "only records whose input, id, gold answers or predicted answer hold this text (ignoring case), at most 200 characters", str), q("offset", "first record (default 0)", int), q("limit", "records, 1-200 (default 20)", int)],
          responses: { ...ok("one page of records under the filter, and each filter's count", "RecordsAnswer"), ...errors(400, 401, 404) },
        },
      },
      "/api/compare": {
        get: {
          summary: "two runs compared on their recorded per-query scores (tartan compare's statistics: paired randomization test, Holm correction, bootstrap intervals)",
          parameters: [q("runs", "two run names: A,B (A is the baseline)", str, true), q("metric", "the metric of the differences and disagreements (default the dataset's headline metric)", str)],
          responses: { ...ok("the statistics, per-query differences and disagreements", "CompareAnswer"), ...errors(400, 401, 404, 408, 422, 503) },
        },
      },
      "/api/leaderboard": {
        get: {
          summary: "tartan leaderboard's figures: per dataset, the latest run of each system with the headline metric, its KILT score, R-precision and recall@5 and their bootstrap intervals, best KILT score first",
          parameters: [q("dataset", "one dataset", str), q("samples", "bootstrap resamples, 1-20000 (default 10000)", int), q("seed", "seed of the resampling (default 42)", int)],
          responses: { ...ok("per dataset, each system's row, best first", "LeaderboardAnswer"), ...errors(400, 401, 404, 408, 503) },
        },
      },
      "/api/openapi.json": { get: { summary: "this document", responses: { 200: { description: "OpenAPI 3.1", content: json({ type: "object", properties: { openapi: { const: "3.1.0" }, info: { type: "object" }, paths: { type: "object" }, components: { type: "object" } }, required: ["openapi", "info", "paths", "components"] }) }, ...errors(401) } } },
    },
  };
}
