// The knowledge-source interface every backend implements (KILT's `KnowledgeSource`: pages by id, by
// title, by URL, in input order, and their count). The embedded store (./store.ts) answers at once;
// a server-backed store (src/backends) answers with promises, so callers always `await`.

import type { KiltId, KiltPage } from "../records/types.js";

/** A value, or a promise of it (the embedded store answers at once, backends asynchronously). */
export type MaybePromise<T> = T | Promise<T>;

/** A knowledge source to read pages from: the embedded store or a backend (ClickHouse). */
export interface KnowledgeSourceReader {
  /** Where the pages are (a directory or a URL), for messages. */
  readonly location: string;
  /** KILT `get_page_by_id`: the page whose wikipedia_id is `str(id)`, or null. */
  getPageById(id: KiltId): MaybePromise<KiltPage | null>;
  /** The page titled `title` exactly, else the first (in input order) whose title matches ignoring case, or null. */
  getPageByTitle(title: string): MaybePromise<KiltPage | null>;
  /** KILT `get_page_from_url` without its network step (titlesFromUrl: each title exactly, then each ignoring case). */
  getPageFromUrl(url: string): MaybePromise<KiltPage | null>;
  /** KILT `get_num_pages`. */
  count(): MaybePromise<number>;
  /** Every page in input order. */
  pages(batchSize?: number): Iterable<KiltPage> | AsyncIterable<KiltPage>;
  /** Releases the store (files, connections). */
  close(): MaybePromise<void>;
}
