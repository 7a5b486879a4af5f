// The MCP server: tartan's knowledge source, indexes, evaluator and runs database as Model Context
// Protocol tools (`search`, `get_page`, `get_span`, `evaluate`, `compare_runs`, `list_runs`, each with
// a JSON schema) and resources (`tartan://indexes/{name}`, `tartan://runs/{name}`), built on the official
// MCP SDK. The same `Resources` as `tartan serve` back it; the transports are in ./stdio.ts and ./http.ts.
// As in `tartan serve`, heavy work goes through its gates (src/server/context.ts createLimits: searches,
// evaluations, comparisons on a worker thread) under its deadlines and limits (k, samples), so light
// calls (get_page, list_runs, …) are answered meanwhile; file paths go through ./paths.ts.

import { failureMessage } from "../util/failure.js";
import { existsSync } from "node:fs";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { TESTS, type SignificanceTest } from "../compare/compare.js";
import { defaultMetrics } from "../compare/load.js";
import { findDataset, localPath, SPLITS } from "../datasets/catalogue.js";
import { evaluate } from "../eval/evaluate.js";
import { formatProblem } from "../eval/problems.js";
import { officialJson } from "../eval/report.js";
import { provenanceText } from "../knowledge/span.js";
import { describeKind, memberManifests } from "../retrieval/manifest.js";
import { parseQueryTerms } from "../retrieval/impact/queries.js";
import { TARTAN_VERSION } from "../retrieval/manifest.js";
import { offThread } from "../server/compute.js";
import { createLimits, type ServerLimits } from "../server/context.js";
import { ApiError } from "../server/errors.js";
import { withDeadline } from "../server/limits.js";
import type { Resources } from "../server/resources.js";
import { pageBody } from "../server/routes/pages.js";
import { MAX_SAMPLES, runBody } from "../server/routes/runs.js";
import { DEFAULT_SETTINGS } from "../server/app.js";
import { ToolFiles } from "./paths.js";
import { MAX_K, MAX_QUERY, optionsMisfit, RERANK_RENAMED, searchHits, searchOptions } from "../server/routes/search.js";
import { searchTarget } from "../server/routes/fusion.js";
import { FUSION_METHODS, FUSION_NORMS } from "../retrieval/fusion.js";
import { searchReranked } from "../server/rerankers.js";

// The shapes of the tools' structured answers (MCP outputSchema): the client checks each answer against them.
const provenance = z.record(z.string(), z.unknown()).describe("KILT provenance: wikipedia_id, title, section, paragraph and character span, score");
const SEARCH_OUT = {
  query: z.string(),
  index: z.string(),
  kind: z.string(),
  unit: z.string(),
  k: z.number().int(),
  reranker: z.string().optional().describe("the reranker the call chose"),
  hits: z.array(z.object({ rank: z.number().int(), score: z.number(), provenance, text: z.string(), highlights: z.array(z.array(z.number().int())).describe("[start, end) UTF-16 offsets of matched query words in text") })),
};
const PAGE_OUT = { wikipedia_id: z.string(), wikipedia_title: z.string(), text: z.array(z.string()), anchors: z.array(z.unknown()), categories: z.string().nullable(), url: z.string().nullable() };
const SPAN_OUT = {
  wikipedia_id: z.string(),
  start_paragraph_id: z.number().int(),
  end_paragraph_id: z.number().int().optional(),
  start_character: z.number().int().optional(),
  end_character: z.number().int().optional(),
  wikipedia_title: z.string(),
  text: z.string(),
};
const EVALUATE_OUT = {
  result: z.record(z.string(), z.unknown()).describe("the keys of tartan eval --json (the official evaluator's): eval_downstream and eval_retrieval, or one section's metrics with mode downstream|retrieval"),
  counts: z.object({ goldRecords: z.number().int(), guessRecords: z.number().int(), evaluated: z.number().int(), extraGuesses: z.number().int() }),
  problems: z.array(z.string()),
};
const RUNS_OUT = { runs: z.array(z.record(z.string(), z.unknown())).describe("name, dataset, created, notes, queries, summary, metrics, official, config") };
const COMPARE_OUT = { comparison: z.record(z.string(), z.unknown()).describe("systems, metrics, means with intervals, differences with p-values, win/tie/loss") };

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** Directories whose files the tools may read (evaluate's paths), besides the data directory; or a {@link ToolFiles} made once. */
  files?: readonly string[] | ToolFiles;
  /** The gates bounding concurrent heavy work; give one set to every server of an endpoint (default: a fresh set, `tartan serve`'s sizes). */
  limits?: ServerLimits;
  /** Deadline of a search or a comparison, in ms (default `tartan serve`'s 30 s). */
  requestTimeoutMs?: number;
  /** Deadline of an evaluation, in ms (default `tartan serve`'s 10 minutes). */
  evalTimeoutMs?: number;
}

/** The directories of `files` and the data directory, checked once. */
export function toolFiles(resources: Resources, files: McpServerOptions["files"]): ToolFiles {
  if (files instanceof ToolFiles) return files;
  return new ToolFiles([...(files ?? []), ...(resources.data ? [resources.data] : [])]);
}

/** A tool's answer: the value as JSON text (what every client shows) and as structured content. */
function answer(value: object): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: value as Record<string, unknown> };
}

function runsStore(resources: Resources) {
  if (!resources.runs) throw new ApiError(404, "no runs database is loaded (start tartan mcp with --runs DIR)");
  return resources.runs;
}

/** The gold file an `evaluate` call names: a path, or a dataset's file in the data directory. */
function goldPath(resources: Resources, files: ToolFiles, gold: string | undefined, dataset: string | undefined, split: (typeof SPLITS)[number]): string {
  if (gold !== undefined && dataset !== undefined) throw new Error("give either gold or dataset, not both");
  if (gold !== undefined) return files.check("gold", gold);
  if (dataset === undefined) throw new Error("give gold (a KILT gold file) or dataset (with tartan mcp --data DIR)");
  const d = findDataset(dataset);
  if (!d) throw new Error(`unknown dataset ${JSON.stringify(dataset)}`);
  if (!resources.data) throw new Error("no data directory is loaded (start tartan mcp with --data DIR)");
  if (!d.splits[split]) throw new Error(`${d.name} has no ${split} split`);
  const path = localPath(d, split, resources.data);
  if (!existsSync(path)) throw new Error(`the ${split} file of ${d.name} is not in the data directory (looked for ${path})`);
  return files.check("dataset", path);
}

/** An MCP server over `resources` (one per connection; the resources are shared and outlive it). */
export function createMcpServer(resources: Resources, o: McpServerOptions = {}): McpServer {
  const files = toolFiles(resources, o.files);
  const limits = o.limits ?? createLimits();
  const requestMs = o.requestTimeoutMs ?? DEFAULT_SETTINGS.requestTimeoutMs;
  const evalMs = o.evalTimeoutMs ?? DEFAULT_SETTINGS.evalTimeoutMs;
  const server = new McpServer(
    { name: "tartan", version: TARTAN_VERSION },
    { instructions: "tartan: KILT knowledge-intensive tasks. search an index for passages (with KILT provenance), read pages and provenance spans from the knowledge source, score KILT predictions exactly as the official evaluator, and list or compare recorded runs." },
  );

  server.registerTool(
    "search",
    {
      title: "Search an index",
      description: "Searches a loaded index (BM25, TF-IDF, dense, impact, entity), or the fusion of several, and returns the top k units with their KILT provenance, text and the character ranges of matched query words; optionally reranked by one of the server's rerankers.",
      inputSchema: {
        query: z.string().min(1).max(MAX_QUERY).describe("the query text"),
        k: z.number().int().min(1).max(MAX_K).default(10).describe("how many hits"),
        index: z
          .union([z.string().max(200), z.array(z.string().max(200)).min(1).max(16)])
          .optional()
          .describe("index name (see the tartan://indexes resources); default the first loaded; several names: their fusion"),
        fusion: z.enum(FUSION_METHODS).optional().describe("several indexes: how they are fused (default rrf)"),
        norm: z.enum(FUSION_NORMS).optional().describe("score fusions: each index's scores normalised first (default min-max; none with alpha)"),
        weights: z.array(z.number()).max(16).optional().describe("several indexes: one weight per index, in order (rrf, wsum)"),
        alpha: z.number().optional().describe("two indexes: Pyserini's alpha·first + second (wsum)"),
        rrf_k: z.number().min(0).optional().describe("RRF constant (default 60)"),
        depth: z.number().int().min(1).max(10_000).optional().describe("hits taken from each fused index (default max(k, 100))"),
        vector: z.array(z.number()).max(65536).optional().describe("dense index: the query's vector (of the index's size), searched instead of the text"),
        terms: z.record(z.string(), z.number().min(0)).optional().describe('impact index: the query\'s sparse vector {"term": weight} (e.g. from a SPLADE query encoder), searched instead of the text'),
        nprobe: z.number().int().min(1).max(1_000_000).optional().describe("compressed dense index: lists probed (default the index's)"),
        refine: z.number().int().min(1).max(1_000_000).optional().describe("compressed dense index: candidates refined, rescored with int8 vectors (default the index's)"),
        rerank: z.unknown().optional().describe("no longer an argument: refine is the rescoring depth, reranker names a reranker"),
        k1: z.number().gt(0).optional().describe("BM25 index: k1 for this search (default the index's)"),
        b: z.number().min(0).max(1).optional().describe("BM25 index: b for this search (default the index's)"),
        rm3: z.union([z.boolean(), z.object({ fbDocs: z.number().int().optional(), fbTerms: z.number().int().optional(), originalQueryWeight: z.number().optional(), filterTerms: z.boolean().optional() })]).optional().describe("BM25 index: RM3 query expansion as Anserini's (true: fbDocs 10, fbTerms 10, originalQueryWeight 0.5)"),
        rocchio: z
          .union([z.boolean(), z.object({ topFbTerms: z.number().int().optional(), topFbDocs: z.number().int().optional(), bottomFbTerms: z.number().int().optional(), bottomFbDocs: z.number().int().optional(), alpha: z.number().optional(), beta: z.number().optional(), gamma: z.number().optional(), useNegative: z.boolean().optional(), depth: z.number().int().optional() })])
          .optional()
          .describe("BM25 index: Rocchio query expansion as Anserini's (true: topFbDocs 10, topFbTerms 10, alpha 1, beta 0.75; useNegative for the tail's bottomFbDocs with gamma)"),
        reranker: z
          .string()
          .max(64)
          .optional()
          .describe(resources.rerankers.names().length > 0 ? `rerank the hits with one of the server's rerankers: ${resources.rerankers.names().join(", ")} (or none)` : "a reranker's name (this server has none: tartan mcp --reranker NAME=SPEC)"),
        rerank_depth: z.number().int().min(1).optional().describe(`with reranker: hits of the first stage reranked (default k; at most ${resources.rerankers.maxDepth})`),
      },
      outputSchema: SEARCH_OUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      const { query, k, index, vector, terms } = args;
      if (args.rerank !== undefined) throw new Error(RERANK_RENAMED);
      // The same checks and fusion as GET /api/search: the arguments by name.
      const get = (n: string) => (args as Record<string, unknown>)[n];
      const choice = resources.rerankers.choose(get, k);
      const ix = searchTarget(resources, index === undefined ? [] : typeof index === "string" ? [index] : index, get, { base: choice !== null });
      const options = searchOptions(get);
      const misfit = optionsMisfit(ix.manifest, options, ix.name);
      if (misfit) throw new Error(misfit);
      if (vector !== undefined) {
        const dim = (ix.manifest.params as { dim?: number }).dim;
        if (ix.manifest.kind !== "dense") throw new Error(`a vector is searched by a dense index; ${ix.name} is ${ix.manifest.kind}`);
        if (vector.length !== dim || !vector.every(Number.isFinite)) throw new Error(`vector must be ${String(dim)} finite numbers (the index's size), got ${vector.length}`);
      }
      if (terms !== undefined && !memberManifests(ix.manifest).some((m) => m.kind === "impact")) throw new Error(`terms are searched by an impact index; ${ix.name} is ${describeKind(ix.manifest)}`);
      const sparse = terms === undefined ? undefined : parseQueryTerms(terms, "terms");
      const input = vector || sparse ? { text: query, ...(vector ? { vector: Float32Array.from(vector) } : {}), ...(sparse ? { terms: sparse } : {}) } : query;
      const hits = await withDeadline(limits.search.run(async () => (choice ? (await searchReranked(ix.retriever, choice, [input], k, options))[0] : ix.retriever.search(input, k, options))), requestMs, "the search");
      return answer({ query, index: ix.name, kind: ix.manifest.kind, unit: ix.manifest.unit, k, ...(choice ? { reranker: choice.name } : {}), hits: searchHits(ix.retriever, query, hits) });
    },
  );

  server.registerTool(
    "get_page",
    {
      title: "Read a knowledge-source page",
      description: "A KILT page of the knowledge source by wikipedia_id or by title: its paragraphs (text), anchors, categories and URL.",
      inputSchema: {
        wikipedia_id: z.string().max(1000).optional().describe("the page's wikipedia_id"),
        title: z.string().max(1000).optional().describe("the page's wikipedia_title (when no id is given)"),
      },
      outputSchema: PAGE_OUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ wikipedia_id, title }) => {
      if ((wikipedia_id === undefined) === (title === undefined)) throw new Error("give wikipedia_id or title (one of them)");
      const ks = resources.store();
      const page = await (wikipedia_id !== undefined ? ks.getPageById(wikipedia_id) : ks.getPageByTitle(title!));
      if (!page) throw new ApiError(404, wikipedia_id !== undefined ? `no page with wikipedia_id ${JSON.stringify(wikipedia_id)}` : `no page titled ${JSON.stringify(title)}`);
      return answer(pageBody(page));
    },
  );

  server.registerTool(
    "get_span",
    {
      title: "Read a provenance span",
      description: "The text of a KILT provenance span: paragraphs start_paragraph_id..end_paragraph_id of a page, cut at start_character/end_character.",
      inputSchema: {
        wikipedia_id: z.string().max(1000),
        start_paragraph_id: z.number().int().min(0),
        end_paragraph_id: z.number().int().min(0).optional().describe("default: start_paragraph_id"),
        start_character: z.number().int().min(0).optional(),
        end_character: z.number().int().min(0).optional(),
      },
      outputSchema: SPAN_OUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (span) => {
      const page = await resources.store().getPageById(span.wikipedia_id);
      if (!page) throw new ApiError(404, `no page with wikipedia_id ${JSON.stringify(span.wikipedia_id)}`);
      return answer({ ...span, wikipedia_title: page.wikipedia_title, text: provenanceText(page, span) });
    },
  );

  server.registerTool(
    "evaluate",
    {
      title: "Score KILT predictions",
      description:
        "Scores a KILT prediction file against a gold file (a path, or a dataset of the data directory) with tartan's exact port of the official KILT evaluator: the result keys of `tartan eval --json`, the counts, and the problems found (file:line).",
      inputSchema: {
        predictions: z.string().min(1).max(4096).describe("path of the prediction file (JSONL, .jsonl.gz), inside a directory open to the tools (tartan mcp --files DIR)"),
        gold: z.string().min(1).max(4096).optional().describe("path of the gold file, inside a directory open to the tools"),
        dataset: z.string().max(100).optional().describe("a dataset name (e.g. nq, hotpotqa) whose gold file is in the data directory"),
        split: z.enum(SPLITS as [string, ...string[]]).default("dev"),
        ks: z.array(z.number().int().min(1).max(10_000)).min(1).max(20).default([1, 5, 10, 20]).describe("cut-offs of the retrieval metrics"),
        rank_keys: z.array(z.string().min(1).max(100)).min(1).max(10).default(["wikipedia_id"]).describe("provenance keys identifying a retrieved unit"),
        mode: z.enum(["all", "downstream", "retrieval"]).default("all"),
      },
      outputSchema: EVALUATE_OUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (a) => {
      // every path is checked before anything is read: inside the open directories, never the transport
      const predictions = files.check("predictions", a.predictions);
      const gold = goldPath(resources, files, a.gold, a.dataset, a.split as (typeof SPLITS)[number]);
      // a file that cannot be read is named with what was wrong, as the CLI says it
      const result = await limits.eval.run(() =>
        withDeadline(evaluate(gold, predictions, { ks: a.ks, rankKeys: a.rank_keys, mode: a.mode }), evalMs, "the evaluation").catch((e: unknown) => {
          throw e instanceof ApiError ? e : new Error(failureMessage(e));
        }),
      );
      const problems = result.problems.map(formatProblem);
      if (result.problems.some((p) => p.severity === "error" && p.section === "input")) throw new Error(`nothing scored:\n${problems.join("\n")}`);
      return answer({ result: officialJson(result), counts: result.counts, problems });
    },
  );

  server.registerTool(
    "list_runs",
    {
      title: "List recorded runs",
      description: "The runs of the runs database (tartan runs add), oldest first: name, dataset, queries, date and summary metrics.",
      inputSchema: { dataset: z.string().max(100).optional().describe("only runs of this dataset") },
      outputSchema: RUNS_OUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ dataset }) => {
      const runs = await runsStore(resources).list(dataset ? { dataset } : undefined);
      return answer({ runs: runs.map(runBody) });
    },
  );

  server.registerTool(
    "compare_runs",
    {
      title: "Compare two recorded runs",
      description:
        "Compares run b with run a (the baseline) on their per-query scores, as `tartan compare`: means with bootstrap intervals, the difference, its significance test (Holm-corrected) and wins/ties/losses.",
      inputSchema: {
        a: z.string().min(1).max(200).describe("the baseline run's name"),
        b: z.string().min(1).max(200).describe("the other run's name"),
        metrics: z.array(z.string().min(1).max(100)).min(1).max(50).optional().describe("default: the KILT papers' columns for the dataset"),
        test: z.enum(TESTS as unknown as [string, ...string[]]).default("randomization"),
        samples: z.number().int().min(100).max(MAX_SAMPLES).default(10_000).describe(`bootstrap resamples (and permutations), at most ${MAX_SAMPLES} as tartan serve`),
        seed: z.number().int().min(0).max(2 ** 31 - 1).default(42),
      },
      outputSchema: COMPARE_OUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ a, b, metrics, test, samples, seed }) => {
      if (a === b) throw new Error("a and b must name two different runs");
      const store = runsStore(resources);
      const info = await store.get(a);
      if (!info) throw new ApiError(404, `no run called ${JSON.stringify(a)}`);
      if (!(await store.get(b))) throw new ApiError(404, `no run called ${JSON.stringify(b)}`);
      const [sa, sb] = [await store.scores(a), await store.scores(b)];
      const shared = Object.keys(sa.metrics).filter((m) => m in sb.metrics);
      const chosen = metrics ?? defaultMetrics(shared, info.dataset ?? undefined, info.gold.path);
      const missing = chosen.filter((m) => !shared.includes(m));
      if (missing.length > 0) throw new Error(`metrics ${missing.join(", ")} are not in both runs; they share: ${shared.join(", ")}`);
      // on a worker thread, under the computation gate: resampling takes seconds on large runs
      const job = {
        kind: "compare" as const,
        runs: [
          { name: a, ids: sa.ids, metrics: sa.metrics },
          { name: b, ids: sb.ids, metrics: sb.metrics },
        ],
        options: { metrics: chosen, test: test as SignificanceTest, samples, permutations: samples, seed },
      };
      const comparison = await limits.compute.run(() => offThread(job, requestMs));
      return answer({ comparison });
    },
  );

  server.registerResource(
    "index",
    new ResourceTemplate("tartan://indexes/{name}", {
      list: async () => ({
        resources: resources.indexes.map((i) => ({ uri: `tartan://indexes/${encodeURIComponent(i.name)}`, name: i.name, description: `${i.manifest.kind} index of ${i.manifest.units} ${i.manifest.unit} units`, mimeType: "application/json" })),
      }),
    }),
    { title: "Loaded indexes", description: "An index the search tool can use: its manifest (kind, unit, units, source, settings).", mimeType: "application/json" },
    async (uri, { name }) => {
      const ix = resources.index(decodeURIComponent(String(name)));
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ name: ix.name, manifest: ix.manifest }, null, 2) }] };
    },
  );

  server.registerResource(
    "run",
    new ResourceTemplate("tartan://runs/{name}", {
      list: async () => {
        const runs = resources.runs ? await resources.runs.list() : [];
        return { resources: runs.map((r) => ({ uri: `tartan://runs/${encodeURIComponent(r.name)}`, name: r.name, description: `${r.dataset ?? "unknown dataset"}, ${r.queries} queries, ${r.created}`, mimeType: "application/json" })) };
      },
    }),
    { title: "Recorded runs", description: "A run of the runs database: dataset, date, notes, summary metrics and the evaluator's result sections.", mimeType: "application/json" },
    async (uri, { name }) => {
      const run = await runsStore(resources).get(decodeURIComponent(String(name)));
      if (!run) throw new ApiError(404, `no run called ${JSON.stringify(String(name))}`);
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(runBody(run), null, 2) }] };
    },
  );

  return server;
}
