// Fusion in `GET`/`POST /api/search`: a request naming several loaded indexes (`index` repeated, or an
// array in a batch) gets their fusion, built for that request over the indexes already open (the
// hybrid retriever of tartan/retrieval, with the request's `fusion`, `norm`, `weights`, `alpha`, `rrf_k`
// and `depth`, the flags of `tartan retrieve`). The fusion is not closed: the indexes stay the server's.
// Shared with the MCP search tool. A request reranked by its own choice of reranker searches the
// indexes without the server's default reranker (`base`).

import { HybridRetriever } from "../../retrieval/hybrid.js";
import { fusionStage, parseWeights } from "../../retrieval/fusion.js";
import type { HybridOptions } from "../../retrieval/hybrid.js";
import type { IndexManifest, Retriever } from "../../retrieval/types.js";
import { ApiError } from "../errors.js";
import type { Resources } from "../resources.js";

/** What a search runs over: one loaded index, or a fusion of several. */
export interface SearchTarget {
  name: string;
  manifest: IndexManifest;
  retriever: Retriever;
  /** True for a fusion built for this request (a batch is then searched on this thread). */
  fused: boolean;
}

/** The fusion parameters names a request may carry. */
export const FUSION_PARAMS = ["fusion", "norm", "weights", "alpha", "rrf_k", "depth"] as const;

function num(name: string, v: unknown, whole: boolean): number | undefined {
  if (v === undefined || v === "") return undefined;
  const n = typeof v === "string" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isFinite(n) || (whole && (!Number.isInteger(n) || n < 1 || n > 10_000))) throw new ApiError(400, `${name} must be ${whole ? "a whole number between 1 and 10000" : "a number"}`);
  return n;
}

/** The indexes `names` name, fused by the request's parameters (`get` reads one); one name without fusion parameters: that index. */
export function searchTarget(res: Resources, names: readonly string[], get: (name: string) => unknown, o: { base?: boolean } = {}): SearchTarget {
  const pick = (ix: { retriever: Retriever; base: Retriever }) => (o.base ? ix.base : ix.retriever);
  const asked = FUSION_PARAMS.filter((p) => get(p) !== undefined && get(p) !== "");
  if (names.length <= 1) {
    const ix = res.index(names[0]);
    if (asked.length > 0) throw new ApiError(400, `${asked.join(", ")}: fusion parameters go with several indexes (index=a&index=b)`);
    return { name: ix.name, manifest: ix.manifest, retriever: pick(ix), fused: false };
  }
  const members = names.map((n) => res.index(n));
  const w = get("weights");
  let weights: number[] | undefined;
  try {
    if (typeof w === "string" && w !== "") weights = parseWeights(w, "weights");
    else if (Array.isArray(w)) weights = w.map((x, i) => num(`weights[${i}]`, x, false)!);
    else if (w !== undefined) throw new Error("weights must be numbers, one per index (0.3,0.7 or [0.3, 0.7])");
    const str = (n: string) => {
      const v = get(n);
      if (v !== undefined && typeof v !== "string") throw new Error(`${n} must be a string`);
      return v === "" ? undefined : v;
    };
    const alpha = num("alpha", get("alpha"), false);
    const stage = fusionStage({ fusion: str("fusion"), norm: str("norm"), weights, alpha, k0: num("rrf_k", get("rrf_k"), false), depth: num("depth", get("depth"), true) });
    const fused = new HybridRetriever(members.map(pick), { ...(stage.options as HybridOptions), method: stage.name }, members.map((m) => m.name));
    return { name: members.map((m) => m.name).join("+"), manifest: fused.manifest, retriever: fused, fused: true };
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new ApiError(400, e instanceof Error ? e.message : String(e));
  }
}
