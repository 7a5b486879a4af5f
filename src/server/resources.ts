// What a server serves, opened once at start through the backend seam (src/backends/open.ts, so each
// may be a directory or a clickhouse:// URL): the knowledge source, the indexes (each under a short
// name clients select it by, never a path), the runs database, and the directory of gold files that
// evaluation requests may name by dataset, and the named rerankers requests may choose (./rerankers.ts).
// Requests only ever look things up in these.

import { existsSync, statSync } from "node:fs";
import { openKnowledgeSource, openRetriever, openRuns, searchPoolFor, servedIndexName } from "../backends/open.js";
import type { KnowledgeSourceReader } from "../knowledge/source.js";
import type { IndexManifest, Retriever } from "../retrieval/types.js";
import type { SearchPool } from "../retrieval/pool.js";
import { applyStages } from "../retrieval/stages/index.js";
import { ServedRerankers } from "./rerankers.js";
import type { RunsStore } from "../runs/types.js";
import { ApiError } from "./errors.js";
import { RunRecords } from "./run-records.js";

/** What {@link Resources.open} opens. */
export interface ResourceOptions {
  /** Knowledge source: a store directory (`tartan ks ingest --out`) or a clickhouse:// URL. */
  ks?: string;
  /** Index directories (`tartan index build --out`) or clickhouse:// BM25 index URLs. */
  indexes?: readonly string[];
  /** Runs database (a directory, or a URL of a registered backend). */
  runs?: string;
  /** Directory of KILT gold files (as released: `nq-dev-kilt.jsonl`, …) that `POST /api/eval` may name by dataset. */
  data?: string;
  /** Threads a `POST /api/search` batch is spread over, this one included (default: every core; one for a kind that spreads each search itself); each worker opens its own copy of the index. */
  searchThreads?: number;
  /** A reranker spec (`NAME:key=value,…`, docs/retrieval.md "Reranking") applied to every index's hits: the `rerank` stage, in the search pool's workers too. */
  reranker?: string;
  /** With `reranker`: hits reranked per query (default: the k asked for). */
  rerankDepth?: number;
  /** Named rerankers a request may choose (`reranker: NAME`, `rerank_depth`), name → spec (`tartan serve --reranker NAME=SPEC`); opened once at start. */
  rerankers?: Readonly<Record<string, string>>;
  /** The deepest rerank a request may ask for with a named reranker (default 100, `--max-rerank-depth`). */
  maxRerankDepth?: number;
}

/** An index opened by the server. */
export interface LoadedIndex {
  /** The name clients select it by: the directory's base name, or a URL's index name (made unique with `-2`, `-3`, …). */
  name: string;
  manifest: IndexManifest;
  retriever: Retriever;
  /** The index without the server's default reranker (`retriever` itself when there is none): the first stage a request's own reranker reranks. */
  base: Retriever;
  /** Batches of queries over the cores (`POST /api/search`), as `tartan retrieve` searches; workers start on the first large batch. */
  pool: SearchPool;
}

/** What the server serves: the knowledge source, indexes, runs database and gold files, opened once. */
export class Resources {
  /** The run browser's view of the runs database (null without one). */
  readonly runRecords: RunRecords | null;

  private constructor(
    readonly ks: KnowledgeSourceReader | null,
    readonly indexes: LoadedIndex[],
    readonly data: string | null,
    readonly runs: RunsStore | null,
    /** The named rerankers requests may choose. */
    readonly rerankers: ServedRerankers,
  ) {
    this.runRecords = runs ? new RunRecords(runs, ks) : null;
  }

  /** Opens everything `o` names (closing what was opened if one fails). */
  static async open(o: ResourceOptions): Promise<Resources> {
    const ks = o.ks ? await openKnowledgeSource(o.ks) : null;
    const indexes: LoadedIndex[] = [];
    let runs: RunsStore | null = null;
    let rerankers: ServedRerankers | null = null;
    try {
      if (o.data !== undefined && !(existsSync(o.data) && statSync(o.data).isDirectory())) throw new Error(`${o.data}: not a directory`);
      const names = new Set<string>();
      const stages = o.reranker === undefined ? undefined : [{ name: "rerank", options: { reranker: o.reranker, depth: o.rerankDepth } }];
      for (const location of o.indexes ?? []) {
        const stem = servedIndexName(location);
        let name = stem;
        for (let i = 2; names.has(name); i++) name = `${stem}-${i}`;
        names.add(name);
        const base = await openRetriever(location);
        const retriever = await applyStages(base, stages);
        indexes.push({ name, manifest: retriever.manifest, retriever, base, pool: searchPoolFor(retriever, [location], { threads: o.searchThreads, stages }) });
      }
      if (o.runs !== undefined) runs = await openRuns(o.runs);
      rerankers = await ServedRerankers.open(o.rerankers, o.maxRerankDepth);
    } catch (e) {
      await ks?.close();
      await runs?.close();
      await rerankers?.close();
      for (const ix of indexes) await ix.retriever.close(); // no pool has started workers yet
      throw e;
    }
    return new Resources(ks, indexes, o.data ?? null, runs, rerankers);
  }

  /** The store, or a 404 saying none is loaded. */
  store(): KnowledgeSourceReader {
    if (!this.ks) throw new ApiError(404, "no knowledge source is loaded (start the server with --ks DIR)");
    return this.ks;
  }

  /** The index called `name`, or the first one when no name is given. */
  index(name?: string): LoadedIndex {
    if (this.indexes.length === 0) throw new ApiError(404, "no index is loaded (start the server with --index DIR)");
    if (name === undefined) return this.indexes[0];
    const ix = this.indexes.find((i) => i.name === name);
    if (!ix) throw new ApiError(404, `no index called ${JSON.stringify(name.slice(0, 100))}; loaded: ${this.indexes.map((i) => i.name).join(", ")}`);
    return ix;
  }

  /** Stops the search workers and closes the indexes, runs database and knowledge source. */
  async close(): Promise<void> {
    for (const ix of this.indexes) {
      await ix.pool.close();
      await ix.retriever.close();
    }
    await this.runs?.close();
    await this.ks?.close();
    await this.rerankers.close();
  }
}

