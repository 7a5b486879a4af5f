// Opening index directories: `openRaw(dir)` reads the manifest once, checks the files' sizes and opens
// the kind it names through the registry (./kinds/, loading that kind's module only then);
// `openIndex(dir)` gives one retriever for KILT inputs (text kinds get the `markers` stage, which strips
// entity markers); `openIndexes([a, b, …])` gives their fusion (the `rrf` stage, or the fusion stage `fusion` names), then the stages asked for
// (./stages/: every wrapper goes through that one seam, here as in the search pool's workers).

import type { Retriever } from "./types.js";
import type { OpenOptions } from "./kinds/kind.js";
import { indexKind } from "./kinds/index.js";
import { checkIndexFiles, memberManifests, readManifest } from "./manifest.js";
import type { HybridOptions } from "./hybrid.js";
import { applyStage, applyStages, type StageOptions } from "./stages/index.js";

/** Opens one index directory (no marker stripping: see {@link openIndex}). */
export async function openRaw(dir: string, options: OpenOptions = {}): Promise<Retriever> {
  const m = readManifest(dir);
  checkIndexFiles(dir, m);
  return indexKind(m.kind, dir).open(dir, m, options);
}

/** Opens the index in `dir` for KILT inputs (text kinds get entity markers stripped). */
export async function openIndex(dir: string, options: OpenOptions = {}): Promise<Retriever> {
  const r = await openRaw(dir, options);
  return r.kind !== "hybrid" && indexKind(r.kind, dir).stripMarkers ? applyStage([r], { name: "markers" }, [dir]) : r;
}

/** One index, or the fusion of several (`options.fusion`, by default reciprocal rank with `k0` and `depth`), then `options.stages` over it. */
export async function openIndexes(dirs: readonly string[], options: HybridOptions & OpenOptions & StageOptions = {}): Promise<Retriever> {
  if (dirs.length === 0) throw new Error("no index given");
  const open: OpenOptions = { threads: options.threads };
  let first: Retriever;
  if (dirs.length === 1) first = await openIndex(dirs[0], open);
  else {
    const members: Retriever[] = [];
    try {
      for (const d of dirs) members.push(await openIndex(d, open));
    } catch (e) {
      for (const m of members) await m.close();
      throw e;
    }
    first = await applyStage(members, options.fusion ?? { name: "rrf", options: { k0: options.k0, depth: options.depth } }, dirs);
  }
  return applyStages(first, options.stages);
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
