// What a server serves, opened once at start: the knowledge-source store, the indexes (each under a
// short name clients select it by, never a path), the runs database and the directory of gold files
// that evaluation requests may name by dataset. Requests only ever look things up in these.

import { existsSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { KnowledgeSource } from "../knowledge/store.js";
import { openIndex } from "../retrieval/open.js";
import { readManifest } from "../retrieval/manifest.js";
import type { IndexManifest, Retriever } from "../retrieval/types.js";
import { openRunsStore } from "../runs/open.js";
import type { RunsStore } from "../runs/types.js";
import { ApiError } from "./errors.js";
import { RunRecords } from "./run-records.js";

/** What {@link Resources.open} opens. */
export interface ResourceOptions {
  /** Knowledge-source store directory (`tartan ks ingest --out`). */
  ks?: string;
  /** Index directories (`tartan index build --out`). */
  indexes?: readonly string[];
  /** Runs database (a directory, or a URL of a registered backend). */
  runs?: string;
  /** Directory of KILT gold files (as released: `nq-dev-kilt.jsonl`, …) that `POST /api/eval` may name by dataset. */
  data?: string;
}

/** An index opened by the server. */
export interface LoadedIndex {
  /** The name clients select it by: the directory's base name (made unique with `-2`, `-3`, …). */
  name: string;
  manifest: IndexManifest;
  retriever: Retriever;
}

/** What the server serves: the knowledge source, indexes, runs database and gold files, opened once. */
export class Resources {
  /** The run browser's view of the runs database (null without one). */
  readonly runRecords: RunRecords | null;

  private constructor(
    readonly ks: KnowledgeSource | null,
    readonly indexes: LoadedIndex[],
    readonly data: string | null,
    readonly runs: RunsStore | null,
  ) {
    this.runRecords = runs ? new RunRecords(runs, ks) : null;
  }

  /** Opens everything `o` names (closing what was opened if one fails). */
  static async open(o: ResourceOptions): Promise<Resources> {
    const ks = o.ks ? KnowledgeSource.open(o.ks) : null;
    const indexes: LoadedIndex[] = [];
    let runs: RunsStore | null = null;
    try {
      const names = new Set<string>();
      for (const dir of o.indexes ?? []) {
        const manifest = readManifest(dir);
        let name = basename(resolve(dir));
        for (let i = 2; names.has(name); i++) name = `${basename(resolve(dir))}-${i}`;
        names.add(name);
        indexes.push({ name, manifest, retriever: await openIndex(dir) });
      }
      if (o.runs !== undefined) runs = await openRunsStore(o.runs);
    } catch (e) {
      ks?.close();
      await runs?.close();
      for (const ix of indexes) await ix.retriever.close();
      throw e;
    }
    if (o.data !== undefined && !(existsSync(o.data) && statSync(o.data).isDirectory())) throw new Error(`${o.data}: not a directory`);
    return new Resources(ks, indexes, o.data ?? null, runs);
  }

  /** The store, or a 404 saying none is loaded. */
  store(): KnowledgeSource {
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

  /** Closes the indexes, runs database and knowledge source. */
  async close(): Promise<void> {
    for (const ix of this.indexes) await ix.retriever.close();
    await this.runs?.close();
    this.ks?.close();
  }
}
