// The registry of index kinds: opens an index directory by the kind its manifest names, loading that
// kind's module only then. `openIndex(dir)` gives one retriever for KILT inputs (text retrievers get
// entity markers stripped, ./markers.ts); `openIndexes([a, b, …])` gives their reciprocal-rank fusion.
// Shared pieces live below it: the manifest (./manifest.ts), the marker filter, the search pool (./pool.ts).

import type { Retriever } from "./types.js";
import { checkIndexFiles, readManifest } from "./manifest.js";
import { MarkerStripping } from "./markers.js";
import { HybridRetriever, type HybridOptions } from "./hybrid.js";

/** Opens one index directory (no marker stripping: see {@link openIndex}). */
export async function openRaw(dir: string): Promise<Retriever> {
  const m = readManifest(dir);
  checkIndexFiles(dir, m);
  switch (m.kind) {
    case "tfidf":
      return (await import("./tfidf/search.js")).openTfidf(dir);
    case "entity":
      return (await import("./entity/search.js")).openEntity(dir);
    case "bm25":
      return (await import("./bm25/index.js")).openBm25(dir);
    case "dense":
      return (await import("./dense/index.js")).openDense(dir);
    default:
      throw new Error(`${dir}: unknown index kind ${JSON.stringify(m.kind)}`);
  }
}

/** Opens the index in `dir` for KILT inputs (text retrievers get entity markers stripped). */
export async function openIndex(dir: string): Promise<Retriever> {
  const r = await openRaw(dir);
  return r.kind === "entity" ? r : new MarkerStripping(r);
}

/** One index, or the reciprocal-rank fusion of several. */
export async function openIndexes(dirs: readonly string[], options: HybridOptions = {}): Promise<Retriever> {
  if (dirs.length === 0) throw new Error("no index given");
  if (dirs.length === 1) return openIndex(dirs[0]);
  const members: Retriever[] = [];
  try {
    for (const d of dirs) members.push(await openIndex(d));
    return new HybridRetriever(members, options, dirs);
  } catch (e) {
    for (const m of members) await m.close();
    throw e;
  }
}
