// Rerankers a request may choose (`tartan serve` and `tartan mcp` with `--reranker NAME=SPEC`, repeated):
// each named reranker is opened once at start and shared by every request; a search naming one
// (`reranker: NAME`, with `rerank_depth`) takes the first stage's best `rerank_depth` hits (default: the
// k asked for) and returns the best k by the reranker's score. Only the names the server was started with
// can be chosen (a request never brings a spec: no model file or endpoint of the client's choosing), and
// the depth is capped (`--max-rerank-depth`, default 100): beyond it, or for an unknown name, a 400 that
// says what is allowed. `reranker: "none"` searches without the server's default reranker (`--reranker
// SPEC`, no name), which otherwise reranks every search as the `rerank` stage.

import { cpus } from "node:os";
import { openReranker } from "../retrieval/rerank/index.js";
import { parseRerankerSpec, type Reranker } from "../retrieval/rerank/reranker.js";
import { RerankingRetriever } from "../retrieval/rerank/retriever.js";
import type { QueryInput, SearchOptions } from "../retrieval/query.js";
import type { Hit, Retriever } from "../retrieval/types.js";
import { ApiError } from "./errors.js";

/** The deepest rerank a request may ask for unless the server says otherwise. */
export const DEFAULT_MAX_RERANK_DEPTH = 100;

/** A name requests choose a reranker by: lower-case letters, digits, `-` and `_`, starting with a letter. */
const NAME = /^[a-z][a-z0-9_-]{0,63}$/u;

/**
 * `--reranker` values apart: `NAME=SPEC` registers a named reranker requests may choose, a bare `SPEC`
 * (`cross-encoder:model=…`, JSON, `@file.json`) is the default applied to every search (at most one).
 * Each spec is parsed here, so a wrong one stops the start naming the flag.
 */
export function splitRerankerFlags(values: readonly string[] = []): { reranker?: string; rerankers: Record<string, string> } {
  const rerankers: Record<string, string> = {};
  let reranker: string | undefined;
  for (const v of values) {
    const m = /^([A-Za-z][A-Za-z0-9_-]*)=(.*)$/su.exec(v);
    if (m === null) {
      if (reranker !== undefined) throw new Error(`--reranker: one default reranker (a SPEC without NAME=) is allowed, given ${JSON.stringify(reranker)} and ${JSON.stringify(v)}; name the others (--reranker NAME=SPEC)`);
      parseRerankerSpec(v);
      reranker = v;
      continue;
    }
    const [, name, spec] = m;
    if (!NAME.test(name) || name === "none") throw new Error(`--reranker ${JSON.stringify(v)}: a reranker's name is lower-case letters, digits, - and _ (starting with a letter), and not "none"`);
    if (name in rerankers) throw new Error(`--reranker: the name ${name} is given twice`);
    if (spec.trim() === "") throw new Error(`--reranker ${name}=: the spec after = is empty`);
    try {
      parseRerankerSpec(spec);
    } catch (e) {
      throw new Error(`--reranker ${name}=…: ${(e as Error).message}`);
    }
    rerankers[name] = spec;
  }
  return { reranker, rerankers };
}

/** What a request's `reranker` and `rerank_depth` chose: a named reranker and its depth, or `none` (no reranking at all). */
export type RerankChoice = { name: string; reranker: Reranker; depth: number } | { name: "none"; reranker: null; depth: 0 };

/** The named rerankers of a server, opened once. */
export class ServedRerankers {
  private constructor(
    private readonly byName: Map<string, { spec: string; reranker: Reranker }>,
    /** The deepest rerank a request may ask for. */
    readonly maxDepth: number,
  ) {}

  /** Opens each named spec (on this thread, with every core for a model's own threads); closes those opened if one fails. */
  static async open(named: Readonly<Record<string, string>> = {}, maxDepth = DEFAULT_MAX_RERANK_DEPTH): Promise<ServedRerankers> {
    if (!(Number.isInteger(maxDepth) && maxDepth >= 1)) throw new Error(`the largest rerank depth must be a positive integer, not ${String(maxDepth)}`);
    const byName = new Map<string, { spec: string; reranker: Reranker }>();
    try {
      for (const [name, spec] of Object.entries(named)) {
        if (!NAME.test(name) || name === "none") throw new Error(`reranker name ${JSON.stringify(name)}: lower-case letters, digits, - and _ (starting with a letter), and not "none"`);
        byName.set(name, { spec, reranker: await openReranker(spec, { threads: cpus().length }) });
      }
    } catch (e) {
      for (const r of byName.values()) await r.reranker.close();
      throw e;
    }
    return new ServedRerankers(byName, maxDepth);
  }

  /** The names requests may choose, in the order given. */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /**
   * The choice a request's `reranker` and `rerank_depth` (read by `get`) make for `k` hits, or null when it
   * names none; a 400 for an unknown name, a depth that is not a whole number, or one above the limit.
   */
  choose(get: (name: string) => unknown, k: number): RerankChoice | null {
    const name = get("reranker");
    const rawDepth = get("rerank_depth");
    const depthGiven = rawDepth !== undefined && rawDepth !== "";
    if (name === undefined || name === "") {
      if (depthGiven) throw new ApiError(400, "rerank_depth goes with reranker (a reranker's name)");
      return null;
    }
    if (typeof name !== "string") throw new ApiError(400, "reranker must be a string: the name of one of the server's rerankers");
    const known = this.names();
    if (name === "none") {
      if (depthGiven) throw new ApiError(400, "rerank_depth goes with a reranker, not none");
      return { name: "none", reranker: null, depth: 0 };
    }
    const r = this.byName.get(name);
    if (!r)
      throw new ApiError(400, known.length === 0 ? `reranker ${JSON.stringify(name.slice(0, 100))}: this server has no named rerankers (start it with --reranker NAME=SPEC)` : `no reranker called ${JSON.stringify(name.slice(0, 100))}; this server has: ${known.join(", ")} (or none)`);
    let depth = k;
    if (depthGiven) {
      const n = typeof rawDepth === "string" && /^\d+$/u.test(rawDepth) ? Number(rawDepth) : rawDepth;
      if (typeof n !== "number" || !Number.isInteger(n) || n < 1) throw new ApiError(400, `rerank_depth must be a whole number from 1 to ${this.maxDepth}`);
      depth = n;
    }
    if (depth > this.maxDepth)
      throw new ApiError(400, depthGiven ? `rerank_depth ${depth} is above this server's limit of ${this.maxDepth} (--max-rerank-depth)` : `reranking k = ${depth} hits is above this server's limit of ${this.maxDepth} (--max-rerank-depth): ask for k ≤ ${this.maxDepth} or give rerank_depth ≤ ${this.maxDepth}`);
    return { name, reranker: r.reranker, depth };
  }

  /** Closes every reranker. */
  async close(): Promise<void> {
    for (const r of this.byName.values()) await r.reranker.close();
    this.byName.clear();
  }
}

/**
 * `first`'s hits reranked by a chosen reranker: the best `choice.depth` of the first stage per query
 * (`batch`, when given, answers a batch: the search pool), the best k by the reranker's score, as the
 * `rerank` stage ranks them (ties by the lower unit). `none`: the first stage's best k.
 */
export async function searchReranked(first: Retriever, choice: RerankChoice, queries: readonly QueryInput[], k: number, options: SearchOptions | undefined, batch?: (queries: readonly QueryInput[], k: number) => Promise<Hit[][]>): Promise<Hit[][]> {
  const firstStage: Retriever = {
    kind: first.kind,
    units: first.units,
    manifest: first.manifest,
    search: (q, n, o) => first.search(q, n, o),
    searchBatch: batch ? (qs, n) => batch(qs, n) : first.searchBatch ? (qs, n, o) => first.searchBatch!(qs, n, o) : undefined,
    close: async () => {},
  };
  if (choice.reranker === null) return firstStage.searchBatch ? firstStage.searchBatch(queries, k, options) : Promise.all(queries.map((q) => first.search(q, k, options)));
  // Not closed: the reranker is the server's, the first stage the request's view of it.
  return new RerankingRetriever(firstStage, choice.reranker, choice.depth).searchBatch(queries, k, options);
}
