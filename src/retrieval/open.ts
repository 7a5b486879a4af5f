// Opening index directories: `openRaw(dir)` reads the manifest once, checks the files' sizes and opens
// the kind it names through the registry (./kinds/, loading that kind's module only then);
// `openIndex(dir)` gives one retriever for KILT inputs (text kinds get entity markers stripped,
// ./markers.ts); `openIndexes([a, b, …])` gives their reciprocal-rank fusion (./hybrid.ts).

import type { Retriever } from "./types.js";
import type { OpenOptions } from "./kinds/kind.js";
import { indexKind } from "./kinds/index.js";
import { checkIndexFiles, memberManifests, readManifest } from "./manifest.js";
import { MarkerStripping } from "./markers.js";
import { HybridRetriever, type HybridOptions } from "./hybrid.js";

/** Opens one index directory (no marker stripping: see {@link openIndex}). */
export async function openRaw(dir: string, options: OpenOptions = {}): Promise<Retriever> {
  const m = readManifest(dir);
  checkIndexFiles(dir, m);
  return indexKind(m.kind, dir).open(dir, m, options);
}

/** Opens the index in `dir` for KILT inputs (text kinds get entity markers stripped). */
export async function openIndex(dir: string, options: OpenOptions = {}): Promise<Retriever> {
  const r = await openRaw(dir, options);
  return r.kind !== "hybrid" && indexKind(r.kind, dir).stripMarkers ? new MarkerStripping(r) : r;
}

/** One index, or the reciprocal-rank fusion of several. */
export async function openIndexes(dirs: readonly string[], options: HybridOptions & OpenOptions = {}): Promise<Retriever> {
  if (dirs.length === 0) throw new Error("no index given");
  const open: OpenOptions = { threads: options.threads };
  if (dirs.length === 1) return openIndex(dirs[0], open);
  const members: Retriever[] = [];
  try {
    for (const d of dirs) members.push(await openIndex(d, open));
    return new HybridRetriever(members, options, dirs);
  } catch (e) {
    for (const m of members) await m.close();
    throw e;
  }
}

/** Search threads `tartan retrieve` uses by default for `r` (1 when one of its kinds spreads each search over the cores itself); undefined: the number of cores. */
export function defaultSearchThreads(r: Retriever): number | undefined {
  const kinds = memberManifests(r.manifest).map((m) => m.kind);
  return kinds.some((k) => k !== "hybrid" && indexKind(k).searchThreads === 1) ? 1 : undefined;
}

/** Whether `r` reads KILT inputs with their entity markers (a kind that does not strip them, e.g. entity); a fusion's members strip for themselves. */
export function readsEntityMarkers(r: Retriever): boolean {
  return r.kind !== "hybrid" && !indexKind(r.kind).stripMarkers;
}
