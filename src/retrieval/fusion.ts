// The fusion families over ranked lists, as ranx defines them (ranx/fusion, ranx/normalization): each
// member's list is normalised (min-max, max, sum, z-score, rank, or none), then combined per document:
// RRF Σ wᵢ/(k0 + rankᵢ), weighted sum Σ wᵢ·sᵢ (missing: 0), CombSUM Σ sᵢ, CombMNZ Σ sᵢ · |present|, CombMAX
// max sᵢ, CombANZ Σ sᵢ / |present| (the sums over the members that retrieved it). Pyserini's two-member
// form `alpha` is the weighted sum α·s₁ + s₂ with a missing score replaced by that member's lowest.
// Pure functions over lists of (key, score): the hybrid retriever (./hybrid.ts) applies them to units, and
// tests and the weight tuner to plain runs.

/** The fusion methods (their stage names). */
export const FUSION_METHODS = ["rrf", "wsum", "combsum", "combmnz", "combmax", "combanz"] as const;
/** A fusion method. */
export type FusionMethod = (typeof FUSION_METHODS)[number];
/** The score normalisations (ranx's, with `z-score` for its `zmuv`). */
export const FUSION_NORMS = ["min-max", "max", "sum", "z-score", "rank", "none"] as const;
/** A score normalisation. */
export type FusionNorm = (typeof FUSION_NORMS)[number];

/** ranx's names of the same methods and normalisations, accepted as aliases. */
const METHOD_ALIASES: Record<string, FusionMethod> = { sum: "combsum", mnz: "combmnz", max: "combmax", anz: "combanz", "weighted-sum": "wsum" };
const NORM_ALIASES: Record<string, FusionNorm> = { minmax: "min-max", zmuv: "z-score", zscore: "z-score" };

/** The method `name` names (a canonical name or a ranx alias); throws naming the known ones. */
export function fusionMethod(name: string, where = "--fusion"): FusionMethod {
  const n = name.trim().toLowerCase();
  if ((FUSION_METHODS as readonly string[]).includes(n)) return n as FusionMethod;
  const a = METHOD_ALIASES[n];
  if (a !== undefined) return a;
  throw new Error(`${where}: unknown fusion ${JSON.stringify(name)} (known: ${FUSION_METHODS.join(", ")}; ranx's sum, mnz, max, anz also)`);
}

/** The normalisation `name` names; throws naming the known ones. */
export function fusionNorm(name: string, where = "--norm"): FusionNorm {
  const n = name.trim().toLowerCase();
  if ((FUSION_NORMS as readonly string[]).includes(n)) return n as FusionNorm;
  const a = NORM_ALIASES[n];
  if (a !== undefined) return a;
  throw new Error(`${where}: unknown normalisation ${JSON.stringify(name)} (known: ${FUSION_NORMS.join(", ")}; zmuv also)`);
}

/** How lists are fused. */
export interface FusionSpec {
  method: FusionMethod;
  /** Applied to each member's list first; default min-max (ranx's), none with `alpha` (Pyserini's). RRF uses ranks only. */
  norm?: FusionNorm;
  /** One per member (rrf and wsum); default all 1. */
  weights?: readonly number[];
  /** Pyserini's two-member form: wsum with weights [alpha, 1], a missing score being that member's lowest. */
  alpha?: number;
  /** RRF constant; default 60. */
  k0?: number;
}

/** What a spec resolves to, checked against the member count. */
export interface ResolvedFusion {
  method: FusionMethod;
  norm: FusionNorm;
  weights: number[];
  /** Missing scores: 0 (ranx), or the member's lowest (Pyserini's alpha form). */
  missing: "zero" | "min";
  k0: number;
}

/** `spec` checked for `members` lists: weights one per member (rrf and wsum only), alpha with wsum over two. */
export function resolveFusion(spec: FusionSpec, members: number): ResolvedFusion {
  const { method } = spec;
  const k0 = spec.k0 ?? 60;
  if (!(k0 >= 0)) throw new Error(`fusion: k0 must be ≥ 0, got ${k0}`);
  if (spec.alpha !== undefined) {
    if (method !== "wsum") throw new Error(`fusion: alpha is Pyserini's weighted sum of two members (--fusion wsum), not ${method}`);
    if (spec.weights !== undefined) throw new Error("fusion: give alpha or weights, not both");
    if (members !== 2) throw new Error(`fusion: alpha weighs the first of two members, given ${members}`);
    if (!Number.isFinite(spec.alpha)) throw new Error(`fusion: alpha must be a number, got ${spec.alpha}`);
    return { method, norm: spec.norm ?? "none", weights: [spec.alpha, 1], missing: "min", k0 };
  }
  if (spec.weights !== undefined) {
    if (method !== "rrf" && method !== "wsum") throw new Error(`fusion: weights go with rrf or wsum (${method} weighs every member alike; wsum with weights is the weighted ${method === "combsum" ? "CombSUM" : "form"})`);
    if (spec.weights.length !== members) throw new Error(`fusion: ${spec.weights.length} weights for ${members} members: give one per index, in order`);
    for (const w of spec.weights) if (!Number.isFinite(w)) throw new Error(`fusion: weights must be numbers, got ${w}`);
  }
  return { method, norm: spec.norm ?? "min-max", weights: spec.weights ? [...spec.weights] : new Array<number>(members).fill(1), missing: "zero", k0 };
}

/** Scores of one list in rank order (best first) normalised as ranx does (a zero spread becomes 1e-9). */
export function normaliseScores(scores: readonly number[], norm: FusionNorm): number[] {
  const n = scores.length;
  if (n === 0 || norm === "none") return [...scores];
  if (norm === "rank") return scores.map((_, i) => 1 - i / n);
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const s of scores) {
    if (s < min) min = s;
    if (s > max) max = s;
    sum += s;
  }
  switch (norm) {
    case "min-max": {
      const d = Math.max(max - min, 1e-9);
      return scores.map((s) => (s - min) / d);
    }
    case "max": {
      const d = Math.max(max, 1e-9);
      return scores.map((s) => s / d);
    }
    case "sum": {
      const d = Math.max(sum - min * n, 1e-9);
      return scores.map((s) => (s - min) / d);
    }
    case "z-score": {
      const mean = sum / n;
      let v = 0;
      for (const s of scores) v += (s - mean) * (s - mean);
      const d = Math.max(Math.sqrt(v / n), 1e-9);
      return scores.map((s) => (s - mean) / d);
    }
  }
}

/**
 * One member's contribution: its normalised score per key (RRF: wᵢ/(k0 + rank)), and the lowest of them
 * (what Pyserini's form puts in for a key it did not retrieve).
 */
export function memberScores<K>(keys: readonly K[], scores: readonly number[], m: number, f: ResolvedFusion): { byKey: Map<K, number>; min: number } {
  const byKey = new Map<K, number>();
  if (f.method === "rrf") {
    // Σ wᵢ/(k0 + rank): a key listed twice keeps its best rank.
    keys.forEach((k, r) => {
      if (!byKey.has(k)) byKey.set(k, f.weights[m] / (f.k0 + r + 1));
    });
    return { byKey, min: 0 };
  }
  const norm = normaliseScores(scores, f.norm);
  let min = Infinity;
  keys.forEach((k, i) => {
    if (!byKey.has(k)) byKey.set(k, norm[i]);
    if (norm[i] < min) min = norm[i];
  });
  return { byKey, min: Number.isFinite(min) ? min : 0 };
}

/** The fused score of one key from its members' scores (undefined: that member did not retrieve it), in member order. */
export function combine(values: readonly (number | undefined)[], mins: readonly number[], f: ResolvedFusion): number {
  let acc = 0;
  let present = 0;
  let best = -Infinity;
  for (let m = 0; m < values.length; m++) {
    let v = values[m];
    if (v === undefined) {
      if (f.method !== "wsum") continue;
      v = f.missing === "min" ? mins[m] : 0;
    } else present++;
    switch (f.method) {
      case "rrf":
      case "combsum":
      case "combmnz":
      case "combanz":
        acc += v;
        break;
      case "wsum":
        acc += f.weights[m] * v;
        break;
      case "combmax":
        if (v > best) best = v;
        break;
    }
  }
  if (f.method === "combmax") return best;
  if (f.method === "combmnz") return acc * present;
  if (f.method === "combanz") return present === 0 ? 0 : acc / present;
  return acc;
}

/** One ranked list: keys best first with their scores. */
export interface RankedList<K> {
  keys: readonly K[];
  scores: readonly number[];
}

/** The lists fused by `spec`: every key any list holds with its fused score, in first-seen order. */
export function fuseLists<K>(lists: readonly RankedList<K>[], spec: FusionSpec): Map<K, number> {
  const f = resolveFusion(spec, lists.length);
  const members = lists.map((l, m) => memberScores(l.keys, l.scores, m, f));
  const out = new Map<K, number>();
  for (const l of lists)
    for (const k of l.keys)
      if (!out.has(k))
        out.set(
          k,
          combine(
            members.map((s) => s.byKey.get(k)),
            members.map((s) => s.min),
            f,
          ),
        );
  return out;
}

/** A weights list `0.3,0.7` as numbers; throws naming the bad entry. */
export function parseWeights(text: string, where = "--weights"): number[] {
  const parts = text.split(",").map((s) => s.trim());
  return parts.map((p, i) => {
    const w = p === "" ? NaN : Number(p);
    if (!Number.isFinite(w)) throw new Error(`${where}: weight ${i + 1} ${JSON.stringify(p)} is not a number (give e.g. 0.3,0.7, one per index)`);
    return w;
  });
}

/** What a caller asks of a fusion by name (the CLI's `--fusion --norm --weights --alpha --rrf-k --depth`, a server request). */
export interface FusionRequest {
  /** The method (or a ranx alias); default rrf, or wsum when `alpha` is given. */
  fusion?: string;
  norm?: string;
  weights?: readonly number[];
  alpha?: number;
  k0?: number;
  depth?: number;
}

/** The fusion stage a request names (`StageOptions.fusion`): its method checked, its options plain JSON. */
export function fusionStage(r: FusionRequest): { name: FusionMethod; options: Record<string, unknown> } {
  // Pyserini's alpha is a weighted sum: alone, it names wsum
  const method = fusionMethod(r.fusion ?? (r.alpha !== undefined ? "wsum" : "rrf"));
  const norm = r.norm === undefined ? undefined : fusionNorm(r.norm);
  if (method === "rrf" && r.alpha !== undefined) throw new Error("--alpha is Pyserini's weighted sum of two members: give it with --fusion wsum");
  const options: Record<string, unknown> = {};
  if (r.k0 !== undefined) options.k0 = r.k0;
  if (r.depth !== undefined) options.depth = r.depth;
  if (norm !== undefined) options.norm = norm;
  if (r.weights !== undefined) options.weights = [...r.weights];
  if (r.alpha !== undefined) options.alpha = r.alpha;
  return { name: method, options };
}
